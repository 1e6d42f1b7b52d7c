// Package realspoke starts a real spoke cluster for end-to-end tests: its own kube-apiserver and
// etcd (envtest) with the governance spoke controllers running in this process against it and
// against a hub kube-apiserver.
//
// A spoke runs, with controller-runtime managers as the addon deployments would:
//
//   - the governance-policy-framework-addon's spec-sync and secret-sync (hub cluster namespace to
//     spoke), status-sync (spoke to the hub replicated policy's status, with history) and
//     template-sync (policy-templates to ConfigurationPolicy objects on the spoke);
//   - the config-policy-controller's ConfigurationPolicy and NamespaceSelector reconcilers.
//
// The spoke's cluster namespace has the managed cluster's name on both the hub and the spoke.
// Its ClusterVersion `version` reports the configured version as Completed, and the simulated
// cluster-version operator of tests/sim (sim.CVO) runs against it: it carries out a
// spec.desiredUpdate as Options.Behaviour says, writing status.history and the conditions
// through the status subresource.
//
// The controllers log through controller-runtime's global logger (ctrl.SetLogger) unless
// Options.Logger is set, and the dependency watchers through klog. Stop the spokes before their
// hub: their hub managers keep retrying a hub that is gone.
package realspoke

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/testenv"
)

const (
	// concurrency is both addons' default --evaluation-concurrency.
	concurrency = 2
	// clientQPS and clientBurst are both addons' default client limits.
	clientQPS   = 30
	clientBurst = 45
	// defaultEvaluationBackoff is how long the config-policy-controller waits before it evaluates
	// the same ConfigurationPolicy again (its --evaluation-backoff, 5 s by default in a cluster).
	defaultEvaluationBackoff = time.Second
	// runModeEnv, set to "local", keeps the OCM libraries from looking for their own Deployment
	// when the tests happen to run inside a pod.
	runModeEnv = "OSDK_FORCE_RUN_MODE"
)

// Options configures a spoke.
type Options struct {
	// HubConfig reaches the hub kube-apiserver. Required.
	HubConfig *rest.Config
	// ClusterName is the managed cluster's name, which is also its cluster namespace on the hub
	// (holding the replicated policies) and on the spoke. Required.
	ClusterName string
	// Version is the OpenShift version the spoke's ClusterVersion reports as installed. Required.
	Version string
	// Channel is the ClusterVersion's update channel; empty means stable-<major>.<minor>.
	Channel string
	// Image is the release image of Version; empty means the quay.io release image of Version.
	Image string
	// ClusterID is the ClusterVersion's spec.clusterID; empty means a random UUID.
	ClusterID string
	// EvaluationBackoff is the least time between two evaluations of one ConfigurationPolicy,
	// rounded down to whole seconds; zero means one second.
	EvaluationBackoff time.Duration
	// Logger is given to the managers; zero means controller-runtime's global logger named
	// after the cluster.
	Logger logr.Logger
	// Behaviour says how the simulated cluster-version operator carries out an update; the zero
	// value completes it at once.
	Behaviour sim.Behaviour
	// Updates is what the update service offers the cluster; nil offers nothing and lets the
	// cluster-version operator accept any version.
	Updates sim.UpdateSource
	// LifecycleAgent, when set, makes the spoke one for image-based upgrades: it runs Open
	// Cluster Management's work agent (ManifestWorks of the cluster namespace on the hub) and
	// the simulated lifecycle agent (tests/sim) with this behaviour on the ImageBasedUpgrade.
	LifecycleAgent *sim.LifecycleAgentBehaviour
	// Clock is the cluster-version operator's clock: the time it steps at and waits on before it
	// completes an update; nil means the real clock. With a fake clock, a retry after a failed
	// write also waits for the clock to be stepped.
	Clock clock.WithTicker
}

func (o *Options) validate() error {
	switch {
	case o.HubConfig == nil:
		return errors.New("realspoke: Options.HubConfig is required")
	case o.ClusterName == "":
		return errors.New("realspoke: Options.ClusterName is required")
	case o.Version == "":
		return errors.New("realspoke: Options.Version is required")
	}
	return nil
}

