package validate

import (
	"fmt"
	"testing"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

func TestDuplicates(t *testing.T) {
	many := make([]string, 0, 24)
	for i := range 12 {
		many = append(many, fmt.Sprintf("sno-%d", i), fmt.Sprintf("sno-%d", i))
	}
	cases := map[string]struct {
		spec ranv1alpha1.ClusterGroupUpgradeSpec
		want string
	}{
		"none": {spec: ranv1alpha1.ClusterGroupUpgradeSpec{Clusters: []string{"a", "b"}, ManagedPolicies: []string{"p"}}},
		"every list": {spec: ranv1alpha1.ClusterGroupUpgradeSpec{Clusters: []string{"a", "b", "a", "b", "a"}, ManagedPolicies: []string{"p", "q", "p"},
			RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{Canaries: []string{"a", "a"}}},
			want: "each counted once: spec.clusters lists a 3 times, b 2 times; spec.remediationStrategy.canaries lists a 2 times; spec.managedPolicies lists p 2 times"},
		"bounded": {spec: ranv1alpha1.ClusterGroupUpgradeSpec{Clusters: many},
			want: "each counted once: spec.clusters lists sno-0 2 times, sno-1 2 times, sno-2 2 times, sno-3 2 times, sno-4 2 times, sno-5 2 times, " +
				"sno-6 2 times, sno-7 2 times, sno-8 2 times, sno-9 2 times, and 2 more names"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Duplicates(tc.spec); got != tc.want {
				t.Fatalf("Duplicates = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestValidateCountsARepeatedPolicyOnce: a managed policy listed twice resolves once, so the
// rollout enforces it once.
func TestValidateCountsARepeatedPolicyOnce(t *testing.T) {
	res := Validate(Input{ManagedPolicies: []string{"p", "p"}, Selected: []string{"a"}, Policies: []Policy{placed("ztp", "p", "a")}})
	if res.Problem != nil || len(res.Resolved) != 1 {
		t.Fatalf("got %+v, want p resolved once", res)
	}
}
