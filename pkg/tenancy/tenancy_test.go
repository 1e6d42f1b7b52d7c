package tenancy

import (
	"maps"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
)

func set(name string, selector *metav1.LabelSelector) clusterv1beta2.ManagedClusterSet {
	s := clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if selector != nil {
		s.Spec.ClusterSelector = clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector, LabelSelector: selector}
	}
	return s
}

func TestReachable(t *testing.T) {
	clusters := []Cluster{
		{Name: "east-1", Labels: map[string]string{clusterv1beta2.ClusterSetLabel: "east"}},
		{Name: "east-2", Labels: map[string]string{clusterv1beta2.ClusterSetLabel: "east", "ring": "canary"}},
		{Name: "west-1", Labels: map[string]string{clusterv1beta2.ClusterSetLabel: "west"}},
		{Name: "loose", Labels: map[string]string{"ring": "canary"}},
	}
	sets := []clusterv1beta2.ManagedClusterSet{
		set("east", nil), set("west", nil),
		set("canaries", &metav1.LabelSelector{MatchLabels: map[string]string{"ring": "canary"}}),
		set("global", &metav1.LabelSelector{}),
	}
	cases := map[string]struct {
		bound []string
		want  []string
	}{
		"no binding reaches nothing":                             {},
		"an exclusive set holds its labelled clusters":           {bound: []string{"east"}, want: []string{"east-1", "east-2"}},
		"a label-selector set holds the clusters it matches":     {bound: []string{"canaries"}, want: []string{"east-2", "loose"}},
		"bindings add up":                                        {bound: []string{"west", "canaries"}, want: []string{"east-2", "loose", "west-1"}},
		"global holds every cluster":                             {bound: []string{"global"}, want: []string{"east-1", "east-2", "loose", "west-1"}},
		"a binding to a set that does not exist reaches nothing": {bound: []string{"north"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Reachable(tc.bound, sets, clusters)
			if err != nil {
				t.Fatal(err)
			}
			if names := slices.Sorted(maps.Keys(got)); !slices.Equal(names, tc.want) {
				t.Fatalf("reachable %v, want %v", names, tc.want)
			}
		})
	}
}

func TestReachableRefusesAnUnreadableSet(t *testing.T) {
	bad := set("bad", nil)
	bad.Spec.ClusterSelector.SelectorType = "Nearby"
	if _, err := Reachable([]string{"bad"}, []clusterv1beta2.ManagedClusterSet{bad}, nil); err == nil {
		t.Fatal("a set with an unknown selector type read as valid")
	}
}

func TestRules(t *testing.T) {
	off := Rules{}
	on := Rules{On: true, LabelPrefix: "tenant-a.example.com/", Exempt: []string{"ztp-install"}}
	switch {
	case off.Applies("tenant-a"):
		t.Fatal("tenancy off restricts a namespace")
	case !on.Applies("tenant-a"):
		t.Fatal("tenancy on does not restrict a namespace")
	case on.Applies("ztp-install"):
		t.Fatal("tenancy restricts an exempt namespace")
	}
	got := on.KeysOutside([]string{"tenant-a.example.com/wave", "ztp-done", "tenant-a.example.com", "ztp-done"})
	if want := []string{"ztp-done", "tenant-a.example.com"}; !slices.Equal(got, want) {
		t.Fatalf("keys outside %v, want %v", got, want)
	}
	if got := (Rules{On: true}).KeysOutside([]string{"a", "b/c"}); len(got) != 2 {
		t.Fatalf("with no prefix, keys outside %v, want every key", got)
	}
}
