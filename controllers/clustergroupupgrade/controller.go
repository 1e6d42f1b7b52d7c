package clustergroupupgrade

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/cgu"
	"github.com/cgu-operator/cgu-operator/pkg/emitter"
	"github.com/cgu-operator/cgu-operator/pkg/hubapi"
	"github.com/cgu-operator/cgu-operator/pkg/metrics"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/policies"
	"github.com/cgu-operator/cgu-operator/pkg/preview"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
	"github.com/cgu-operator/cgu-operator/pkg/tenancy"
	"github.com/cgu-operator/cgu-operator/pkg/updateservice"
)

// Finalizer keeps a ClusterGroupUpgrade until every object it made is deleted (TALM's name).
const Finalizer = "ran.openshift.io/cleanup-finalizer"

// Reconciler rolls a ClusterGroupUpgrade out: it gathers the facts (clusters, policies and
// their compliance, blocking CGUs, the recorded progress, what the spokes answered), lets
// pkg/cgu decide, and applies the decision (cluster actions, the plan's batch records at the
// start, enforcement objects, the batches' progress, spoke-side objects, one status write,
// events, metrics).
type Reconciler struct {
	Client client.Client
	// Reader reads what the cache does not hold: ConfigMaps.
	Reader client.Reader
	// Copies reads the ConfigMaps the operator copied for hub templates from a cache that
	// holds only those; nil reads them through Reader.
	Copies   client.Reader
	Scheme   *runtime.Scheme
	Clock    clock.PassiveClock
	Recorder events.EventRecorder
	// Events writes the events of a rollout's transitions, with TALM's reasons and
	// annotations (pkg/talm, pkg/emitter); nil writes none.
	Events  *emitter.Emitter
	Metrics *metrics.Recorder
	// MaxClustersInProgress caps the clusters under remediation across every
	// ClusterGroupUpgrade; zero means no cap.
	MaxClustersInProgress int
	// Unserved are the optional APIs the hub does not serve (hubapi.Optional): a rollout
	// asking for a feature that needs one is not Validated (HubAPINotServed), and nothing
	// watches or lists them.
	Unserved hubapi.Unserved
	// Graphs fetches update graphs for the y-stream upgrade checks, from UpdateService
	// unless the rollout or the cluster names another update service.
	Graphs        *updateservice.Client
	UpdateService string
	// SpokeImage is the image of the spoke program the health check and precache Jobs run.
	SpokeImage string
	// MaxConcurrentPrecaching caps the clusters pre-caching at once across every
	// ClusterGroupUpgrade; zero means no cap.
	MaxConcurrentPrecaching int
	// PrecacheTimeout bounds each cluster's precache Job.
	PrecacheTimeout time.Duration
	// Unresolved remembers which replicas hold an unresolved hub template, so that the
	// replicas of a policy are read at most once a minute (preview.UnresolvedCache); nil
	// reads them on every pass.
	Unresolved *preview.UnresolvedCache
	// Releases remembers the replicas of intermediate policies the hub showed released from
	// the clusters past them, so that each is read once it is (policies.Releases); nil reads
	// them on every pass.
	Releases *policies.Releases
	// Compliance remembers each managed root policy's compliance per cluster for the
	// resourceVersion read, so that a pass rebuilds only the maps of the policies whose
	// status changed (preview.ComplianceCache); nil rebuilds them all on every pass.
	Compliance *preview.ComplianceCache
	// Alertmanager is where spec.silenceAlerts silences upgrading clusters' alerts.
	Alertmanager Alertmanager
	// DefaultEnforcement is how a rollout without spec.enforcement enforces its policies
	// (the operator resolves --default-enforcement at start); empty is Copy.
	DefaultEnforcement ranv1alpha1.EnforcementMode
	// PolicyNamespaces are the namespaces whose managed policies a rollout may enforce;
	// empty allows every namespace (TALM). A rollout naming a policy found only elsewhere
	// is not Validated (PolicyNamespaceNotAllowed) and never starts.
	PolicyNamespaces []string
	// Tenancy are the tenancy rules (docs/reliability.md): where they apply, a rollout
	// selects only clusters of the cluster sets bound to its namespace, enforces only its
	// namespace's policies, writes only label keys under a prefix, and the operator binds
	// no cluster set for it.
	Tenancy tenancy.Rules

	// expect remembers the reconciler's own last writes until the cache shows them.
	expect expectations
}

