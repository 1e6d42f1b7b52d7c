package mcu_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/cgu"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/mcu"
	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
	"github.com/cgu-operator/cgu-operator/tests/world/graphserver"
)

var now = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

func graph(t *testing.T) *updategraph.Graph {
	return graphserver.NewGraph("eus-4.16").Edge("4.14.30", "4.15.40").Edge("4.15.40", "4.16.20").Edge("4.16.10", "4.16.20").
		Conditional("4.16.12", "4.16.20", graphserver.AlwaysRisk("EtcdSlow")).Versions("4.12.1").MustBuild(t)
}

func rollout() *ranv1alpha1.ManagedClustersUpgrade {
	return &ranv1alpha1.ManagedClustersUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "to-4.16", Generation: 1},
		Spec: ranv1alpha1.ManagedClustersUpgradeSpec{
			ClusterSelector: &ranv1alpha1.MCUClusterSelector{MatchLabels: map[string]string{"fleet": "a"}},
			ClusterVersion:  ranv1alpha1.MCUClusterVersion{Channel: "eus-4.16", Version: "4.16.20", Image: "quay.io/ocp@sha256:abc"},
			UpgradeStrategy: ranv1alpha1.MCUUpgradeStrategy{MaxConcurrency: 2,
				CanaryClusters: &ranv1alpha1.CanaryClusters{ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}}},
		},
	}
}

func facts(t *testing.T) mcu.Facts {
	return mcu.Facts{MCU: rollout(), Now: now, Graph: graph(t), Clusters: []mcu.Cluster{
		{Name: "eus", Version: "4.14.30"},
		{Name: "canary", Version: "4.16.10", Labels: map[string]string{"canary": "true"}},
		{Name: "z", Version: "4.16.10"},
		{Name: "done", Version: "4.16.20", Labels: map[string]string{"canary": "true"}},
		{Name: "stranded", Version: "4.12.1"},
		{Name: "risky", Version: "4.16.12"},
		{Name: "unknown"},
	}}
}

func conditions(st ranv1alpha1.ManagedClustersUpgradeStatus) []string {
	var out []string
	for _, c := range st.Conditions {
		out = append(out, c.Type+" "+string(c.Status)+" "+c.Reason)
	}
	return out
}

// Before the policies reach their clusters the rollout plans, makes them and waits: one
// policy per release reached, the image with the target only, the held clusters named.
func TestDecidePlansAndWaitsForThePolicies(t *testing.T) {
	f := facts(t)
	in := mcu.Decide(f)
	hop, target := mcu.PolicyName(f.MCU, "4.15.40"), mcu.PolicyName(f.MCU, "4.16.20")
	if in.Upgrade != nil {
		t.Fatalf("a ClusterGroupUpgrade before the policies reached their clusters")
	}
	var made []string
	for _, p := range in.Policies {
		made = append(made, p.Name)
	}
	same(t, "policies", []string{hop, target}, made)
	same(t, "the intermediate release's policy marked so", map[string]string{hop: "true", target: ""},
		map[string]string{hop: in.Policies[0].Annotations[cgu.IntermediateAnnotation], target: in.Policies[1].Annotations[cgu.IntermediateAnnotation]})
	if len(in.Placements) != 2 || len(in.Bindings) != 2 {
		t.Errorf("placements %d, bindings %d, want 2 each", len(in.Placements), len(in.Bindings))
	}
	if got := in.Placements[1].Spec.Predicates[0].RequiredClusterSelector.LabelSelector.MatchExpressions[0].Values; !cmp.Equal(got, []string{"canary", "eus", "z"}) {
		t.Errorf("the target's placement selects %v", got)
	}
	if !strings.Contains(string(in.Policies[1].Spec.PolicyTemplates[0].ObjectDefinition.Raw), "sha256:abc") ||
		strings.Contains(string(in.Policies[0].Spec.PolicyTemplates[0].ObjectDefinition.Raw), "sha256:abc") {
		t.Errorf("the image goes with the target only")
	}
	want := []ranv1alpha1.MCUStage{
		{Index: 1, Version: "4.15.40", Clusters: 1, Policy: hop},
		{Index: 1, Version: "4.16.20", Clusters: 2, Policy: target},
		{Index: 2, Version: "4.16.20", Clusters: 1, Policy: target},
	}
	same(t, "stages", want, in.Status.Stages)
	held := map[string]string{}
	for _, h := range in.Status.Held {
		held[h.Cluster] = h.Reason
	}
	same(t, "held", map[string]string{"stranded": "NoUpdatePath", "risky": "RiskNotAccepted", "unknown": "VersionUnknown"}, held)
	same(t, "summary", &ranv1alpha1.ClustersSummary{Total: 7, Complete: 1, Pending: 3, Held: 3}, in.Status.ClustersSummary)
	same(t, "canary summary, of those with an update to take", &ranv1alpha1.ClustersSummary{Total: 1, Pending: 1}, in.Status.CanaryClustersSummary)
	if c := meta.FindStatusCondition(in.Status.Conditions, ranv1alpha1.MCUConditionApplied); c.Reason != mcu.ReasonWaitingPolicies ||
		!strings.Contains(c.Message, hop+" on 0 of 1 clusters") {
		t.Errorf("Applied %s %q", c.Reason, c.Message)
	}
}

