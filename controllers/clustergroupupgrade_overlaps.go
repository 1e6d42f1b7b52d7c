package controllers

import (
	"context"
	"fmt"

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

// busy returns, for a cluster, the other rollout ("namespace/name") that has it InProgress.
func (r *ClusterGroupUpgradeReconciler) busy(ctx context.Context, s *scope) func(string) string {
	return func(cluster string) string {
		var list ranv1alpha1.ClusterGroupUpgradeBatchList
		if err := r.Client.List(ctx, &list, client.MatchingFields{inProgressIndex: cluster}); err != nil {
			return fmt.Sprintf("an unknown rollout (%v)", err) // fail closed: do not enforce twice
		}
		for _, b := range list.Items {
			if b.Namespace != s.cgu.Namespace || b.Spec.Upgrade != s.cgu.Name {
				return b.Namespace + "/" + b.Spec.Upgrade
			}
		}
		return ""
	}
}

// capacity returns how many more clusters may start under the hub-wide cap, nil without a
// cap. A hub it cannot count has no room.
func (r *ClusterGroupUpgradeReconciler) capacity(ctx context.Context) *int {
	if r.MaxClustersInProgress <= 0 {
		return nil
	}
	var list ranv1alpha1.ClusterGroupUpgradeBatchList
	room := 0
	if err := r.Client.List(ctx, &list, client.MatchingFields{inProgressIndex: anyInProgress}); err != nil {
		return &room
	}
	used := 0
	for _, b := range list.Items {
		for _, c := range b.Status.Clusters {
			if c.State == ranv1alpha1.ClusterInProgress {
				used++
			}
		}
	}
	room = max(r.MaxClustersInProgress-used, 0)
	return &room
}

// freedClusters wakes the rollouts a cluster leaving InProgress may let go on: those waiting
// for that cluster, and those held by the hub-wide cap.
type freedClusters struct {
	r *ClusterGroupUpgradeReconciler
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
