package controllers

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/managedclusters"
	"github.com/cgu-operator/cgu-operator/pkg/ztp"
)

// Reasons of the events the ZTP controller records on ManagedClusters.
const (
	// EventZTPStarted: the cluster's ZTP ClusterGroupUpgrade was created.
	EventZTPStarted = "ZTPStarted"
	// EventZTPDone: the controller labelled the cluster ztp-done itself, since it has no
	// wave policy or was already compliant with all of them.
	EventZTPDone = "ZTPDone"
	// EventZTPRerun: ztp-done was removed from a cluster whose ClusterGroupUpgrade had
	// completed; the old one is deleted so that a new one runs.
	EventZTPRerun = "ZTPRerun"
	// EventInvalidWave: policies of the cluster carry a wave that is not an integer;
	// they are left out of its ClusterGroupUpgrade.
	EventInvalidWave = "InvalidZTPWave"
)

// ztpEventAction is the action of the ZTP controller's events.
const ztpEventAction = "ZTP"

// namespaceRetry is how often the start-up creation of ztp.Namespace is retried.
const namespaceRetry = 5 * time.Second

// ZTPReconciler runs GitOps ZTP's day-one flow: a ManagedCluster that becomes Available
// without the ztp-done label gets a ClusterGroupUpgrade, named after it in ztp-install and
// owned by it, that takes it through its inform policies carrying a ztp-deploy-wave, wave
// by wave (pkg/ztp decides; this controller gathers and applies). A cluster with no wave
// policy is labelled ztp-done without one. Policies are read only once the cluster has been
// Available for Settle, so that a CGU is never written from half of them.
//
// The ManagedClusters come from the manager's cache as typed objects trimmed by
// TrimManagedCluster to their metadata and status conditions. The choice: the controller
// must see the Available condition on every event to filter them (registration rewrites
// a cluster's status often: lease, capacity, claims), and a fleet has thousands of
// clusters. Reading each cluster with the API reader on every event of a metadata-only
// watch would turn each status write of the fleet into a GET on the kube-apiserver; a
// trimmed informer costs a few hundred bytes a cluster and no request.
type ZTPReconciler struct {
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

// Reconcile takes one ManagedCluster a step through the ZTP flow.
func (r *ZTPReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	mc := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, mc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !mc.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("managedcluster", klog.KObj(mc)))
	cgu, err := r.upgrade(ctx, mc.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	step, wait := ztp.Next(ztpCluster(mc), cgu, r.Clock.Now(), r.Settle)
	switch step {
	case ztp.Settle:
		return ctrl.Result{RequeueAfter: wait}, nil
	case ztp.Start:
		return ctrl.Result{}, r.start(ctx, mc)
	case ztp.Rerun:
		r.Recorder.Eventf(mc, cgu, corev1.EventTypeNormal, EventZTPRerun, ztpEventAction,
			"The %s label was removed: deleting the completed ClusterGroupUpgrade %s/%s to run again", ztp.DoneLabel, cgu.Namespace, cgu.Name)
		return ctrl.Result{}, r.remove(ctx, cgu)
	case ztp.Skipped:
		if err := r.markDone(ctx, mc, "Already compliant with every wave policy"); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.remove(ctx, cgu)
	default:
		return ctrl.Result{}, nil
	}
}

// ztpCluster is what pkg/ztp decides from.
func ztpCluster(mc *clusterv1.ManagedCluster) ztp.Cluster {
	c := ztp.Cluster{Name: mc.Name, Labels: mc.Labels}
	if cond := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); cond != nil {
		c.Available, c.AvailableSince = cond.Status == metav1.ConditionTrue, cond.LastTransitionTime.Time
	}
	return c
}

// upgrade reads the cluster's ZTP ClusterGroupUpgrade, nil when it has none.
func (r *ZTPReconciler) upgrade(ctx context.Context, cluster string) (*ranv1alpha1.ClusterGroupUpgrade, error) {
	cgu := &ranv1alpha1.ClusterGroupUpgrade{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: ztp.Namespace, Name: cluster}, cgu)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading the ZTP ClusterGroupUpgrade: %w", err)
	}
	return cgu, nil
}

