package cgu

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/spokecheck"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
	"github.com/cgu-operator/cgu-operator/pkg/talmjob"
	"github.com/cgu-operator/cgu-operator/pkg/tenancy"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
)

// decideAt is the time the tests decide at.
var decideAt = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// policy is a managed policy non-compliant on the clusters, compliant on none.
func policy(name string, compliant []string, clusters ...string) *policyv1.Policy {
	p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "ztp", Name: name, Generation: 1}}
	for _, c := range clusters {
		state := policyv1.NonCompliant
		if slices.Contains(compliant, c) {
			state = policyv1.Compliant
		}
		p.Status.Status = append(p.Status.Status, &policyv1.CompliancePerClusterStatus{ClusterName: c, ComplianceState: state})
	}
	return p
}

// fresh: an enabled rollout that has not started, of one managed policy on c1, c2 and c3 in
// two batches (c9 selected and compliant already), every check passing.
func fresh() Facts {
	upgrade := &ranv1alpha1.ClusterGroupUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "upgrade", Generation: 1},
		Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
			Enable:              ptr.To(true),
			Clusters:            []string{"c1", "c2", "c3", "c9"},
			ManagedPolicies:     []string{"upgrade"},
			RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: 2, Timeout: 240},
		},
	}
	return Facts{
		Upgrade: upgrade,
		Start:   Start{Selected: []string{"c1", "c2", "c3", "c9"}},
		Roots:   []*policyv1.Policy{policy("upgrade", nil, "c1", "c2", "c3")},
		Plan: plan.Plan{Batches: []plan.Batch{{Clusters: []string{"c1", "c2"}}, {Clusters: []string{"c3"}}},
			SkippedCompliant: []string{"c9"}},
	}
}

// next is the facts of the pass after in was applied: the records and status written,
// compliance as roots say.
func next(t testing.TB, f Facts, in Intents, roots ...*policyv1.Policy) Facts {
	t.Helper()
	upgrade := f.Upgrade.DeepCopy()
	upgrade.Status = *in.Status.DeepCopy()
	if upgrade.Status.StartedAt == nil {
		t.Fatal("the rollout did not start")
	}
	var records []ranv1alpha1.ClusterGroupUpgradeBatch
	for _, r := range in.Records {
		r := *r.DeepCopy()
		if st, ok := in.RecordStatus[r.Name]; ok {
			r.Status = st
		}
		records = append(records, r)
	}
	out := Facts{Upgrade: upgrade, Records: records, Started: true, Roots: roots, Plan: in.Plan}
	out.Progress = rollout.Recorded(records, PolicyNames(upgrade, roots), upgrade.Status.StartedAt.Time)
	return out
}

func condition(st ranv1alpha1.ClusterGroupUpgradeStatus, kind string) *metav1.Condition {
	return meta.FindStatusCondition(st.Conditions, kind)
}

func jobClusters(jobs []spokejob.Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Cluster)
	}
	return out
}

func TestDecideSettled(t *testing.T) {
	for _, tc := range []struct {
		name        string
		deleteAfter *bool
		cleanup     bool
	}{
		{name: "deletes its objects", cleanup: true},
		{name: "keeps them with deleteObjects false", deleteAfter: ptr.To(false), cleanup: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fresh()
			started := metav1.NewTime(decideAt.Add(-time.Hour))
			f.Upgrade.Generation = 3
			f.Upgrade.Spec.Actions.AfterCompletion = &ranv1alpha1.AfterCompletion{DeleteObjects: tc.deleteAfter}
			f.Upgrade.Status = ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateCompleted, StartedAt: &started,
				Conditions: []metav1.Condition{{Type: ranv1alpha1.ConditionReconciled, Status: metav1.ConditionFalse, Reason: "Failed"}}}
			in := Decide(f, Config{}, decideAt)
			if !in.Settled || in.Cleanup != tc.cleanup {
				t.Fatalf("settled %v cleanup %v, want true %v", in.Settled, in.Cleanup, tc.cleanup)
			}
			if in.Status.ObservedGeneration != 3 || condition(in.Status, ranv1alpha1.ConditionReconciled) != nil {
				t.Errorf("status %+v: want generation 3 observed and no Reconciled failure", in.Status)
			}
			if in.StartedNow || in.Enforcement.Write || len(in.Spoke.Jobs) > 0 || len(in.RecordStatus) > 0 {
				t.Errorf("a settled rollout decided writes: %+v", in)
			}
		})
	}
}

func TestDecideMode(t *testing.T) {
	for _, tc := range []struct {
		name            string
		spec, recorded  ranv1alpha1.EnforcementMode
		started         bool
		operatorDefault ranv1alpha1.EnforcementMode
		want            ranv1alpha1.EnforcementMode
	}{
		{name: "the spec's before the start", spec: ranv1alpha1.EnforcementOverride, operatorDefault: ranv1alpha1.EnforcementCopy,
			want: ranv1alpha1.EnforcementOverride},
		{name: "the operator's default without one", operatorDefault: ranv1alpha1.EnforcementOverride, want: ranv1alpha1.EnforcementOverride},
		{name: "the recorded mode once started", spec: ranv1alpha1.EnforcementOverride, recorded: ranv1alpha1.EnforcementCopy,
			started: true, want: ranv1alpha1.EnforcementCopy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fresh()
			f.Upgrade.Spec.Enforcement = tc.spec
			if tc.started {
				// Started in the recorded mode, then spec.enforcement edited.
				f.Upgrade.Spec.Enforcement = ""
				in := Decide(f, Config{DefaultEnforcement: tc.recorded}, decideAt)
				f = next(t, f, in, f.Roots...)
				f.Upgrade.Spec.Enforcement = tc.spec
			}
			in := Decide(f, Config{DefaultEnforcement: tc.operatorDefault}, decideAt.Add(time.Minute))
			if in.Mode != tc.want || in.Status.Enforcement != tc.want {
				t.Errorf("mode %q, status.enforcement %q; want %q", in.Mode, in.Status.Enforcement, tc.want)
			}
		})
	}
}

