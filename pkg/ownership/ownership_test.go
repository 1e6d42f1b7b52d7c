package ownership

import (
	"context"
	"strings"
	"testing"

	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
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
	found, err := cleaner.Cleanup(context.Background(), owner)
	if err != nil || found != 5 {
		t.Fatalf("Cleanup found %d, %v; want the owner's 5 objects", found, err)
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
