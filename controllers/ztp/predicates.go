package ztp

import (
	"maps"

	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/ztp"
)

// clusterChanged passes a ManagedCluster's creation, and the updates that change its
// labels or its Available condition; status writes that change neither are most of a
// fleet's events and are dropped.
type clusterChanged struct{}

func (clusterChanged) Create(event.CreateEvent) bool   { return true }
func (clusterChanged) Delete(event.DeleteEvent) bool   { return false }
func (clusterChanged) Generic(event.GenericEvent) bool { return false }

func (clusterChanged) Update(e event.UpdateEvent) bool {
	oldMC, okOld := e.ObjectOld.(*clusterv1.ManagedCluster)
	newMC, okNew := e.ObjectNew.(*clusterv1.ManagedCluster)
	if !okOld || !okNew {
		return true
	}
	return !maps.Equal(oldMC.Labels, newMC.Labels) || cluster(oldMC).Available != cluster(newMC).Available ||
		!oldMC.DeletionTimestamp.Equal(newMC.DeletionTimestamp)
}

// upgradeChanged passes the events of ClusterGroupUpgrades in ztp.Namespace that the
// flow acts on: creation, deletion, a state change, the start of a deletion.
type upgradeChanged struct{}

func (upgradeChanged) Create(e event.CreateEvent) bool {
	return e.Object.GetNamespace() == ztp.Namespace
}
func (upgradeChanged) Delete(e event.DeleteEvent) bool {
	return e.Object.GetNamespace() == ztp.Namespace
}
func (upgradeChanged) Generic(event.GenericEvent) bool { return false }

func (upgradeChanged) Update(e event.UpdateEvent) bool {
	oldCGU, okOld := e.ObjectOld.(*ranv1alpha1.ClusterGroupUpgrade)
	newCGU, okNew := e.ObjectNew.(*ranv1alpha1.ClusterGroupUpgrade)
	if !okOld || !okNew || newCGU.Namespace != ztp.Namespace {
		return false
	}
	return oldCGU.Status.State != newCGU.Status.State || oldCGU.DeletionTimestamp.IsZero() != newCGU.DeletionTimestamp.IsZero()
}
