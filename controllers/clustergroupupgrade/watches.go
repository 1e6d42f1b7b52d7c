package clustergroupupgrade

import (
	"bytes"
	"context"

	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/clusteractions"
	"github.com/cgu-operator/cgu-operator/pkg/freeze"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/preview"
)

// Field indexes: the watches map an event to the ClusterGroupUpgrades it concerns through
// these, never by listing every ClusterGroupUpgrade.
const (
	// managedPolicyIndex indexes ClusterGroupUpgrades by the names of their managed
	// policies.
	managedPolicyIndex = "spec.managedPolicies"
	// blockerIndex indexes ClusterGroupUpgrades by "namespace/name" of each blocking CGU.
	blockerIndex = "spec.blockingCRs"
	// clusterIndex indexes ClusterGroupUpgrades that have not started by the clusters they
	// name, and by selectorKey when labels select their clusters.
	clusterIndex = "selection.clusters"
	// placementIndex indexes ClusterGroupUpgrades by their spec.placementRef.
	placementIndex = "spec.placementRef"
	// precachingConfigIndex indexes ClusterGroupUpgrades that have not started by
	// "namespace/name" of their spec.preCachingConfigRef.
	precachingConfigIndex = "spec.preCachingConfigRef"
	// unfinishedIndex indexes the ClusterGroupUpgrades that have not finished (neither
	// Completed nor TimedOut) by unfinishedKey: a fleet freeze concerns them all.
	unfinishedIndex = "status.unfinished"
)

// unfinishedKey is the unfinishedIndex value of the ClusterGroupUpgrades that have not finished.
const unfinishedKey = "unfinished"

// selectorKey is the clusterIndex value of ClusterGroupUpgrades whose selection depends on
// cluster labels.
const selectorKey = "*labels"

// SetupWithManager registers the controller, its indexes and its watches.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := r.index(ctx, mgr); err != nil {
		return err
	}
	managedCluster := &metav1.PartialObjectMetadata{}
	managedCluster.SetGroupVersionKind(clusteractions.ManagedClusterGVK)
	b := ctrl.NewControllerManagedBy(mgr)
	if !r.Unserved.Views {
		// The upgrade checks read ClusterVersions, and the health checks their reports,
		// through the rollout's views.
		b = b.Watches(&viewv1beta1.ManagedClusterView{}, handler.EnqueueRequestsFromMapFunc(r.viewOwner),
			builder.WithPredicates(viewAnswered{}))
	}
	if !r.Unserved.Actions {
		// The health checks start their Jobs step by step, each step once the action of the
		// previous one is answered.
		b = b.Watches(&actionv1beta1.ManagedClusterAction{}, handler.EnqueueRequestsFromMapFunc(r.viewOwner),
			builder.WithPredicates(actionAnswered{}))
	}
	if !r.Unserved.Works {
		// Steps, pre- and post-upgrade actions move as the work agents report on their
		// ManifestWorks.
		b = b.Watches(&workv1.ManifestWork{}, handler.EnqueueRequestsFromMapFunc(r.viewOwner),
			builder.WithPredicates(workChanged{}))
	}
	return b.
		Named("clustergroupupgrade").
		For(&ranv1alpha1.ClusterGroupUpgrade{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Owns(&ranv1alpha1.ClusterGroupUpgradeBatch{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&ranv1alpha1.ClusterGroupUpgrade{}, handler.EnqueueRequestsFromMapFunc(r.blockedBy),
			builder.WithPredicates(stateChanged{})).
		// Compliance moving on is read once an enforcement interval, by one pass.
		Watches(&policyv1.Policy{}, r.usingPolicy(), builder.WithPredicates(policyChanged{})).
		WatchesMetadata(managedCluster, handler.EnqueueRequestsFromMapFunc(r.selectingCluster),
			builder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, createOrDelete{}))).
		Watches(&clusterv1beta1.PlacementDecision{}, handler.EnqueueRequestsFromMapFunc(r.usingPlacement)).
		// A PreCachingConfig made or changed after the rollout that names it (TALM's
		// pre-caching-with-configs scenario) is read at once.
		Watches(&ranv1alpha1.PreCachingConfig{}, handler.EnqueueRequestsFromMapFunc(r.usingPrecachingConfig),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, createOrDelete{}))).
		// Someone else's edit or deletion of a Placement or PlacementBinding the rollout
		// enforces with is put back at once, not at the rollout's next event.
		Watches(&clusterv1beta1.Placement{}, handler.EnqueueRequestsFromMapFunc(r.viewOwner),
			builder.WithPredicates(editedOrDeleted{})).
		Watches(&policyv1.PlacementBinding{}, handler.EnqueueRequestsFromMapFunc(r.viewOwner),
			builder.WithPredicates(editedOrDeleted{})).
		// A fleet frozen or unfrozen holds or frees every rollout at once.
		Watches(&ranv1alpha1.FleetFreeze{}, handler.EnqueueRequestsFromMapFunc(r.unfinished),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, createOrDelete{}, alertsFreezeChanged{}))).
		Watches(&ranv1alpha1.ClusterGroupUpgradeBatch{}, freedClusters{r: r}).
		// A reconcile waiting for the cache to show its last write goes on when it does.
		Watches(&ranv1alpha1.ClusterGroupUpgrade{}, expectationsMet{e: &r.expect}).
		Watches(&ranv1alpha1.ClusterGroupUpgradeBatch{}, expectationsMet{e: &r.expect}).
		Complete(r)
}

