package validate

import (
	"testing"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// TestUnplacedPolicies covers the message of a managed policy that exists on the hub but is
// placed on none of the selected clusters (another namespace's, or not placed yet): it names
// the policies that exist, so that it is not mistaken for a misspelt name.
func TestUnplacedPolicies(t *testing.T) {
	hub := []Policy{
		placed("ztp-common", "platform-upgrade", "sno-1"),
		placed("tenant-b", "operators", "sno-9"),
		placed("tenant-a", "operators"),
		placed("tenant-c", "not-placed"),
	}
	cases := map[string]struct {
		policies []string
		want     string
	}{
		"a misspelt name": {
			policies: []string{"platform-upgrde"},
			want:     "Managed policies not found on the selected clusters: platform-upgrde",
		},
		"a policy of another namespace placed elsewhere": {
			policies: []string{"not-placed"},
			want:     "Managed policies not found on the selected clusters: not-placed (tenant-c/not-placed is placed on none of them)",
		},
		"several namespaces, sorted, and a misspelt name": {
			policies: []string{"operators", "nope"},
			want: "Managed policies not found on the selected clusters: " +
				"operators (tenant-a/operators and tenant-b/operators are placed on none of them), nope",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := Validate(Input{ManagedPolicies: tc.policies, Selected: []string{"sno-1"}, Policies: hub})
			if res.Problem == nil {
				t.Fatalf("no problem; resolved %v", res.Resolved)
			}
			if res.Problem.Reason != ranv1alpha1.ReasonNotAllManagedPoliciesExist || res.Problem.Message != tc.want {
				t.Errorf("got %s: %q\nwant %s: %q", res.Problem.Reason, res.Problem.Message, ranv1alpha1.ReasonNotAllManagedPoliciesExist, tc.want)
			}
		})
	}
}
