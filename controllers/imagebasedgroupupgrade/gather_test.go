package imagebasedgroupupgrade

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

// endingStep is an ImageBasedGroupUpgrade's step whose ClusterGroupUpgrade ended, in a cache
// that shows its batch record as the pass before the last left it.
func endingStep(t *testing.T) (*Reconciler, *ranv1alpha1.ClusterGroupUpgrade, *ranv1alpha1.ClusterGroupUpgradeBatch) {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{ranv1alpha1.AddToScheme, lcmv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	g := &lcmv1alpha1.ImageBasedGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ibu", UID: "ibu-uid"}}
	cgu := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ibu-prep-upgrade", UID: "cgu-uid"}}
	cgu.Status.State = ranv1alpha1.StateCompleted
	cgu.Status.Counts = ranv1alpha1.ClusterCounts{Total: 1, Completed: 1}
	meta.SetStatusCondition(&cgu.Status.Conditions, metav1.Condition{Type: ranv1alpha1.ConditionSucceeded,
		Status: metav1.ConditionTrue, Reason: ranv1alpha1.ReasonCompleted})
	record := &plan.Records(plan.Plan{Batches: []plan.Batch{{Clusters: []string{"sno1"}}}}, "ns", cgu.Name)[0]
	started := metav1.Now()
	record.Status = ranv1alpha1.ClusterGroupUpgradeBatchStatus{StartedAt: &started,
		Clusters: []ranv1alpha1.ClusterProgress{{Name: "sno1", State: ranv1alpha1.ClusterInProgress}}}
	if err := controllerutil.SetControllerReference(g, cgu, scheme); err != nil {
		t.Fatal(err)
	}
	if err := controllerutil.SetControllerReference(cgu, record, scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(g, cgu, record).
		WithStatusSubresource(&ranv1alpha1.ClusterGroupUpgradeBatch{}).Build()
	return &Reconciler{Client: c, Scheme: scheme}, cgu, record
}

// A cache may show a step's end before the batch record its last pass wrote: the step does
// not end until the record shows it too, and the record's arrival brings the pass that sees
// both.
func TestStepEndsWithItsRecords(t *testing.T) {
	ctx := context.Background()
	r, cgu, record := endingStep(t)
	none := func(string, string) string { return "" }
	child, err := gatherChild(ctx, r.Client, cgu, none)
	if err != nil {
		t.Fatal(err)
	}
	if child.Ended || !child.CompletedAt.IsZero() || child.Clusters["sno1"].State != ranv1alpha1.ClusterInProgress {
		t.Fatalf("with the record behind: ended %v at %v, sno1 %+v; want not ended", child.Ended, child.CompletedAt, child.Clusters["sno1"])
	}
	if got := r.recordOwner(ctx, record); len(got) != 1 || got[0].Name != "ibu" || got[0].Namespace != "ns" {
		t.Fatalf("a record of a step enqueues %v, want ns/ibu", got)
	}

	record.Status.FinishedAt = record.Status.StartedAt
	record.Status.Clusters[0].State = ranv1alpha1.ClusterCompleted
	if err := r.Client.Status().Update(ctx, record); err != nil {
		t.Fatal(err)
	}
	if child, err = gatherChild(ctx, r.Client, cgu, none); err != nil || !child.Ended || child.Clusters["sno1"].State != ranv1alpha1.ClusterCompleted {
		t.Fatalf("with the record written: ended %v, sno1 %+v, err %v; want ended, completed", child.Ended, child.Clusters["sno1"], err)
	}

	other := record.DeepCopy()
	other.OwnerReferences[0].Name = "not-a-step"
	if got := r.recordOwner(ctx, other); len(got) != 0 {
		t.Errorf("a record of a ClusterGroupUpgrade no ImageBasedGroupUpgrade made enqueues %v", got)
	}
}