func (r *Reconciler) index(ctx context.Context, mgr ctrl.Manager) error {
	indexer := mgr.GetFieldIndexer()
	cguIndexes := map[string]func(*ranv1alpha1.ClusterGroupUpgrade) []string{
		managedPolicyIndex: func(c *ranv1alpha1.ClusterGroupUpgrade) []string { return c.Spec.ManagedPolicies },
		blockerIndex: func(c *ranv1alpha1.ClusterGroupUpgrade) []string {
			var out []string
			for _, b := range preview.BlockingRefs(c) {
				out = append(out, b.String())
			}
			return out
		},
		clusterIndex: selectionKeys,
		unfinishedIndex: func(c *ranv1alpha1.ClusterGroupUpgrade) []string {
			if st := c.Status.State; st == ranv1alpha1.StateCompleted || st == ranv1alpha1.StateTimedOut {
				return nil
			}
			return []string{unfinishedKey}
		},
		placementIndex: func(c *ranv1alpha1.ClusterGroupUpgrade) []string {
			if c.Spec.PlacementRef == nil {
				return nil
			}
			return []string{c.Namespace + "/" + c.Spec.PlacementRef.Name}
		},
		precachingConfigIndex: func(c *ranv1alpha1.ClusterGroupUpgrade) []string {
			ref := c.Spec.PreCachingConfigRef
			if !c.Spec.PreCaching || ref.Name == "" || c.Status.StartedAt != nil {
				return nil
			}
			namespace := ref.Namespace
			if namespace == "" {
				namespace = c.Namespace
			}
			return []string{namespace + "/" + ref.Name}
		},
	}
	for name, f := range recordIndexes() {
		if err := indexer.IndexField(ctx, &ranv1alpha1.ClusterGroupUpgradeBatch{}, name, func(o client.Object) []string {
			return f(o.(*ranv1alpha1.ClusterGroupUpgradeBatch))
		}); err != nil {
			return err
		}
	}
	for name, f := range cguIndexes {
		if err := indexer.IndexField(ctx, &ranv1alpha1.ClusterGroupUpgrade{}, name, func(o client.Object) []string {
			return f(o.(*ranv1alpha1.ClusterGroupUpgrade))
		}); err != nil {
			return err
		}
	}
	return nil
}

// selectionKeys are the clusterIndex values of a ClusterGroupUpgrade: none once started
// (its plan is frozen), the named clusters, and selectorKey when labels select clusters.
func selectionKeys(c *ranv1alpha1.ClusterGroupUpgrade) []string {
	if c.Status.StartedAt != nil {
		return nil
	}
	keys := append([]string(nil), c.Spec.Clusters...)
	if len(c.Spec.ClusterSelector) > 0 || len(c.Spec.ClusterLabelSelectors) > 0 {
		keys = append(keys, selectorKey)
	}
	return keys
}

