package validate

import (
	"strings"
	"testing"

	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// FuzzValidate validates hostile specs against a hub: Validate never panics; it resolves
// every managed policy, in spec order, to one placed on a selected cluster, or gives a
// known reason with a message.
func FuzzValidate(f *testing.F) {
	f.Add("platform-upgrade,operators", "sno-1,sno-2", "sno-1", "ns-a/platform-upgrade:sno-1,ns-b/operators:sno-2")
	f.Add("p,p,", "a,,a", "zz,", "ns/p:a,other/p:a,ns/p:")
	f.Add("p", "a", "", "")
	f.Add("", "", "", "/:,:::")
	f.Add(" , ", "0", "", "/ :0") // a name listed twice, resolved once
	f.Fuzz(func(t *testing.T, managed, selected, canaries string, hub string) {
		in := Input{ManagedPolicies: split(managed), Selected: split(selected), Canaries: split(canaries)}
		for _, entry := range split(hub) {
			key, cluster, _ := strings.Cut(entry, ":")
			ns, name, _ := strings.Cut(key, "/")
			in.Policies = append(in.Policies, Policy{Name: name, Namespace: ns,
				Compliance: map[string]policyv1.ComplianceState{cluster: policyv1.NonCompliant}})
		}
		res := Validate(in)
		if res.Problem != nil {
			switch res.Problem.Reason {
			case ranv1alpha1.ReasonInvalidCanaries,
				ranv1alpha1.ReasonNotAllManagedPoliciesExist, ranv1alpha1.ReasonAmbiguousManagedPoliciesNames:
			default:
				t.Fatalf("unknown reason %+v", res.Problem)
			}
			if res.Problem.Message == "" {
				t.Fatalf("no message: %+v", res.Problem)
			}
			return
		}
		// A name listed twice counts once.
		names := unique(in.ManagedPolicies)
		if len(res.Resolved) != len(names) {
			t.Fatalf("Validate(%+v) = %+v", in, res)
		}
		for i, p := range res.Resolved {
			placed := false
			for c := range p.Compliance {
				placed = placed || strings.Contains(","+selected+",", ","+c+",")
			}
			if p.Name != names[i] || !placed {
				t.Fatalf("resolved %s to %+v", names[i], p)
			}
		}
		_ = DependencyOrder(res.Resolved)
		compliant, unplaced := CompliantWithAll(res.Resolved, in.Selected)
		for c := range unplaced {
			if compliant[c] {
				t.Fatalf("%s is both compliant and unplaced", c)
			}
		}
	})
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
