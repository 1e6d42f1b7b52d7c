package clustergroupupgrade

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// A policy's compliance moving on queues the rollouts that manage it at once, unless their
// enforcement was written within enforcementInterval: then at the interval's end, so that
// the reports of the interval are read by one pass.
func TestPolicyEventsWaitForTheEnforcementInterval(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := ranv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	rollout := func(name, uid string) *ranv1alpha1.ClusterGroupUpgrade {
		return &ranv1alpha1.ClusterGroupUpgrade{
			ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: name, UID: types.UID(uid)},
			Spec:       ranv1alpha1.ClusterGroupUpgradeSpec{ManagedPolicies: []string{"upgrade"}},
		}
	}
	enforcedNow, idle := rollout("enforced-now", "a"), rollout("idle", "b")
	other := rollout("other-policy", "c")
	other.Spec.ManagedPolicies = []string{"operators"}
	c := fake.NewClientBuilder().WithScheme(scheme).
		WithIndex(&ranv1alpha1.ClusterGroupUpgrade{}, managedPolicyIndex, func(o client.Object) []string {
			return o.(*ranv1alpha1.ClusterGroupUpgrade).Spec.ManagedPolicies
		}).
		WithObjects(enforcedNow, idle, other).Build()
	r := &Reconciler{Client: c}
	r.expect.enforced(enforcedNow, r.lagNow())

	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	policy := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "ztp", Name: "upgrade"}}
	r.usingPolicy().Update(context.Background(), event.UpdateEvent{ObjectOld: policy, ObjectNew: policy}, q)

	if n := q.Len(); n != 1 {
		t.Fatalf("queued at once: %d rollouts, want 1 (the one not enforced within the interval)", n)
	}
	first, _ := q.Get()
	q.Done(first)
	if first.Name != "idle" {
		t.Errorf("queued at once: %s, want idle", first.Name)
	}
	// The rollout enforced within the interval comes at its end; Get blocks until then.
	got := make(chan reconcile.Request, 1)
	go func() {
		req, _ := q.Get()
		got <- req
	}()
	select {
	case req := <-got:
		if req.Name != "enforced-now" {
			t.Errorf("queued at the interval's end: %s, want enforced-now", req.Name)
		}
	case <-time.After(10 * enforcementInterval):
		t.Fatal("the rollout enforced within the interval was never queued")
	}
	if n := q.Len(); n != 0 {
		t.Errorf("%d more rollouts queued; the rollout of another policy was queued", n)
	}
}
