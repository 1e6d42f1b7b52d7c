// Package tenancy decides what the operator's tenancy mode lets a namespace's rollouts reach:
// the managed clusters of the ManagedClusterSets bound to the namespace (OCM's own tenancy
// model, the one its Placements follow), and label and annotation keys under one prefix. It
// is pure: the caller gathers the cluster sets, the namespace's bindings and the clusters.
//
// The mode is off by default (TALM's behaviour: any namespace reaches every cluster and any
// policy). The operator never binds a cluster set for a tenant: a ManagedClusterSetBinding is
// made by someone OCM allows to bind the set (its admission checks managedclustersets/bind
// for that user), so the operator acts only within what the namespace was given.
package tenancy

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	clustersdkv1beta2 "open-cluster-management.io/sdk-go/pkg/apis/cluster/v1beta2"
)

// Rules are the operator's tenancy settings.
type Rules struct {
	// On turns tenancy mode on (--tenancy).
	On bool
	// LabelPrefix is the prefix every label and annotation key a rollout's actions write or
	// remove must start with (--tenancy-label-prefix); empty allows none.
	LabelPrefix string
	// Exempt are the namespaces whose rollouts act as with tenancy off: the operator's own
	// (the ZTP controller's) and those its administrator names (--tenancy-exempt-namespaces).
	Exempt []string
}

// Applies tells whether the rules restrict the rollouts of namespace.
func (r Rules) Applies(namespace string) bool {
	return r.On && !slices.Contains(r.Exempt, namespace)
}

// KeysOutside returns the keys that do not start with the label prefix, each once, in the
// order given; with no prefix, every key is outside.
func (r Rules) KeysOutside(keys []string) []string {
	var out []string
	for _, k := range keys {
		if (r.LabelPrefix == "" || !strings.HasPrefix(k, r.LabelPrefix)) && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// Cluster is what reachability needs of a managed cluster.
type Cluster struct {
	Name   string
	Labels map[string]string
}

// Reachable returns the clusters of the sets bound to a namespace, as OCM's placement
// controller counts them: a binding counts when its cluster set exists (a binding is named
// after its set), and a set holds the clusters its selector matches (the exclusive
// cluster-set label, or a label selector). bound are the names of the namespace's
// ManagedClusterSetBindings. A set with a selector that cannot be read is an error naming
// it.
func Reachable(bound []string, sets []clusterv1beta2.ManagedClusterSet, clusters []Cluster) (map[string]bool, error) {
	var selectors []labels.Selector
	for i := range sets {
		if !slices.Contains(bound, sets[i].Name) {
			continue
		}
		sel, err := clustersdkv1beta2.BuildClusterSelector(&sets[i])
		if err != nil {
			return nil, fmt.Errorf("ManagedClusterSet %s: %w", sets[i].Name, err)
		}
		selectors = append(selectors, sel)
	}
	reachable := make(map[string]bool)
	for _, c := range clusters {
		for _, sel := range selectors {
			if sel.Matches(labels.Set(c.Labels)) {
				reachable[c.Name] = true
				break
			}
		}
	}
	return reachable, nil
}
