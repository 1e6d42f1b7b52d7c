package talm

import (
	"strings"
	"unicode/utf8"

	workv1 "open-cluster-management.io/api/work/v1"

	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/pkg/prestart"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

var t0 = time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC)

func at(minutes int) time.Time { return t0.Add(time.Duration(minutes) * time.Minute) }

func ptr[T any](v T) *T { return &v }

func twoBatches() plan.Plan {
	return plan.Plan{Batches: []plan.Batch{{Clusters: []string{"sno-1"}, Canary: true}, {Clusters: []string{"sno-2", "sno-3"}}},
		SkippedCompliant: []string{"sno-4"}}
}

var steps = Steps{Policies: []string{"platform", "operators"}}

func TestRemediationPlanAndConcurrency(t *testing.T) {
	g := NewWithT(t)
	g.Expect(RemediationPlan(twoBatches())).To(Equal([][]string{{"sno-1"}, {"sno-2", "sno-3"}}))
	g.Expect(RemediationPlan(plan.Plan{})).To(BeNil())
	cases := map[string]struct{ max, selected, want int }{
		"below the selection":  {2, 4, 2},
		"above the selection":  {10, 4, 4},
		"zero takes them all":  {0, 4, 4},
		"equal takes them all": {4, 4, 4},
		"no cluster selected":  {3, 0, 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ComputedMaxConcurrency(tc.max, tc.selected); got != tc.want {
				t.Fatalf("ComputedMaxConcurrency(%d, %d) = %d, want %d", tc.max, tc.selected, got, tc.want)
			}
		})
	}
}

func TestProgress(t *testing.T) {
	soakStart := at(9)
	running := rollout.Decision{State: ranv1alpha1.StateNotCompleted, Progress: rollout.Progress{
		Started: at(0), Batch: 1, BatchStarted: at(5), Clusters: map[string]rollout.Cluster{
			"sno-2": {State: ranv1alpha1.ClusterInProgress, Policy: 1, CompliantSince: &soakStart},
			"sno-3": {State: ranv1alpha1.ClusterCompleted, Policy: 2},
		},
	}}
	cases := map[string]struct {
		d     rollout.Decision
		steps Steps
		want  ranv1alpha1.UpgradeStatus
	}{
		"before the start it is empty": {
			d: rollout.Decision{State: ranv1alpha1.StateNotStarted},
		},
		"a running batch: its clusters by state, the policy index of each": {
			d: running, steps: steps,
			want: ranv1alpha1.UpgradeStatus{StartedAt: stampOf(at(0)), CurrentBatch: 2, CurrentBatchStartedAt: stampOf(at(5)),
				CurrentBatchRemediationProgress: map[string]*ranv1alpha1.ClusterRemediationProgress{
					"sno-2": {State: ranv1alpha1.RemediationInProgress, PolicyIndex: ptr(1), FirstCompliantAt: stampOf(soakStart)},
					"sno-3": {State: ranv1alpha1.RemediationCompleted},
				}},
		},
		"a ManifestWork step after the policies gives its template index": {
			d: rollout.Decision{State: ranv1alpha1.StateNotCompleted, Progress: rollout.Progress{Started: at(0), BatchStarted: at(0),
				Clusters: map[string]rollout.Cluster{"sno-1": {State: ranv1alpha1.ClusterInProgress, Policy: 3}}}},
			steps: Steps{Policies: []string{"a", "b"}, Templates: []string{"prep", "upgrade"}},
			want: ranv1alpha1.UpgradeStatus{StartedAt: stampOf(at(0)), CurrentBatch: 1, CurrentBatchStartedAt: stampOf(at(0)),
				CurrentBatchRemediationProgress: map[string]*ranv1alpha1.ClusterRemediationProgress{
					"sno-1": {State: ranv1alpha1.RemediationInProgress, ManifestWorkIndex: ptr(1)},
				}},
		},
		"waiting between batches shows the next one, not started": {
			d: rollout.Decision{State: ranv1alpha1.StateNotCompleted, Waiting: &rollout.Wait{Batch: 2},
				Progress: rollout.Progress{Started: at(0), BatchStarted: at(0), BatchEnded: true}},
			want: ranv1alpha1.UpgradeStatus{StartedAt: stampOf(at(0)), CurrentBatch: 2,
				CurrentBatchRemediationProgress: map[string]*ranv1alpha1.ClusterRemediationProgress{
					"sno-2": {State: ranv1alpha1.RemediationNotStarted}, "sno-3": {State: ranv1alpha1.RemediationNotStarted},
				}},
		},
		"our states TALM lacks keep their names": {
			d: rollout.Decision{State: ranv1alpha1.StateNotCompleted, Progress: rollout.Progress{Started: at(0), Batch: 1, BatchStarted: at(1),
				Clusters: map[string]rollout.Cluster{"sno-2": {State: ranv1alpha1.ClusterHeld}, "sno-3": {State: ranv1alpha1.ClusterPending}}}},
			want: ranv1alpha1.UpgradeStatus{StartedAt: stampOf(at(0)), CurrentBatch: 2, CurrentBatchStartedAt: stampOf(at(1)),
				CurrentBatchRemediationProgress: map[string]*ranv1alpha1.ClusterRemediationProgress{
					"sno-2": {State: "Held"}, "sno-3": {State: ranv1alpha1.RemediationNotStarted},
				}},
		},
		"an ended rollout keeps only its start and end": {
			d:    rollout.Decision{State: ranv1alpha1.StateTimedOut, Progress: rollout.Progress{Started: at(0), Batch: 1, Finished: true}},
			want: ranv1alpha1.UpgradeStatus{StartedAt: stampOf(at(0)), CompletedAt: stampOf(at(30))},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(Progress(tc.d, twoBatches(), tc.steps, at(30))).To(Equal(tc.want))
		})
	}
}