func TestDecideInvalid(t *testing.T) {
	for _, tc := range []struct {
		name      string
		change    func(*Facts)
		condition string
		reason    string
	}{
		{name: "the selection's problem first", condition: ranv1alpha1.ConditionClustersSelected, reason: ranv1alpha1.ReasonClusterNotFound,
			change: func(f *Facts) {
				f.Start.SelectProblem = &rollout.Problem{Reason: ranv1alpha1.ReasonClusterNotFound, Message: "cluster c7 not found"}
				f.Start.Invalid = &rollout.Problem{Reason: ranv1alpha1.ReasonNotAllManagedPoliciesExist, Message: "no"}
			}},
		{name: "then the policies'", condition: ranv1alpha1.ConditionValidated, reason: ranv1alpha1.ReasonNotAllManagedPoliciesExist,
			change: func(f *Facts) {
				f.Start.Invalid = &rollout.Problem{Reason: ranv1alpha1.ReasonNotAllManagedPoliciesExist, Message: "policy gone not found"}
			}},
		{name: "then the maintenance windows'", condition: ranv1alpha1.ConditionValidated, reason: ranv1alpha1.ReasonInvalidMaintenanceWindow,
			change: func(f *Facts) {
				f.Upgrade.Spec.MaintenanceWindows = &ranv1alpha1.MaintenanceWindows{Windows: []ranv1alpha1.MaintenanceWindow{
					{Start: "02:00", Duration: metav1.Duration{Duration: time.Hour}, TimeZone: "Mars/Olympus"}}}
			}},
		{name: "then the cluster actions' (stored before admission refused them)", condition: ranv1alpha1.ConditionValidated,
			reason: ranv1alpha1.ReasonInvalidClusterActions,
			change: func(f *Facts) {
				f.Upgrade.Spec.Actions.AfterCompletion = &ranv1alpha1.AfterCompletion{ClusterActions: ranv1alpha1.ClusterActions{
					AddClusterLabels: map[string]ranv1alpha1.LabelValue{"ztp done": ""}}}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fresh()
			f.Upgrade.Spec.PreCaching = true
			f.Precache = &Precache{Result: precache.Result{Valid: true}, Jobs: Jobs{Order: []string{"c1", "c2", "c3"}}}
			tc.change(&f)
			in := Decide(f, Config{}, decideAt)
			if in.Invalid == nil || in.Invalid.Reason != tc.reason {
				t.Fatalf("invalid %+v, want reason %s", in.Invalid, tc.reason)
			}
			if c := condition(in.Status, tc.condition); c == nil || c.Status != metav1.ConditionFalse || c.Reason != tc.reason {
				t.Errorf("%s condition %+v, want False %s", tc.condition, c, tc.reason)
			}
			if in.StartedNow || in.Records != nil || in.Enforcement.Write || len(in.Spoke.Jobs) > 0 || in.Status.Plan != nil {
				t.Errorf("an invalid rollout decided writes or a plan: jobs %v, records %v, plan %+v", in.Spoke.Jobs, in.Records, in.Status.Plan)
			}
			if in.Status.State != ranv1alpha1.StateCannotStart && in.Status.State != ranv1alpha1.StateNotStarted {
				t.Errorf("state %s", in.Status.State)
			}
		})
	}
}

func TestDecideStart(t *testing.T) {
	f := fresh()
	f.Upgrade.Spec.Actions.BeforeEnable = &ranv1alpha1.BeforeEnable{ClusterActions: ranv1alpha1.ClusterActions{
		AddClusterLabels: map[string]ranv1alpha1.LabelValue{"upgrading": ""}}}
	f.Upgrade.Spec.Actions.AfterCompletion = &ranv1alpha1.AfterCompletion{ClusterActions: ranv1alpha1.ClusterActions{
		AddClusterLabels: map[string]ranv1alpha1.LabelValue{"ztp-done": ""}}}
	in := Decide(f, Config{}, decideAt)
	if !in.StartedNow || in.Status.StartedAt == nil {
		t.Fatalf("started now %v, status.startedAt %v", in.StartedNow, in.Status.StartedAt)
	}
	checkStartRecords(t, in)
	e := in.Enforcement
	if !e.Write || e.Paced || len(e.Policies) != 1 || !slices.Equal(e.Clusters[0], []string{"c1", "c2"}) {
		t.Errorf("enforcement %+v, want policy upgrade on c1 and c2 at once", e)
	}
	if !slices.Equal(in.Actions.BeforeEnable, []string{"c1", "c2", "c3"}) || !slices.Equal(in.Actions.AfterCompletion, []string{"c9"}) {
		t.Errorf("actions %+v, want beforeEnable on the plan and afterCompletion on the compliant c9", in.Actions)
	}
	if len(in.Status.ManagedPoliciesForUpgrade) != 1 || in.Status.ManagedPoliciesForUpgrade[0].Name != "upgrade" {
		t.Errorf("managed policies %+v", in.Status.ManagedPoliciesForUpgrade)
	}
}

// checkStartRecords checks the records of a start: the plan's two batches, the first started.
func checkStartRecords(t *testing.T, in Intents) {
	t.Helper()
	if len(in.Records) != 2 || in.Records[0].Spec.Index != 1 || !slices.Equal(in.Records[0].Spec.Clusters, []string{"c1", "c2"}) {
		t.Fatalf("records %+v, want the plan's two batches", in.Records)
	}
	if st := in.RecordStatus[in.Records[0].Name]; st.StartedAt == nil {
		t.Errorf("batch 1's record %+v does not start", st)
	}
	if st, ok := in.RecordStatus[in.Records[1].Name]; ok && st.StartedAt != nil {
		t.Errorf("batch 2 started with batch 1")
	}
}

func TestDecideDisabledStartsNothing(t *testing.T) {
	f := fresh()
	f.Upgrade.Spec.Enable = ptr.To(false)
	in := Decide(f, Config{}, decideAt)
	if in.StartedNow || in.Records != nil || in.Enforcement.Write || in.Actions.BeforeEnable != nil {
		t.Errorf("a disabled rollout decided writes: %+v", in)
	}
	if in.Status.State != ranv1alpha1.StateNotStarted {
		t.Errorf("state %s, want NotStarted", in.Status.State)
	}
}

// precacheFacts: pre-caching asked for, its spec valid, each cluster's state as the status
// kept it, no view on the hub, every cluster available.
func precacheFacts(kept map[string]string) Facts {
	f := fresh()
	f.Upgrade.Spec.PreCaching = true
	f.Precache = &Precache{Result: precache.Result{Valid: true, Reason: ranv1alpha1.ReasonPrecacheSpecIsWellFormed},
		Jobs: prestartJobs([]string{"c1", "c2", "c3"}, kept)}
	return f
}

func prestartJobs(order []string, kept map[string]string) Jobs {
	jobs := Jobs{Order: order, Work: map[string]talmjob.Work{}, Views: map[string]map[string]talmjob.View{},
		Available: map[string]bool{}, Kept: kept}
	for _, c := range order {
		jobs.Work[c] = talmjob.Work{Cluster: c}
		jobs.Available[c] = true
	}
	return jobs
}

