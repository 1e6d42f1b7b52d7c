package managedclustersupgrade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/controllers/internal/reconciled"
	"github.com/cgu-operator/cgu-operator/pkg/mcu"
)

// cacheRetry bounds the wait for the cache to show a newer object after a write conflict.
const cacheRetry = time.Second

// status ends a pass with its one status write. A pass that failed writes the status as read
// with Reconciled=False naming the failure and goes back to the workqueue; one that did its
// writes writes the decided status, and looks again when the decision waits for what brings
// no event.
func (r *Reconciler) status(ctx context.Context, m *ranv1alpha1.ManagedClustersUpgrade, in mcu.Intents, err error) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	if apierrors.IsConflict(err) {
		log.V(1).Info("Waiting", "for", "a newer version of an object to reach the cache", "conflict", err)
		return ctrl.Result{RequeueAfter: cacheRetry}, nil
	}
	st := in.Status
	if err != nil {
		st = *m.Status.DeepCopy()
		st.ObservedGeneration = m.Generation
		meta.SetStatusCondition(&st.Conditions, reconciled.Failed(err, m.Generation))
	} else {
		meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionReconciled)
	}
	if werr := r.writeStatus(ctx, m, st); werr != nil {
		if apierrors.IsConflict(werr) && err == nil {
			return ctrl.Result{RequeueAfter: cacheRetry}, nil
		}
		return ctrl.Result{}, errors.Join(err, werr)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: in.Wait}, nil
}

// writeStatus writes st when it differs from the status read.
func (r *Reconciler) writeStatus(ctx context.Context, m *ranv1alpha1.ManagedClustersUpgrade, st ranv1alpha1.ManagedClustersUpgradeStatus) error {
	x, errA := json.Marshal(m.Status)
	y, errB := json.Marshal(st)
	if errA == nil && errB == nil && string(x) == string(y) {
		return nil
	}
	out := m.DeepCopy()
	out.Status = st
	if err := r.Client.Status().Update(ctx, out); err != nil {
		return fmt.Errorf("writing the status: %w", err)
	}
	return nil
}