// Once the policies reach their clusters the rollout makes the ClusterGroupUpgrade: policies
// in version order, canaries matched among the staged clusters, a batch's time one budget
// per update of the longest path.
func TestDecideMakesTheUpgradeOncePlaced(t *testing.T) {
	f := facts(t)
	hop, target := mcu.PolicyName(f.MCU, "4.15.40"), mcu.PolicyName(f.MCU, "4.16.20")
	f.Placed = map[string][]string{hop: {"eus"}, target: {"canary", "eus", "z"}}
	in := mcu.Decide(f)
	u := in.Upgrade
	if u == nil {
		t.Fatalf("no ClusterGroupUpgrade once the policies reached their clusters: %v", conditions(in.Status))
	}
	same(t, "managed policies", []string{hop, target}, u.Spec.ManagedPolicies)
	same(t, "clusters", []string{"canary", "eus", "z"}, u.Spec.Clusters)
	rs := u.Spec.RemediationStrategy
	// Two updates of 2h per batch; the canary's batch and one of the two others.
	if !cmp.Equal(rs.Canaries, []string{"canary"}) || rs.MaxConcurrency != 2 || rs.Timeout != 2*4*60 || !*u.Spec.Enable {
		t.Errorf("strategy %+v, enable %v", rs, *u.Spec.Enable)
	}
	if in.Status.Upgrade != f.MCU.Name {
		t.Errorf("status.upgrade %q", in.Status.Upgrade)
	}
}

// The rollout's gates, windows and approvals pass on to the ClusterGroupUpgrade as they are.
func TestDecidePassesTheRolloutSettingsOn(t *testing.T) {
	f := facts(t)
	hop, target := mcu.PolicyName(f.MCU, "4.15.40"), mcu.PolicyName(f.MCU, "4.16.20")
	f.Placed = map[string][]string{hop: {"eus"}, target: {"canary", "eus", "z"}}
	budget := intstr.FromString("10%")
	f.MCU.Spec.Rollout = &ranv1alpha1.MCURollout{
		MaintenanceWindows: &ranv1alpha1.MaintenanceWindows{Windows: []ranv1alpha1.MaintenanceWindow{{Start: "01:00", Duration: metav1.Duration{Duration: time.Hour}}}},
		Approval:           &ranv1alpha1.ApprovalGates{AfterCanaries: true},
		BatchSoak:          &metav1.Duration{Duration: 30 * time.Minute},
		MaxFailures:        &budget,
	}
	u := mcu.Decide(f).Upgrade
	if u == nil {
		t.Fatal("no ClusterGroupUpgrade")
	}
	r := f.MCU.Spec.Rollout
	if !cmp.Equal(u.Spec.MaintenanceWindows, r.MaintenanceWindows) || !cmp.Equal(u.Spec.Approval, r.Approval) ||
		!cmp.Equal(u.Spec.BatchSoak, r.BatchSoak) || !cmp.Equal(u.Spec.MaxFailures, r.MaxFailures) || u.Spec.Analysis != nil {
		t.Errorf("windows %+v approval %+v soak %v budget %v analysis %v", u.Spec.MaintenanceWindows, u.Spec.Approval, u.Spec.BatchSoak, u.Spec.MaxFailures, u.Spec.Analysis)
	}
	if u.Spec.Approval == r.Approval {
		t.Error("the ClusterGroupUpgrade shares the rollout's objects")
	}
}

