// Package managedclustersupgrade is the ManagedClustersUpgrade reconciler. It runs a
// release-named rollout on the rollout engine: it selects the clusters, plans each one's
// path to the release over the update graph, writes one inform policy per release a cluster
// updates to (with its Placement and PlacementBinding), and, once the policies reach their
// clusters, the ClusterGroupUpgrade that enforces them; it then reads the summaries back
// from that ClusterGroupUpgrade. A pass is gather (gather.go: reads only, into mcu.Facts),
// mcu.Decide (pure, in pkg/mcu), apply (apply.go: every write, in order) and one status
// write (status.go), failures included.
package managedclustersupgrade

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
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
	"github.com/cgu-operator/cgu-operator/pkg/hubapi"
	"github.com/cgu-operator/cgu-operator/pkg/mcu"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
)

// eventAction is the action of the controller's events.
const eventAction = "ManagedClustersUpgrade"

// Graphs fetches the update graph of a channel from an update service.
type Graphs interface {
	Graph(ctx context.Context, url, channel, arch string) (*updategraph.Graph, error)
}

// Reconciler reconciles ManagedClustersUpgrades.
type Reconciler struct {
	Client   client.Client
	Scheme   *runtime.Scheme
	Clock    clock.PassiveClock
	Recorder events.EventRecorder
	Unserved hubapi.Unserved
	Graphs   Graphs
	// UpdateService is the graph API read when a rollout names no upstream.
	UpdateService string
}

// +kubebuilder:rbac:groups=ran.openshift.io,resources=managedclustersupgrades,verbs=list;watch;patch
// +kubebuilder:rbac:groups=ran.openshift.io,resources=managedclustersupgrades/status,verbs=update
// +kubebuilder:rbac:groups=ran.openshift.io,resources=managedclustersupgrades/finalizers,verbs=update
// +kubebuilder:rbac:groups=ran.openshift.io,resources=clustergroupupgrades,verbs=list;watch;create;delete
// +kubebuilder:rbac:groups=policy.open-cluster-management.io,resources=policies,verbs=list;watch;create;deletecollection
// +kubebuilder:rbac:groups=policy.open-cluster-management.io,resources=placementbindings,verbs=create;deletecollection
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements,verbs=list;watch;create;deletecollection
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placementdecisions,verbs=list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=list;watch
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworkreplicasets,verbs=create;deletecollection
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=list;watch

// Reconcile takes a ManagedClustersUpgrade a step further: gather, decide, apply, then one
// status write. One being deleted deletes what it made, its ClusterGroupUpgrade first.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	m := &ranv1alpha1.ManagedClustersUpgrade{}
	if err := r.Client.Get(ctx, req.NamespacedName, m); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("managedclustersupgrade", klog.KObj(m)))
	if !m.DeletionTimestamp.IsZero() {
		return r.cleanup(ctx, m)
	}
	if err := r.ensureFinalizer(ctx, m); err != nil {
		return ctrl.Result{}, err
	}
	facts, err := r.gather(ctx, m)
	var in mcu.Intents
	if err == nil {
		in = mcu.Decide(facts)
		err = r.apply(ctx, m, in)
	}
	return r.status(ctx, m, in, err)
}

// SetupWithManager registers the controller: a ManagedClustersUpgrade is reconciled when its
// spec changes, when its ClusterGroupUpgrade, a batch record of it or one of its policies
// changes, when the work
// agents report on its ClusterGroupUpgrade's ManifestWorks (the action summaries), and,
// while it has no ClusterGroupUpgrade, when a cluster joins or its labels change.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr)
	if !r.Unserved.Works {
		b = b.Watches(&workv1.ManifestWork{}, handler.EnqueueRequestsFromMapFunc(r.workOwner),
			builder.WithPredicates(workStatusChanged{}))
	}
	return b.
		Named("managedclustersupgrade").
		For(&ranv1alpha1.ManagedClustersUpgrade{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&ranv1alpha1.ClusterGroupUpgrade{}).
		Owns(&policyv1.Policy{}).
		Watches(&ranv1alpha1.ClusterGroupUpgradeBatch{}, handler.EnqueueRequestsFromMapFunc(r.recordOwner)).
		Watches(&clusterv1beta1.PlacementDecision{}, handler.EnqueueRequestsFromMapFunc(r.unplanned)).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.unplanned),
			builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Complete(r)
}

// workOwner enqueues the ManagedClustersUpgrade whose ClusterGroupUpgrade (of its name, in
// its namespace) a ManifestWork was made for.
func (r *Reconciler) workOwner(ctx context.Context, obj client.Object) []reconcile.Request {
	ns, value, ok := ownership.Of(obj.GetLabels())
	if !ok {
		return nil
	}
	var list ranv1alpha1.ManagedClustersUpgradeList
	if err := r.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if m := &list.Items[i]; m.Status.Upgrade != "" && names.LabelValue(m.Status.Upgrade) == value {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(m)})
		}
	}
	return out
}

// recordOwner enqueues the ManagedClustersUpgrade whose ClusterGroupUpgrade (of its name, in
// its namespace) a batch record belongs to: the clusters' states it summarizes are there, and
// may reach the cache after the ClusterGroupUpgrade's own status.
func (r *Reconciler) recordOwner(ctx context.Context, obj client.Object) []reconcile.Request {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != "ClusterGroupUpgrade" {
		return nil
	}
	key := client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}
	if err := r.Client.Get(ctx, key, &ranv1alpha1.ManagedClustersUpgrade{}); err != nil {
		return nil // not a rollout of a ManagedClustersUpgrade
	}
	return []reconcile.Request{{NamespacedName: key}}
}

// workStatusChanged passes a ManifestWork's new status from its work agent and its
// deletion: what the action summaries count.
type workStatusChanged struct{ predicate.Funcs }

func (workStatusChanged) Create(event.CreateEvent) bool   { return false }
func (workStatusChanged) Delete(event.DeleteEvent) bool   { return true }
func (workStatusChanged) Generic(event.GenericEvent) bool { return false }
func (workStatusChanged) Update(e event.UpdateEvent) bool {
	o, okOld := e.ObjectOld.(*workv1.ManifestWork)
	n, okNew := e.ObjectNew.(*workv1.ManifestWork)
	return !okOld || !okNew || !equality.Semantic.DeepEqual(o.Status, n.Status)
}

// unplanned enqueues the ManagedClustersUpgrades that have no ClusterGroupUpgrade yet: a
// change of the fleet may change what they select.
func (r *Reconciler) unplanned(ctx context.Context, _ client.Object) []reconcile.Request {
	var list ranv1alpha1.ManagedClustersUpgradeList
	if err := r.Client.List(ctx, &list); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if list.Items[i].Status.Upgrade == "" {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}
