package operator

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	workv1 "open-cluster-management.io/api/work/v1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/controllers/clustergroupupgrade"
	"github.com/cgu-operator/cgu-operator/controllers/fleetfreeze"
	"github.com/cgu-operator/cgu-operator/controllers/imagebasedgroupupgrade"
	"github.com/cgu-operator/cgu-operator/controllers/managedclustersupgrade"
	orphanscontroller "github.com/cgu-operator/cgu-operator/controllers/orphans"
	"github.com/cgu-operator/cgu-operator/controllers/releasetrain"
	ztpcontroller "github.com/cgu-operator/cgu-operator/controllers/ztp"
	"github.com/cgu-operator/cgu-operator/pkg/emitter"
	"github.com/cgu-operator/cgu-operator/pkg/hubapi"
	"github.com/cgu-operator/cgu-operator/pkg/managedclusters"
	"github.com/cgu-operator/cgu-operator/pkg/metrics"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/policies"
	"github.com/cgu-operator/cgu-operator/pkg/preview"
	"github.com/cgu-operator/cgu-operator/pkg/updateservice"
	"github.com/cgu-operator/cgu-operator/pkg/watchdecode"
)

// LeaderElectionID names the lease replicas compete for.
const LeaderElectionID = "cgu-operator.ran.openshift.io"

// graphTimeout bounds a request to an update service: a reconcile waits for it.
const graphTimeout = 10 * time.Second

// NewScheme returns a scheme with every kind the operator reads or writes.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, ranv1alpha1.AddToScheme, lcmv1alpha1.AddToScheme, policyv1.AddToScheme,
		clusterv1.Install, clusterv1beta1.Install, clusterv1beta2.Install, workv1.Install, workv1alpha1.Install, viewv1beta1.AddToScheme,
		actionv1beta1.AddToScheme,
	} {
		utilruntime.Must(add(s))
	}
	return s
}

// cacheOptions keep the cache to what the operator needs: root policies only (the
// replicated copies in cluster namespaces are many and carry the root-policy label), the
// operator's own ManagedClusterViews, ManagedClusterActions, ManifestWorks,
// PlacementBindings and copied ConfigMaps (by the owner labels), and ManagedClusters as
// metadata (watched as such) and, for the ZTP controller, as typed objects trimmed to their
// metadata and status conditions (managedclusters.Trim). Placements are cached
// whole: a ClusterGroupUpgrade's spec.placementRef names one of the user's.
// Other ConfigMaps, and Secrets, are never cached: the client reads them directly. The
// optional kinds the hub does not serve are left out: the manager could not map them. The
// root policies' watch events are decoded by pkg/watchdecode (newInformer).
func cacheOptions(cfg *rest.Config, scheme *runtime.Scheme, unserved hubapi.Unserved) (cache.Options, error) {
	replicated, err := labels.NewRequirement(replicatedPolicyLabel, selection.DoesNotExist, nil)
	if err != nil {
		return cache.Options{}, err
	}
	owned, err := ownership.Made()
	if err != nil {
		return cache.Options{}, err
	}
	// No code reads managedFields: stripping them keeps every cached object smaller, and
	// the updates the operator sends from cached objects (an update without managedFields
	// leaves the stored ones as they are) about half as large.
	byObject := map[client.Object]cache.ByObject{
		&policyv1.Policy{}:           {Label: labels.NewSelector().Add(*replicated)},
		&clusterv1.ManagedCluster{}:  {Transform: managedclusters.Trim},
		&policyv1.PlacementBinding{}: {Label: owned},
		&corev1.ConfigMap{}:          {Label: owned},
	}
	for _, k := range ownership.Kinds {
		// The operator's views, actions and ManifestWorks, on a hub that serves them.
		if k.Needs != (hubapi.API{}) && !unserved.Missing(k.Needs) {
			byObject[k.Object] = cache.ByObject{Label: owned}
		}
	}
	opts := cache.Options{DefaultTransform: cache.TransformStripManagedFields(), ByObject: byObject}
	opts.NewInformer, err = newInformer(cfg, scheme, opts)
	return opts, err
}

// newInformer makes the cache's informers as controller-runtime does, but for the root
// policies' watch, whose events are decoded in one pass (pkg/watchdecode): each holds the
// compliance of every cluster the policy is placed on, and decoding them was a third of the
// operator's CPU in a rollout of 1,000 clusters (docs/benchmarks.md).
func newInformer(cfg *rest.Config, scheme *runtime.Scheme, opts cache.Options) (func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer, error) {
	roots, err := watchdecode.NewWatch[policyv1.Policy](cfg, scheme, policyv1.GroupVersion, "policies")
	if err != nil {
		return nil, err
	}
	var selector string
	for obj, by := range opts.ByObject {
		if _, ok := obj.(*policyv1.Policy); ok && by.Label != nil {
			selector = by.Label.String()
		}
	}
	return func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		if _, ok := obj.(*policyv1.Policy); ok {
			lw = &watchdecode.ListerWatcher[policyv1.Policy, *policyv1.Policy]{
				Lister: toolscache.ToListerWithContext(lw), Watches: roots, Selector: selector, Bookmarks: true}
		}
		return toolscache.NewSharedIndexInformer(lw, obj, resync, indexers)
	}, nil
}

