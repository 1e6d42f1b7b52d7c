package fleetfreeze

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/freeze"
)

// apply writes the status the pass decided, when it changed.
func (r *Reconciler) apply(ctx context.Context, ff *ranv1alpha1.FleetFreeze, in freeze.Intents) error {
	if equality.Semantic.DeepEqual(ff.Status, in.Status) {
		return nil
	}
	ff = ff.DeepCopy()
	ff.Status = in.Status
	if err := r.Client.Status().Update(ctx, ff); err != nil {
		return fmt.Errorf("writing the status of FleetFreeze %s: %w", ff.Name, err)
	}
	return nil
}
