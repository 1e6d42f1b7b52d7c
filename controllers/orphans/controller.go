// Package orphans is the orphan sweep: it deletes the hub objects made for a
// ClusterGroupUpgrade that no longer exists (pkg/orphans says why they can outlive it). A
// pass is keyed by an owner, the namespace and the owner label's value: gather (gather.go)
// reads whether a ClusterGroupUpgrade still gives that value, orphans.Decide says whether to
// sweep, and apply (apply.go) deletes the objects through ownership.Cleaner. There is no
// status: the sweep logs what it deleted.
//
// Passes are event-driven. Each object of ownership.Kinds queues its owner when the cache
// first lists it, so the operator sweeps at start-up what was left while it was down; a
// ClusterGroupUpgrade deleted while it runs queues itself, which covers a finalizer removed
// by hand.
package orphans

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
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
	"github.com/cgu-operator/cgu-operator/pkg/orphans"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
)

// Reconciler sweeps the objects of ClusterGroupUpgrades that are gone.
type Reconciler struct {
	// Client reads the ClusterGroupUpgrades and the objects from the cache, and deletes.
	Client client.Client
	// Reader reads the ClusterGroupUpgrades from the API server when the cache shows none.
	Reader client.Reader
	// Copies reads the copied ConfigMaps (ownership.Cleaner).
	Copies   client.Reader
	Unserved hubapi.Unserved
	// Clock dates the emptying of Placements before their bindings go (ownership.Cleaner).
	Clock clock.PassiveClock
}

// Reconcile sweeps the objects of one owner ({namespace, owner label value}) when no
// ClusterGroupUpgrade gives that value any more. An error met because the manager is
// stopping is not one: the next leader sweeps again, from what is stored.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("owner", klog.KRef(req.Namespace, req.Name)))
	f, err := r.gather(ctx, req.Namespace, req.Name)
	held := false
	if err == nil {
		held, err = r.apply(ctx, req.Namespace, req.Name, orphans.Decide(f))
	}
	if err != nil && ctx.Err() != nil {
		ctrl.LoggerFrom(ctx).V(1).Info("Stopped during a sweep", "error", err)
		return ctrl.Result{}, nil
	}
	if held && err == nil {
		// The Placements go once the cache shows their bindings gone.
		return ctrl.Result{RequeueAfter: heldRetry}, nil
	}
	return ctrl.Result{}, err
}

// heldRetry is when a sweep that held Placements back looks again (deletions do not queue it).
const heldRetry = time.Second

// SetupWithManager registers the sweep: every kind it deletes queues its owner when first
// listed, and a deleted ClusterGroupUpgrade queues itself.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).Named("orphans").
		Watches(&ranv1alpha1.ClusterGroupUpgrade{}, handler.EnqueueRequestsFromMapFunc(upgradeOwner),
			builder.WithPredicates(predicate.Funcs{
				CreateFunc: func(event.CreateEvent) bool { return false },
				UpdateFunc: func(event.UpdateEvent) bool { return false },
				DeleteFunc: func(event.DeleteEvent) bool { return true },
			}))
	listed := builder.WithPredicates(predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return true },
		UpdateFunc: func(event.UpdateEvent) bool { return false },
		DeleteFunc: func(event.DeleteEvent) bool { return false },
	})
	for _, k := range ownership.Kinds {
		if r.Unserved.Missing(k.Needs) {
			continue
		}
		b = b.Watches(k.Object, handler.EnqueueRequestsFromMapFunc(labelledOwner), listed)
	}
	return b.Complete(r)
}

// upgradeOwner is the owner a deleted ClusterGroupUpgrade's objects carry.
func upgradeOwner(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: names.LabelValue(o.GetName())}}}
}

// labelledOwner is the owner an object's labels name; none for an object not made by the
// operator.
func labelledOwner(_ context.Context, o client.Object) []reconcile.Request {
	namespace, value, ok := ownership.Of(o.GetLabels())
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: namespace, Name: value}}}
}