// TALM's words for the states.
const (
	succeeded = talmjob.Succeeded
	failed    = talmjob.Failed
	running   = talmjob.Active
)

// prestartClusters are the clusters the decision wrote the protocol's views and actions
// for, in order.
func prestartClusters(in Intents, proto talmjob.Protocol) []string {
	var out []string
	for _, w := range in.Spoke.Prestart {
		if slices.Contains(w.DeleteViews, proto.JobView) || slices.ContainsFunc(w.Views, func(v *viewv1beta1.ManagedClusterView) bool {
			return slices.Contains(proto.Views(), v.Name)
		}) {
			out = append(out, w.Cluster)
		}
	}
	return out
}

func TestDecidePrecaching(t *testing.T) {
	for _, tc := range []struct {
		name      string
		kept      map[string]string
		cap       int
		elsewhere int
		states    map[string]string
		plan      []string
		started   bool
		reason    string
	}{
		{name: "starts under the hub-wide cap", cap: 2, plan: []string{"c1", "c2", "c3"},
			states: map[string]string{"c1": talmjob.PreparingToStart, "c2": talmjob.PreparingToStart, "c3": talmjob.NotStarted}},
		{name: "counts the other rollouts' against the cap", cap: 2, elsewhere: 1, plan: []string{"c1", "c2", "c3"},
			states: map[string]string{"c1": talmjob.PreparingToStart, "c2": talmjob.NotStarted, "c3": talmjob.NotStarted}},
		{name: "counts its own running Jobs against the cap", cap: 2, kept: map[string]string{"c2": running}, plan: []string{"c1", "c2", "c3"},
			states: map[string]string{"c1": talmjob.PreparingToStart, "c2": running, "c3": talmjob.NotStarted}},
		{name: "keeps a running Job and starts the rest without a cap", kept: map[string]string{"c1": running}, plan: []string{"c1", "c2", "c3"},
			states: map[string]string{"c1": running, "c2": talmjob.PreparingToStart, "c3": talmjob.PreparingToStart}},
		{name: "takes a failed cluster out of the plan and starts", kept: map[string]string{"c1": succeeded, "c2": failed, "c3": succeeded},
			plan: []string{"c1", "c3"}, started: true},
		{name: "cannot start when every cluster failed", kept: map[string]string{"c1": failed, "c2": failed, "c3": failed},
			plan: []string{"c1", "c2", "c3"}, reason: ranv1alpha1.ReasonPrecachingFailedEverywhere},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := precacheFacts(tc.kept)
			f.Precache.Elsewhere = tc.elsewhere
			in := Decide(f, Config{MaxConcurrentPrecaching: tc.cap}, decideAt)
			if tc.states != nil && !maps.Equal(in.Status.Precaching.Status, tc.states) {
				t.Errorf("states %v, want %v", in.Status.Precaching.Status, tc.states)
			}
			prepared := checkPrecacheWrites(t, in, tc.states)
			if got := allClusters(in.Plan); !slices.Equal(got, tc.plan) {
				t.Errorf("plan %v, want %v", got, tc.plan)
			}
			if in.StartedNow != tc.started {
				t.Errorf("started now %v, want %v (state %s: %s)", in.StartedNow, tc.started, in.Status.State, in.Status.Message)
			}
			if tc.reason != "" && in.Decision.Reason != tc.reason {
				t.Errorf("reason %s, want %s", in.Decision.Reason, tc.reason)
			}
			if !tc.started && in.Status.Precaching == nil {
				t.Errorf("status.precaching not shown")
			}
			if len(prepared) > 0 && condition(in.Status, ranv1alpha1.ConditionProgressing) != nil {
				t.Errorf("Progressing written while pre-caching runs (TALM writes none)")
			}
		})
	}
}

// checkPrecacheWrites checks that the views and actions were written for the clusters
// preparing, and for those Active, whose Job view (missing in these facts) is made again;
// it returns those preparing.
func checkPrecacheWrites(t *testing.T, in Intents, states map[string]string) []string {
	t.Helper()
	var written, prepared []string
	for _, c := range []string{"c1", "c2", "c3"} {
		if states[c] == talmjob.PreparingToStart || states[c] == running {
			written = append(written, c)
		}
		if states[c] == talmjob.PreparingToStart {
			prepared = append(prepared, c)
		}
	}
	if got := prestartClusters(in, talmjob.Precache); !slices.Equal(got, written) {
		t.Errorf("wrote the views of %v, want those of %v", got, written)
	}
	return prepared
}

// Pre-caching fails a cluster on what TALM counts as an error only once the rollout is
// enabled (TALM's pre-caching-partial-complete: an unavailable cluster stays Active until
// then).
func TestDecidePrecachingFailsOnErrorsOnceEnabled(t *testing.T) {
	f := precacheFacts(map[string]string{"c1": running, "c2": succeeded, "c3": succeeded})
	f.Precache.Jobs.Available["c1"] = false
	job := &batchv1.Job{Status: batchv1.JobStatus{Active: 1}}
	f.Precache.Jobs.Views["c1"] = map[string]talmjob.View{talmjob.Precache.JobView: {Exists: true, Answered: true, Found: true, Job: job}}
	f.Upgrade.Spec.Enable = ptr.To(false)
	if in := Decide(f, Config{}, decideAt); in.Status.Precaching.Status["c1"] != running {
		t.Errorf("disabled: %s, want Active", in.Status.Precaching.Status["c1"])
	}
	f.Upgrade.Spec.Enable = ptr.To(true)
	in := Decide(f, Config{}, decideAt)
	if in.Status.Precaching.Status["c1"] != failed || !in.StartedNow || !slices.Equal(allClusters(in.Plan), []string{"c2", "c3"}) {
		t.Errorf("enabled: %s, started %v, plan %v; want c1 failed and left out of the started plan",
			in.Status.Precaching.Status["c1"], in.StartedNow, allClusters(in.Plan))
	}
}

// A Job seen succeeding is cleared (its views deleted, its namespace removed from the spoke)
// only by writes that follow the status recording the success (Settled): were they made before
// and the operator stopped between the two, the restarted operator would find the cluster
// Active with its Job gone, and fail it.
func TestDecidePrecachingClearsASucceededJobAfterTheStatus(t *testing.T) {
	f := precacheFacts(map[string]string{"c1": running, "c2": succeeded, "c3": succeeded})
	job := &batchv1.Job{Status: batchv1.JobStatus{Succeeded: 1}}
	f.Precache.Jobs.Views["c1"] = map[string]talmjob.View{talmjob.Precache.JobView: {Exists: true, Answered: true, Found: true, Job: job}}
	in := Decide(f, Config{}, decideAt)
	if got := in.Status.Precaching.Status["c1"]; got != succeeded {
		t.Fatalf("state %s, want Succeeded", got)
	}
	for _, w := range in.Spoke.Prestart {
		if w.Cluster == "c1" {
			t.Errorf("writes before the status for the succeeded cluster: %+v", w)
		}
	}
	if len(in.Spoke.Settled) != 1 || in.Spoke.Settled[0].Cluster != "c1" || !slices.Contains(in.Spoke.Settled[0].DeleteViews, talmjob.Precache.JobView) {
		t.Errorf("settled writes %+v, want c1's, deleting its Job view", in.Spoke.Settled)
	}
}

