// Package validate resolves a ClusterGroupUpgrade's managed policies and checks that the
// rollout can be planned: every policy found in exactly one namespace among those placed on
// the selected clusters, canaries selected, backup not asked for. It is pure: the caller
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
	// Backup is spec.backup.
	Backup bool
	// Policies are the hub's root policies whose names are among ManagedPolicies.
	Policies []Policy
}

// Result is the outcome: the resolved policies in spec order, or the problem that keeps the
// rollout from starting.
type Result struct {
	Resolved []Policy
	Problem  *rollout.Problem
}

// Validate resolves each managed policy by name among the root policies placed on at least
// one selected cluster, as TALM does: none is a missing policy, several namespaces an
// ambiguous name. It also checks canaries and backup.
func Validate(in Input) Result {
	if in.Backup {
		return problem(ranv1alpha1.ReasonBackupNotSupported,
			"spec.backup is not supported: back up clusters with lcm.openshift.io ImageBasedGroupUpgrade or before the rollout")
	}
	selected := make(map[string]bool, len(in.Selected))
	for _, c := range in.Selected {
		selected[c] = true
	}
	if p := checkCanaries(in.Canaries, selected); p != nil {
		return Result{Problem: p}
	}
	var missing, ambiguous []string
	var resolved []Policy
	for _, name := range in.ManagedPolicies {
		found := placedPolicies(in.Policies, name, selected)
		switch len(found) {
		case 0:
			missing = append(missing, name)
		case 1:
			resolved = append(resolved, found[0])
		default:
			namespaces := make([]string, len(found))
			for i, p := range found {
				namespaces[i] = p.Namespace
			}
			ambiguous = append(ambiguous, fmt.Sprintf("%s (in %s)", name, strings.Join(namespaces, " and ")))
		}
	}
	switch {
	case len(missing) > 0:
		return problem(ranv1alpha1.ReasonNotAllManagedPoliciesExist,
			"Managed policies not found on the selected clusters: "+strings.Join(missing, ", "))
	case len(ambiguous) > 0:
		return problem(ranv1alpha1.ReasonAmbiguousManagedPoliciesNames,
			"Managed policy names found in more than one namespace: "+strings.Join(ambiguous, "; "))
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

// CompliantWithAll returns the selected clusters that every resolved policy shows Compliant:
// the plan leaves them out.
func CompliantWithAll(resolved []Policy, selected []string) map[string]bool {
	out := map[string]bool{}
	for _, c := range selected {
		all := true
		for _, p := range resolved {
			if p.Compliance[c] != policyv1.Compliant {
				all = false
				break
			}
		}
		out[c] = all
	}
	return out
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
