package ztp

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/ztp"
)

// conflictRetry is how soon a pass that met a newer version of an object looks again.
const conflictRetry = time.Second

// report ends a pass. The ZTP flow has no status object: what a pass did shows in the
// events on the cluster, written once the writes that carried them succeeded, and in its
// labels. A failure shows in a Warning ZTPFailed event naming the error, and the error goes
// back to the workqueue for a retry with back-off. A conflict with a newer version of an
// object is only retried.
func (r *Reconciler) report(ctx context.Context, mc *clusterv1.ManagedCluster, in ztp.Intents, err error) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	switch {
	case apierrors.IsConflict(err):
		log.V(1).Info("Waiting", "for", "a newer version of an object to reach the cache", "conflict", err)
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	case err != nil:
		r.Recorder.Eventf(mc, nil, corev1.EventTypeWarning, ztp.EventZTPFailed, eventAction, "%s", rollout.Truncate(err.Error(), ranv1alpha1.MessageLimit))
		return ctrl.Result{}, err
	}
	for _, e := range in.Events {
		var related runtime.Object // a nil *ClusterGroupUpgrade is not a nil object
		if e.Related != nil {
			related = e.Related
		}
		r.Recorder.Eventf(mc, related, e.Type, e.Reason, eventAction, "%s", e.Message)
		log.Info("ZTP transition", "reason", e.Reason, "message", e.Message)
	}
	return ctrl.Result{RequeueAfter: in.Wait}, nil
}