func TestDecidePrecacheSpecNotValid(t *testing.T) {
	f := precacheFacts(nil)
	f.Precache.Result = precache.Result{Reason: ranv1alpha1.ReasonPrecacheSpecIncomplete, Message: "no release image"}
	in := Decide(f, Config{}, decideAt)
	if len(in.Spoke.Prestart) > 0 || in.StartedNow {
		t.Errorf("writes %v, started %v: want neither with a spec that is not valid", in.Spoke.Prestart, in.StartedNow)
	}
	if c := condition(in.Status, ranv1alpha1.ConditionPrecacheSpecValid); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("PrecacheSpecValid %+v, want False", c)
	}
}

// backupFacts: a backup asked for, pre-caching where the status kept it, no backup begun.
func backupFacts(precached map[string]string) Facts {
	f := precacheFacts(precached)
	f.Upgrade.Spec.Backup = true
	f.Backup = &Backup{Jobs: prestartJobs([]string{"c1", "c2", "c3"}, nil)}
	return f
}

func TestDecideBackup(t *testing.T) {
	done := map[string]string{"c1": succeeded, "c2": succeeded, "c3": succeeded}
	for _, tc := range []struct {
		name      string
		precached map[string]string
		enabled   bool
		backups   []string
	}{
		{name: "waits for pre-caching", precached: map[string]string{"c1": succeeded, "c2": running, "c3": succeeded}, enabled: true},
		{name: "starts every backup once pre-caching ended", precached: done, enabled: true, backups: []string{"c1", "c2", "c3"}},
		{name: "waits for enable", precached: done},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := backupFacts(tc.precached)
			f.Upgrade.Spec.Enable = ptr.To(tc.enabled)
			in := Decide(f, Config{}, decideAt)
			if got := prestartClusters(in, talmjob.Backup); !slices.Equal(got, tc.backups) {
				t.Errorf("backups on %v, want %v", got, tc.backups)
			}
			if in.StartedNow {
				t.Errorf("started before the backup ended")
			}
			if (in.Status.Backup != nil) != (tc.backups != nil) {
				t.Errorf("status.backup %+v", in.Status.Backup)
			}
			// As TALM's, a backup is PreparingToStart for one pass only.
			for _, c := range tc.backups {
				if in.Status.Backup.Status[c] != talmjob.Starting {
					t.Errorf("backup of %s: %s, want Starting", c, in.Status.Backup.Status[c])
				}
			}
		})
	}
}

func TestDecideChecksOnThePlanLeft(t *testing.T) {
	f := precacheFacts(map[string]string{"c1": succeeded, "c2": failed, "c3": running})
	unknown := upgradecheck.Verdict{Outcome: upgradecheck.Hold, Reason: upgradecheck.ReasonClusterVersionUnknown}
	f.Checks = &Checks{ViewsNeeded: true, Verdicts: map[string]upgradecheck.Verdict{"c1": unknown, "c2": unknown, "c3": unknown}}
	in := Decide(f, Config{}, decideAt)
	if !slices.Equal(in.Spoke.Views, []string{"c1", "c2", "c3"}) {
		t.Errorf("views %v while pre-caching runs, want every planned cluster's", in.Spoke.Views)
	}
	f.Precache.Jobs.Kept["c3"] = succeeded
	in = Decide(f, Config{}, decideAt)
	if !slices.Equal(in.Spoke.Views, []string{"c1", "c3"}) {
		t.Errorf("views %v, want those of c1 and c3 (c2 left the plan)", in.Spoke.Views)
	}
	if in.Status.UpgradeChecks == nil || condition(in.Status, ranv1alpha1.ConditionUpgradeChecked) == nil {
		t.Errorf("status.upgradeChecks %+v, want the checks shown", in.Status.UpgradeChecks)
	}
	f.Checks.ViewsNeeded = false
	if in := Decide(f, Config{}, decideAt); in.Spoke.Views != nil {
		t.Errorf("views %v on a hub that needs none", in.Spoke.Views)
	}
}

func TestDecideHealthJobs(t *testing.T) {
	f := fresh()
	f.Upgrade.Spec.Enable = ptr.To(false)
	f.Upgrade.Spec.UpgradeChecks = &ranv1alpha1.UpgradeChecks{Health: &ranv1alpha1.HealthChecks{BeforeUpgrade: true}}
	f.Health.Preview = map[string]spokecheck.HealthVerdict{"c1": {Done: true, Healthy: true}, "c2": {}, "c3": {}}
	in := Decide(f, Config{SpokeImage: "spoke:1"}, decideAt)
	if got := jobClusters(in.Spoke.Jobs); !slices.Equal(got, []string{"c2", "c3"}) {
		t.Errorf("health runs on %v, want those not answered (c2, c3)", got)
	}
	for _, j := range in.Spoke.Jobs {
		if j.Image != "spoke:1" {
			t.Errorf("job %s runs image %q", j.Name, j.Image)
		}
	}
}

func TestDecideProgress(t *testing.T) {
	f := fresh()
	f.Upgrade.Spec.Actions.AfterCompletion = &ranv1alpha1.AfterCompletion{ClusterActions: ranv1alpha1.ClusterActions{
		AddClusterLabels: map[string]ranv1alpha1.LabelValue{"ztp-done": ""}}}
	in := Decide(f, Config{}, decideAt)
	f = next(t, f, in, policy("upgrade", []string{"c1"}, "c1", "c2", "c3"))
	in = Decide(f, Config{}, decideAt.Add(time.Minute))
	if in.StartedNow {
		t.Errorf("started twice")
	}
	if st := in.RecordStatus[f.Records[0].Name]; !hasCluster(st, "c1", ranv1alpha1.ClusterCompleted) {
		t.Errorf("batch 1's record %+v, want c1 completed", st.Clusters)
	}
	if !slices.Equal(in.Actions.AfterCompletion, []string{"c1"}) {
		t.Errorf("afterCompletion on %v, want c1", in.Actions.AfterCompletion)
	}
	e := in.Enforcement
	if !e.Write || !e.Paced || !slices.Equal(e.Clusters[0], []string{"c2"}) {
		t.Errorf("enforcement %+v, want only c2, paced", e)
	}
	// The next pass, c2 compliant: the batch ends, batch 2 starts at once.
	f = next(t, f, in, policy("upgrade", []string{"c1", "c2"}, "c1", "c2", "c3"))
	in = Decide(f, Config{}, decideAt.Add(2*time.Minute))
	if in.Enforcement.Paced || !slices.Equal(in.Enforcement.Clusters[0], []string{"c3"}) {
		t.Errorf("enforcement %+v, want c3 at once", in.Enforcement)
	}
}

