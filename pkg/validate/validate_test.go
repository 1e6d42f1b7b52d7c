package validate

import (
	"reflect"
	"strings"
	"testing"

	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

func placed(ns, name string, clusters ...string) Policy {
	p := Policy{Name: name, Namespace: ns, Compliance: map[string]policyv1.ComplianceState{}}
	for _, c := range clusters {
		p.Compliance[c] = policyv1.NonCompliant
	}
	return p
}

// expectResult checks a validation: refused with wantReason and a message containing
// wantMessage, or, with no reason wanted, resolved to policies of the namespaces wantNS.
func expectResult(t *testing.T, res Result, wantReason, wantMessage string, wantNS []string) {
	t.Helper()
	if wantReason != "" {
		if res.Problem == nil || res.Problem.Reason != wantReason || !strings.Contains(res.Problem.Message, wantMessage) {
			t.Fatalf("problem %+v, want %s containing %q", res.Problem, wantReason, wantMessage)
		}
		return
	}
	if res.Problem != nil {
		t.Fatalf("unexpected problem %+v", res.Problem)
	}
	var got []string
	for _, p := range res.Resolved {
		got = append(got, p.Namespace)
	}
	if strings.Join(got, ",") != strings.Join(wantNS, ",") {
		t.Fatalf("resolved namespaces %v, want %v", got, wantNS)
	}
}

func TestValidate(t *testing.T) {
	hub := []Policy{
		placed("ztp-common", "platform-upgrade", "sno-1", "sno-2"),
		placed("ztp-group", "operators", "sno-1"),
		placed("ztp-site", "operators", "sno-9"), // same name, placed elsewhere only
		placed("ztp-a", "site-config", "sno-2"),
		placed("ztp-b", "site-config", "sno-1"),
	}
	cases := map[string]struct {
		in          Input
		wantReason  string
		wantMessage string
		wantNS      []string
	}{
		"resolved in spec order": {
			in:     Input{ManagedPolicies: []string{"operators", "platform-upgrade"}, Selected: []string{"sno-1", "sno-2"}},
			wantNS: []string{"ztp-group", "ztp-common"},
		},
		"a name placed elsewhere does not count": {
			in:     Input{ManagedPolicies: []string{"operators"}, Selected: []string{"sno-1"}},
			wantNS: []string{"ztp-group"},
		},
		"missing policies are named": {
			in:         Input{ManagedPolicies: []string{"platform-upgrade", "nope", "gone"}, Selected: []string{"sno-1"}},
			wantReason: ranv1alpha1.ReasonNotAllManagedPoliciesExist, wantMessage: "not found on the selected clusters: nope, gone",
		},
		"a policy not placed on any selected cluster is missing": {
			in:         Input{ManagedPolicies: []string{"operators"}, Selected: []string{"sno-2"}},
			wantReason: ranv1alpha1.ReasonNotAllManagedPoliciesExist, wantMessage: ": operators",
		},
		"an ambiguous name names both namespaces": {
			in:         Input{ManagedPolicies: []string{"site-config"}, Selected: []string{"sno-1", "sno-2"}},
			wantReason: ranv1alpha1.ReasonAmbiguousManagedPoliciesNames, wantMessage: "site-config (in ztp-a and ztp-b)",
		},
		"canaries outside the selection": {
			in:         Input{ManagedPolicies: []string{"operators"}, Selected: []string{"sno-1"}, Canaries: []string{"sno-1", "sno-7"}},
			wantReason: ranv1alpha1.ReasonInvalidCanaries, wantMessage: "not selected clusters: sno-7",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.in.Policies = hub
			res := Validate(tc.in)
			expectResult(t, res, tc.wantReason, tc.wantMessage, tc.wantNS)
		})
	}
}

