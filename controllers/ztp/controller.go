// Package ztp is the ZTP reconciler: GitOps ZTP's day-one flow on ManagedClusters. A pass
// is gather (gather.go: the cluster, its ZTP ClusterGroupUpgrade, and its replicated
// policies when the flow starts), ztp.Decide (pure, in pkg/ztp), apply (apply.go) and the
// events that report it (status.go): the flow has no status object of its own, so a pass that
// fails says so with a Warning ZTPFailed event on the cluster naming the error.
package ztp

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/ztp"
)

// eventAction is the action of the ZTP controller's events.
const eventAction = "ZTP"

// namespaceRetry is how often the start-up creation of ztp.Namespace is retried.
const namespaceRetry = 5 * time.Second

// Reconciler runs GitOps ZTP's day-one flow: a ManagedCluster that becomes Available
// without the ztp-done label gets a ClusterGroupUpgrade, named after it in ztp-install and
// owned by it, that takes it through its inform policies carrying a ztp-deploy-wave, wave
// by wave (pkg/ztp decides; this controller gathers and applies). A cluster with no wave
// policy is labelled ztp-done without one. Policies are read only once the cluster has been
// Available for Settle, so that a CGU is never written from half of them.
//
// The ManagedClusters come from the manager's cache as typed objects trimmed by
// managedclusters.Trim to their metadata and status conditions. The choice: the controller
// must see the Available condition on every event to filter them (registration rewrites
// a cluster's status often: lease, capacity, claims), and a fleet has thousands of
// clusters. Reading each cluster with the API reader on every event of a metadata-only
// watch would turn each status write of the fleet into a GET on the kube-apiserver; a
// trimmed informer costs a few hundred bytes a cluster and no request.
type Reconciler struct {
	Client client.Client
	// Reader lists the replicated policies, which the cache leaves out.
	Reader   client.Reader
	Scheme   *runtime.Scheme
	Clock    clock.PassiveClock
	Recorder events.EventRecorder
	// Settle is how long a cluster must have been Available before its policies are read:
	// the propagator may not have replicated all of them to a cluster that just joined.
	Settle time.Duration
}

// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=list;watch;patch
// +kubebuilder:rbac:groups=ran.openshift.io,resources=clustergroupupgrades,verbs=list;watch;create;delete
// +kubebuilder:rbac:groups=policy.open-cluster-management.io,resources=policies,verbs=list
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=create

// Reconcile takes one ManagedCluster a step through the ZTP flow: gather, decide, apply,
// then the events of what was done or of the failure.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	mc := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, mc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !mc.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("managedcluster", klog.KObj(mc)))
	facts, err := gather(ctx, r.Client, r.Reader, mc, r.Clock.Now(), r.Settle)
	var in ztp.Intents
	if err == nil {
		in = ztp.Decide(facts, r.Clock.Now(), r.Settle)
		err = r.apply(ctx, mc, &in)
	}
	return r.report(ctx, mc, in, err)
}

// SetupWithManager registers the controller, its watches, and the creation of
// ztp.Namespace when the manager starts (as leader).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.Add(manager.RunnableFunc(r.ensureNamespace)); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("ztp").
		For(&clusterv1.ManagedCluster{}, builder.WithPredicates(clusterChanged{})).
		Watches(&ranv1alpha1.ClusterGroupUpgrade{},
			handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &clusterv1.ManagedCluster{}),
			builder.WithPredicates(upgradeChanged{})).
		Complete(r)
}

// ensureNamespace creates ztp.Namespace unless it exists, retrying until it succeeds or
// the manager stops.
func (r *Reconciler) ensureNamespace(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithValues("namespace", ztp.Namespace)
	err := wait.PollUntilContextCancel(ctx, namespaceRetry, true, func(ctx context.Context) (bool, error) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ztp.Namespace}}
		if err := r.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			log.Error(err, "Creating the ZTP namespace; retrying")
			return false, nil
		}
		return true, nil
	})
	if err != nil && ctx.Err() != nil { // stopped before it succeeded
		return nil
	}
	return err
}