// A window's freed slot starts a cluster only while the operator does not pace starts, and
// the decision says that clusters start, for the operator to pace the next ones.
func TestDecideWindowStarts(t *testing.T) {
	f := fresh()
	f.Plan = plan.Plan{Batches: []plan.Batch{{Clusters: []string{"c1", "c2", "c3"}, Window: 2}}, SkippedCompliant: []string{"c9"}}
	in := Decide(f, Config{}, decideAt)
	if e := in.Enforcement; e.Paced || !slices.Equal(e.Clusters[0], []string{"c1", "c2"}) {
		t.Fatalf("enforcement at the start %+v, want c1 and c2 at once", e)
	}
	// c1 complies: c3 takes its slot once the operator's start pacing is over.
	f = next(t, f, in, policy("upgrade", []string{"c1"}, "c1", "c2", "c3"))
	f.StartsPaced = true
	if e := Decide(f, Config{}, decideAt.Add(time.Second)).Enforcement; e.Starts || !slices.Equal(e.Clusters[0], []string{"c2"}) {
		t.Errorf("enforcement while starts are paced %+v, want c2 alone", e)
	}
	f.StartsPaced = false
	in = Decide(f, Config{}, decideAt.Add(time.Minute))
	if e := in.Enforcement; !e.Starts || !slices.Equal(e.Clusters[0], []string{"c2", "c3"}) {
		t.Errorf("enforcement as c3 starts %+v, want c2 and c3, starting", e)
	}
	// Nothing starts on the next pass.
	f = next(t, f, in, policy("upgrade", []string{"c1"}, "c1", "c2", "c3"))
	if e := Decide(f, Config{}, decideAt.Add(time.Minute+time.Second)).Enforcement; e.Starts {
		t.Errorf("enforcement with no cluster starting %+v says clusters start", e)
	}
}

// While the status's pace runs, a pass whose status changed only by clusters moving on
// leaves TALM's fields as read (the pass that writes makes them); a pass with more than
// progress, or after the pace, makes them.
func TestDecidePacedProgressLeavesTALMFields(t *testing.T) {
	f := fresh()
	in := Decide(f, Config{}, decideAt)
	f = next(t, f, in, policy("upgrade", []string{"c1"}, "c1", "c2", "c3"))
	talmState := func(in Intents, cluster string) string {
		if p := in.Status.Status.CurrentBatchRemediationProgress[cluster]; p != nil {
			return p.State
		}
		return ""
	}
	if got := talmState(Intents{Status: f.Upgrade.Status}, "c1"); got != "InProgress" {
		t.Fatalf("c1 read as %q in TALM's progress, want InProgress", got)
	}

	f.ProgressPaced = true
	in = Decide(f, Config{}, decideAt.Add(time.Second))
	if !in.StatusPaced || in.Status.Counts.Completed != 1 || talmState(in, "c1") != "InProgress" {
		t.Errorf("paced progress: StatusPaced %v, %d completed, c1 %q in TALM's progress; want paced, 1, InProgress as read",
			in.StatusPaced, in.Status.Counts.Completed, talmState(in, "c1"))
	}
	f.ProgressPaced = false
	if in = Decide(f, Config{}, decideAt.Add(time.Second)); in.StatusPaced || talmState(in, "c1") != "Completed" {
		t.Errorf("progress after the pace: StatusPaced %v, c1 %q in TALM's progress; want written, Completed", in.StatusPaced, talmState(in, "c1"))
	}

	// c2 complies too: the batch ends, which is more than progress.
	f.ProgressPaced = true
	f.Roots = []*policyv1.Policy{policy("upgrade", []string{"c1", "c2"}, "c1", "c2", "c3")}
	in = Decide(f, Config{}, decideAt.Add(2*time.Second))
	if in.StatusPaced || in.Status.Status.CurrentBatch != 2 {
		t.Errorf("batch end while paced: StatusPaced %v, TALM's current batch %d; want written, 2", in.StatusPaced, in.Status.Status.CurrentBatch)
	}
}

func hasCluster(st ranv1alpha1.ClusterGroupUpgradeBatchStatus, name string, state ranv1alpha1.ClusterState) bool {
	for _, c := range st.Clusters {
		if c.Name == name && c.State == state {
			return true
		}
	}
	return false
}

func TestDecideReleasesADeletedPolicy(t *testing.T) {
	f := fresh()
	f.Roots = append(f.Roots, policy("operators", nil, "c1", "c2", "c3"))
	in := Decide(f, Config{}, decideAt)
	f = next(t, f, in, nil, f.Roots[1])
	in = Decide(f, Config{}, decideAt.Add(time.Minute))
	e := in.Enforcement
	if len(e.Released) != 1 || e.Released[0].Name != "upgrade" {
		t.Errorf("released %+v, want the deleted policy upgrade", e.Released)
	}
	if len(e.Policies) != 1 || e.Policies[0].Name != "operators" {
		t.Errorf("enforced %v, want only operators", e.Policies)
	}
}

func TestDecideWorks(t *testing.T) {
	f := fresh()
	f.Upgrade.Spec.PreUpgradeActions = []string{"drain"}
	f.Works = &Works{Templates: map[string]*workv1alpha1.ManifestWorkReplicaSet{"drain": {}}, Made: map[string]*workv1.ManifestWork{}}
	in := Decide(f, Config{}, decideAt)
	f = next(t, f, in, f.Roots...)
	f.Works = &Works{Templates: map[string]*workv1alpha1.ManifestWorkReplicaSet{"drain": {}}, Made: map[string]*workv1.ManifestWork{}}
	in = Decide(f, Config{}, decideAt.Add(time.Minute))
	want := []Work{{Role: manifestwork.RolePre, Template: "drain", Cluster: "c1"}, {Role: manifestwork.RolePre, Template: "drain", Cluster: "c2"}}
	if !slices.Equal(in.Spoke.Works, want) {
		t.Errorf("works %+v, want the pre-upgrade action on c1 and c2", in.Spoke.Works)
	}
	if len(in.Enforcement.Clusters[0]) != 0 {
		t.Errorf("enforced on %v before the pre-upgrade actions are done", in.Enforcement.Clusters[0])
	}
	// Without the template nothing is made: the clusters wait.
	delete(f.Works.Templates, "drain")
	if in := Decide(f, Config{}, decideAt.Add(time.Minute)); len(in.Spoke.Works) != 0 {
		t.Errorf("works %+v made without their template", in.Spoke.Works)
	}
}

