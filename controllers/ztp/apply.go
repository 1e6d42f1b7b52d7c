package ztp

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/cgu-operator/cgu-operator/pkg/managedclusters"
	"github.com/cgu-operator/cgu-operator/pkg/ztp"
)

// apply makes the writes of the decision: the ClusterGroupUpgrade (owned by the cluster),
// the done label (and ztp-running removed) through the one ManagedCluster writer, the
// deletion of this ClusterGroupUpgrade (not a newer one of the same name). The event of a
// creation is added once it succeeded.
func (r *Reconciler) apply(ctx context.Context, mc *clusterv1.ManagedCluster, in *ztp.Intents) error {
	if cgu := in.Create; cgu != nil {
		if err := controllerutil.SetOwnerReference(mc, cgu, r.Scheme); err != nil {
			return fmt.Errorf("owning the ZTP ClusterGroupUpgrade: %w", err)
		}
		err := r.Client.Create(ctx, cgu)
		switch {
		case apierrors.IsAlreadyExists(err): // the cache is behind; its event comes back here
		case err != nil:
			return fmt.Errorf("creating the ZTP ClusterGroupUpgrade: %w", err)
		default:
			in.Events = append(in.Events, ztp.Started(cgu))
		}
	}
	if in.MarkDone != "" {
		changes := managedclusters.Changes{Labels: map[string]*string{ztp.DoneLabel: ptr.To(""), ztp.RunningLabel: nil}}
		if _, err := (managedclusters.Writer{Client: r.Client}).Patch(ctx, mc.Name, changes); err != nil {
			return fmt.Errorf("labelling the cluster %s: %w", ztp.DoneLabel, err)
		}
	}
	if cgu := in.Delete; cgu != nil {
		err := r.Client.Delete(ctx, cgu, client.Preconditions{UID: &cgu.UID})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("deleting the ZTP ClusterGroupUpgrade: %w", err)
		}
	}
	return nil
}