// A multi-node cluster taking two updates pauses its worker pool before the first and resumes
// it after the last (OpenShift's EUS-to-EUS update); a multi-node cluster taking one update,
// and a single-node one taking two, do not. The batch's time counts the workers' own update.
func TestDecidePausesTheWorkersOfMultiNodeClustersAcrossTheirPath(t *testing.T) {
	f := facts(t)
	for i := range f.Clusters {
		switch f.Clusters[i].Name {
		case "eus", "z":
			f.Clusters[i].Topology = mcu.TopologyHighlyAvailable
		}
	}
	f.Clusters = append(f.Clusters, mcu.Cluster{Name: "sno", Version: "4.14.30", Topology: "SingleReplica"})
	hop, target := mcu.PolicyName(f.MCU, "4.15.40"), mcu.PolicyName(f.MCU, "4.16.20")
	pause, resume := mcu.PausePolicyName(f.MCU), mcu.ResumePolicyName(f.MCU)
	f.Placed = map[string][]string{pause: {"eus"}, hop: {"eus", "sno"}, target: {"canary", "eus", "sno", "z"}, resume: {"eus"}}
	in := mcu.Decide(f)
	if in.Upgrade == nil {
		t.Fatalf("no ClusterGroupUpgrade: %v", conditions(in.Status))
	}
	same(t, "managed policies", []string{pause, hop, target, resume}, in.Upgrade.Spec.ManagedPolicies)
	placed := map[string][]string{}
	intermediate := map[string]string{}
	for i, p := range in.Policies {
		placed[p.Name] = in.Placements[i].Spec.Predicates[0].RequiredClusterSelector.LabelSelector.MatchExpressions[0].Values
		intermediate[p.Name] = p.Annotations[cgu.IntermediateAnnotation]
	}
	same(t, "the pool's policies placed on the multi-node cluster of two updates alone", []string{"eus"}, placed[pause])
	same(t, "resume too", []string{"eus"}, placed[resume])
	same(t, "the pause superseded by the resume", map[string]string{pause: "true", hop: "true", target: "", resume: ""}, intermediate)
	var pauseRaw, resumeRaw string
	for _, p := range in.Policies {
		switch p.Name {
		case pause:
			pauseRaw = string(p.Spec.PolicyTemplates[0].ObjectDefinition.Raw)
		case resume:
			resumeRaw = string(p.Spec.PolicyTemplates[0].ObjectDefinition.Raw)
		}
	}
	if !strings.Contains(pauseRaw, `"paused":true`) || !strings.Contains(resumeRaw, `"paused":false`) || !strings.Contains(resumeRaw, `"type":"Updated"`) {
		t.Errorf("pause %s, resume %s: want the worker pool paused, then resumed and Updated", pauseRaw, resumeRaw)
	}
	// Three updates of 2h per batch (two and the workers'), three batches.
	if got := in.Upgrade.Spec.RemediationStrategy.Timeout; got != 3*3*2*60 {
		t.Errorf("timeout %d minutes, want %d", got, 3*3*2*60)
	}
}

