package spokeobjects

import (
	"context"
	"testing"

	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func writer(t *testing.T) Writer {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := viewv1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := actionv1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := workv1.Install(scheme); err != nil {
		t.Fatal(err)
	}
	return Writer{Client: fake.NewClientBuilder().WithScheme(scheme).Build()}
}

func view(kind string) *viewv1beta1.ManagedClusterView {
	return &viewv1beta1.ManagedClusterView{ObjectMeta: metav1.ObjectMeta{Namespace: "sno-1", Name: "v"},
		Spec: viewv1beta1.ViewSpec{Scope: viewv1beta1.ViewScope{Kind: kind, Name: "x"}}}
}

func TestEnsureView(t *testing.T) {
	ctx, w := context.Background(), writer(t)
	if _, err := w.EnsureView(ctx, view("Subscription")); err != nil {
		t.Fatal(err)
	}
	stored, err := w.EnsureView(ctx, view("Subscription"))
	if err != nil || stored.ResourceVersion == "" {
		t.Fatalf("an equal view: got %+v, %v; want the stored one", stored, err)
	}
	before := stored.ResourceVersion
	corrected, err := w.EnsureView(ctx, view("InstallPlan"))
	if err != nil || corrected.Spec.Scope.Kind != "InstallPlan" || corrected.ResourceVersion == before {
		t.Fatalf("a view whose scope changed: got %+v, %v; want it updated", corrected, err)
	}
	again, err := w.EnsureView(ctx, view("InstallPlan"))
	if err != nil || again.ResourceVersion != corrected.ResourceVersion {
		t.Errorf("an equal view was written again: %s, then %s", corrected.ResourceVersion, again.ResourceVersion)
	}
}

func TestCreateActionAndDelete(t *testing.T) {
	ctx, w := context.Background(), writer(t)
	action := func() *actionv1beta1.ManagedClusterAction {
		return &actionv1beta1.ManagedClusterAction{ObjectMeta: metav1.ObjectMeta{Namespace: "sno-1", Name: "approve"}}
	}
	if made, err := w.CreateAction(ctx, action()); !made || err != nil {
		t.Fatalf("first: made %v, %v", made, err)
	}
	if made, err := w.CreateAction(ctx, action()); made || err != nil {
		t.Fatalf("second: made %v, %v; want an existing one left alone", made, err)
	}
	for i := range 2 {
		if err := w.Delete(ctx, action()); err != nil {
			t.Fatalf("delete %d: %v", i, err)
		}
	}
	err := w.Client.Get(ctx, client.ObjectKeyFromObject(action()), action())
	if !apierrors.IsNotFound(err) {
		t.Errorf("the action is still there: %v", err)
	}
}

func TestCreateWorkAndDelete(t *testing.T) {
	ctx, w := context.Background(), writer(t)
	work := func() *workv1.ManifestWork {
		return &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "sno-1", Name: "step"}}
	}
	for i := range 2 {
		if err := w.CreateWork(ctx, work()); err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
	}
	if err := w.Delete(ctx, work()); err != nil {
		t.Fatal(err)
	}
	if err := w.Client.Get(ctx, client.ObjectKeyFromObject(work()), work()); !apierrors.IsNotFound(err) {
		t.Errorf("the work is still there: %v", err)
	}
}