func stampOf(t time.Time) *metav1.Time { return rollout.Stamp(t) }

func TestClusters(t *testing.T) {
	recorded := map[string]ranv1alpha1.ClusterProgress{
		"sno-1": {Name: "sno-1", State: ranv1alpha1.ClusterTimedOut, CurrentPolicy: "operators", Since: ptr(metav1.NewTime(at(20)))},
	}
	d := rollout.Decision{State: ranv1alpha1.StateNotCompleted, Progress: rollout.Progress{Started: at(0), Batch: 1, BatchStarted: at(21),
		Clusters: map[string]rollout.Cluster{
			"sno-3": {State: ranv1alpha1.ClusterCompleted, Policy: 2, Since: at(25)},
			"sno-2": {State: ranv1alpha1.ClusterFailed, Policy: 0, Since: at(30)},
		}}}
	got := Clusters([]string{"sno-4"}, twoBatches(), FinishedFrom(recorded, d, steps), steps)
	NewWithT(t).Expect(got).To(Equal([]ranv1alpha1.ClusterFinalState{
		{Name: "sno-4", State: "complete"},
		{Name: "sno-1", State: "timedout", CurrentPolicy: &ranv1alpha1.PolicyStatus{Name: "operators", Status: "NonCompliant"}},
		{Name: "sno-3", State: "complete"},
		{Name: "sno-2", State: "failed", CurrentPolicy: &ranv1alpha1.PolicyStatus{Name: "platform", Status: "NonCompliant"}},
	}), "compliant at the start first, then batch by batch in the order the clusters finished")

	works := Steps{Templates: []string{"prep", "upgrade"}}
	rec := map[string]ranv1alpha1.ClusterProgress{"sno-1": {Name: "sno-1", State: ranv1alpha1.ClusterTimedOut, CurrentPolicy: "upgrade"}}
	NewWithT(t).Expect(Clusters(nil, twoBatches(), FinishedFrom(rec, rollout.Decision{}, works), works)).To(Equal([]ranv1alpha1.ClusterFinalState{
		{Name: "sno-1", State: "timedout", CurrentManifestWork: &ranv1alpha1.ManifestWorkStatus{Name: "upgrade"}},
	}), "a ManifestWork step is named as one")

	before := []ranv1alpha1.ClusterFinalState{{Name: "sno-4", State: "complete"}, {Name: "sno-1", State: "timedout"}}
	NewWithT(t).Expect(CompliantAtStart(before, twoBatches())).To(Equal([]string{"sno-4"}))
}

func TestObjectsOf(t *testing.T) {
	policies := []ranv1alpha1.PolicyReference{{Name: "platform", Namespace: "ztp"}, {Name: "operators", Namespace: "ztp"}}
	copied := ObjectsOf(ownership.Owner{Namespace: "upgrades", Name: "night"}, ranv1alpha1.EnforcementCopy, policies, []string{"prep"})
	g := NewWithT(t)
	g.Expect(copied.Placements).To(Equal([]string{"cgu-upgrades-night-operators", "cgu-upgrades-night-platform"}))
	g.Expect(copied.PlacementBindings).To(Equal(copied.Placements))
	g.Expect(copied.CopiedPolicies).To(Equal([]string{"night-operators", "night-platform"}))
	g.Expect(copied.SafeResourceNames).To(Equal(map[string]string{
		"upgrades/night-platform-placement":  "cgu-upgrades-night-platform",
		"upgrades/night-operators-placement": "cgu-upgrades-night-operators",
		"upgrades/night-platform":            "night-platform",
		"upgrades/night-operators":           "night-operators",
		"/upgrades.prep":                     "upgrades-night-prep",
	}))
	override := ObjectsOf(ownership.Owner{Namespace: "upgrades", Name: "night"}, ranv1alpha1.EnforcementOverride, policies, nil)
	g.Expect(override.CopiedPolicies).To(BeEmpty())
	g.Expect(override.SafeResourceNames).To(HaveKeyWithValue("ztp/night-platform-placement", "cgu-upgrades-night-platform"),
		"in Override mode the Placement lives in the policy's namespace")

	// TALM's name-suffix annotation: TALM's names, as its scenarios assert them.
	suffixed := ObjectsOf(ownership.Owner{Namespace: "default", Name: "cgu-a", NameSuffix: "kuttl"}, ranv1alpha1.EnforcementOverride,
		[]ranv1alpha1.PolicyReference{{Name: "policy1-common-cluster-version-policy", Namespace: "default"}}, []string{"ibu-prep"})
	g.Expect(suffixed.Placements).To(Equal([]string{"cgu-a-policy1-common-cluster-version-policy-placement-kuttl"}))
	g.Expect(suffixed.SafeResourceNames).To(Equal(map[string]string{
		"default/cgu-a-policy1-common-cluster-version-policy-placement": "cgu-a-policy1-common-cluster-version-policy-placement-kuttl",
		"/default.ibu-prep": "default.ibu-prep-kuttl",
	}))
}

