package policies

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
)

func TestMade(t *testing.T) {
	owner := ownership.Owner{Namespace: "cgu-ns", Name: "upgrade"}
	placement := names.Placement("cgu-ns", "upgrade", "platform")
	cases := map[string]struct {
		mode ranv1alpha1.EnforcementMode
		want []string
	}{
		"copy": {ranv1alpha1.EnforcementCopy, []string{
			"*v1.PlacementBinding cgu-ns/" + placement,
			"*v1.Policy cgu-ns/" + names.PolicyCopy("cgu-ns", "upgrade", "platform"),
			"*v1beta1.Placement cgu-ns/" + placement,
		}},
		"override": {ranv1alpha1.EnforcementOverride, []string{
			"*v1.PlacementBinding ztp/" + placement,
			"*v1beta1.Placement ztp/" + placement,
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, o := range Made(owner, tc.mode, "ztp", "platform") {
				got = append(got, typeName(o)+" "+o.GetNamespace()+"/"+o.GetName())
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("object %d: got %s, want %s", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func typeName(o client.Object) string {
	switch o.(type) {
	case *policyv1.PlacementBinding:
		return "*v1.PlacementBinding"
	case *policyv1.Policy:
		return "*v1.Policy"
	case *clusterv1beta1.Placement:
		return "*v1beta1.Placement"
	}
	return "?"
}

// TestRelease deletes the objects of the deleted policy made for the owner, and nothing of
// another policy or not labelled for the owner.
func TestRelease(t *testing.T) {
	owner := ownership.Owner{Namespace: "cgu-ns", Name: "upgrade"}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{policyv1.AddToScheme, clusterv1beta1.Install} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	var objects []client.Object
	for _, policy := range []string{"gone", "kept"} {
		for _, o := range Made(owner, ranv1alpha1.EnforcementCopy, "ztp", policy) {
			o.SetLabels(owner.Labels())
			objects = append(objects, o)
		}
	}
	foreign := &policyv1.PlacementBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ztp", Name: names.Placement("cgu-ns", "upgrade", "gone")}}
	objects = append(objects, foreign)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).Build()
	w := Writer{Client: c, Reader: c, Scheme: scheme}
	ctx := context.Background()

	for range 2 { // a second release finds nothing to delete
		if err := w.Release(ctx, owner, ranv1alpha1.EnforcementCopy, "ztp", "gone"); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Release(ctx, owner, ranv1alpha1.EnforcementOverride, "ztp", "gone"); err != nil {
		t.Fatal(err)
	}
	for _, o := range objects {
		err := c.Get(ctx, client.ObjectKeyFromObject(o), o)
		gone := o.GetNamespace() == "cgu-ns" && (o.GetName() == names.Placement("cgu-ns", "upgrade", "gone") ||
			o.GetName() == names.PolicyCopy("cgu-ns", "upgrade", "gone"))
		switch {
		case gone && !apierrors.IsNotFound(err):
			t.Errorf("%s %s/%s: got %v, want deleted", typeName(o), o.GetNamespace(), o.GetName(), err)
		case !gone && err != nil:
			t.Errorf("%s %s/%s: got %v, want kept", typeName(o), o.GetNamespace(), o.GetName(), err)
		}
	}
}