// approveAllUpgrades places one more policy on every staged cluster: the cluster lists its
// own Subscriptions (the hub cannot), the excluded ones left out; the batch's time counts the
// operators' upgrades, and the ClusterGroupUpgrade approves nothing itself.
func TestDecideApprovesEveryOperatorButThoseExcluded(t *testing.T) {
	f := facts(t)
	storage := ranv1alpha1.OperatorReference{Name: "storage", Namespace: "openshift-storage"}
	f.MCU.Spec.OCPOperators = &ranv1alpha1.OCPOperators{ApproveAllUpgrades: true, Exclude: []ranv1alpha1.OperatorReference{storage}}
	hop, target, ops := mcu.PolicyName(f.MCU, "4.15.40"), mcu.PolicyName(f.MCU, "4.16.20"), mcu.OperatorsPolicyName(f.MCU)
	f.Placed = map[string][]string{hop: {"eus"}, target: {"canary", "eus", "z"}, ops: {"canary", "eus", "z"}}
	in := mcu.Decide(f)
	if in.Upgrade == nil {
		t.Fatalf("no ClusterGroupUpgrade: %v", conditions(in.Status))
	}
	same(t, "managed policies", []string{hop, target, ops}, in.Upgrade.Spec.ManagedPolicies)
	p, placement := in.Policies[2], in.Placements[2]
	same(t, "placed on every staged cluster", []string{"canary", "eus", "z"},
		placement.Spec.Predicates[0].RequiredClusterSelector.LabelSelector.MatchExpressions[0].Values)
	var policy struct {
		Spec struct {
			RemediationAction string `json:"remediationAction"`
			Raw               string `json:"object-templates-raw"`
			Templates         []any  `json:"object-templates"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(p.Spec.PolicyTemplates[0].ObjectDefinition.Raw, &policy); err != nil {
		t.Fatal(err)
	}
	if policy.Spec.RemediationAction != "inform" || policy.Spec.Templates != nil ||
		policy.Spec.Raw != mcu.ApproveAllTemplates([]mcu.Operator{{Name: "storage", Namespace: "openshift-storage"}}) {
		t.Errorf("the operators' policy: %+v", policy.Spec)
	}
	if !strings.Contains(policy.Spec.Raw, `"openshift-storage/storage"`) {
		t.Errorf("the excluded operator is not named in the template:\n%s", policy.Spec.Raw)
	}
	if in.Upgrade.Spec.OperatorUpgrades != nil {
		t.Errorf("the ClusterGroupUpgrade approves plans itself: %+v", in.Upgrade.Spec.OperatorUpgrades)
	}
	// Two updates of 2h and the operators' 10 minutes per batch, two batches.
	if got := in.Upgrade.Spec.RemediationStrategy.Timeout; got != 2*(2*2*60+10) {
		t.Errorf("timeout %d minutes, want %d", got, 2*(2*2*60+10))
	}
}

// A risk accepted until later lets its cluster take the update; past that time it holds it
// again.
func TestDecideAcceptedRisksExpire(t *testing.T) {
	f := facts(t)
	f.MCU.Spec.AcceptedRisks = []ranv1alpha1.AcceptedRisk{{Name: "EtcdSlow", AcceptedBy: "ops@example.com", Until: &metav1.Time{Time: now.Add(time.Hour)}}}
	in := mcu.Decide(f)
	if got := in.Status.Stages[1]; got.Clusters != 3 || !cmp.Equal(got.Risks, []string{"EtcdSlow"}) {
		t.Errorf("stage %+v, want the risky cluster in it with its risk named", got)
	}
	f.Now = now.Add(2 * time.Hour)
	in = mcu.Decide(f)
	if got := in.Status.Stages[1]; got.Clusters != 2 || len(got.Risks) != 0 {
		t.Errorf("stage %+v after the acceptance expired", got)
	}
}

// What the rollout cannot do is refused by a condition naming it, and nothing is made.
func TestDecideRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(*mcu.Facts)
		want   string
		wait   bool
	}{
		"no cluster":          {func(f *mcu.Facts) { f.Clusters = nil }, "Selected False NoClustersSelected", false},
		"a missing placement": {func(f *mcu.Facts) { f.MissingPlacements = []string{"fleet/dev"} }, "Selected False PlacementNotFound", false},
		"the graph unavailable": {func(f *mcu.Facts) { f.Graph, f.GraphErr = nil, errors.New("connection refused") },
			"Applied False UpdateGraphUnavailable", true},
		"an empty channel":  {func(f *mcu.Facts) { f.Graph = &updategraph.Graph{} }, "Applied False ChannelNotServed", false},
		"an unknown target": {func(f *mcu.Facts) { f.MCU.Spec.ClusterVersion.Version = "4.16.99" }, "Applied False VersionNotFound", false},
		"include and exclude": {func(f *mcu.Facts) {
			op := ranv1alpha1.OperatorReference{Name: "sriov", Namespace: "openshift-sriov-network-operator"}
			f.MCU.Spec.OCPOperators = &ranv1alpha1.OCPOperators{Include: []ranv1alpha1.OperatorReference{op}, Exclude: []ranv1alpha1.OperatorReference{op}}
		}, "Applied False InvalidOperators", false},
	} {
		t.Run(name, func(t *testing.T) {
			f := facts(t)
			tc.change(&f)
			in := mcu.Decide(f)
			if in.Upgrade != nil || len(in.Policies) > 0 {
				t.Errorf("made objects")
			}
			got := conditions(in.Status)
			found := false
			for _, c := range got {
				found = found || c == tc.want
			}
			if !found {
				t.Errorf("conditions %v, want %q", got, tc.want)
			}
			if (in.Wait > 0) != tc.wait {
				t.Errorf("wait %v", in.Wait)
			}
		})
	}
}

// Once the ClusterGroupUpgrade exists, the plan stays as written and the summaries come
// from its clusters; clusters outside it count as they did.
func TestDecideSummariesFromTheUpgrade(t *testing.T) {
	f := facts(t)
	f.Placed = map[string][]string{mcu.PolicyName(f.MCU, "4.15.40"): {"eus"}, mcu.PolicyName(f.MCU, "4.16.20"): {"canary", "eus", "z"}}
	f.MCU.Status = mcu.Decide(f).Status
	f.Upgrade = &mcu.Child{Name: "to-4.16", Canaries: []string{"canary"}, Clusters: []string{"canary", "eus", "z"},
		States: map[string]ranv1alpha1.ClusterState{"canary": ranv1alpha1.ClusterCompleted, "eus": ranv1alpha1.ClusterInProgress, "z": ranv1alpha1.ClusterFailed}}
	in := mcu.Decide(f)
	if in.Upgrade != nil || len(in.Policies) > 0 {
		t.Errorf("made objects again")
	}
	same(t, "summary", &ranv1alpha1.ClustersSummary{Total: 7, Initialized: 3, PartialUpgrade: 1, Complete: 2, Failed: 1, Held: 3}, in.Status.ClustersSummary)
	same(t, "canary summary", &ranv1alpha1.ClustersSummary{Total: 1, Initialized: 1, Complete: 1}, in.Status.CanaryClustersSummary)
	same(t, "stages changed", f.MCU.Status.Stages, in.Status.Stages)
	want := []string{"Selected True ManagedClustersSelected", "Applied True UpgradeApplied", "InProgress True UpgradeInProgress",
		"Complete False UpgradeNotComplete", "Failed True ClustersFailed"}
	same(t, "conditions", want, conditions(in.Status))

	// A second pass reads the status the first wrote: the counts do not drift.
	f.MCU.Status = in.Status
	same(t, "summary on the next pass", in.Status.ClustersSummary, mcu.Decide(f).Status.ClustersSummary)

	f.Upgrade.Ended, f.Upgrade.States["eus"], f.Upgrade.States["z"] = true, ranv1alpha1.ClusterCompleted, ranv1alpha1.ClusterCompleted
	f.MCU.Status.Held, f.MCU.Status.ClustersSummary.Total = nil, 4
	in = mcu.Decide(f)
	if c := meta.FindStatusCondition(in.Status.Conditions, ranv1alpha1.MCUConditionComplete); c.Status != metav1.ConditionTrue {
		t.Errorf("Complete %s %s %q", c.Status, c.Reason, c.Message)
	}

	// A status that lost its conditions (restored from a backup without it) gets them back.
	f.MCU.Status.Conditions = nil
	same(t, "conditions written anew", []string{"Applied True UpgradeApplied", "InProgress False UpgradeEnded",
		"Complete True UpgradeComplete", "Failed False NoFailures"}, conditions(mcu.Decide(f).Status))
}

// The action summaries count the works as their agents report them. The ClusterGroupUpgrade
// deletes its works as it ends, maybe before their last report was counted: a cluster whose
// work is gone counts as its batch record tells.
func TestDecideActionSummaries(t *testing.T) {
	f := facts(t)
	f.MCU.Spec.PreUpgradeAction = &ranv1alpha1.UpgradeAction{}
	f.Placed = map[string][]string{mcu.PolicyName(f.MCU, "4.15.40"): {"eus"}, mcu.PolicyName(f.MCU, "4.16.20"): {"canary", "eus", "z"}}
	f.MCU.Status = mcu.Decide(f).Status
	f.Upgrade = &mcu.Child{Name: "to-4.16", Clusters: []string{"canary", "eus", "z"},
		States:  map[string]ranv1alpha1.ClusterState{"canary": ranv1alpha1.ClusterCompleted, "eus": ranv1alpha1.ClusterPending},
		Reasons: map[string]string{}}
	f.PreWorks = map[string]mcu.WorkState{
		"canary": {Applied: true, Available: true},
		"eus":    {Applied: true, Progressing: true},
		"z":      {Applied: true, Degraded: true},
	}
	st := mcu.Decide(f).Status
	same(t, "pre-action summary", &ranv1alpha1.ActionSummary{Total: 3, Applied: 3, Available: 1, Progressing: 1, Degraded: 1}, st.PreUpgradeActionSummary)
	if st.PostUpgradeActionSummary != nil {
		t.Errorf("a post-action summary without a post-action: %+v", st.PostUpgradeActionSummary)
	}

	// The works gone before the degraded one was counted: the records say what they were.
	f.MCU.Status, f.PreWorks = st, nil
	f.MCU.Status.PreUpgradeActionSummary = &ranv1alpha1.ActionSummary{Total: 2, Applied: 2, Available: 1, Progressing: 1}
	f.Upgrade.States["z"], f.Upgrade.Reasons["z"] = ranv1alpha1.ClusterHeld, manifestwork.ReasonPreUpgradeActionDegraded
	f.Upgrade.Ended = true
	same(t, "works deleted: the records' word", &ranv1alpha1.ActionSummary{Total: 2, Applied: 2, Available: 1, Degraded: 1},
		mcu.Decide(f).Status.PreUpgradeActionSummary)

	// Neither works nor a record that tells: the last count stays.
	f.Upgrade.States, f.Upgrade.Reasons = map[string]ranv1alpha1.ClusterState{}, map[string]string{}
	same(t, "nothing told", f.MCU.Status.PreUpgradeActionSummary, mcu.Decide(f).Status.PreUpgradeActionSummary)
}

// same reports a difference between want and got.
func same(t *testing.T, what string, want, got any) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

// Paths that make more updates than the status holds are refused, nothing made.
func TestDecideRefusesMoreStagesThanTheStatusHolds(t *testing.T) {
	b := graphserver.NewGraph("eus-4.16")
	f := mcu.Facts{MCU: rollout(), Now: now}
	for i := range mcu.StageLimit {
		from, via := fmt.Sprintf("4.14.%d", i), fmt.Sprintf("4.15.%d", i)
		b = b.Edge(from, via).Edge(via, "4.16.20")
		f.Clusters = append(f.Clusters, mcu.Cluster{Name: fmt.Sprintf("c%d", i), Version: from})
	}
	f.Graph = b.MustBuild(t)
	in := mcu.Decide(f)
	if c := meta.FindStatusCondition(in.Status.Conditions, ranv1alpha1.MCUConditionApplied); c == nil || c.Reason != mcu.ReasonTooManyStages {
		t.Fatalf("Applied %+v, want %s", c, mcu.ReasonTooManyStages)
	}
	if len(in.Policies) > 0 || in.Upgrade != nil || len(in.Status.Stages) > 0 {
		t.Errorf("made %d policies, %v, %d stages", len(in.Policies), in.Upgrade, len(in.Status.Stages))
	}
}

// With workerCapacity, each multi-node cluster that upgrades adds worker machines first and
// removes them last: the addition best effort (its soft timeout the scale timeout) and
// superseded by the removal, the removal after every update and the workers' resume; the
// batch's time counts the scale timeout. Single-node clusters add nothing.
func TestDecideAddsWorkerCapacityToMultiNodeClusters(t *testing.T) {
	f := facts(t)
	f.MCU.Spec.UpgradeStrategy.WorkerCapacity = &ranv1alpha1.WorkerCapacity{Surge: 2, ScaleTimeout: &metav1.Duration{Duration: 15 * time.Minute}}
	for i := range f.Clusters {
		switch f.Clusters[i].Name {
		case "eus", "z", "done":
			f.Clusters[i].Topology = mcu.TopologyHighlyAvailable
		}
	}
	hop, target := mcu.PolicyName(f.MCU, "4.15.40"), mcu.PolicyName(f.MCU, "4.16.20")
	pause, resume := mcu.PausePolicyName(f.MCU), mcu.ResumePolicyName(f.MCU)
	up, down := mcu.ScaleUpPolicyName(f.MCU), mcu.ScaleDownPolicyName(f.MCU)
	f.Placed = map[string][]string{pause: {"eus"}, up: {"eus", "z"}, hop: {"eus"}, target: {"canary", "eus", "z"}, resume: {"eus"}, down: {"eus", "z"}}
	in := mcu.Decide(f)
	if in.Upgrade == nil {
		t.Fatalf("no ClusterGroupUpgrade: %v", conditions(in.Status))
	}
	same(t, "managed policies", []string{pause, up, hop, target, resume, down}, in.Upgrade.Spec.ManagedPolicies)
	placed, annotations, raw := map[string][]string{}, map[string]map[string]string{}, map[string]string{}
	for i, p := range in.Policies {
		placed[p.Name] = in.Placements[i].Spec.Predicates[0].RequiredClusterSelector.LabelSelector.MatchExpressions[0].Values
		annotations[p.Name] = p.Annotations
		raw[p.Name] = string(p.Spec.PolicyTemplates[0].ObjectDefinition.Raw)
	}
	same(t, "capacity added on the multi-node clusters that upgrade (not the one on the target)", []string{"eus", "z"}, placed[up])
	same(t, "and removed there", []string{"eus", "z"}, placed[down])
	same(t, "the addition best effort and superseded", map[string]string{cgu.IntermediateAnnotation: "true", "ran.openshift.io/soft-timeout-seconds": "900"}, annotations[up])
	if len(annotations[down]) != 0 {
		t.Errorf("the removal is annotated %v: it must be required", annotations[down])
	}
	if !strings.Contains(raw[up], "add $before 2") || !strings.Contains(raw[down], "MachineConfigPool") {
		t.Errorf("addition %s\nremoval %s: want a surge of 2, and the removal waiting for the worker pool", raw[up], raw[down])
	}
	same(t, "capacity summary before the start", &ranv1alpha1.CapacitySummary{Total: 2}, in.Status.WorkerCapacity)
	// Per batch: three updates of 2h (two and the workers') and 15m for the machines; two
	// batches (the canary's, then eus and z).
	if got := in.Upgrade.Spec.RemediationStrategy.Timeout; got != 2*(3*2*60+15) {
		t.Errorf("timeout %d minutes, want %d", got, 2*(3*2*60+15))
	}

	// Running: eus passed the addition on its timeout and is on its updates; z added its
	// machines and removed them again.
	f.MCU.Status = in.Status
	f.Capacity = []string{"eus", "z"}
	f.Upgrade = &mcu.Child{Name: "to-4.16", Clusters: []string{"canary", "eus", "z"}, Policies: in.Upgrade.Spec.ManagedPolicies,
		States:       map[string]ranv1alpha1.ClusterState{"eus": ranv1alpha1.ClusterInProgress, "z": ranv1alpha1.ClusterCompleted, "canary": ranv1alpha1.ClusterCompleted},
		At:           map[string]int{"eus": 2, "z": 6, "canary": 6},
		SoftTimedOut: map[string][]string{"eus": {up}}}
	same(t, "capacity summary while running", &ranv1alpha1.CapacitySummary{Total: 2, NotReady: 1, Added: 1, Removed: 1}, mcu.Decide(f).Status.WorkerCapacity)
	f.Upgrade.At["eus"] = 6
	f.Upgrade.States["eus"] = ranv1alpha1.ClusterCompleted
	same(t, "capacity summary at the end", &ranv1alpha1.CapacitySummary{Total: 2, NotReady: 1, Added: 1, Removed: 2}, mcu.Decide(f).Status.WorkerCapacity)
}
