package managedclustersupgrade

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/controllers/internal/reconciled"
	"github.com/cgu-operator/cgu-operator/pkg/mcu"
)

// status ends a pass with its one status write. A pass that failed writes the status as read
// with Reconciled=False naming the failure and goes back to the workqueue; one that did its
// writes writes the decided status, and looks again when the decision waits for what brings
// no event.
func (r *Reconciler) status(ctx context.Context, m *ranv1alpha1.ManagedClustersUpgrade, in mcu.Intents, err error) (ctrl.Result, error) {
	return reconciled.End(ctx, err, in.Wait, func(failed bool) error {
		st := in.Status
		if failed {
			st = *m.Status.DeepCopy()
			st.ObservedGeneration = m.Generation
			meta.SetStatusCondition(&st.Conditions, reconciled.Failed(err, m.Generation))
		} else {
			meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionReconciled)
		}
		if reconciled.Same(m.Status, st) {
			return nil
		}
		out := m.DeepCopy()
		out.Status = st
		return r.Client.Status().Update(ctx, out)
	})
}