func TestDecideInstallPlans(t *testing.T) {
	f := fresh()
	in := Decide(f, Config{}, decideAt)
	if in.Spoke.InstallPlans.Views != nil || in.Spoke.InstallPlans.Stale != nil {
		t.Errorf("InstallPlan writes %+v on a hub that serves no views", in.Spoke.InstallPlans)
	}
	stale := &viewv1beta1.ManagedClusterView{ObjectMeta: metav1.ObjectMeta{Namespace: "c7", Name: "old"}}
	f.OperatorUpgrades = &OperatorUpgrades{Views: map[client.ObjectKey]*viewv1beta1.ManagedClusterView{
		client.ObjectKeyFromObject(stale): stale}, Actions: map[client.ObjectKey]bool{}}
	in = Decide(f, Config{}, decideAt)
	if len(in.Spoke.InstallPlans.Stale) != 1 || in.Spoke.InstallPlans.Stale[0] != stale {
		t.Errorf("stale views %v, want the view of c7, which no policy is enforced on", in.Spoke.InstallPlans.Stale)
	}
}

func TestDecideChangesNoFact(t *testing.T) {
	f := precacheFacts(map[string]string{"c1": succeeded, "c2": failed, "c3": succeeded})
	before := f.Upgrade.DeepCopy()
	plan := f.Plan
	in := Decide(f, Config{}, decideAt)
	if !equality.Semantic.DeepEqual(before, f.Upgrade) {
		t.Errorf("Decide changed the ClusterGroupUpgrade it read")
	}
	if len(plan.Batches[0].Clusters) != 2 || len(in.Plan.Batches[0].Clusters) != 1 {
		t.Errorf("plan read %v, decided %v: want the read one whole", plan.Batches, in.Plan.Batches)
	}
	if f.Precache.Jobs.Kept["c2"] != failed {
		t.Errorf("Decide changed a fact")
	}
}

// doneWork is the ManifestWork of a step on a cluster, applied and available.
func doneWork(cluster, template string) *workv1.ManifestWork {
	ok := func(kind string) metav1.Condition {
		return metav1.Condition{Type: kind, Status: metav1.ConditionTrue, ObservedGeneration: 1}
	}
	return &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: manifestwork.Name(ownership.Owner{Namespace: "fleet", Name: "upgrade"}, manifestwork.RoleStep, template), Generation: 1},
		Status:     workv1.ManifestWorkStatus{Conditions: []metav1.Condition{ok(workv1.WorkApplied), ok(workv1.WorkAvailable)}},
	}
}

func TestDecideStepWorks(t *testing.T) {
	prep := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "prep",
		Annotations: map[string]string{manifestwork.AnnotationDeleteWhenDone: "true"}}}
	templates := map[string]*workv1alpha1.ManifestWorkReplicaSet{"prep": prep, "ibu": {ObjectMeta: metav1.ObjectMeta{Name: "ibu"}}}
	works := func(made ...*workv1.ManifestWork) *Works {
		w := &Works{Templates: templates, Made: map[string]*workv1.ManifestWork{}}
		for _, mw := range made {
			w.Made[mw.Namespace+"/"+mw.Name] = mw
		}
		return w
	}
	f := fresh()
	f.Upgrade.Spec.ManifestWorkTemplates = []string{"prep", "ibu"}
	f.Works = works()
	in := Decide(f, Config{}, decideAt)
	// The policy complied with: the clusters move on to the first step, its works are made.
	f = next(t, f, in, policy("upgrade", []string{"c1", "c2"}, "c1", "c2", "c3"))
	f.Works = works()
	in = Decide(f, Config{}, decideAt.Add(time.Minute))
	want := []Work{{Role: manifestwork.RoleStep, Template: "prep", Cluster: "c1"}, {Role: manifestwork.RoleStep, Template: "prep", Cluster: "c2"}}
	if !slices.Equal(in.Spoke.Works, want) {
		t.Fatalf("works %+v, want the first step's on c1 and c2", in.Spoke.Works)
	}
	// The first step done: its works go (delete-when-done) before the next step's are made.
	f = next(t, f, in, f.Roots...)
	f.Works = works(doneWork("c1", "prep"), doneWork("c2", "prep"))
	in = Decide(f, Config{}, decideAt.Add(2*time.Minute))
	want = []Work{{Role: manifestwork.RoleStep, Template: "prep", Cluster: "c1", Delete: true},
		{Role: manifestwork.RoleStep, Template: "prep", Cluster: "c2", Delete: true}}
	if !slices.Equal(in.Spoke.Works, want) {
		t.Errorf("works %+v, want the first step's deleted and nothing made meanwhile", in.Spoke.Works)
	}
	// Gone: the next step's are made, the first step stays done.
	f = next(t, f, in, f.Roots...)
	f.Works = works()
	in = Decide(f, Config{}, decideAt.Add(3*time.Minute))
	want = []Work{{Role: manifestwork.RoleStep, Template: "ibu", Cluster: "c1"}, {Role: manifestwork.RoleStep, Template: "ibu", Cluster: "c2"}}
	if !slices.Equal(in.Spoke.Works, want) {
		t.Errorf("works %+v, want the second step's on c1 and c2", in.Spoke.Works)
	}
}

func TestDecideCompletionCleansUp(t *testing.T) {
	f := fresh()
	f.Plan.Batches = f.Plan.Batches[:1]
	in := Decide(f, Config{}, decideAt)
	f = next(t, f, in, policy("upgrade", []string{"c1", "c2"}, "c1", "c2"))
	in = Decide(f, Config{}, decideAt.Add(time.Minute))
	if in.Decision.State != ranv1alpha1.StateCompleted || !in.Cleanup || in.Enforcement.Write {
		t.Errorf("state %s, cleanup %v, enforcement %+v: want Completed, its objects deleted, nothing enforced", in.Decision.State, in.Cleanup, in.Enforcement)
	}
	if in.Status.CompletedAt == nil || len(in.Status.Placements) != 0 {
		t.Errorf("status completedAt %v, placements %v", in.Status.CompletedAt, in.Status.Placements)
	}
	f.Upgrade.Spec.Actions.AfterCompletion = &ranv1alpha1.AfterCompletion{DeleteObjects: ptr.To(false)}
	if in := Decide(f, Config{}, decideAt.Add(time.Minute)); in.Cleanup || !in.Enforcement.Write {
		t.Errorf("cleanup %v with deleteObjects false", in.Cleanup)
	}
}