func (o *Options) setDefaults() {
	if o.EvaluationBackoff < time.Second {
		o.EvaluationBackoff = defaultEvaluationBackoff
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger.GetSink() == nil {
		o.Logger = ctrl.Log.WithName("realspoke").WithValues("cluster", o.ClusterName)
	}
}

// Spoke is a running spoke cluster. Stop it when done.
type Spoke struct {
	opts   Options
	env    *envtest.Environment
	cfg    *rest.Config
	scheme *runtime.Scheme
	client client.Client

	runCtx    context.Context
	cancelRun context.CancelFunc
	wg        sync.WaitGroup

	// broadcasters are the event broadcasters the addon's main would start by hand.
	broadcasters []events.EventBroadcaster
	managers     []manager.Manager

	errMu    sync.Mutex
	runErrs  []error
	failed   chan struct{}
	failOnce sync.Once

	stopOnce sync.Once
	stopErr  error

	// tempDirs hold files the spoke wrote (the work agent's hub kubeconfig).
	tempDirs []string
}

// Start starts a spoke: an envtest kube-apiserver with the spoke CRDs, the cluster namespace,
// the ClusterVersion `version`, the governance controllers connected to it and to the hub, and
// the simulated cluster-version operator. It returns once every manager runs with synced caches. ctx bounds the start only; the
// controllers run until Stop.
//
// Unless already set, Start sets OSDK_FORCE_RUN_MODE=local in the process environment, as
// running the controllers outside a cluster requires: inside a pod, the config-policy-controller
// would otherwise look for its own Deployment and fail every evaluation.
func Start(ctx context.Context, opts Options) (*Spoke, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts.setDefaults()
	if _, set := os.LookupEnv(runModeEnv); !set {
		if err := os.Setenv(runModeEnv, "local"); err != nil {
			return nil, fmt.Errorf("setting %s: %w", runModeEnv, err)
		}
	}

	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	crds, err := CRDs()
	if err != nil {
		return nil, err
	}
	env, cfg, err := testenv.Start(crds...)
	if err != nil {
		return nil, fmt.Errorf("starting the apiserver of spoke %s: %w", opts.ClusterName, err)
	}
	runCtx, cancel := context.WithCancel(logr.NewContext(context.WithoutCancel(ctx), opts.Logger))
	s := &Spoke{
		opts:      opts,
		env:       env,
		cfg:       cfg,
		scheme:    scheme,
		runCtx:    runCtx,
		cancelRun: cancel,
		failed:    make(chan struct{}),
	}
	if err := s.start(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("starting spoke %s: %w", opts.ClusterName, err), s.Stop())
	}
	return s, nil
}

func (s *Spoke) start(ctx context.Context) error {
	var err error
	s.client, err = client.New(s.cfg, client.Options{Scheme: s.scheme})
	if err != nil {
		return fmt.Errorf("creating the spoke client: %w", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.opts.ClusterName}}
	if err := s.client.Create(ctx, ns); err != nil {
		return fmt.Errorf("creating the cluster namespace: %w", err)
	}
	// The apiserver holds the first create of a kind for two seconds after its CRD became
	// established, so the ClusterVersion is created while the controllers start.
	cvCreated := make(chan error, 1)
	go func() { cvCreated <- createClusterVersion(ctx, s.client, &s.opts) }()
	err = s.startControllers(ctx)
	if err = errors.Join(err, <-cvCreated); err != nil {
		return err
	}
	// The cluster-version operator starts on a ClusterVersion that has its installed status.
	if err := s.startCVO(ctx); err != nil {
		return fmt.Errorf("cluster-version operator: %w", err)
	}
	if s.opts.LifecycleAgent == nil {
		return nil
	}
	if err := s.startWorkAgent(s.runCtx); err != nil {
		return fmt.Errorf("work agent: %w", err)
	}
	if err := s.startLifecycleAgent(ctx); err != nil {
		return fmt.Errorf("lifecycle agent: %w", err)
	}
	return nil
}

