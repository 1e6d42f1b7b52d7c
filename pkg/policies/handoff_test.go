package policies

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/preview"
)

// replica is the propagator's replica of namespace/name on cluster, remediating as action.
func replica(cluster, namespace, name string, action policyv1.RemediationAction) *policyv1.Policy {
	return &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: namespace + "." + name,
			Labels: map[string]string{preview.LabelRootPolicy: namespace + "." + name}},
		Spec: policyv1.PolicySpec{RemediationAction: action},
	}
}

func TestEnforcedOn(t *testing.T) {
	owner := ownership.Owner{Namespace: "cgu-ns", Name: "upgrade"}
	if got := EnforcedOn(owner, ranv1alpha1.EnforcementOverride, "ztp", "hop", "sno-1"); got != (Enforced{Cluster: "sno-1", Namespace: "ztp", Name: "hop"}) {
		t.Fatalf("Override: %+v, want the managed policy itself", got)
	}
	want := Enforced{Cluster: "sno-1", Namespace: "cgu-ns", Name: names.PolicyCopy("cgu-ns", "upgrade", "hop")}
	if got := EnforcedOn(owner, ranv1alpha1.EnforcementCopy, "ztp", "hop", "sno-1"); got != want {
		t.Fatalf("Copy: %+v, want the enforce copy %+v", got, want)
	}
}

// A replica still enforcing is read again on the next pass; one released (inform, or gone) is
// remembered and not read again; what is remembered is what the last pass asked for.
func TestReleasedReadsUntilReleased(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := policyv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	lists := map[string]int{}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		replica("enforcing", "ztp", "hop", policyv1.Enforce),
		replica("informing", "ztp", "hop", "Inform"),
	).WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		o := &client.ListOptions{}
		o.ApplyOptions(opts)
		lists[o.Namespace]++
		return cl.List(ctx, list, opts...)
	}}).Build()
	owner := ownership.Owner{Namespace: "cgu-ns", Name: "upgrade"}
	on := func(cluster string) Enforced { return Enforced{Cluster: cluster, Namespace: "ztp", Name: "hop"} }
	asked := []Enforced{on("enforcing"), on("informing"), on("gone")}
	releases := &Releases{}
	ctx := context.Background()

	for pass := 1; pass <= 2; pass++ {
		got, err := releases.Released(ctx, c, owner, asked)
		if err != nil {
			t.Fatal(err)
		}
		if got[on("enforcing")] || !got[on("informing")] || !got[on("gone")] {
			t.Fatalf("pass %d: released %v, want the informing and the gone one", pass, got)
		}
	}
	if lists["enforcing"] != 2 || lists["informing"] != 1 || lists["gone"] != 1 {
		t.Fatalf("reads by cluster %v: want the enforcing replica read on each pass, the released ones once", lists)
	}

	// A pass that no longer asks for a cluster forgets it: asked again, it is read again.
	if _, err := releases.Released(ctx, c, owner, asked[:1]); err != nil {
		t.Fatal(err)
	}
	if _, err := releases.Released(ctx, c, owner, asked); err != nil {
		t.Fatal(err)
	}
	if lists["informing"] != 2 {
		t.Fatalf("reads of the informing replica %d, want 2: forgotten once no pass asked for it", lists["informing"])
	}
	releases.Forget(owner)
	if got := releases.get("cgu-ns/upgrade"); got != nil {
		t.Fatalf("remembered %v after Forget", got)
	}
}