// replicatedPolicyLabel marks the policies the propagator replicates into cluster
// namespaces.
const replicatedPolicyLabel = "policy.open-cluster-management.io/root-policy"

// New checks that the hub serves the required APIs and returns a manager with the
// operator's controllers registered, ready to Start.
func New(cfg *rest.Config, opts Options) (manager.Manager, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("invalid options: %w", err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = opts.QPS, opts.Burst

	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating discovery client: %w", err)
	}
	if err := hubapi.CheckRequired(dc); err != nil {
		return nil, err
	}
	missing, err := hubapi.Missing(dc, hubapi.Optional)
	if err != nil {
		return nil, err
	}
	enforcement, err := defaultEnforcement(dc, opts.DefaultEnforcement)
	if err != nil {
		return nil, err
	}

	metrics := metricsserver.Options{BindAddress: opts.MetricsAddr, SecureServing: opts.SecureMetrics}
	if opts.SecureMetrics {
		metrics.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	shutdown := opts.GracefulShutdown
	unserved := hubapi.UnservedOf(missing)
	scheme := NewScheme()
	cacheOpts, err := cacheOptions(cfg, scheme, unserved)
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Cache:                         cacheOpts,
		Client:                        client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}}}},
		Metrics:                       metrics,
		HealthProbeBindAddress:        opts.ProbeAddr,
		LeaderElection:                opts.LeaderElect,
		LeaderElectionID:              LeaderElectionID,
		LeaderElectionNamespace:       opts.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 positive(opts.LeaseDuration),
		RenewDeadline:                 positive(opts.RenewDeadline),
		RetryPeriod:                   positive(opts.RetryPeriod),
		GracefulShutdownTimeout:       &shutdown,
		Controller:                    ctrlconfig.Controller{MaxConcurrentReconciles: opts.Workers, SkipNameValidation: &opts.SkipNameValidation},
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding readiness check: %w", err)
	}
	for _, api := range unserved.APIs() {
		mgr.GetLogger().Info("Optional API not served: the features that need it are off, and a rollout asking for one is not Validated (HubAPINotServed)",
			"api", api.String(), "features", optionalFeatures[api])
	}
	mgr.GetLogger().Info("Default enforcement", "mode", enforcement, "asked", opts.DefaultEnforcement)
	if opts.Tenancy {
		if unserved.SetBindings {
			return nil, fmt.Errorf("tenancy mode needs the hub to serve ManagedClusterSets and their bindings (cluster.open-cluster-management.io/v1beta2)")
		}
		rules := opts.TenancyRules()
		mgr.GetLogger().Info("Tenancy mode: rollouts reach the cluster sets bound to their namespace and its policies",
			"labelPrefix", rules.LabelPrefix, "exempt", rules.Exempt)
	}
	if err := setupControllers(mgr, opts, served{unserved: unserved, enforcement: enforcement}); err != nil {
		return nil, err
	}
	return mgr, nil
}

// startInformers registers, before the manager starts, the informers of what the operator
// reads without watching: the objects it writes to enforce policies, the cluster set
// bindings it checks, and its ConfigMap copies. They then sync with the manager's cache,
// and no list reaches the API server once the rollouts run.
func startInformers(mgr manager.Manager, unserved hubapi.Unserved, tenancy bool) error {
	objects := []client.Object{&clusterv1beta1.Placement{}, &policyv1.PlacementBinding{}, &corev1.ConfigMap{}}
	if !unserved.SetBindings {
		objects = append(objects, &clusterv1beta2.ManagedClusterSetBinding{})
	}
	if tenancy { // the cluster sets bound to a namespace tell what its rollouts reach
		objects = append(objects, &clusterv1beta2.ManagedClusterSet{})
	}
	for _, o := range objects {
		if _, err := mgr.GetCache().GetInformer(context.Background(), o); err != nil {
			return fmt.Errorf("registering the informer of %T: %w", o, err)
		}
	}
	return nil
}

// positive returns a pointer to d, or nil (the default) when d is not positive.
func positive(d time.Duration) *time.Duration {
	if d <= 0 {
		return nil
	}
	return &d
}

// optionalFeatures says, for the start-up log, what each optional API is for.
var optionalFeatures = map[hubapi.API]string{
	hubapi.Views:         "pre-caching, upgrade checks, health checks, InstallPlan approval",
	hubapi.Actions:       "pre-caching, health checks, InstallPlan approval",
	hubapi.Works:         "manifestWorkTemplates, pre- and post-upgrade actions",
	hubapi.WorkTemplates: "manifestWorkTemplates, pre- and post-upgrade actions",
	hubapi.SetBindings:   "binding the global cluster set to a CGU's namespace in Copy mode (bind a cluster set there yourself)",
}

