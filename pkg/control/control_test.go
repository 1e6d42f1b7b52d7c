package control

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// These are narrow tests of what each function writes; the plugin's and the dashboard's
// suites run them on a real API server, RBAC refusals included.

func newClient(t *testing.T, cgu *ranv1alpha1.ClusterGroupUpgrade) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := ranv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(cgu).Build()
}

func read(t *testing.T, c client.Client, key client.ObjectKey) *ranv1alpha1.ClusterGroupUpgrade {
	t.Helper()
	cgu := &ranv1alpha1.ClusterGroupUpgrade{}
	if err := c.Get(context.Background(), key, cgu); err != nil {
		t.Fatal(err)
	}
	return cgu
}

func TestEnablePauseResume(t *testing.T) {
	ctx := context.Background()
	cgu := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "u"},
		Spec: ranv1alpha1.ClusterGroupUpgradeSpec{Enable: ptr.To(false), ManagedPolicies: []string{"p"}}}
	key := client.ObjectKeyFromObject(cgu)
	c := newClient(t, cgu)

	if err := Enable(ctx, c, key); err != nil {
		t.Fatal(err)
	}
	if got := read(t, c, key); got.Spec.Enable == nil || !*got.Spec.Enable || got.Spec.ManagedPolicies[0] != "p" {
		t.Errorf("after Enable: %+v", got.Spec)
	}
	if err := SetPaused(ctx, c, key, true); err != nil {
		t.Fatal(err)
	}
	if !read(t, c, key).Spec.Paused {
		t.Error("SetPaused(true) did not pause")
	}
	if err := SetPaused(ctx, c, key, false); err != nil {
		t.Fatal(err)
	}
	if read(t, c, key).Spec.Paused {
		t.Error("SetPaused(false) did not resume")
	}
	err := SetPaused(ctx, c, client.ObjectKey{Namespace: "ns", Name: "missing"}, true)
	if !apierrors.IsNotFound(err) {
		t.Errorf("pausing a missing CGU: %v, want a NotFound error", err)
	}
}

func TestApprove(t *testing.T) {
	ctx := context.Background()
	waiting := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "u"},
		Status: ranv1alpha1.ClusterGroupUpgradeStatus{Waiting: &ranv1alpha1.WaitingStatus{Reason: ranv1alpha1.ReasonWaitingForApproval, Batch: 3}}}
	key := client.ObjectKeyFromObject(waiting)

	t.Run("the batch that waits", func(t *testing.T) {
		c := newClient(t, waiting.DeepCopy())
		a, err := Approve(ctx, c, key, 0)
		// The fake client has no authentication API: asking who the caller is fails, and
		// nothing is written.
		if err == nil || a.Batch != 3 {
			t.Fatalf("approval %+v, error %v", a, err)
		}
		if _, ok := read(t, c, key).Annotations[ranv1alpha1.AnnotationApproveBatch]; ok {
			t.Error("an approval was written although the caller is unknown")
		}
	})
	t.Run("nothing waits", func(t *testing.T) {
		idle := waiting.DeepCopy()
		idle.Status.Waiting = &ranv1alpha1.WaitingStatus{Reason: ranv1alpha1.ReasonBatchSoaking, Batch: 3}
		_, err := Approve(ctx, newClient(t, idle), key, 0)
		if !errors.Is(err, ErrNotWaitingForApproval) {
			t.Errorf("error %v, want ErrNotWaitingForApproval", err)
		}
	})
	t.Run("a batch below 1", func(t *testing.T) {
		if _, err := Approve(ctx, newClient(t, waiting.DeepCopy()), key, -2); err == nil {
			t.Error("approving batch -2 was accepted")
		}
	})
}