// Least privilege (docs/reliability.md): reads of cached kinds go through informers, which
// need list and watch only; get is granted where the API reader reads one object.
// +kubebuilder:rbac:groups=ran.openshift.io,resources=clustergroupupgrades,verbs=list;watch;patch
// +kubebuilder:rbac:groups=ran.openshift.io,resources=clustergroupupgrades/status,verbs=update
// +kubebuilder:rbac:groups=ran.openshift.io,resources=clustergroupupgrades/finalizers,verbs=update
// +kubebuilder:rbac:groups=ran.openshift.io,resources=clustergroupupgradebatches,verbs=list;watch;create;delete
// +kubebuilder:rbac:groups=ran.openshift.io,resources=clustergroupupgradebatches/status,verbs=update
// +kubebuilder:rbac:groups=policy.open-cluster-management.io,resources=policies;placementbindings,verbs=list;watch;create;patch;delete
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placements,verbs=list;watch;create;patch;delete
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=placementdecisions,verbs=list;watch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=list;watch;patch
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersetbindings,verbs=list;watch;create
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersets/bind,verbs=create
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclustersets,verbs=list;watch
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworkreplicasets,verbs=list;watch
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=ran.openshift.io,resources=precachingconfigs,verbs=list;watch
// +kubebuilder:rbac:groups=ran.openshift.io,resources=fleetfreezes,verbs=list;watch
// +kubebuilder:rbac:groups=view.open-cluster-management.io,resources=managedclusterviews,verbs=list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=action.open-cluster-management.io,resources=managedclusteractions,verbs=list;watch;create;patch;delete

// Reconcile runs one pass over a ClusterGroupUpgrade (reconcile). An error met because the
// manager is stopping (its context canceled) is not an error of the rollout: the pass is
// run again by the next leader, from what is stored.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := r.reconcile(ctx, req)
	if err != nil && ctx.Err() != nil {
		ctrl.LoggerFrom(ctx).V(1).Info("Stopped during a reconcile", "error", err)
		return ctrl.Result{}, nil
	}
	return res, err
}

// reconcile runs the steps of a ClusterGroupUpgrade and writes its status once.
func (r *Reconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	upgrade := &ranv1alpha1.ClusterGroupUpgrade{}
	if err := r.Client.Get(ctx, req.NamespacedName, upgrade); err != nil {
		if apierrors.IsNotFound(err) {
			r.Metrics.Forget(req.String())
			r.Releases.Forget(ownership.Owner{Namespace: req.Namespace, Name: req.Name})
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("clustergroupupgrade", klog.KObj(upgrade)))
	if !upgrade.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, upgrade)
	}
	if !controllerutil.ContainsFinalizer(upgrade, Finalizer) {
		patch := client.MergeFrom(upgrade.DeepCopy())
		controllerutil.AddFinalizer(upgrade, Finalizer)
		if err := r.Client.Patch(ctx, upgrade, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
		r.Events.Emit(upgrade, talm.Created(upgrade.Name))
	}

	s := newScope(upgrade, r.Clock.Now(), ctrl.LoggerFrom(ctx))
	if err := r.runPhases(ctx, s, r.phases(s)); err != nil {
		return r.failure(ctx, s, err)
	}
	if s.wait != nil {
		s.log.V(1).Info("Waiting", "for", s.wait.reason, "requeueAfter", s.wait.after)
		return ctrl.Result{RequeueAfter: s.wait.after}, nil
	}
	deferred, err := r.patchStatus(ctx, s)
	if err != nil {
		if apierrors.IsConflict(err) {
			return r.conflict(s, err)
		}
		r.Metrics.RemediationError(metrics.OperationStatus)
		return ctrl.Result{}, err
	}
	if !deferred {
		// A failure here is not written to the status, which already records the pass: the
		// event says it, the pass is retried, and the rollout's cleanup removes what is left.
		if err := r.applySettled(ctx, s); err != nil {
			r.failed(s, err)
			return ctrl.Result{}, err
		}
	}
	r.emitEvents(s)
	r.logTransitions(s)
	r.Metrics.Upgrade(req.String(), &upgrade.Status)
	res := s.result()
	s.log.V(1).Info("Reconciled", "state", upgrade.Status.State, "requeueAfter", res.RequeueAfter)
	return res, nil
}