func TestCompliantWithAll(t *testing.T) {
	a := Policy{Compliance: map[string]policyv1.ComplianceState{"sno-1": policyv1.Compliant, "sno-2": policyv1.Compliant, "sno-3": policyv1.NonCompliant}}
	b := Policy{Compliance: map[string]policyv1.ComplianceState{"sno-1": policyv1.Compliant, "sno-2": policyv1.Pending}}
	c := Policy{Compliance: map[string]policyv1.ComplianceState{"sno-5": policyv1.Compliant}}
	cases := map[string]struct {
		policies            []Policy
		compliant, unplaced map[string]bool
	}{
		"compliant, pending, non-compliant, placed on one policy only, placed on none": {
			policies:  []Policy{a, b, c},
			compliant: map[string]bool{"sno-1": true, "sno-2": false, "sno-3": false, "sno-5": true},
			unplaced:  map[string]bool{"sno-4": true},
		},
		"a policy not evaluated yet holds every cluster": {
			policies:  []Policy{a, {Name: "new"}},
			compliant: map[string]bool{"sno-1": false, "sno-2": false, "sno-3": false},
			unplaced:  map[string]bool{"sno-4": true, "sno-5": true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			compliant, unplaced := CompliantWithAll(tc.policies, []string{"sno-1", "sno-2", "sno-3", "sno-4", "sno-5"})
			for c, w := range tc.compliant {
				if compliant[c] != w {
					t.Fatalf("%s: compliant %v, want %v (all %v)", c, compliant[c], w, compliant)
				}
			}
			if !reflect.DeepEqual(unplaced, tc.unplaced) {
				t.Fatalf("unplaced %v, want %v", unplaced, tc.unplaced)
			}
		})
	}
}

func TestCompliantBefore(t *testing.T) {
	p := Policy{Compliance: map[string]policyv1.ComplianceState{"sno-1": policyv1.Compliant, "sno-2": policyv1.Compliant}}
	cases := map[string]struct {
		selected      []string
		asksForStatus bool
		want          bool
	}{
		"every selected cluster compliant":        {selected: []string{"sno-1", "sno-2"}, want: true},
		"a selected cluster the policy skips":     {selected: []string{"sno-1", "sno-3"}},
		"a policy stating a status is never done": {selected: []string{"sno-1"}, asksForStatus: true},
		"no selected cluster":                     {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := CompliantBefore(p, tc.selected, tc.asksForStatus); got != tc.want {
				t.Fatalf("CompliantBefore(%v, %v) = %v, want %v", tc.selected, tc.asksForStatus, got, tc.want)
			}
		})
	}
}

func TestDependencyOrder(t *testing.T) {
	cases := map[string]struct {
		policies []Policy
		problem  string
	}{
		"no dependencies": {policies: []Policy{{Name: "a", Namespace: "p"}, {Name: "b", Namespace: "p"}}},
		"dependency first": {policies: []Policy{
			{Name: "a", Namespace: "p"}, {Name: "b", Namespace: "p", DependsOn: []string{"p/a"}},
		}},
		"dependency after": {policies: []Policy{
			{Name: "b", Namespace: "p", DependsOn: []string{"p/a"}}, {Name: "a", Namespace: "p"},
		}, problem: "Managed policy b depends on a, which comes after it in spec.managedPolicies"},
		"unmanaged dependency": {policies: []Policy{{Name: "b", Namespace: "p", DependsOn: []string{"p/x"}}}},
		"same name, other namespace": {policies: []Policy{
			{Name: "b", Namespace: "p", DependsOn: []string{"q/a"}}, {Name: "a", Namespace: "p"},
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := DependencyOrder(tc.policies)
			switch {
			case tc.problem == "" && got != nil:
				t.Fatalf("unexpected problem %+v", got)
			case tc.problem != "" && (got == nil || got.Message != tc.problem || got.Reason != ranv1alpha1.ReasonPolicyDependencyOrder):
				t.Fatalf("got %+v, want %q", got, tc.problem)
			}
		})
	}
}