func (r *Reconciler) lookup(ctx context.Context, index string, values ...string) []reconcile.Request {
	var out []reconcile.Request
	seen := map[types.NamespacedName]bool{}
	for _, v := range values {
		var list ranv1alpha1.ClusterGroupUpgradeList
		if err := r.Client.List(ctx, &list, client.MatchingFields{index: v}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing ClusterGroupUpgrades by index", "index", index)
			continue
		}
		for _, c := range list.Items {
			key := types.NamespacedName{Namespace: c.Namespace, Name: c.Name}
			if !seen[key] {
				seen[key] = true
				out = append(out, reconcile.Request{NamespacedName: key})
			}
		}
	}
	return out
}

func (r *Reconciler) blockedBy(ctx context.Context, o client.Object) []reconcile.Request {
	return r.lookup(ctx, blockerIndex, o.GetNamespace()+"/"+o.GetName())
}

// usingPolicy queues the ClusterGroupUpgrades that manage a policy when their enforcement may
// next be written: at once when it was not written within enforcementInterval, at the end of
// the interval otherwise. On fast spokes the clusters of a batch report compliance a few
// milliseconds apart, and a pass for each report read the whole rollout again to write
// nothing (a pass inside the interval defers the Placements): the reports of an interval are
// read by one pass instead. A batch that ends inside the interval is seen at its end, up to
// enforcementInterval later.
//
// PlacementDecisions queue at once (usingPlacement): they answer the rollout's own Placement
// writes, which the interval already paces.
func (r *Reconciler) usingPolicy() handler.EventHandler {
	enqueue := func(ctx context.Context, o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		var list ranv1alpha1.ClusterGroupUpgradeList
		// Read-only, and only names and UIDs are read: no copy of each rollout's status.
		if err := r.Client.List(ctx, &list, client.MatchingFields{managedPolicyIndex: o.GetName()}, client.UnsafeDisableDeepCopy); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing ClusterGroupUpgrades by index", "index", managedPolicyIndex)
			return
		}
		now := r.lagNow()
		for i := range list.Items {
			c := &list.Items[i]
			req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: c.Namespace, Name: c.Name}}
			if wait := r.expect.enforcementDue(c).Sub(now); wait > 0 {
				q.AddAfter(req, wait)
				continue
			}
			q.Add(req)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, q)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.ObjectNew, q)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, q)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, q)
		},
	}
}

func (r *Reconciler) selectingCluster(ctx context.Context, o client.Object) []reconcile.Request {
	return r.lookup(ctx, clusterIndex, o.GetName(), selectorKey)
}

func (r *Reconciler) usingPlacement(ctx context.Context, o client.Object) []reconcile.Request {
	placement := o.GetLabels()[clusterv1beta1.PlacementLabel]
	if placement == "" {
		return nil
	}
	return r.lookup(ctx, placementIndex, o.GetNamespace()+"/"+placement)
}

// unfinished are the ClusterGroupUpgrades a FleetFreeze concerns: every one not finished.
func (r *Reconciler) unfinished(ctx context.Context, _ client.Object) []reconcile.Request {
	return r.lookup(ctx, unfinishedIndex, unfinishedKey)
}

func (r *Reconciler) usingPrecachingConfig(ctx context.Context, o client.Object) []reconcile.Request {
	return r.lookup(ctx, precachingConfigIndex, o.GetNamespace()+"/"+o.GetName())
}

// alertsFreezeChanged passes FleetFreezes whose alert queries started or stopped freezing
// the fleet, or now say another reason.
type alertsFreezeChanged struct{ predicate.Funcs }

func (alertsFreezeChanged) Update(e event.UpdateEvent) bool {
	old, okOld := e.ObjectOld.(*ranv1alpha1.FleetFreeze)
	cur, okCur := e.ObjectNew.(*ranv1alpha1.FleetFreeze)
	return okOld && okCur && freeze.Reason(old) != freeze.Reason(cur)
}

// stateChanged passes ClusterGroupUpgrades whose state changed, for those they block.
type stateChanged struct{ predicate.Funcs }

func (stateChanged) Update(e event.UpdateEvent) bool {
	old, okOld := e.ObjectOld.(*ranv1alpha1.ClusterGroupUpgrade)
	cur, okNew := e.ObjectNew.(*ranv1alpha1.ClusterGroupUpgrade)
	return !okOld || !okNew || old.Status.State != cur.Status.State
}

func (stateChanged) Create(event.CreateEvent) bool   { return true }
func (stateChanged) Delete(event.DeleteEvent) bool   { return true }
func (stateChanged) Generic(event.GenericEvent) bool { return false }