// phases are the steps of a reconcile, in order: gather (readers only, filling cgu.Facts),
// decide (cgu.Decide, pure), apply (every write to the hub, from cgu.Intents); the status is
// written last, once. A rollout that completed before this pass gathers nothing: the
// decision settles it (its objects deleted unless afterCompletion.deleteObjects is false).
func (r *Reconciler) phases(s *scope) []func(context.Context, *scope) error {
	settled := s.before.State == ranv1alpha1.StateCompleted && s.before.StartedAt != nil
	var gather []func(context.Context, *scope) error
	if !settled {
		gather = r.gatherer().steps()
	}
	return slices.Concat(gather, []func(context.Context, *scope) error{r.decide}, r.applySteps())
}

// decide lets pkg/cgu decide from the gathered facts.
func (r *Reconciler) decide(_ context.Context, s *scope) error {
	s.in = cgu.Decide(s.facts, cgu.Config{MaxConcurrentPrecaching: r.MaxConcurrentPrecaching,
		MaxClustersInProgress: r.MaxClustersInProgress, SpokeImage: r.SpokeImage, DefaultEnforcement: r.DefaultEnforcement,
		Tenancy: r.Tenancy, Alertmanager: r.Alertmanager.URL}, s.now)
	s.decided, s.records = true, s.in.Records
	logDecision(s)
	return nil
}

// runPhases runs the phases until one ends the reconcile (a wait) or fails.
func (r *Reconciler) runPhases(ctx context.Context, s *scope, phases []func(context.Context, *scope) error) error {
	for _, phase := range phases {
		if s.done {
			return nil
		}
		if err := phase(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// failure ends a reconcile whose phase failed: the status says so (Reconciled=False, with
// the error), and the error goes back to the workqueue for a retry with back-off. A
// conflict with a newer version of an object is expected, not a failure.
func (r *Reconciler) failure(ctx context.Context, s *scope, err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		return r.conflict(s, err)
	}
	r.failed(s, err)
	if serr := r.patchFailure(ctx, s, err); serr != nil {
		return ctrl.Result{}, errors.Join(err, serr)
	}
	return ctrl.Result{}, err
}

// conflict ends a reconcile that wrote over a newer version of an object: the watch event of
// that version queues the ClusterGroupUpgrade again, and the timer is the fallback.
func (r *Reconciler) conflict(s *scope, err error) (ctrl.Result, error) {
	s.log.V(1).Info("Waiting", "for", "a newer version of an object to reach the cache", "conflict", err)
	return ctrl.Result{RequeueAfter: cacheLag}, nil
}

// finalize deletes every object the ClusterGroupUpgrade made, then lets it go. The
// Placements go in a later pass than their bindings (ownership.Cleaner.CleanupStep): the
// finalizer stays until then.
func (r *Reconciler) finalize(ctx context.Context, upgrade *ranv1alpha1.ClusterGroupUpgrade) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(upgrade, Finalizer) {
		return ctrl.Result{}, nil
	}
	owner := ownership.Owner{Namespace: upgrade.Namespace, Name: upgrade.Name}
	r.expireSilences(ctx, upgrade)
	_, held, err := r.cleaner().CleanupStep(ctx, owner)
	if err != nil {
		r.Metrics.RemediationError(metrics.OperationCleanup)
		return ctrl.Result{}, fmt.Errorf("deleting the objects of the rollout: %w", err)
	}
	if held {
		// The deletion of the bindings queues the rollout again; the timer is the fallback.
		return ctrl.Result{RequeueAfter: cacheLag}, nil
	}
	patch := client.MergeFrom(upgrade.DeepCopy())
	controllerutil.RemoveFinalizer(upgrade, Finalizer)
	// Gone already: an earlier pass removed the finalizer, and the cache had not shown it.
	if err := r.Client.Patch(ctx, upgrade, patch); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("removing finalizer: %w", err)
	}
	r.Metrics.Forget(client.ObjectKeyFromObject(upgrade).String())
	return ctrl.Result{}, nil
}

// result asks to be reconciled again when the decision wants to look again without a new
// fact (a soak ending, a batch deadline).
func (s *scope) result() ctrl.Result {
	var after time.Duration
	if wake := s.in.Decision.Wake; !wake.IsZero() {
		// One second past the wake time: status times are stored to the second.
		after = max(wake.Sub(s.now), 0) + time.Second
	}
	if s.flush > 0 && (after == 0 || s.flush < after) {
		after = s.flush // a deferred write falls due
	}
	return ctrl.Result{RequeueAfter: after}
}
