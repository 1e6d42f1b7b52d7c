package releasetrain

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/controllers/internal/reconciled"
	"github.com/cgu-operator/cgu-operator/pkg/train"
)

// status ends a pass with its one status write: the decided status, or, after a failure, the
// status as read with Reconciled=False naming it. A pass that wrote looks again when the
// decision waits for time (the next read of the channel, the end of a soak). The decision's
// events are recorded once its status is written: a pass whose write conflicts records
// nothing, and the pass after it, deciding again from the status as written, records them
// once.
func (r *Reconciler) status(ctx context.Context, t *ranv1alpha1.ReleaseTrain, in train.Intents, err error) (ctrl.Result, error) {
	return reconciled.End(ctx, err, in.After, func(failed bool) error {
		st := in.Status
		if failed {
			st = *t.Status.DeepCopy()
			st.ObservedGeneration = t.Generation
			meta.SetStatusCondition(&st.Conditions, reconciled.Failed(err, t.Generation))
		} else {
			meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionReconciled)
		}
		if reconciled.Same(t.Status, st) {
			return nil
		}
		out := t.DeepCopy()
		out.Status = st
		if err := r.Client.Status().Update(ctx, out); err != nil {
			return err
		}
		if !failed {
			r.record(t, in.Events)
		}
		return nil
	})
}

// record records the events of a decision whose status was written.
func (r *Reconciler) record(t *ranv1alpha1.ReleaseTrain, events []train.Event) {
	for _, e := range events {
		kind := corev1.EventTypeNormal
		if e.Warning {
			kind = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(t, nil, kind, e.Reason, eventAction, "%s", e.Message)
	}
}