func configPolicy(objects ...map[string]any) *policyv1.PolicyTemplate {
	var templates []map[string]any
	for _, o := range objects {
		templates = append(templates, map[string]any{"complianceType": "musthave", "objectDefinition": o})
	}
	raw, _ := json.Marshal(map[string]any{"apiVersion": "policy.open-cluster-management.io/v1", "kind": "ConfigurationPolicy",
		"metadata": map[string]any{"name": "c"}, "spec": map[string]any{"object-templates": templates}})
	return &policyv1.PolicyTemplate{ObjectDefinition: runtime.RawExtension{Raw: raw}}
}

func TestContentAndStatus(t *testing.T) {
	sub := map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
		"metadata": map[string]any{"name": "ptp-operator-subscription", "namespace": "openshift-ptp"}, "spec": map[string]any{"channel": "stable"}}
	withStatus := map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
		"metadata": map[string]any{"name": "pao", "namespace": "openshift-pao"}, "status": map[string]any{"state": "AtLatestKnown"}}
	cv := map[string]any{"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion", "metadata": map[string]any{"name": "version"}}
	operators := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Name: "operators"}, Spec: policyv1.PolicySpec{PolicyTemplates: []*policyv1.PolicyTemplate{configPolicy(sub)}}}
	pao := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Name: "pao"}, Spec: policyv1.PolicySpec{PolicyTemplates: []*policyv1.PolicyTemplate{configPolicy(withStatus)}}}
	platform := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Name: "platform"}, Spec: policyv1.PolicySpec{PolicyTemplates: []*policyv1.PolicyTemplate{configPolicy(cv)}}}
	g := NewWithT(t)
	g.Expect(Content([]*policyv1.Policy{platform, operators})).To(Equal(map[string]string{
		"operators": `[{"kind":"Subscription","name":"ptp-operator-subscription","apiVersion":"operators.coreos.com/v1alpha1","namespace":"openshift-ptp"}]`,
	}))
	g.Expect(Content([]*policyv1.Policy{platform})).To(BeNil())
	g.Expect(AsksForStatus(pao)).To(BeTrue())
	g.Expect(AsksForStatus(operators)).To(BeFalse())
}

func TestJobStates(t *testing.T) {
	kind := prestart.Kind{Words: map[prestart.State]string{prestart.Timeout: "PrecacheTimeout", prestart.Failed: "UnrecoverableError"}}
	states := map[string]prestart.State{"sno-1": prestart.Succeeded, "sno-2": prestart.Timeout, "sno-3": prestart.Failed, "sno-4": prestart.Starting}
	status, clusters := JobStates(kind, []string{"sno-1", "sno-2", "sno-3", "sno-4", "sno-5"}, states)
	g := NewWithT(t)
	g.Expect(status).To(Equal(map[string]string{"sno-1": "Succeeded", "sno-2": "PrecacheTimeout", "sno-3": "UnrecoverableError", "sno-4": "Starting"}))
	g.Expect(clusters).To(Equal([]string{"sno-1", "sno-2", "sno-3", "sno-4"}))
}

func TestWorkStatus(t *testing.T) {
	g := NewWithT(t)
	g.Expect(WorkStatus(workv1.ManifestResourceStatus{})).To(BeNil(), "a work that reports nothing")
	var rs workv1.ManifestResourceStatus
	for i := range ranv1alpha1.ManifestWorkManifestLimit + 2 {
		rs.Manifests = append(rs.Manifests, workv1.ManifestCondition{
			ResourceMeta: workv1.ManifestResourceMeta{Ordinal: int32(i), Kind: "ImageBasedUpgrade", Name: "upgrade"},
			Conditions:   []metav1.Condition{{Type: "Applied", Status: metav1.ConditionFalse, Reason: "Failed", Message: strings.Repeat("é", 400)}},
		})
	}
	got := WorkStatus(rs)
	g.Expect(got.Manifests).To(HaveLen(ranv1alpha1.ManifestWorkManifestLimit))
	msg := got.Manifests[0].Conditions[0].Message
	g.Expect(len(msg)).To(BeNumerically("<=", workMessageLimit))
	g.Expect(utf8.ValidString(msg)).To(BeTrue())
	g.Expect(rs.Manifests[0].Conditions[0].Message).To(HaveLen(800), "the work's own status is left as it is")
}