// start reads the cluster's policies and creates its ClusterGroupUpgrade, or labels it
// ztp-done when none carries a valid wave.
func (r *ZTPReconciler) start(ctx context.Context, mc *clusterv1.ManagedCluster) error {
	waves, err := r.waves(ctx, mc)
	if err != nil {
		return err
	}
	cgu := ztp.Upgrade(mc.Name, waves)
	if cgu == nil {
		return r.markDone(ctx, mc, "No inform policy with a "+ztp.WaveAnnotation+" annotation")
	}
	if err := controllerutil.SetOwnerReference(mc, cgu, r.Scheme); err != nil {
		return fmt.Errorf("owning the ZTP ClusterGroupUpgrade: %w", err)
	}
	if err := r.Client.Create(ctx, cgu); err != nil {
		if apierrors.IsAlreadyExists(err) { // the cache is behind; its event comes back here
			return nil
		}
		return fmt.Errorf("creating the ZTP ClusterGroupUpgrade: %w", err)
	}
	r.Recorder.Eventf(mc, cgu, corev1.EventTypeNormal, EventZTPStarted, ztpEventAction,
		"Created ClusterGroupUpgrade %s/%s over %d wave policies: %s", cgu.Namespace, cgu.Name,
		len(waves), strings.Join(cgu.Spec.ManagedPolicies, ", "))
	return nil
}

// waves lists the policies replicated into the cluster's namespace (not cached: read from
// the API server) and returns its wave policies in order; it reports the invalid waves in
// a Warning event on the cluster.
func (r *ZTPReconciler) waves(ctx context.Context, mc *clusterv1.ManagedCluster) ([]ztp.WavePolicy, error) {
	var list policyv1.PolicyList
	if err := r.Reader.List(ctx, &list, client.InNamespace(mc.Name), client.HasLabels{ztp.RootPolicyLabel}); err != nil {
		return nil, fmt.Errorf("listing the policies of the cluster: %w", err)
	}
	policies := make([]ztp.Policy, 0, len(list.Items))
	for i := range list.Items {
		if p, ok := ztp.FromReplicated(&list.Items[i]); ok {
			policies = append(policies, p)
		}
	}
	waves, invalid := ztp.Waves(policies)
	if len(invalid) > 0 {
		r.Recorder.Eventf(mc, nil, corev1.EventTypeWarning, EventInvalidWave, ztpEventAction,
			"Left out of ZTP, their wave is not an integer: %s", strings.Join(invalid, ", "))
	}
	return waves, nil
}

// markDone labels the cluster ztp-done (and removes ztp-running) with a merge patch of its
// labels only.
func (r *ZTPReconciler) markDone(ctx context.Context, mc *clusterv1.ManagedCluster, why string) error {
	changes := managedclusters.Changes{Labels: map[string]*string{ztp.DoneLabel: ptr.To(""), ztp.RunningLabel: nil}}
	found, err := managedclusters.Writer{Client: r.Client}.Patch(ctx, mc.Name, changes)
	if err != nil || !found { // a cluster deleted since is not labelled
		return err
	}
	r.Recorder.Eventf(mc, nil, corev1.EventTypeNormal, EventZTPDone, ztpEventAction, "Labelled %s: %s", ztp.DoneLabel, why)
	return nil
}

// remove deletes this ClusterGroupUpgrade, not a newer one of the same name.
func (r *ZTPReconciler) remove(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) error {
	err := r.Client.Delete(ctx, cgu, client.Preconditions{UID: &cgu.UID})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting the ZTP ClusterGroupUpgrade: %w", err)
	}
	return nil
}

