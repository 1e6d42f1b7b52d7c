// Package selection decides which managed clusters a ClusterGroupUpgrade selects and in which
// order, from the spec and the clusters the hub knows. It is pure: the caller gathers the
// clusters.
package selection

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// Cluster is what selection needs to know of a managed cluster.
type Cluster struct {
	Name   string
	Labels map[string]string
}

// Input is a ClusterGroupUpgrade's selection fields and the hub's clusters.
type Input struct {
	// Clusters are named in spec.clusters, in order.
	Clusters []string
	// LabelSelectors are spec.clusterLabelSelectors; a cluster matching any is selected.
	LabelSelectors []metav1.LabelSelector
	// ClusterSelector are the deprecated spec.clusterSelector strings.
	ClusterSelector []string
	// Known are the clusters on the hub.
	Known []Cluster
	// Reachable, when not nil, are the only clusters the ClusterGroupUpgrade may select
	// (tenancy mode: those of the cluster sets bound to its namespace). Selectors match
	// among them only, as a Placement's predicates do; a named cluster outside them is
	// Unreachable.
	Reachable map[string]bool
}

// Result is the selection.
type Result struct {
	// Selected are the selected clusters, each once, in TALM's order: those named in
	// spec.clusters, in their order; then those matched by each deprecated clusterSelector
	// string in turn, by name; then those matched by each clusterLabelSelector in turn, by
	// name.
	Selected []string
	// Unknown are clusters named in spec.clusters that the hub does not know, in spec order.
	Unknown []string
	// Unreachable are clusters named in spec.clusters that the hub knows outside
	// Input.Reachable, in spec order.
	Unreachable []string
}

// Select applies a ClusterGroupUpgrade's selection fields to the hub's clusters. A malformed
// selector is an error naming it; nothing is selected then.
func Select(in Input) (Result, error) {
	selectors, err := selectors(in.ClusterSelector, in.LabelSelectors)
	if err != nil {
		return Result{}, err
	}
	known := make(map[string]bool, len(in.Known))
	for _, c := range in.Known {
		known[c.Name] = true
	}
	reachable := func(name string) bool { return in.Reachable == nil || in.Reachable[name] }
	byName := slices.DeleteFunc(slices.Clone(in.Known), func(c Cluster) bool { return !reachable(c.Name) })
	slices.SortFunc(byName, func(a, b Cluster) int { return strings.Compare(a.Name, b.Name) })

	var res Result
	chosen := make(map[string]bool, len(in.Clusters))
	for _, name := range in.Clusters {
		if chosen[name] {
			continue
		}
		chosen[name] = true
		switch {
		case !known[name]:
			res.Unknown = append(res.Unknown, name)
		case !reachable(name):
			res.Unreachable = append(res.Unreachable, name)
		default:
			res.Selected = append(res.Selected, name)
		}
	}
	for _, s := range selectors {
		for _, c := range byName {
			if !chosen[c.Name] && s.Matches(labels.Set(c.Labels)) {
				chosen[c.Name] = true
				res.Selected = append(res.Selected, c.Name)
			}
		}
	}
	return res, nil
}

// selectors returns the deprecated clusterSelector strings' selectors, then the label
// selectors', in that order.
func selectors(deprecated []string, labelSelectors []metav1.LabelSelector) ([]labels.Selector, error) {
	out := make([]labels.Selector, 0, len(labelSelectors)+len(deprecated))
	for i, text := range deprecated {
		s, err := ParseClusterSelector(text)
		if err != nil {
			return nil, fmt.Errorf("spec.clusterSelector[%d] %q: %w", i, text, err)
		}
		out = append(out, s)
	}
	for i := range labelSelectors {
		s, err := metav1.LabelSelectorAsSelector(&labelSelectors[i])
		if err != nil {
			return nil, fmt.Errorf("spec.clusterLabelSelectors[%d]: %w", i, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// ParseClusterSelector parses one deprecated clusterSelector string as TALM reads it:
// "key=value" selects clusters whose label key has that value; "key" alone, like "key=",
// selects clusters whose label key has the empty value (as ZTP's `group-du-sno: ""`). A
// string with more than one "=" is malformed (TALM ignored it silently).
func ParseClusterSelector(text string) (labels.Selector, error) {
	parts := strings.Split(text, "=")
	if len(parts) > 2 {
		return nil, fmt.Errorf("more than one \"=\"")
	}
	value := ""
	if len(parts) == 2 {
		value = parts[1]
	}
	req, err := labels.NewRequirement(parts[0], selection.Equals, []string{value})
	if err != nil {
		return nil, err
	}
	return labels.NewSelector().Add(*req), nil
}