// startControllers starts the addons' controllers and waits until they run.
func (s *Spoke) startControllers(ctx context.Context) error {
	if err := s.startFrameworkAddon(ctx); err != nil {
		return fmt.Errorf("governance-policy-framework-addon: %w", err)
	}
	if err := s.startConfigPolicyController(ctx); err != nil {
		return fmt.Errorf("config-policy-controller: %w", err)
	}
	for _, mgr := range s.managers {
		if err := s.waitFor(ctx, mgr.Elected()); err != nil {
			return fmt.Errorf("waiting for the managers: %w", err)
		}
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return fmt.Errorf("waiting for the managers' caches: %w", ctx.Err())
		}
	}
	return nil
}

// Stop stops the controllers, waits for every goroutine the spoke started and then stops the
// apiserver. It returns the errors the controllers ended with, if any. It is safe to call
// more than once; later calls return the first call's result.
func (s *Spoke) Stop() error {
	s.stopOnce.Do(func() {
		// The controllers go first: an apiserver stopped under running clients takes minutes
		// to stop and can leave its processes behind.
		s.cancelRun()
		s.wg.Wait()
		for _, b := range s.broadcasters {
			b.Shutdown()
		}
		s.errMu.Lock()
		errs := append([]error(nil), s.runErrs...)
		s.errMu.Unlock()
		if err := testenv.Stop(s.env); err != nil {
			errs = append(errs, fmt.Errorf("stopping the apiserver of spoke %s: %w", s.opts.ClusterName, err))
		}
		if err := s.removeTempDirs(); err != nil {
			errs = append(errs, err)
		}
		s.stopErr = errors.Join(errs...)
	})
	return s.stopErr
}

// ClusterName returns the managed cluster's name, which is also its cluster namespace.
func (s *Spoke) ClusterName() string { return s.opts.ClusterName }

// Config returns a config to reach the spoke's kube-apiserver as an administrator.
func (s *Spoke) Config() *rest.Config { return rest.CopyConfig(s.cfg) }

// Client returns an uncached client of the spoke with the scheme of NewScheme.
func (s *Spoke) Client() client.Client { return s.client }

// goRun runs fn with the spoke's run context in a goroutine that Stop waits for. An error fn
// returns is kept for Stop and ends a Start still in progress.
func (s *Spoke) goRun(name string, fn func(ctx context.Context) error) {
	s.wg.Go(func() {
		if err := fn(s.runCtx); err != nil {
			s.errMu.Lock()
			s.runErrs = append(s.runErrs, fmt.Errorf("%s: %w", name, err))
			s.errMu.Unlock()
			s.failOnce.Do(func() { close(s.failed) })
		}
	})
}

// startManager runs mgr until Stop.
func (s *Spoke) startManager(name string, mgr manager.Manager) {
	s.managers = append(s.managers, mgr)
	s.goRun(name, mgr.Start)
}

// waitFor waits until ready is closed, a goroutine of the spoke fails or ctx ends.
func (s *Spoke) waitFor(ctx context.Context, ready <-chan struct{}) error {
	select {
	case <-ready:
		return nil
	case <-s.failed:
		s.errMu.Lock()
		defer s.errMu.Unlock()
		return errors.Join(s.runErrs...)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// managerOptions returns the manager options every spoke manager shares: no leader election,
// no metrics or probe servers, controller names that may repeat across spokes in one process.
func (s *Spoke) managerOptions(cacheOpts cache.Options) manager.Options {
	return manager.Options{
		Scheme:                 s.scheme,
		Logger:                 s.opts.Logger,
		Cache:                  cacheOpts,
		LeaderElection:         false,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	}
}

// clientConfig returns cfg with the addons' default client rate limits.
func clientConfig(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS = clientQPS
	cfg.Burst = clientBurst
	return cfg
}