// SetupWithManager registers the controller, its watches, and the creation of
// ztp.Namespace when the manager starts (as leader).
func (r *ZTPReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.Add(manager.RunnableFunc(r.ensureNamespace)); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("ztp").
		For(&clusterv1.ManagedCluster{}, builder.WithPredicates(ztpClusterChanged{})).
		Watches(&ranv1alpha1.ClusterGroupUpgrade{},
			handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &clusterv1.ManagedCluster{}),
			builder.WithPredicates(ztpUpgradeChanged{})).
		Complete(r)
}

// ensureNamespace creates ztp.Namespace unless it exists, retrying until it succeeds or
// the manager stops.
func (r *ZTPReconciler) ensureNamespace(ctx context.Context) error {
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

// TrimManagedCluster is the cache transform of typed ManagedClusters: it keeps the
// metadata the controllers read (name, UID, resourceVersion, labels, owner references,
// deletion) and the status conditions, and drops the rest (spec, capacity, claims,
// versions, managed fields), so that a fleet of thousands of clusters stays small in
// memory. Other objects, the metadata-only ManagedClusters among them, pass unchanged.
// Code that needs more of a ManagedCluster must read it with the API reader.
func TrimManagedCluster(in any) (any, error) {
	mc, ok := in.(*clusterv1.ManagedCluster)
	if !ok {
		return in, nil
	}
	return &clusterv1.ManagedCluster{
		TypeMeta: mc.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: mc.Name, UID: mc.UID, ResourceVersion: mc.ResourceVersion, Generation: mc.Generation,
			CreationTimestamp: mc.CreationTimestamp, DeletionTimestamp: mc.DeletionTimestamp,
			Labels: mc.Labels, OwnerReferences: mc.OwnerReferences,
		},
		Status: clusterv1.ManagedClusterStatus{Conditions: mc.Status.Conditions},
	}, nil
}

// ztpClusterChanged passes a ManagedCluster's creation, and the updates that change its
// labels or its Available condition; status writes that change neither are most of a
// fleet's events and are dropped.
type ztpClusterChanged struct{}

func (ztpClusterChanged) Create(event.CreateEvent) bool   { return true }
func (ztpClusterChanged) Delete(event.DeleteEvent) bool   { return false }
func (ztpClusterChanged) Generic(event.GenericEvent) bool { return false }

func (ztpClusterChanged) Update(e event.UpdateEvent) bool {
	oldMC, okOld := e.ObjectOld.(*clusterv1.ManagedCluster)
	newMC, okNew := e.ObjectNew.(*clusterv1.ManagedCluster)
	if !okOld || !okNew {
		return true
	}
	return !maps.Equal(oldMC.Labels, newMC.Labels) || ztpCluster(oldMC).Available != ztpCluster(newMC).Available ||
		!oldMC.DeletionTimestamp.Equal(newMC.DeletionTimestamp)
}

// ztpUpgradeChanged passes the events of ClusterGroupUpgrades in ztp.Namespace that the
// flow acts on: creation, deletion, a state change, the start of a deletion.
type ztpUpgradeChanged struct{}

func (ztpUpgradeChanged) Create(e event.CreateEvent) bool {
	return e.Object.GetNamespace() == ztp.Namespace
}
func (ztpUpgradeChanged) Delete(e event.DeleteEvent) bool {
	return e.Object.GetNamespace() == ztp.Namespace
}
func (ztpUpgradeChanged) Generic(event.GenericEvent) bool { return false }

func (ztpUpgradeChanged) Update(e event.UpdateEvent) bool {
	oldCGU, okOld := e.ObjectOld.(*ranv1alpha1.ClusterGroupUpgrade)
	newCGU, okNew := e.ObjectNew.(*ranv1alpha1.ClusterGroupUpgrade)
	if !okOld || !okNew || newCGU.Namespace != ztp.Namespace {
		return false
	}
	return oldCGU.Status.State != newCGU.Status.State || oldCGU.DeletionTimestamp.IsZero() != newCGU.DeletionTimestamp.IsZero()
}
