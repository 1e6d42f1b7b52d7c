package world

import (
	"context"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	templates "github.com/stolostron/go-template-utils/v7/pkg/templates"
	k8sdepwatches "github.com/stolostron/kubernetes-dependency-watches/client"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	policysetctrl "open-cluster-management.io/governance-policy-propagator/controllers/policyset"
	propagatorctrl "open-cluster-management.io/governance-policy-propagator/controllers/propagator"
	rootpolicystatusctrl "open-cluster-management.io/governance-policy-propagator/controllers/rootpolicystatus"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// PropagatorOptions tune the in-process governance-policy-propagator. Zero values take the
// propagator's own defaults.
type PropagatorOptions struct {
	RootPolicyWorkers       uint16
	ReplicatedPolicyWorkers uint16
	RootStatusWorkers       uint16
	// QPS and Burst of its client; the propagator's own defaults are 200 and 400.
	QPS   float32
	Burst int
}

func (o PropagatorOptions) withDefaults() PropagatorOptions {
	if o.RootPolicyWorkers == 0 {
		o.RootPolicyWorkers = 2
	}
	if o.ReplicatedPolicyWorkers == 0 {
		o.ReplicatedPolicyWorkers = 10
	}
	if o.RootStatusWorkers == 0 {
		o.RootStatusWorkers = 5
	}
	if o.QPS == 0 {
		o.QPS, o.Burst = 200, 400
	}
	return o
}

// startPropagator runs the governance-policy-propagator's controllers in-process the way its
// own main does: root and replicated policy reconcilers with hub template resolution, root
// policy status, policy sets, the dependency watcher, the channel of replicated-policy updates
// and the PlacementBinding index. Webhooks, leader election, metrics, probes, policy
// automation and encryption-key rotation stay off. It returns when the manager has started;
// the manager runs until ctx is done, and wg tracks every goroutine it started.
func startPropagator(ctx context.Context, cfg *rest.Config, opts PropagatorOptions, log logr.Logger, wg *sync.WaitGroup) error {
	opts = opts.withDefaults()
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = opts.QPS, opts.Burst

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 NewScheme(),
		Logger:                 log,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
		Cache:                  propagatorCacheOptions(),
	})
	if err != nil {
		return fmt.Errorf("propagator manager: %w", err)
	}

	depWatcherReconciler, depWatcherSource := k8sdepwatches.NewControllerRuntimeSource()
	depWatcher, err := k8sdepwatches.New(cfg, depWatcherReconciler, nil)
	if err != nil {
		return fmt.Errorf("propagator dependency watcher: %w", err)
	}
	wg.Go(func() {
		if err := depWatcher.Start(ctx); err != nil && ctx.Err() == nil {
			log.Error(err, "Dependency watcher stopped")
		}
	})

	updates := make(chan event.GenericEvent, 1024)
	prop := propagatorctrl.Propagator{
		Client:                  mgr.GetClient(),
		Scheme:                  mgr.GetScheme(),
		Recorder:                mgr.GetEventRecorder(propagatorctrl.ControllerName),
		RootPolicyLocks:         &sync.Map{},
		ReplicatedPolicyUpdates: updates,
	}
	if err := setupPropagatorControllers(ctx, mgr, prop, opts); err != nil {
		return err
	}

	select {
	case <-depWatcher.Started():
	case <-ctx.Done():
		return ctx.Err()
	}

	templateResolver, templatesSource, err := templates.NewResolverWithCaching(ctx, cfg, templates.Config{
		AdditionalIndentation: 8,
		SkipBatchManagement:   true,
		StartDelim:            propagatorctrl.TemplateStartDelim,
		StopDelim:             propagatorctrl.TemplateStopDelim,
	})
	if err != nil {
		return fmt.Errorf("propagator template resolver: %w", err)
	}
	resolvers, saTemplatesSource := propagatorctrl.NewTemplateResolvers(ctx, mgr.GetConfig(), mgr.GetClient(), templateResolver, updates)
	wg.Go(resolvers.WaitForShutdown)

	replicated := &propagatorctrl.ReplicatedPolicyReconciler{
		Propagator:        prop,
		ResourceVersions:  &sync.Map{},
		DynamicWatcher:    depWatcher,
		TemplateResolvers: resolvers,
	}
	updatesSource := source.Channel(updates, &handler.EnqueueRequestForObject{})
	if err := replicated.SetupWithManager(mgr, opts.ReplicatedPolicyWorkers, depWatcherSource, updatesSource,
		templatesSource, saTemplatesSource, true); err != nil {
		return fmt.Errorf("replicated policy controller: %w", err)
	}
	return runManager(ctx, mgr, "propagator", log, wg)
}

func setupPropagatorControllers(ctx context.Context, mgr ctrl.Manager, prop propagatorctrl.Propagator, opts PropagatorOptions) error {
	if err := (&propagatorctrl.RootPolicyReconciler{Propagator: prop}).SetupWithManager(mgr, opts.RootPolicyWorkers); err != nil {
		return fmt.Errorf("root policy controller: %w", err)
	}
	if err := (&policysetctrl.PolicySetReconciler{
		Client: mgr.GetClient(), Scheme: mgr.GetScheme(), Recorder: mgr.GetEventRecorder(policysetctrl.ControllerName),
	}).SetupWithManager(mgr, true); err != nil {
		return fmt.Errorf("policy set controller: %w", err)
	}
	if err := (&rootpolicystatusctrl.RootPolicyStatusReconciler{
		Client: mgr.GetClient(), Scheme: mgr.GetScheme(), RootPolicyLocks: prop.RootPolicyLocks,
	}).SetupWithManager(mgr, opts.RootStatusWorkers, true); err != nil {
		return fmt.Errorf("root policy status controller: %w", err)
	}
	indexByPlacement := func(obj client.Object) []string {
		return []string{obj.(*policyv1.PlacementBinding).PlacementRef.Name}
	}
	if err := mgr.GetCache().IndexField(ctx, &policyv1.PlacementBinding{}, "placementRef.name", indexByPlacement); err != nil {
		return fmt.Errorf("placement binding index: %w", err)
	}
	return nil
}

// propagatorCacheOptions trims the propagator's cache as its main does: only the policy
// encryption key secret, ManagedClusters reduced to their names, no managed fields on
// policies.
func propagatorCacheOptions() cache.Options {
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Secret{}: {
			Field: fields.SelectorFromSet(fields.Set{"metadata.name": propagatorctrl.EncryptionKeySecret}),
		},
		&clusterv1.ManagedCluster{}: {Transform: func(obj any) (any, error) {
			gutted := &clusterv1.ManagedCluster{}
			gutted.SetName(obj.(*clusterv1.ManagedCluster).Name)
			return gutted, nil
		}},
		&policyv1.Policy{}: {Transform: func(obj any) (any, error) {
			p := obj.(*policyv1.Policy)
			delete(p.Annotations, "kubectl.kubernetes.io/last-applied-configuration")
			p.ManagedFields = nil
			return p, nil
		}},
	}}
}

// runManager starts mgr in the background and waits until its caches have synced.
func runManager(ctx context.Context, mgr ctrl.Manager, name string, log logr.Logger, wg *sync.WaitGroup) error {
	wg.Go(func() {
		if err := mgr.Start(ctx); err != nil {
			log.Error(err, "Manager stopped with an error", "manager", name)
		}
	})
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return fmt.Errorf("%s: caches did not sync", name)
	}
	return nil
}