// served says which optional APIs the hub does not serve, and the enforcement mode its
// PlacementBindings allow by default.
type served struct {
	unserved    hubapi.Unserved
	enforcement ranv1alpha1.EnforcementMode
}

// defaultEnforcement resolves --default-enforcement: auto is Override when the hub's
// PlacementBinding API has binding overrides, Copy otherwise.
func defaultEnforcement(dc discovery.DiscoveryInterface, asked string) (ranv1alpha1.EnforcementMode, error) {
	if asked != "" && asked != EnforcementAuto {
		return ranv1alpha1.EnforcementMode(asked), nil
	}
	overrides, err := hubapi.BindingOverrides(dc)
	if err != nil {
		return "", err
	}
	if overrides {
		return ranv1alpha1.EnforcementOverride, nil
	}
	return ranv1alpha1.EnforcementCopy, nil
}

func setupControllers(mgr manager.Manager, opts Options, hub served) error {
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	recorder := mgr.GetEventRecorder("cgu-operator")
	events := emitter.New(mgr.GetClient(), metrics.Default().EventDropped)
	if err := mgr.Add(events); err != nil {
		return fmt.Errorf("adding the event emitter: %w", err)
	}
	graphs := &updateservice.Client{HTTP: &http.Client{Timeout: graphTimeout}, Clock: clk}
	r := &clustergroupupgrade.Reconciler{
		Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Scheme: mgr.GetScheme(), Clock: clk,
		Copies: mgr.GetCache(), Recorder: recorder, Events: events, Metrics: metrics.Default(),
		MaxClustersInProgress:   opts.MaxClustersInProgress,
		Unserved:                hub.unserved,
		Graphs:                  graphs,
		UpdateService:           opts.UpdateService,
		SpokeImage:              opts.SpokeImage,
		MaxConcurrentPrecaching: opts.MaxConcurrentPrecaching,
		PrecacheTimeout:         opts.PrecacheTimeout,
		PolicyNamespaces:        opts.PolicyNamespaces,
		DefaultEnforcement:      hub.enforcement,
		Tenancy:                 opts.TenancyRules(),
		Unresolved:              &preview.UnresolvedCache{Now: clk.Now},
		Releases:                &policies.Releases{},
		Compliance:              &preview.ComplianceCache{},
		Alertmanager:            alertmanager(opts),
	}
	if err := r.SetupWithManager(context.Background(), mgr); err != nil {
		return fmt.Errorf("setting up the ClusterGroupUpgrade controller: %w", err)
	}
	ib := &imagebasedgroupupgrade.Reconciler{
		Client: mgr.GetClient(), Scheme: mgr.GetScheme(), Clock: clk, Recorder: recorder, Unserved: hub.unserved,
		Tenancy: opts.TenancyRules(),
	}
	if err := ib.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the ImageBasedGroupUpgrade controller: %w", err)
	}
	mc := &managedclustersupgrade.Reconciler{
		Client: mgr.GetClient(), Scheme: mgr.GetScheme(), Clock: clk, Recorder: recorder, Unserved: hub.unserved,
		Graphs: graphs, UpdateService: opts.UpdateService,
	}
	if err := mc.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the ManagedClustersUpgrade controller: %w", err)
	}
	trains := &releasetrain.Reconciler{
		Client: mgr.GetClient(), Scheme: mgr.GetScheme(), Clock: clk, Recorder: recorder, Unserved: hub.unserved,
		Graphs: graphs, UpdateService: opts.UpdateService,
	}
	if err := trains.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the ReleaseTrain controller: %w", err)
	}
	freezes := &fleetfreeze.Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Clock: clk}
	if err := freezes.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the FleetFreeze controller: %w", err)
	}
	sweep := &orphanscontroller.Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Copies: mgr.GetCache(), Unserved: hub.unserved,
		Clock: clk}
	if err := sweep.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the orphan sweep: %w", err)
	}
	if err := startInformers(mgr, hub.unserved, opts.Tenancy); err != nil {
		return err
	}
	if opts.ZTP {
		z := &ztpcontroller.Reconciler{
			Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Scheme: mgr.GetScheme(), Clock: clk,
			Recorder: recorder, Settle: opts.ZTPSettle,
		}
		if err := z.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the ZTP controller: %w", err)
		}
	}
	return nil
}

// alertmanager is the Alertmanager the options name.
func alertmanager(opts Options) clustergroupupgrade.Alertmanager {
	am := clustergroupupgrade.Alertmanager{URL: opts.AlertmanagerURL}
	if ns, name, ok := strings.Cut(opts.AlertmanagerSecret, "/"); ok {
		am.SecretNamespace, am.SecretName = ns, name
	}
	return am
}
