package hubapi

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

// served builds a fake discovery client serving the given APIs.
func served(apis ...API) *fakediscovery.FakeDiscovery {
	byGV := map[string]*metav1.APIResourceList{}
	var lists []*metav1.APIResourceList
	for _, a := range apis {
		l, ok := byGV[a.GroupVersion.String()]
		if !ok {
			l = &metav1.APIResourceList{GroupVersion: a.GroupVersion.String()}
			byGV[a.GroupVersion.String()] = l
			lists = append(lists, l)
		}
		l.APIResources = append(l.APIResources, metav1.APIResource{Name: a.Resource})
	}
	return &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: lists}}
}

func TestCheckRequired(t *testing.T) {
	cases := map[string]struct {
		served      []API
		wantMissing []string
	}{
		"everything served": {served: Required},
		"nothing served": {wantMissing: []string{
			"clustergroupupgrades.ran.openshift.io/v1alpha1", "policies.policy.open-cluster-management.io/v1",
			"placements.cluster.open-cluster-management.io/v1beta1", "managedclusters.cluster.open-cluster-management.io/v1",
		}},
		"governance missing": {
			served:      without(Required, "policies", "placementbindings"),
			wantMissing: []string{"policies.policy.open-cluster-management.io/v1 (" + governance + ")", "placementbindings"},
		},
		"one resource of a served group missing": {
			served:      without(Required, "placements"),
			wantMissing: []string{"placements.cluster.open-cluster-management.io/v1beta1"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := CheckRequired(served(tc.served...))
			if len(tc.wantMissing) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrMissingAPIs) {
				t.Fatalf("error %v does not wrap ErrMissingAPIs", err)
			}
			for _, want := range tc.wantMissing {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
			if tc.served != nil && strings.Contains(err.Error(), "clustergroupupgrades") {
				t.Errorf("error %q names an API that is served", err)
			}
		})
	}
}

func TestMissingOptional(t *testing.T) {
	missing, err := Missing(served(Views, Actions, SetBindings), Optional)
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) != 2 || missing[0].Resource != "manifestworks" || missing[1].Resource != "manifestworkreplicasets" {
		t.Fatalf("missing = %v, want manifestworks and manifestworkreplicasets", missing)
	}
}

func without(apis []API, resources ...string) []API {
	var out []API
next:
	for _, a := range apis {
		for _, r := range resources {
			if a.Resource == r {
				continue next
			}
		}
		out = append(out, a)
	}
	return out
}
