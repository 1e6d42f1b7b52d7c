// Package fleetfreeze runs the alert queries of the hub's FleetFreezes (docs/freeze.md): a
// pass gathers (gather.go: the FleetFreeze from the cache, and when its queries are due, their
// answers from the Prometheus API it names), freeze.Decide says the status and when to look
// again, and apply (apply.go) writes the status, the one thing this controller writes. The
// ClusterGroupUpgrade controller reads the status: while status.alertsFrozen is true, no
// rollout starts a batch or a cluster.
//
// The queries run on a timer, every spec.alerts.interval: a query API cannot tell the
// operator that an alert started firing.
package fleetfreeze

import (
	"context"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/freeze"
)

// +kubebuilder:rbac:groups=ran.openshift.io,resources=fleetfreezes,verbs=list;watch
// +kubebuilder:rbac:groups=ran.openshift.io,resources=fleetfreezes/status,verbs=update
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// Reconciler runs the alert queries of FleetFreezes.
type Reconciler struct {
	// Client reads the FleetFreezes from the cache and writes their status.
	Client client.Client
	// Reader reads the Secrets that hold the query API's token and CA, uncached.
	Reader client.Reader
	Clock  clock.PassiveClock
}

// Reconcile runs one pass over a FleetFreeze.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ff := &ranv1alpha1.FleetFreeze{}
	if err := r.Client.Get(ctx, req.NamespacedName, ff); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	in := freeze.Decide(r.gather(ctx, ff))
	if err := r.apply(ctx, ff, in); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: in.Again}, nil
}

// SetupWithManager registers the controller: every change of a FleetFreeze, its status
// included, is a pass (one that is not due keeps the status and waits for its timer).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("fleetfreeze").For(&ranv1alpha1.FleetFreeze{}).Complete(r)
}
