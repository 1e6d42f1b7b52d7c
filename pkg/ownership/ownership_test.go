package ownership

import (
	"context"
	"strings"
	"testing"
	"time"

	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/hubapi"
)

func TestOwnerLabels(t *testing.T) {
	long := strings.Repeat("a", 200)
	owner := Owner{Namespace: "ztp", Name: long}
	l := owner.Labels()
	if !owner.Owns(l) || (Owner{Namespace: "other", Name: long}).Owns(l) || (Owner{Namespace: "ztp", Name: "b"}).Owns(l) {
		t.Fatalf("Owns: labels %v must mark the owner and no other", l)
	}
	if len(l[ranv1alpha1.LabelUpgradeName]) > 63 {
		t.Fatalf("label value %q is longer than a label value may be", l[ranv1alpha1.LabelUpgradeName])
	}
	ns, value, ok := Of(l)
	if !ok || ns != "ztp" || value != l[ranv1alpha1.LabelUpgradeName] {
		t.Fatalf("Of = %q %q %v", ns, value, ok)
	}
	if _, _, ok := Of(map[string]string{ranv1alpha1.LabelUpgradeName: "x"}); ok {
		t.Fatal("Of: an object without the namespace label is not the operator's")
	}
	made, err := Made()
	if err != nil || !made.Matches(labels.Set(l)) || made.Matches(labels.Set{"app": "x"}) {
		t.Fatal("Made must select the owner's objects and nothing else")
	}
}

func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, policyv1.AddToScheme, clusterv1beta1.Install, viewv1beta1.AddToScheme} {
		utilruntime.Must(add(s))
	}
	return s
}

func TestCleanup(t *testing.T) {
	owner := Owner{Namespace: "ztp", Name: "upgrade"}
	mine := func(o client.Object, ns, name string) client.Object {
		o.SetNamespace(ns)
		o.SetName(name)
		o.SetLabels(owner.Labels())
		return o
	}
	theirs := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "ztp", Name: "users", Labels: map[string]string{"app": "x"}}}
	other := &policyv1.PlacementBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ztp", Name: "other",
		Labels: Owner{Namespace: "ztp", Name: "other"}.Labels()}}
	c := fake.NewClientBuilder().WithScheme(scheme()).WithObjects(
		mine(&policyv1.PlacementBinding{}, "ztp", "b"), mine(&clusterv1beta1.Placement{}, "policies", "p"),
		mine(&policyv1.Policy{}, "ztp", "copy"), mine(&viewv1beta1.ManagedClusterView{}, "spoke-1", "v"),
		mine(&corev1.ConfigMap{}, "ztp", "cm"), theirs, other,
	).Build()

	cleaner := Cleaner{Client: c, Unserved: hubapi.Unserved{Actions: true, Works: true}}
	placement := mine(&clusterv1beta1.Placement{}, "policies", "p")
	found, held, err := cleaner.CleanupStep(context.Background(), owner)
	if err != nil || found != 5 || !held {
		t.Fatalf("CleanupStep found %d, held %t, %v; want the owner's 5 objects, the Placement held", found, held, err)
	}
	// The binding goes first: the propagator maps its deletion to replicas through the
	// Placement, which must still be there then.
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(placement), placement); err != nil {
		t.Fatalf("The Placement was deleted with its binding: %v", err)
	}
	if found, held, err := cleaner.CleanupStep(context.Background(), owner); err != nil || found != 1 || held {
		t.Fatalf("CleanupStep again found %d, held %t, %v; want the Placement, deleted", found, held, err)
	}
	if found, err := cleaner.Cleanup(context.Background(), owner); err != nil || found != 0 {
		t.Fatalf("Cleanup again found %d, %v; want nothing left", found, err)
	}
	for _, o := range []client.Object{theirs, other} {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatalf("%s/%s was deleted: %v", o.GetNamespace(), o.GetName(), err)
		}
	}
	if err := cleaner.Delete(context.Background(), owner, theirs.DeepCopy(), other.DeepCopy(),
		&clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "ztp", Name: "gone"}}); err != nil {
		t.Fatalf("Delete of objects not the owner's, or gone: %v", err)
	}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(theirs), theirs); err != nil {
		t.Fatalf("Delete removed an object made by someone else: %v", err)
	}
}

