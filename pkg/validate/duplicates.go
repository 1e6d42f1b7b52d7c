package validate

import (
	"fmt"
	"strings"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// duplicatesListed bounds how many repeated names Duplicates lists a field.
const duplicatesListed = 10

// Duplicates says which entries spec.clusters, spec.remediationStrategy.canaries and
// spec.managedPolicies list more than once (TALM accepts them, generated lists have them;
// the rollout counts each once), for the Validated condition's message. It is empty when
// no entry repeats.
func Duplicates(spec ranv1alpha1.ClusterGroupUpgradeSpec) string {
	var canaries []string
	if spec.RemediationStrategy != nil {
		canaries = spec.RemediationStrategy.Canaries
	}
	var parts []string
	for _, field := range []struct {
		name  string
		items []string
	}{{"spec.clusters", spec.Clusters}, {"spec.remediationStrategy.canaries", canaries}, {"spec.managedPolicies", spec.ManagedPolicies}} {
		if repeated := repeatedIn(field.items); len(repeated) > 0 {
			parts = append(parts, field.name+" lists "+strings.Join(repeated, ", "))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "each counted once: " + strings.Join(parts, "; ")
}

// repeatedIn names, in order of first repetition, the items listed more than once, with
// how many times; at most duplicatesListed of them, then how many more.
func repeatedIn(items []string) []string {
	seen := make(map[string]int, len(items))
	var order []string
	for _, item := range items {
		seen[item]++
		if seen[item] == 2 {
			order = append(order, item)
		}
	}
	out := make([]string, 0, min(len(order), duplicatesListed+1))
	for i, item := range order {
		if i == duplicatesListed {
			out = append(out, fmt.Sprintf("and %d more names", len(order)-duplicatesListed))
			break
		}
		out = append(out, fmt.Sprintf("%s %d times", item, seen[item]))
	}
	return out
}

// unique returns names without repetitions, in order of first appearance.
func unique(names []string) []string {
	seen := make(map[string]bool, len(names))
	out := make([]string, 0, len(names))
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
