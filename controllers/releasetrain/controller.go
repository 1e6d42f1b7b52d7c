// Package releasetrain is the ReleaseTrain reconciler. A pass is gather (gather.go: the
// channel's releases, the train's rollouts and its regional hubs' availability, reads only,
// into train.Facts), train.Decide (pure, in pkg/train), apply (apply.go: the rollouts made
// and deleted, the events) and one status write (status.go), failures included.
//
// A ring of this hub runs each release as a ManagedClustersUpgrade in the train's namespace; a
// ring of regional hubs runs it as one ManifestWork per hub carrying the
// ManagedClustersUpgrade, whose progress comes back as the work's status feedback.
package releasetrain

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/hubapi"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/train"
	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
)

// eventAction is the action of the controller's events.
const eventAction = "ReleaseTrain"

// Graphs fetches the update graph of a channel from an update service.
type Graphs interface {
	Graph(ctx context.Context, url, channel, arch string) (*updategraph.Graph, error)
}

// Reconciler reconciles ReleaseTrains.
type Reconciler struct {
	Client   client.Client
	Scheme   *runtime.Scheme
	Clock    clock.PassiveClock
	Recorder events.EventRecorder
	Unserved hubapi.Unserved
	Graphs   Graphs
	// UpdateService is the graph API read when a train names no upstream.
	UpdateService string
}

// +kubebuilder:rbac:groups=ran.openshift.io,resources=releasetrains,verbs=list;watch;patch
// +kubebuilder:rbac:groups=ran.openshift.io,resources=releasetrains/status,verbs=update
// +kubebuilder:rbac:groups=ran.openshift.io,resources=releasetrains/finalizers,verbs=update
// +kubebuilder:rbac:groups=ran.openshift.io,resources=managedclustersupgrades,verbs=list;watch;create;delete;deletecollection
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=list;watch;create;delete
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=list;watch

// Reconcile takes a ReleaseTrain a step further: gather, decide, apply, then one status
// write. One being deleted deletes its rollouts first.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	t := &ranv1alpha1.ReleaseTrain{}
	if err := r.Client.Get(ctx, req.NamespacedName, t); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("releasetrain", klog.KObj(t)))
	if !t.DeletionTimestamp.IsZero() {
		return r.cleanup(ctx, t)
	}
	if err := r.ensureFinalizer(ctx, t); err != nil {
		return ctrl.Result{}, err
	}
	facts, err := r.gather(ctx, t)
	var in train.Intents
	if err == nil {
		in = train.Decide(facts)
		err = r.apply(ctx, t, in)
	}
	return r.status(ctx, t, in, err)
}

// SetupWithManager registers the controller: a ReleaseTrain is reconciled when its spec or
// its annotations change (annotating it asks for a pass), when one of its ManagedClustersUpgrades changes, when a regional hub reports on
// one of its ManifestWorks, and when a regional hub's availability changes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named("releasetrain").
		For(&ranv1alpha1.ReleaseTrain{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{},
			predicate.AnnotationChangedPredicate{}))).
		Watches(&ranv1alpha1.ManagedClustersUpgrade{}, handler.EnqueueRequestsFromMapFunc(r.owner)).
		Watches(&clusterv1.ManagedCluster{}, handler.EnqueueRequestsFromMapFunc(r.hubOf),
			builder.WithPredicates(availabilityChanged{}))
	if !r.Unserved.Works {
		b = b.Watches(&workv1.ManifestWork{}, handler.EnqueueRequestsFromMapFunc(r.owner),
			builder.WithPredicates(trainWork{}))
	}
	return b.Complete(r)
}

// owner enqueues the train a rollout (a ManagedClustersUpgrade or a ManifestWork) was made
// for.
func (r *Reconciler) owner(ctx context.Context, obj client.Object) []reconcile.Request {
	labels := obj.GetLabels()
	value, ok := labels[train.LabelTrain]
	if !ok {
		return nil
	}
	ns := obj.GetNamespace()
	if n, ok := labels[train.LabelTrainNamespace]; ok {
		ns = n
	}
	var list ranv1alpha1.ReleaseTrainList
	if err := r.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if names.LabelValue(list.Items[i].Name) == value {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

// hubOf enqueues the trains with a ring on a regional hub.
func (r *Reconciler) hubOf(ctx context.Context, obj client.Object) []reconcile.Request {
	var list ranv1alpha1.ReleaseTrainList
	if err := r.Client.List(ctx, &list); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		for _, ring := range list.Items[i].Spec.Rings {
			if slices.Contains(ring.Hubs, obj.GetName()) {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
				break
			}
		}
	}
	return out
}

// availabilityChanged passes a ManagedCluster whose Available condition changed.
type availabilityChanged struct{ predicate.Funcs }

func (availabilityChanged) Create(event.CreateEvent) bool   { return true }
func (availabilityChanged) Delete(event.DeleteEvent) bool   { return true }
func (availabilityChanged) Generic(event.GenericEvent) bool { return false }
func (availabilityChanged) Update(e event.UpdateEvent) bool {
	o, okOld := e.ObjectOld.(*clusterv1.ManagedCluster)
	n, okNew := e.ObjectNew.(*clusterv1.ManagedCluster)
	return !okOld || !okNew || train.Available(o) != train.Available(n)
}

// trainWork passes a train's ManifestWork when it is made or deleted and when its status
// changes.
type trainWork struct{ predicate.Funcs }

func (trainWork) Create(e event.CreateEvent) bool { return isTrainWork(e.Object) }
func (trainWork) Delete(e event.DeleteEvent) bool { return isTrainWork(e.Object) }
func (trainWork) Generic(event.GenericEvent) bool { return false }
func (trainWork) Update(e event.UpdateEvent) bool {
	o, okOld := e.ObjectOld.(*workv1.ManifestWork)
	n, okNew := e.ObjectNew.(*workv1.ManifestWork)
	return isTrainWork(e.ObjectNew) && (!okOld || !okNew || !equality.Semantic.DeepEqual(o.Status, n.Status) ||
		!n.DeletionTimestamp.Equal(o.DeletionTimestamp))
}

func isTrainWork(o client.Object) bool {
	_, ok := o.GetLabels()[train.LabelTrain]
	return ok
}
