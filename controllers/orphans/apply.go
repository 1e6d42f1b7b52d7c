package orphans

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/cgu-operator/cgu-operator/pkg/orphans"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
)

// apply deletes the owner's objects when the decision says so, and reports whether it held
// Placements back for a later sweep (ownership.Cleaner.CleanupStep). The owner label value
// stands for the name: names.LabelValue of a label value is the value itself.
func (r *Reconciler) apply(ctx context.Context, namespace, value string, in orphans.Intents) (bool, error) {
	if !in.Sweep {
		return false, nil
	}
	c := ownership.Cleaner{Client: r.Client, Copies: r.Copies, Unserved: r.Unserved,
		Teardown: spokejob.Runner{Client: r.Client}.Teardown, Clock: r.Clock}
	found, held, err := c.CleanupStep(ctx, ownership.Owner{Namespace: namespace, Name: value})
	if err != nil {
		return false, fmt.Errorf("deleting the objects of a ClusterGroupUpgrade that is gone: %w", err)
	}
	if found > 0 {
		ctrl.LoggerFrom(ctx).Info("Deleted the objects of a ClusterGroupUpgrade that is gone", "objects", found)
	}
	return held, nil
}
