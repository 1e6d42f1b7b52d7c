// Package validate resolves a ClusterGroupUpgrade's managed policies and checks that the
// rollout can be planned: every policy found in exactly one namespace among those placed on
// the selected clusters (and allowed, when the operator restricts the namespaces of the
// policies it enforces), canaries selected, backup not asked for. It is pure: the caller
// gathers the root policies.
package validate

import (
	"fmt"
	"slices"
	"strings"

	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

// Policy is what validation needs of a root policy.
type Policy struct {
	Name, Namespace string
	// Compliance is the root policy's status: each cluster it is placed on, and its state.
	Compliance map[string]policyv1.ComplianceState
	// DependsOn are the policies, as "namespace/name", this one depends on (its
	// spec.dependencies of kind Policy).
	DependsOn []string
}

// Input is what validation needs.
type Input struct {
	// ManagedPolicies are spec.managedPolicies, in order.
	ManagedPolicies []string
	// Selected are the selected clusters.
	Selected []string
	// Canaries are spec.remediationStrategy.canaries.
	Canaries []string
	// Policies are the hub's root policies whose names are among ManagedPolicies.
	Policies []Policy
	// AllowedNamespaces are the namespaces whose policies a rollout may enforce (the
	// operator's --policy-namespaces); empty allows every namespace, as TALM does.
	AllowedNamespaces []string
	// Tenant, in tenancy mode, is the ClusterGroupUpgrade's namespace: only its policies
	// may be enforced (and only when AllowedNamespaces allows it too).
	Tenant string
}

// Result is the outcome: the resolved policies in spec order, or the problem that keeps the
// rollout from starting.
type Result struct {
	Resolved []Policy
	Problem  *rollout.Problem
}

// Validate resolves each managed policy by name among the root policies placed on at least
// one selected cluster, as TALM does: none is a missing policy, several namespaces an
// ambiguous name. With AllowedNamespaces, only policies of those namespaces count, and a
// policy found only elsewhere is refused as not allowed (before missing or ambiguous
// names are reported). A name listed twice counts once. It also checks canaries.
func Validate(in Input) Result {
	selected := make(map[string]bool, len(in.Selected))
	for _, c := range in.Selected {
		selected[c] = true
	}
	if p := checkCanaries(in.Canaries, selected); p != nil {
		return Result{Problem: p}
	}
	var missing, ambiguous, ambiguousNames, notAllowed []string
	var resolved []Policy
	for _, name := range unique(in.ManagedPolicies) {
		found, elsewhere := allowedOnly(placedPolicies(in.Policies, name, selected), in.allowed)
		switch {
		case len(found) == 0 && len(elsewhere) > 0:
			notAllowed = append(notAllowed, fmt.Sprintf("%s (in %s)", name, strings.Join(elsewhere, " and ")))
		case len(found) == 0:
			missing = append(missing, name)
		case len(found) == 1:
			resolved = append(resolved, found[0])
		default:
			namespaces := make([]string, len(found))
			for i, p := range found {
				namespaces[i] = p.Namespace
			}
			ambiguous = append(ambiguous, fmt.Sprintf("%s (in %s)", name, strings.Join(namespaces, " and ")))
			ambiguousNames = append(ambiguousNames, name)
		}
	}
	switch {
	case len(notAllowed) > 0:
		return problem(ranv1alpha1.ReasonPolicyNamespaceNotAllowed,
			"Managed policies in namespaces the operator may not enforce: "+strings.Join(notAllowed, "; ")+"; "+in.allowedText())
	case len(missing) > 0:
		r := problem(ranv1alpha1.ReasonNotAllManagedPoliciesExist,
			"Managed policies not found on the selected clusters: "+strings.Join(unplaced(missing, in.Policies), ", "))
		r.Problem.Names = missing
		return r
	case len(ambiguous) > 0:
		r := problem(ranv1alpha1.ReasonAmbiguousManagedPoliciesNames,
			"Managed policy names found in more than one namespace: "+strings.Join(ambiguous, "; "))
		r.Problem.Names = ambiguousNames
		return r
	}
	return Result{Resolved: resolved}
}

// placedPolicies returns the root policies named name that are placed on a selected
// cluster, sorted by namespace.
func placedPolicies(policies []Policy, name string, selected map[string]bool) []Policy {
	var found []Policy
	for _, p := range policies {
		if p.Name != name {
			continue
		}
		for cluster := range p.Compliance {
			if selected[cluster] {
				found = append(found, p)
				break
			}
		}
	}
	slices.SortFunc(found, func(a, b Policy) int { return strings.Compare(a.Namespace, b.Namespace) })
	return found
}

// allowed tells whether a policy of namespace may be enforced.
func (in Input) allowed(namespace string) bool {
	if in.Tenant != "" && namespace != in.Tenant {
		return false
	}
	return len(in.AllowedNamespaces) == 0 || slices.Contains(in.AllowedNamespaces, namespace)
}

// allowedText says which namespaces are allowed, and why.
func (in Input) allowedText() string {
	var parts []string
	if in.Tenant != "" {
		parts = append(parts, "tenancy mode allows the ClusterGroupUpgrade's own namespace "+in.Tenant)
	}
	if len(in.AllowedNamespaces) > 0 {
		parts = append(parts, "allowed namespaces (--policy-namespaces): "+strings.Join(in.AllowedNamespaces, ", "))
	}
	return strings.Join(parts, "; ")
}

// allowedOnly splits found policies into those of an allowed namespace and the namespaces
// of the others.
func allowedOnly(found []Policy, allowed func(namespace string) bool) ([]Policy, []string) {
	var kept []Policy
	var elsewhere []string
	for _, p := range found {
		if allowed(p.Namespace) {
			kept = append(kept, p)
		} else {
			elsewhere = append(elsewhere, p.Namespace)
		}
	}
	return kept, elsewhere
}

// unplaced names each missing policy, adding the root policies of that name that exist but
// are placed on none of the selected clusters, so that a policy of another namespace, or
// one not yet placed, is not mistaken for a misspelt name.
func unplaced(missing []string, policies []Policy) []string {
	out := make([]string, len(missing))
	for i, name := range missing {
		var existing []string
		for _, p := range policies {
			if p.Name == name {
				existing = append(existing, p.Namespace+"/"+p.Name)
			}
		}
		slices.Sort(existing)
		switch len(existing) {
		case 0:
			out[i] = name
		case 1:
			out[i] = fmt.Sprintf("%s (%s is placed on none of them)", name, existing[0])
		default:
			out[i] = fmt.Sprintf("%s (%s are placed on none of them)", name, strings.Join(existing, " and "))
		}
	}
	return out
}

func checkCanaries(canaries []string, selected map[string]bool) *rollout.Problem {
	var outside []string
	for _, c := range canaries {
		if !selected[c] {
			outside = append(outside, c)
		}
	}
	if len(outside) == 0 {
		return nil
	}
	return &rollout.Problem{Reason: ranv1alpha1.ReasonInvalidCanaries,
		Message: "Canaries that are not selected clusters: " + strings.Join(outside, ", ")}
}

func problem(reason, message string) Result {
	return Result{Problem: &rollout.Problem{Reason: reason, Message: message}}
}

// CompliantWithAll returns the selected clusters that are done (rollout.Done) with every resolved
// policy, and those no resolved policy lists (no policy is placed on them): the plan leaves
// both out, as TALM does.
func CompliantWithAll(resolved []Policy, selected []string) (compliant, unplaced map[string]bool) {
	compliant, unplaced = map[string]bool{}, map[string]bool{}
	for _, c := range selected {
		listed := false
		for _, p := range resolved {
			if _, ok := p.Compliance[c]; ok {
				listed = true
				break
			}
		}
		if !listed && len(resolved) > 0 {
			unplaced[c] = true
			continue
		}
		all := true
		for _, p := range resolved {
			if !rollout.Done(p.Compliance, c, true) {
				all = false
				break
			}
		}
		compliant[c] = all
	}
	return compliant, unplaced
}

// CompliantBefore reports whether every selected cluster already complies with a policy, as
// TALM decides which managed policies to leave out of a rollout
// (managedPoliciesCompliantBeforeUpgrade): the status must list each one Compliant, and the
// policy must not state a status of an object (asksForStatus), since only enforcing it
// brings such a status about.
func CompliantBefore(p Policy, selected []string, asksForStatus bool) bool {
	if asksForStatus || len(selected) == 0 {
		return false
	}
	for _, c := range selected {
		if p.Compliance[c] != policyv1.Compliant {
			return false
		}
	}
	return true
}

// DependencyOrder checks that a managed policy comes after the managed policies it depends
// on: a cluster works through the policies in order, and a policy whose dependency is not
// yet compliant stays Pending on the spoke, so the rollout would wait on it forever.
// Dependencies on policies that are not managed are left to the spoke.
func DependencyOrder(resolved []Policy) *rollout.Problem {
	position := make(map[string]int, len(resolved))
	for i, p := range resolved {
		position[p.Namespace+"/"+p.Name] = i
	}
	for i, p := range resolved {
		for _, dep := range p.DependsOn {
			if j, managed := position[dep]; managed && j > i {
				return &rollout.Problem{Reason: ranv1alpha1.ReasonPolicyDependencyOrder,
					Message: fmt.Sprintf("Managed policy %s depends on %s, which comes after it in spec.managedPolicies", p.Name, resolved[j].Name)}
			}
		}
	}
	return nil
}