// policyChanged passes root policies whose spec, annotations or compliance changed.
type policyChanged struct{ predicate.Funcs }

func (policyChanged) Update(e event.UpdateEvent) bool {
	old, okOld := e.ObjectOld.(*policyv1.Policy)
	cur, okNew := e.ObjectNew.(*policyv1.Policy)
	if !okOld || !okNew {
		return true
	}
	return old.Generation != cur.Generation || !equality.Semantic.DeepEqual(old.Annotations, cur.Annotations) ||
		!equality.Semantic.DeepEqual(old.Status.Status, cur.Status.Status)
}

func (policyChanged) Create(event.CreateEvent) bool   { return true }
func (policyChanged) Delete(event.DeleteEvent) bool   { return true }
func (policyChanged) Generic(event.GenericEvent) bool { return false }

// editedOrDeleted passes changes of an object's spec (its generation) and deletions.
type editedOrDeleted struct{ predicate.Funcs }

func (editedOrDeleted) Create(event.CreateEvent) bool   { return false }
func (editedOrDeleted) Delete(event.DeleteEvent) bool   { return true }
func (editedOrDeleted) Generic(event.GenericEvent) bool { return false }
func (editedOrDeleted) Update(e event.UpdateEvent) bool {
	return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration()
}

// createOrDelete passes creations and deletions only.
type createOrDelete struct{ predicate.Funcs }

func (createOrDelete) Create(event.CreateEvent) bool   { return true }
func (createOrDelete) Delete(event.DeleteEvent) bool   { return true }
func (createOrDelete) Update(event.UpdateEvent) bool   { return false }
func (createOrDelete) Generic(event.GenericEvent) bool { return false }

// viewAnswered passes a view's creation, deletion and the changes of what it shows.
type viewAnswered struct{ predicate.Funcs }

func (viewAnswered) Update(e event.UpdateEvent) bool {
	o, okOld := e.ObjectOld.(*viewv1beta1.ManagedClusterView)
	n, okNew := e.ObjectNew.(*viewv1beta1.ManagedClusterView)
	if !okOld || !okNew {
		return true
	}
	return !bytes.Equal(o.Status.Result.Raw, n.Status.Result.Raw) || !equality.Semantic.DeepEqual(o.Status.Conditions, n.Status.Conditions)
}

// actionAnswered passes an action's creation, deletion and the changes of its conditions.
type actionAnswered struct{ predicate.Funcs }

func (actionAnswered) Update(e event.UpdateEvent) bool {
	o, okOld := e.ObjectOld.(*actionv1beta1.ManagedClusterAction)
	n, okNew := e.ObjectNew.(*actionv1beta1.ManagedClusterAction)
	if !okOld || !okNew {
		return true
	}
	return !equality.Semantic.DeepEqual(o.Status.Conditions, n.Status.Conditions)
}

// viewOwner maps a view or an action of a rollout to the rollout, through the labels it was
// made with.
func (r *Reconciler) viewOwner(ctx context.Context, obj client.Object) []reconcile.Request {
	ns, value, ok := ownership.Of(obj.GetLabels())
	if !ok {
		return nil
	}
	var list ranv1alpha1.ClusterGroupUpgradeList
	if err := r.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the ClusterGroupUpgrades of a view", "namespace", ns)
		return nil
	}
	var out []reconcile.Request
	for _, c := range list.Items {
		if names.LabelValue(c.Name) == value {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: c.Name}})
		}
	}
	return out
}

// workChanged passes the events of a ManifestWork that may move its rollout: made, gone, or
// a new status from the work agent.
type workChanged struct{ predicate.Funcs }

func (workChanged) Create(event.CreateEvent) bool   { return true }
func (workChanged) Delete(event.DeleteEvent) bool   { return true }
func (workChanged) Generic(event.GenericEvent) bool { return false }
func (workChanged) Update(e event.UpdateEvent) bool {
	o, okOld := e.ObjectOld.(*workv1.ManifestWork)
	n, okNew := e.ObjectNew.(*workv1.ManifestWork)
	return !okOld || !okNew || !equality.Semantic.DeepEqual(o.Status, n.Status) || !o.DeletionTimestamp.Equal(n.DeletionTimestamp)
}