// Records that could not be rebuilt stop the rollout: it enforces nothing, writes no record,
// and its status keeps the plan with the state TimedOut and what is lost; records that were
// rebuilt are made again before anything is enforced.
func TestDecideLostRecords(t *testing.T) {
	f := fresh()
	started := Decide(f, Config{}, decideAt)
	f = next(t, f, started, policy("upgrade", nil, "c1", "c2", "c3"))

	lost := f
	lost.Records, lost.Plan, lost.Progress = nil, plan.Plan{}, rollout.Progress{}
	lost.Lost = &rollout.Problem{Reason: ranv1alpha1.ReasonRecordsLost, Message: "records of batch 1 are gone"}
	in := Decide(lost, Config{}, decideAt.Add(time.Minute))
	e := in.Enforcement
	if !e.Write || e.Paced || len(e.Policies) != 1 || len(e.Clusters[0]) != 0 {
		t.Fatalf("enforcement %+v, want an unpaced write enforcing the policy on no cluster", e)
	}
	if len(in.RecordStatus) != 0 || len(in.Rebuilt) != 0 || in.Cleanup {
		t.Fatalf("record writes %v, rebuilt %d, cleanup %v: want none", in.RecordStatus, len(in.Rebuilt), in.Cleanup)
	}
	expectStopped(t, in.Status)
}

// expectStopped checks the status of a rollout stopped because its records are lost.
func expectStopped(t *testing.T, st ranv1alpha1.ClusterGroupUpgradeStatus) {
	t.Helper()
	c := condition(st, ranv1alpha1.ConditionSucceeded)
	if st.State != ranv1alpha1.StateTimedOut || c == nil || c.Status != metav1.ConditionFalse || c.Reason != ranv1alpha1.ReasonRecordsLost {
		t.Fatalf("status %s, Succeeded %+v: want TimedOut, RecordsLost", st.State, c)
	}
	if st.Plan == nil || st.Plan.Batches != 2 || len(st.RemediationPlan) != 2 || st.CurrentBatch != nil {
		t.Fatalf("plan %+v remediationPlan %v current %+v: want the plan kept, no batch running", st.Plan, st.RemediationPlan, st.CurrentBatch)
	}
}

// Records rebuilt by the gather step are made again, and the rollout goes on.
func TestDecideRebuiltRecords(t *testing.T) {
	f := fresh()
	f = next(t, f, Decide(f, Config{}, decideAt), policy("upgrade", nil, "c1", "c2", "c3"))
	rebuilt := f
	rebuilt.Rebuilt = f.Records[1:]
	in := Decide(rebuilt, Config{}, decideAt.Add(time.Minute))
	if len(in.Rebuilt) != 1 || in.Rebuilt[0].Name != f.Records[1].Name || in.Status.State != ranv1alpha1.StateNotCompleted {
		t.Fatalf("rebuilt %d records, state %s: want the lost one made again and the rollout going on", len(in.Rebuilt), in.Status.State)
	}
}

// A started rollout whose cluster actions no ManagedCluster takes (stored before admission
// refused them) goes on without them, and says so: before, the write failed every pass once
// a cluster completed, and nothing else was decided.
func TestDecideInvalidActionsAfterTheStart(t *testing.T) {
	f := fresh()
	f = next(t, f, Decide(f, Config{}, decideAt), policy("upgrade", []string{"c1"}, "c1", "c2", "c3"))
	f.Upgrade.Spec.Actions.AfterCompletion = &ranv1alpha1.AfterCompletion{ClusterActions: ranv1alpha1.ClusterActions{
		AddClusterLabels: map[string]ranv1alpha1.LabelValue{"upgraded": "4.18/ok"}}}
	in := Decide(f, Config{}, decideAt.Add(time.Minute))
	if len(in.Actions.AfterCompletion) != 0 || in.ActionsProblem == nil {
		t.Fatalf("actions on %v, problem %v: want none run, and why", in.Actions.AfterCompletion, in.ActionsProblem)
	}
	c := condition(in.Status, ranv1alpha1.ConditionReconciled)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != ranv1alpha1.ReasonInvalidClusterActions ||
		!strings.Contains(c.Message, `spec.actions.afterCompletion: addClusterLabels value "4.18/ok"`) {
		t.Fatalf("Reconciled %+v, want False InvalidClusterActions naming the value", c)
	}
	if !in.Enforcement.Write || in.Status.State != ranv1alpha1.StateNotCompleted || in.Status.Counts.Completed != 1 {
		t.Fatalf("enforcement written %v, state %s, %d completed: want the rollout going on", in.Enforcement.Write, in.Status.State, in.Status.Counts.Completed)
	}
}

// A status wiped mid-rollout (a hub restore that drops status) loses the accepted policy
// generations: they are read back from the batch records, which froze them at the start, so
// a policy changed since still waits for an approval before the next batch, its enforce copy
// keeping its content meanwhile; the approval accepts it. Before, the policies were resolved
// again and a changed one was accepted silently.
func TestDecideWipedStatusAsksForApproval(t *testing.T) {
	f := fresh()
	f = next(t, f, Decide(f, Config{}, decideAt), policy("upgrade", nil, "c1", "c2", "c3"))
	expectFrozenPolicies(t, f.Records)
	wiped := f
	wiped.Upgrade = f.Upgrade.DeepCopy()
	wiped.Upgrade.Status = ranv1alpha1.ClusterGroupUpgradeStatus{}
	changed := policy("upgrade", []string{"c1", "c2"}, "c1", "c2", "c3")
	changed.Generation = 2
	wiped.Roots = []*policyv1.Policy{changed}
	in := Decide(wiped, Config{}, decideAt.Add(time.Minute))
	if w := in.Status.Waiting; w == nil || w.Reason != ranv1alpha1.ReasonManagedPolicyChanged || w.Batch != 2 ||
		!strings.Contains(in.Status.Message, "generation 1, now 2") {
		t.Fatalf("waiting %+v, want batch 2 waiting for the approval of the change from generation 1 to 2", w)
	}
	if acc := in.Status.ManagedPoliciesForUpgrade; !in.Enforcement.Frozen[0] || len(acc) != 1 || acc[0].Generation != 1 {
		t.Fatalf("frozen %v, accepted %+v: want the copy kept and generation 1 still accepted", in.Enforcement.Frozen, acc)
	}

	approved := next(t, wiped, in, changed)
	approved.Upgrade.Annotations = map[string]string{ranv1alpha1.AnnotationApproveBatch: "2"}
	in = Decide(approved, Config{}, decideAt.Add(2*time.Minute))
	if cb := in.Status.CurrentBatch; cb == nil || cb.Index != 2 || in.Status.Waiting != nil {
		t.Fatalf("current batch %+v, waiting %+v: want batch 2 started once approved", cb, in.Status.Waiting)
	}
	if acc := in.Status.ManagedPoliciesForUpgrade; len(acc) != 1 || acc[0].Generation != 2 || in.Enforcement.Frozen[0] {
		t.Fatalf("accepted %+v, frozen %v: want generation 2 accepted", acc, in.Enforcement.Frozen)
	}
}

