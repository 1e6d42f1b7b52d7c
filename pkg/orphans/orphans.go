// Package orphans decides when the hub objects the operator made for a ClusterGroupUpgrade
// (ownership.Kinds, found by their owner labels) have outlived it and must go: its
// finalizer was removed by hand, it was deleted while the operator was not running, or the
// operator was uninstalled before it. The objects outside the rollout's namespace (Override
// mode's Placements and PlacementBindings in the policies' namespaces, views, actions and
// ManifestWorks in the clusters' namespaces) carry no owner reference the garbage collector
// could follow; a PlacementBinding left behind goes on enforcing the live policy.
package orphans

// Facts are what one pass read about an owner: a namespace and the owner label's value
// (names.LabelValue of the ClusterGroupUpgrade's name).
type Facts struct {
	// Cached is true when the cache holds a ClusterGroupUpgrade of the namespace whose name
	// gives the label value; Live when the API server does (read only when Cached is
	// false: the cache may not show one just created).
	Cached, Live bool
}

// Intents say whether the owner's objects are deleted.
type Intents struct {
	Sweep bool
}

// Decide sweeps the objects of an owner neither the cache nor the API server has.
func Decide(f Facts) Intents {
	return Intents{Sweep: !f.Cached && !f.Live}
}
