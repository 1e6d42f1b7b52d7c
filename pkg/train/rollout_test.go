package train

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/mcu"
)

func TestFromMCU(t *testing.T) {
	m := &ranv1alpha1.ManagedClustersUpgrade{}
	if pt := FromMCU(m); pt.Reported || !pt.Reporting || pt.Blocked != "" {
		t.Fatalf("a rollout that has said nothing: %+v", pt)
	}
	m.Status.Conditions = []metav1.Condition{{Type: ranv1alpha1.MCUConditionApplied, Status: metav1.ConditionFalse,
		Reason: mcu.ReasonNoClusters, Message: "the placements and the cluster selector select no ManagedCluster"}}
	if pt := FromMCU(m); pt.Blocked != "NoClustersSelected: the placements and the cluster selector select no ManagedCluster" {
		t.Fatalf("blocked %q", pt.Blocked)
	}
	m.Status.Conditions[0].Reason = mcu.ReasonWaitingPolicies
	if pt := FromMCU(m); pt.Blocked != "" {
		t.Fatalf("waiting for the policies is expected, not a block: %q", pt.Blocked)
	}
	m.Status.ClustersSummary = &ranv1alpha1.ClustersSummary{Total: 5, Complete: 3, Failed: 1, Held: 1}
	m.Status.Conditions = append(m.Status.Conditions, metav1.Condition{Type: ranv1alpha1.MCUConditionInProgress, Reason: mcu.ReasonEnded})
	if pt := FromMCU(m); !pt.Reported || pt.Total != 5 || pt.Complete != 3 || pt.Failed != 1 || pt.Held != 1 || !pt.Ended {
		t.Fatalf("summary %+v", pt)
	}
}

func feedback(values map[string]workv1.FieldValue) *workv1.ManifestWork {
	w := &workv1.ManifestWork{}
	var fv []workv1.FeedbackValue
	for name, v := range values {
		fv = append(fv, workv1.FeedbackValue{Name: name, Value: v})
	}
	w.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{{StatusFeedbacks: workv1.StatusFeedbackResult{Values: fv}}}
	return w
}

func integer(n int64) workv1.FieldValue {
	return workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To(n)}
}
func text(s string) workv1.FieldValue {
	return workv1.FieldValue{Type: workv1.String, String: ptr.To(s)}
}

func TestFromWork(t *testing.T) {
	if pt := FromWork("hub-east", nil, true); pt.Reported || !pt.Reporting || pt.Hub != "hub-east" {
		t.Fatalf("no work yet: %+v", pt)
	}
	w := feedback(map[string]workv1.FieldValue{feedbackTotal: integer(10), feedbackComplete: integer(7), feedbackFailed: integer(2),
		feedbackInProgress: text(mcu.ReasonEnded)})
	if pt := FromWork("hub-east", w, false); !pt.Reported || pt.Reporting || pt.Total != 10 || pt.Complete != 7 || pt.Failed != 2 || !pt.Ended {
		t.Fatalf("feedback of a hub not available: %+v", pt)
	}
	w = feedback(map[string]workv1.FieldValue{feedbackApplied: text(mcu.ReasonPlacementNotFound), feedbackRefusal: text("Placement edge not found")})
	if pt := FromWork("hub-east", w, true); pt.Reported || pt.Blocked != "PlacementNotFound: Placement edge not found" {
		t.Fatalf("a refused rollout: %+v", pt)
	}
	w = &workv1.ManifestWork{}
	w.Status.Conditions = []metav1.Condition{{Type: workv1.WorkApplied, Status: metav1.ConditionFalse, Message: `namespaces "ztp" not found`}}
	if pt := FromWork("hub-east", w, true); pt.Blocked != `its ManifestWork is not applied: namespaces "ztp" not found` {
		t.Fatalf("a work not applied: %q", pt.Blocked)
	}
	w.Status.Conditions[0].Message = "Failed to apply manifest work"
	w.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{{Conditions: []metav1.Condition{
		{Type: workv1.ManifestApplied, Status: metav1.ConditionFalse, Message: `namespaces "ztp" not found`}}}}
	if pt := FromWork("hub-east", w, true); pt.Blocked != `its ManifestWork is not applied: namespaces "ztp" not found` {
		t.Fatalf("a work not applied names its manifest's failure: %q", pt.Blocked)
	}
}

func TestBlockedRingSaysWhy(t *testing.T) {
	w := newWorld(t, ring("east", 0, 0, 0, "hub-east", "hub-west"))
	w.versions = []string{"4.16.10"}
	w.pass()
	ro := w.rollouts[Key{"east", "4.16.10"}]
	ro.Parts[1].Blocked = "its ManifestWork is not applied: no namespace"
	w.pass()
	if got := w.train.Status.Rings[0].Message; got != "hub-west: its ManifestWork is not applied: no namespace" {
		t.Fatalf("ring message %q", got)
	}
}

func TestRolloutTakesTheRingsFailureBudget(t *testing.T) {
	tr := &ranv1alpha1.ReleaseTrain{ObjectMeta: metav1.ObjectMeta{Namespace: "ztp", Name: "edge"}}
	tr.Spec.Rings = []ranv1alpha1.TrainRing{
		{Name: "canary"},
		{Name: "wide", Qualification: ranv1alpha1.RingQualification{MaxFailed: 3},
			Rollout: &ranv1alpha1.MCURollout{BatchSoak: &metav1.Duration{Duration: time.Hour}}},
		{Name: "own", Qualification: ranv1alpha1.RingQualification{MaxFailed: 3},
			Rollout: &ranv1alpha1.MCURollout{MaxFailures: ptr.To(intstr.FromString("10%"))}},
	}
	budget := func(i int) *ranv1alpha1.MCURollout {
		return MCU(tr, Planned{Key: Key{tr.Spec.Rings[i].Name, "4.16.12"}, Name: "r", Index: i}, "ztp").Spec.Rollout
	}
	if r := budget(0); r == nil || r.MaxFailures == nil || *r.MaxFailures != intstr.FromInt32(0) {
		t.Fatalf("a ring with no rollout settings: %+v, want a budget of 0", r)
	}
	if r := budget(1); r.MaxFailures == nil || *r.MaxFailures != intstr.FromInt32(3) || r.BatchSoak.Duration != time.Hour {
		t.Fatalf("a ring with a soak but no budget: %+v, want its soak and a budget of 3", r)
	}
	if r := budget(2); *r.MaxFailures != intstr.FromString("10%") {
		t.Fatalf("a ring's own budget: %+v, want 10%%", r)
	}
	if tr.Spec.Rings[0].Rollout != nil || tr.Spec.Rings[1].Rollout.MaxFailures != nil {
		t.Fatal("the train's spec was changed")
	}
}
