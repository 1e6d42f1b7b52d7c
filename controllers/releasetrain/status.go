package releasetrain

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
	"github.com/cgu-operator/cgu-operator/pkg/train"
)

// cacheRetry bounds the wait for the cache to show a newer object after a write conflict.
const cacheRetry = time.Second

// status ends a pass with its one status write: the decided status, or, after a failure, the
// status as read with Reconciled=False naming it. A pass that wrote looks again when the
// decision waits for time (the next read of the channel, the end of a soak).
func (r *Reconciler) status(ctx context.Context, t *ranv1alpha1.ReleaseTrain, in train.Intents, err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		ctrl.LoggerFrom(ctx).V(1).Info("Waiting", "for", "a newer version of an object to reach the cache", "conflict", err)
		return ctrl.Result{RequeueAfter: cacheRetry}, nil
	}
	st := in.Status
	if err != nil {
		st = *t.Status.DeepCopy()
		st.ObservedGeneration = t.Generation
		meta.SetStatusCondition(&st.Conditions, reconciled.Failed(err, t.Generation))
	} else {
		meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionReconciled)
	}
	if werr := r.writeStatus(ctx, t, st); werr != nil {
		if apierrors.IsConflict(werr) && err == nil {
			return ctrl.Result{RequeueAfter: cacheRetry}, nil
		}
		return ctrl.Result{}, errors.Join(err, werr)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: in.After}, nil
}

// writeStatus writes st when it differs from the status read.
func (r *Reconciler) writeStatus(ctx context.Context, t *ranv1alpha1.ReleaseTrain, st ranv1alpha1.ReleaseTrainStatus) error {
	x, errA := json.Marshal(t.Status)
	y, errB := json.Marshal(st)
	if errA == nil && errB == nil && string(x) == string(y) {
		return nil
	}
	out := t.DeepCopy()
	out.Status = st
	if err := r.Client.Status().Update(ctx, out); err != nil {
		return fmt.Errorf("writing the status: %w", err)
	}
	return nil
}
