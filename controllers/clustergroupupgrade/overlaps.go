package clustergroupupgrade

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// Field indexes of the batch records, for the clusters shared between rollouts.
const (
	// inProgressIndex indexes records by the clusters they show InProgress, and by
	// anyInProgress when they show one.
	inProgressIndex = "status.clusters.inProgress"
	// heldIndex indexes records by the clusters they show Pending for another rollout or
	// the hub-wide cap, and by heldForCapacity when the cap holds one.
	heldIndex       = "status.clusters.held"
	anyInProgress   = "*"
	heldForCapacity = "*capacity"
)

func recordIndexes() map[string]func(*ranv1alpha1.ClusterGroupUpgradeBatch) []string {
	return map[string]func(*ranv1alpha1.ClusterGroupUpgradeBatch) []string{
		inProgressIndex: func(b *ranv1alpha1.ClusterGroupUpgradeBatch) []string {
			var out []string
			for _, c := range b.Status.Clusters {
				if c.State == ranv1alpha1.ClusterInProgress {
					out = append(out, c.Name)
				}
			}
			if len(out) > 0 {
				out = append(out, anyInProgress)
			}
			return out
		},
		heldIndex: func(b *ranv1alpha1.ClusterGroupUpgradeBatch) []string {
			var out []string
			for _, c := range b.Status.Clusters {
				switch {
				case c.State != ranv1alpha1.ClusterPending:
				case c.Reason == ranv1alpha1.ReasonWaitingForOtherUpgrade:
					out = append(out, c.Name)
				case c.Reason == ranv1alpha1.ReasonHubCapacityReached:
					out = append(out, heldForCapacity)
				}
			}
			return out
		},
	}
}

// freedClusters wakes the rollouts a cluster leaving InProgress may let go on: those waiting
// for that cluster, and those held by the hub-wide cap.
type freedClusters struct {
	r *Reconciler
}

func (f freedClusters) Create(context.Context, event.TypedCreateEvent[client.Object], workqueue.TypedRateLimitingInterface[reconcile.Request]) {
}

func (f freedClusters) Generic(context.Context, event.TypedGenericEvent[client.Object], workqueue.TypedRateLimitingInterface[reconcile.Request]) {
}

func (f freedClusters) Update(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	old, okOld := e.ObjectOld.(*ranv1alpha1.ClusterGroupUpgradeBatch)
	cur, okNew := e.ObjectNew.(*ranv1alpha1.ClusterGroupUpgradeBatch)
	if !okOld || !okNew {
		return
	}
	f.wake(ctx, freed(old, cur), q)
}

func (f freedClusters) Delete(ctx context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if b, ok := e.Object.(*ranv1alpha1.ClusterGroupUpgradeBatch); ok {
		f.wake(ctx, freed(b, &ranv1alpha1.ClusterGroupUpgradeBatch{}), q)
	}
}

// freed returns the clusters InProgress in old and not in cur.
func freed(old, cur *ranv1alpha1.ClusterGroupUpgradeBatch) []string {
	still := map[string]bool{}
	for _, c := range cur.Status.Clusters {
		still[c.Name] = c.State == ranv1alpha1.ClusterInProgress
	}
	var out []string
	for _, c := range old.Status.Clusters {
		if c.State == ranv1alpha1.ClusterInProgress && !still[c.Name] {
			out = append(out, c.Name)
		}
	}
	return out
}

func (f freedClusters) wake(ctx context.Context, clusters []string, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if len(clusters) == 0 {
		return
	}
	keys := append(clusters, heldForCapacity)
	for _, key := range keys {
		var list ranv1alpha1.ClusterGroupUpgradeBatchList
		if err := f.r.Client.List(ctx, &list, client.MatchingFields{heldIndex: key}); err != nil {
			continue
		}
		for _, b := range list.Items {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: b.Namespace, Name: b.Spec.Upgrade}})
		}
	}
}

var _ handler.EventHandler = freedClusters{}
