package managedclustersupgrade

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/mcu"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

// endingRollout is a ManagedClustersUpgrade whose ClusterGroupUpgrade ended, in a cache that
// shows the first of its two batch records written and the second as the pass before the
// last left it.
func endingRollout(t *testing.T) (*Reconciler, *ranv1alpha1.ManagedClustersUpgrade, []ranv1alpha1.ClusterGroupUpgradeBatch) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := ranv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	m := &ranv1alpha1.ManagedClustersUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m", UID: "m-uid"}}
	m.Spec.ClusterVersion.Version = "4.16.3"
	cgu := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m", UID: "cgu-uid"}}
	cgu.Spec.Clusters = []string{"c1", "c2"}
	cgu.Status.State = ranv1alpha1.StateCompleted
	cgu.Status.Counts = ranv1alpha1.ClusterCounts{Total: 2, Completed: 2}
	meta.SetStatusCondition(&cgu.Status.Conditions, metav1.Condition{Type: ranv1alpha1.ConditionSucceeded,
		Status: metav1.ConditionTrue, Reason: ranv1alpha1.ReasonCompleted})
	records := plan.Records(plan.Plan{Batches: []plan.Batch{{Canary: true, Clusters: []string{"c1"}}, {Clusters: []string{"c2"}}}}, "ns", "m")
	started := metav1.Now()
	records[0].Status = ranv1alpha1.ClusterGroupUpgradeBatchStatus{StartedAt: &started, FinishedAt: &started,
		Clusters: []ranv1alpha1.ClusterProgress{{Name: "c1", State: ranv1alpha1.ClusterCompleted}}}
	records[1].Status = ranv1alpha1.ClusterGroupUpgradeBatchStatus{StartedAt: &started,
		Clusters: []ranv1alpha1.ClusterProgress{{Name: "c2", State: ranv1alpha1.ClusterInProgress}}}
	objs := []client.Object{m, cgu, &records[0], &records[1]}
	owners := []client.Object{m, cgu, cgu}
	for i, owner := range owners {
		if err := controllerutil.SetControllerReference(owner, objs[i+1], scheme); err != nil {
			t.Fatal(err)
		}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithStatusSubresource(&ranv1alpha1.ClusterGroupUpgradeBatch{}).Build()
	return &Reconciler{Client: c, Scheme: scheme, Clock: clocktesting.NewFakePassiveClock(started.Time)}, m, records
}

// A cache may show a ClusterGroupUpgrade's end before the batch record its last pass wrote:
// the rollout does not end for the ManagedClustersUpgrade until the record shows it too, and
// the record's arrival brings the pass that sees both.
func TestChildEndsWithItsRecords(t *testing.T) {
	ctx := context.Background()
	r, m, records := endingRollout(t)
	inProgress := func() (*metav1.Condition, *ranv1alpha1.ClustersSummary) {
		t.Helper()
		f, err := r.gather(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		st := mcu.Decide(f).Status
		return meta.FindStatusCondition(st.Conditions, ranv1alpha1.MCUConditionInProgress), st.ClustersSummary
	}
	if cond, sum := inProgress(); cond == nil || cond.Reason == mcu.ReasonEnded || sum.Complete != 1 {
		t.Fatalf("with the last record behind: InProgress %+v, summary %+v; want not ended, 1 complete", cond, sum)
	}
	if got := r.recordOwner(ctx, &records[1]); len(got) != 1 || got[0].Name != "m" || got[0].Namespace != "ns" {
		t.Fatalf("a record of the rollout enqueues %v, want ns/m", got)
	}

	records[1].Status.FinishedAt = records[1].Status.StartedAt
	records[1].Status.Clusters[0].State = ranv1alpha1.ClusterCompleted
	if err := r.Client.Status().Update(ctx, &records[1]); err != nil {
		t.Fatal(err)
	}
	if cond, sum := inProgress(); cond == nil || cond.Reason != mcu.ReasonEnded || sum.Complete != 2 {
		t.Fatalf("with every record written: InProgress %+v, summary %+v; want ended, 2 complete", cond, sum)
	}

	other := records[0].DeepCopy()
	other.OwnerReferences[0].Name = "not-an-mcu-rollout"
	if got := r.recordOwner(ctx, other); len(got) != 0 {
		t.Errorf("a record of a ClusterGroupUpgrade no ManagedClustersUpgrade made enqueues %v", got)
	}
}