// A pass stopped between the records and the status write at the start leaves no accepted
// policies in status: the records' are used, the policy unchanged, and the rollout goes on
// without asking anything; records from before they held policies accept the policies as
// they are, as before.
func TestDecideStatusLostAtTheStartGoesOn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		legacy bool
	}{{name: "records with policies"}, {name: "records without policies", legacy: true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := fresh()
			f = next(t, f, Decide(f, Config{}, decideAt), policy("upgrade", []string{"c1", "c2"}, "c1", "c2", "c3"))
			f.Upgrade.Status = ranv1alpha1.ClusterGroupUpgradeStatus{}
			if tc.legacy {
				for i := range f.Records {
					f.Records[i].Spec.Policies = nil
				}
			}
			in := Decide(f, Config{}, decideAt.Add(time.Minute))
			if cb := in.Status.CurrentBatch; cb == nil || cb.Index != 2 || in.Status.Waiting != nil {
				t.Fatalf("current batch %+v, waiting %+v: want batch 2 started", cb, in.Status.Waiting)
			}
			if acc := in.Status.ManagedPoliciesForUpgrade; len(acc) != 1 || acc[0].Generation != 1 {
				t.Fatalf("accepted %+v, want generation 1", acc)
			}
		})
	}
}

// expectFrozenPolicies checks that each record froze the managed policy at generation 1.
func expectFrozenPolicies(t *testing.T, records []ranv1alpha1.ClusterGroupUpgradeBatch) {
	t.Helper()
	for _, r := range records {
		if got := r.Spec.Policies; len(got) != 1 || got[0].Generation != 1 {
			t.Fatalf("record %s froze policies %+v, want upgrade at generation 1", r.Name, got)
		}
	}
}

// TestDecideTenancyActions: where tenancy applies, cluster actions write and remove only keys
// under the prefix; an exempt namespace, or tenancy off, keeps TALM's behaviour.
func TestDecideTenancyActions(t *testing.T) {
	const prefix = "tenant-a.example.com/"
	for _, tc := range []struct {
		name      string
		rules     tenancy.Rules
		keys      []string
		wantWords string // in the message; empty: the rollout starts
	}{
		{name: "keys under the prefix start", rules: tenancy.Rules{On: true, LabelPrefix: prefix}, keys: []string{prefix + "wave"}},
		{name: "a key outside the prefix is refused by name", rules: tenancy.Rules{On: true, LabelPrefix: prefix},
			keys: []string{prefix + "wave", "ztp-done"}, wantWords: `keys outside the tenancy prefix "tenant-a.example.com/": ztp-done`},
		{name: "no prefix allows no key", rules: tenancy.Rules{On: true}, keys: []string{prefix + "wave"},
			wantWords: "tenancy mode allows no label or annotation keys"},
		{name: "tenancy off allows any key", keys: []string{"ztp-done"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, exempt := range []bool{false, true} {
				f := fresh()
				rules := tc.rules
				if exempt {
					rules.Exempt = []string{f.Upgrade.Namespace}
				}
				remove := ranv1alpha1.ClusterActions{RemoveClusterAnnotations: tc.keys}
				f.Upgrade.Spec.Actions.BeforeEnable = &ranv1alpha1.BeforeEnable{ClusterActions: remove}
				in := Decide(f, Config{Tenancy: rules}, decideAt)
				refused := tc.wantWords != "" && !exempt
				switch {
				case refused && (in.Invalid == nil || in.Invalid.Reason != ranv1alpha1.ReasonInvalidClusterActions ||
					!strings.Contains(in.Invalid.Message, "spec.actions.beforeEnable: "+tc.wantWords)):
					t.Errorf("exempt=%v: invalid %+v, want InvalidClusterActions saying %q", exempt, in.Invalid, tc.wantWords)
				case refused && (in.StartedNow || len(in.Actions.BeforeEnable) > 0):
					t.Errorf("exempt=%v: a refused rollout started or ran actions", exempt)
				case !refused && (in.Invalid != nil || !in.StartedNow):
					t.Errorf("exempt=%v: invalid %+v, started %v; want a start", exempt, in.Invalid, in.StartedNow)
				}
			}
		})
	}
}

// A progressive batch's next stage is enforced at once, as the next batch is: it waited
// for every cluster of the stage before it. Clusters moving on inside the stage are paced.
func TestDecideStageStartsAtOnce(t *testing.T) {
	f := fresh()
	f.Plan = plan.Plan{Batches: []plan.Batch{{Clusters: []string{"c1", "c2", "c3"}, Stages: []int{1, 2}}}, SkippedCompliant: []string{"c9"}}
	in := Decide(f, Config{}, decideAt)
	if e := in.Enforcement; e.Paced || !slices.Equal(e.Clusters[0], []string{"c1"}) {
		t.Fatalf("enforcement at the start %+v, want the first stage, c1, at once", e)
	}
	f = next(t, f, in, policy("upgrade", []string{"c1"}, "c1", "c2", "c3"))
	in = Decide(f, Config{}, decideAt.Add(time.Minute))
	if e := in.Enforcement; e.Paced || e.Starts || !slices.Equal(e.Clusters[0], []string{"c2", "c3"}) {
		t.Fatalf("enforcement as the second stage starts %+v, want c2 and c3 at once, not a window's paced starts", e)
	}
	f = next(t, f, in, policy("upgrade", []string{"c1", "c2"}, "c1", "c2", "c3"))
	in = Decide(f, Config{}, decideAt.Add(2*time.Minute))
	if e := in.Enforcement; !e.Paced || !slices.Equal(e.Clusters[0], []string{"c3"}) {
		t.Errorf("enforcement as c2 is done inside the stage %+v, want c3 alone, paced", e)
	}
}
