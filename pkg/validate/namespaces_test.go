package validate

import (
	"testing"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// TestAllowedNamespaces covers the operator's --policy-namespaces: only policies of the
// allowed namespaces resolve, and a policy found only elsewhere is refused by name.
func TestAllowedNamespaces(t *testing.T) {
	hub := []Policy{
		placed("ztp-common", "platform-upgrade", "sno-1", "sno-2"),
		placed("tenant-a", "operators", "sno-1"),
		placed("ztp-a", "site-config", "sno-1"),
		placed("tenant-b", "site-config", "sno-1"),
		placed("tenant-a", "hijack", "sno-1"),
		placed("tenant-b", "hijack", "sno-2"),
	}
	selected := []string{"sno-1", "sno-2"}
	cases := map[string]struct {
		policies    []string
		allowed     []string
		tenant      string
		wantReason  string
		wantMessage string
		wantNS      []string
	}{
		"no restriction resolves any namespace (TALM)": {
			policies: []string{"operators", "platform-upgrade"},
			wantNS:   []string{"tenant-a", "ztp-common"},
		},
		"an allowed namespace resolves": {
			policies: []string{"platform-upgrade"}, allowed: []string{"ztp-common"},
			wantNS: []string{"ztp-common"},
		},
		"a policy only in a forbidden namespace is refused, naming it and the allowed namespaces": {
			policies: []string{"platform-upgrade", "operators"}, allowed: []string{"ztp-common", "ztp-a"},
			wantReason:  ranv1alpha1.ReasonPolicyNamespaceNotAllowed,
			wantMessage: "may not enforce: operators (in tenant-a); allowed namespaces (--policy-namespaces): ztp-common, ztp-a",
		},
		"every forbidden namespace of a name is listed": {
			policies: []string{"hijack"}, allowed: []string{"ztp-common"},
			wantReason: ranv1alpha1.ReasonPolicyNamespaceNotAllowed, wantMessage: "hijack (in tenant-a and tenant-b)",
		},
		"a copy in a forbidden namespace neither counts nor makes the name ambiguous": {
			policies: []string{"site-config"}, allowed: []string{"ztp-a"},
			wantNS: []string{"ztp-a"},
		},
		"the same name unrestricted is ambiguous": {
			policies:   []string{"site-config"},
			wantReason: ranv1alpha1.ReasonAmbiguousManagedPoliciesNames, wantMessage: "site-config (in tenant-b and ztp-a)",
		},
		"a refusal comes before missing policies": {
			policies: []string{"nope", "operators"}, allowed: []string{"ztp-common"},
			wantReason: ranv1alpha1.ReasonPolicyNamespaceNotAllowed, wantMessage: "operators (in tenant-a)",
		},
		"a missing policy stays missing under a restriction": {
			policies: []string{"nope"}, allowed: []string{"ztp-common"},
			wantReason: ranv1alpha1.ReasonNotAllManagedPoliciesExist, wantMessage: ": nope",
		},
		"tenancy resolves the CGU's own namespace": {
			policies: []string{"operators", "site-config"}, tenant: "tenant-b",
			wantReason:  ranv1alpha1.ReasonPolicyNamespaceNotAllowed,
			wantMessage: "may not enforce: operators (in tenant-a); tenancy mode allows the ClusterGroupUpgrade's own namespace tenant-b",
		},
		"tenancy: another namespace's copy does not make the name ambiguous": {
			policies: []string{"hijack", "site-config"}, tenant: "tenant-b",
			wantNS: []string{"tenant-b", "tenant-b"},
		},
		"tenancy and --policy-namespaces both apply": {
			policies: []string{"site-config"}, tenant: "tenant-b", allowed: []string{"ztp-a"},
			wantReason:  ranv1alpha1.ReasonPolicyNamespaceNotAllowed,
			wantMessage: "site-config (in tenant-b and ztp-a); tenancy mode allows the ClusterGroupUpgrade's own namespace tenant-b; allowed namespaces (--policy-namespaces): ztp-a",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := Validate(Input{ManagedPolicies: tc.policies, Selected: selected, Policies: hub, AllowedNamespaces: tc.allowed,
				Tenant: tc.tenant})
			expectResult(t, res, tc.wantReason, tc.wantMessage, tc.wantNS)
		})
	}
}
