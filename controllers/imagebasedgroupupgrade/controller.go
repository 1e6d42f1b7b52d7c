// Package imagebasedgroupupgrade is the ImageBasedGroupUpgrade reconciler. It runs an
// ImageBasedGroupUpgrade's plan on the rollout engine: each step becomes a
// ClusterGroupUpgrade of ManifestWork templates that move the clusters' ImageBasedUpgrade
// through the step's actions. A pass is gather (gather.go: reads only, into ibgu.Facts),
// ibgu.Decide (pure, in pkg/ibgu), apply (apply.go: every write, in order) and one status
// write (status.go), failures included: a pass that fails leaves the status as it was with
// Reconciled=False naming the failure.
package imagebasedgroupupgrade

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/hubapi"
	"github.com/cgu-operator/cgu-operator/pkg/ibgu"
	"github.com/cgu-operator/cgu-operator/pkg/tenancy"
)

// eventAction is the action of the ImageBasedGroupUpgrade controller's events.
const eventAction = "ImageBasedGroupUpgrade"

// Reconciler reconciles ImageBasedGroupUpgrades.
type Reconciler struct {
	Client   client.Client
	Scheme   *runtime.Scheme
	Clock    clock.PassiveClock
	Recorder events.EventRecorder
	Unserved hubapi.Unserved
	// Tenancy are the operator's tenancy rules: where they apply, Prep sends only
	// ConfigMaps of the ImageBasedGroupUpgrade's namespace (its steps' CGUs obey them too).
	Tenancy tenancy.Rules
}

// +kubebuilder:rbac:groups=lcm.openshift.io,resources=imagebasedgroupupgrades,verbs=list;watch
// +kubebuilder:rbac:groups=lcm.openshift.io,resources=imagebasedgroupupgrades/status,verbs=update
// +kubebuilder:rbac:groups=lcm.openshift.io,resources=imagebasedgroupupgrades/finalizers,verbs=update
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworkreplicasets,verbs=list;watch;create
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=list;watch;patch
// +kubebuilder:rbac:groups=ran.openshift.io,resources=clustergroupupgrades,verbs=list;watch;create;patch
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=list;watch;delete

// Reconcile takes an ImageBasedGroupUpgrade a step further: gather, decide, apply, then
// one status write.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	g := &lcmv1alpha1.ImageBasedGroupUpgrade{}
	if err := r.Client.Get(ctx, req.NamespacedName, g); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !g.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // the garbage collector deletes its steps, whose cleanup stops enforcing
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("imagebasedgroupupgrade", klog.KObj(g)))
	facts, err := gather(ctx, r.Client, g, r.Unserved.Works, r.Tenancy.Applies(g.Namespace))
	var in ibgu.Intents
	if err == nil {
		in = ibgu.Decide(facts, r.Clock.Now())
		err = in.Problem
	}
	if err == nil {
		err = r.apply(ctx, g, in)
	}
	return r.status(ctx, g, in, err)
}

// SetupWithManager registers the controller: an ImageBasedGroupUpgrade is reconciled when
// its spec changes (a step appended) and when one of its ClusterGroupUpgrades, their batch
// records or its templates change.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named("imagebasedgroupupgrade").
		For(&lcmv1alpha1.ImageBasedGroupUpgrade{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&ranv1alpha1.ClusterGroupUpgrade{}).
		Watches(&ranv1alpha1.ClusterGroupUpgradeBatch{}, handler.EnqueueRequestsFromMapFunc(r.recordOwner))
	if !r.Unserved.Works {
		b = b.Owns(&workv1alpha1.ManifestWorkReplicaSet{})
	}
	return b.Complete(r)
}

// recordOwner enqueues the ImageBasedGroupUpgrade whose step's ClusterGroupUpgrade a batch
// record belongs to: the clusters' progress is there, and may reach the cache after the
// ClusterGroupUpgrade's own status.
func (r *Reconciler) recordOwner(ctx context.Context, obj client.Object) []reconcile.Request {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != "ClusterGroupUpgrade" {
		return nil
	}
	cgu := &ranv1alpha1.ClusterGroupUpgrade{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}, cgu); err != nil {
		return nil
	}
	if step := metav1.GetControllerOf(cgu); step != nil && step.Kind == "ImageBasedGroupUpgrade" {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: cgu.Namespace, Name: step.Name}}}
	}
	return nil
}