func TestAdopt(t *testing.T) {
	s := runtime.NewScheme()
	utilruntime.Must(ranv1alpha1.AddToScheme(s))
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	upgrade := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "ztp", Name: "upgrade", UID: "u-1"}}
	here := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ztp", Name: "cm", Labels: map[string]string{"app": "x"}}}
	if err := Adopt(upgrade, here, s); err != nil {
		t.Fatal(err)
	}
	owner := Owner{Namespace: "ztp", Name: "upgrade"}
	if !owner.Owns(here.Labels) || here.Labels["app"] != "x" {
		t.Fatalf("labels %v: want the owner's added to the object's own", here.Labels)
	}
	if refs := here.OwnerReferences; len(refs) != 1 || refs[0].UID != "u-1" || refs[0].Controller == nil || !*refs[0].Controller {
		t.Fatalf("owner references %+v, want a controller reference to the rollout", refs)
	}
	elsewhere := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "policies", Name: "cm"}}
	if err := Adopt(upgrade, elsewhere, s); err != nil || !owner.Owns(elsewhere.Labels) || len(elsewhere.OwnerReferences) != 0 {
		t.Fatalf("another namespace: labels %v refs %v err %v, want labels only", elsewhere.Labels, elsewhere.OwnerReferences, err)
	}
}

// drainWorld is a hub holding an owner's Placement, whose decision names spoke-1, and the
// PlacementBinding to it, with a Cleaner on a fake clock.
type drainWorld struct {
	t                  *testing.T
	c                  client.Client
	clk                *clocktesting.FakeClock
	cleaner            Cleaner
	owner              Owner
	decision           *clusterv1beta1.PlacementDecision
	placement, binding client.Object
}

func newDrainWorld(t *testing.T) *drainWorld {
	owner := Owner{Namespace: "ztp", Name: "upgrade"}
	placement := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "policies", Name: "p", Labels: owner.Labels()},
		Spec: clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{{}}}}
	binding := &policyv1.PlacementBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "policies", Name: "b", Labels: owner.Labels()}}
	pd := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Namespace: "policies", Name: "p-decision-1",
		Labels: map[string]string{decisionLabel: "p"}}}
	pd.Status.Decisions = []clusterv1beta1.ClusterDecision{{ClusterName: "spoke-1"}}
	c := fake.NewClientBuilder().WithScheme(scheme()).WithObjects(placement, binding, pd).WithStatusSubresource(pd).Build()
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC))
	return &drainWorld{t: t, c: c, clk: clk, owner: owner, decision: pd, placement: placement, binding: binding,
		cleaner: Cleaner{Client: c, Unserved: hubapi.Unserved{Actions: true, Works: true, Views: true}, Clock: clk}}
}

// step runs a CleanupStep and reports whether it held something back.
func (w *drainWorld) step() bool {
	w.t.Helper()
	_, held, err := w.cleaner.CleanupStep(context.Background(), w.owner)
	if err != nil {
		w.t.Fatal(err)
	}
	return held
}

func (w *drainWorld) exists(o client.Object) bool {
	return w.c.Get(context.Background(), client.ObjectKeyFromObject(o), o.DeepCopyObject().(client.Object)) == nil
}

// TestCleanupDrainsPlacements: a Placement whose decisions still name clusters is emptied
// before its binding goes, the binding waits for the decisions to be empty, and the Placement
// goes after its binding.
func TestCleanupDrainsPlacements(t *testing.T) {
	w := newDrainWorld(t)
	if !w.step() || !w.exists(w.binding) {
		t.Fatal("the binding went while the Placement still decided spoke-1")
	}
	got := &clusterv1beta1.Placement{}
	if err := w.c.Get(context.Background(), client.ObjectKeyFromObject(w.placement), got); err != nil {
		t.Fatal(err)
	}
	if !selectsNone(got) || len(got.Spec.Predicates) != 0 || got.Annotations[DrainedAnnotation] != "2026-12-02T08:00:00Z" {
		t.Fatalf("the Placement was not emptied: %+v %v", got.Spec, got.Annotations)
	}
	if !w.step() || !w.exists(w.binding) {
		t.Fatal("the binding went before the decisions were empty")
	}

	w.decision.Status.Decisions = nil
	if err := w.c.Status().Update(context.Background(), w.decision); err != nil {
		t.Fatal(err)
	}
	if !w.step() || w.exists(w.binding) || !w.exists(w.placement) {
		t.Fatal("once the decisions are empty the binding goes, then the Placement")
	}
	if w.step() || w.exists(w.placement) {
		t.Fatal("the Placement outlived its binding")
	}
}

// TestCleanupDrainTimeout: decisions that stay non-empty (no placement controller
// answering) hold the binding DrainTimeout, no longer.
func TestCleanupDrainTimeout(t *testing.T) {
	w := newDrainWorld(t)
	w.step()
	w.clk.Step(DrainTimeout - time.Second)
	if !w.step() || !w.exists(w.binding) {
		t.Fatal("the binding went before DrainTimeout")
	}
	w.clk.Step(time.Second)
	if !w.step() || w.exists(w.binding) {
		t.Fatal("the binding still waits past DrainTimeout")
	}
}
