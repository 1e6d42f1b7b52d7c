package imagebasedgroupupgrade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/controllers/internal/reconciled"
	"github.com/cgu-operator/cgu-operator/pkg/ibgu"
)

// status ends a pass with its one status write. A pass that failed (err) writes the status
// as read with Reconciled=False naming the failure, and goes back to the workqueue for a
// retry with back-off, or, blocked by an object it does not own (ibgu.Foreign), looks again
// every ibgu.ContentRetry; one that did its writes writes the decided status, then the events
// it carries, and looks again when the decision waits. A write conflict (a newer object is
// on its way to the cache) ends the pass with a short requeue.
func (r *Reconciler) status(ctx context.Context, g *lcmv1alpha1.ImageBasedGroupUpgrade, in ibgu.Intents, err error) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	if apierrors.IsConflict(err) {
		log.V(1).Info("Waiting", "for", "a newer version of an object to reach the cache", "conflict", err)
		return ctrl.Result{RequeueAfter: ibgu.CacheRetry}, nil
	}
	st := in.Status
	if err != nil {
		st = *g.Status.DeepCopy()
		st.ObservedGeneration = g.Generation
		meta.SetStatusCondition(&st.Conditions, reconciled.Failed(err, g.Generation))
	} else {
		meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionReconciled)
	}
	written, werr := r.writeStatus(ctx, g, st)
	switch {
	case werr != nil && apierrors.IsConflict(werr) && err == nil:
		log.V(1).Info("Status write conflict: reading again")
		return ctrl.Result{RequeueAfter: ibgu.CacheRetry}, nil
	case werr != nil:
		return ctrl.Result{}, errors.Join(err, werr)
	case errors.As(err, new(*ibgu.Foreign)):
		if written { // the status says so from now on: said once at info
			log.Info("Plan blocked", "error", err)
		}
		return ctrl.Result{RequeueAfter: ibgu.ContentRetry}, nil
	case err != nil:
		return ctrl.Result{}, err
	}
	for _, e := range in.Events {
		r.Recorder.Eventf(g, nil, e.Type, e.Reason, eventAction, "%s", e.Message)
		if written {
			log.Info("Plan transition", "reason", e.Reason, "message", e.Message)
		}
	}
	if in.Wait != nil {
		log.V(1).Info("Waiting", "for", in.Wait.Reason, "requeueAfter", in.Wait.After)
		return ctrl.Result{RequeueAfter: in.Wait.After}, nil
	}
	return ctrl.Result{}, nil
}

// writeStatus writes st when it differs from the status read; written says it did.
func (r *Reconciler) writeStatus(ctx context.Context, g *lcmv1alpha1.ImageBasedGroupUpgrade, st lcmv1alpha1.ImageBasedGroupUpgradeStatus) (written bool, _ error) {
	if equalJSON(g.Status, st) {
		return false, nil
	}
	out := g.DeepCopy()
	out.Status = st
	if err := r.Client.Status().Update(ctx, out); err != nil {
		return false, fmt.Errorf("writing the status: %w", err)
	}
	return true, nil
}

// equalJSON compares two statuses as the API server stores them (an empty list and none
// are the same).
func equalJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(x) == string(y)
}
