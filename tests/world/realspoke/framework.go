package realspoke

import (
	"context"
	"fmt"

	gktemplatesv1 "github.com/open-policy-agent/frameworks/constraint/pkg/apis/templates/v1"
	gktemplatesv1beta1 "github.com/open-policy-agent/frameworks/constraint/pkg/apis/templates/v1beta1"
	depclient "github.com/stolostron/kubernetes-dependency-watches/client"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"open-cluster-management.io/governance-policy-framework-addon/controllers/secretsync"
	"open-cluster-management.io/governance-policy-framework-addon/controllers/specsync"
	"open-cluster-management.io/governance-policy-framework-addon/controllers/statussync"
	"open-cluster-management.io/governance-policy-framework-addon/controllers/templatesync"
	"open-cluster-management.io/governance-policy-framework-addon/controllers/utils"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// syncRequestBuffer is the size of the channels on which spec-sync and status-sync ask each
// other for a reconcile, as in the addon.
const syncRequestBuffer = 100

// startFrameworkAddon wires the governance-policy-framework-addon as its main does when it runs
// on a managed cluster: a manager on the spoke with status-sync and template-sync, a manager
// on the hub's cluster namespace with spec-sync and secret-sync. Left out: the Gatekeeper
// constraint sync, the uninstall watcher, the addon lease and the health proxy.
func (s *Spoke) startFrameworkAddon(ctx context.Context) error {
	ns := s.opts.ClusterName
	managedCfg := clientConfig(s.cfg)
	managedOpts := s.managerOptions(addonSpokeCache(ns))
	// Template-sync lists ConstraintTemplates; uncached, the missing Gatekeeper CRD reads as
	// "not installed" instead of a cache that never syncs.
	managedOpts.Client.Cache = &client.CacheOptions{DisableFor: []client.Object{
		&gktemplatesv1.ConstraintTemplate{},
		&gktemplatesv1beta1.ConstraintTemplate{},
	}}
	managedMgr, err := ctrl.NewManager(managedCfg, managedOpts)
	if err != nil {
		return fmt.Errorf("creating the spoke manager: %w", err)
	}
	hubMgr, err := ctrl.NewManager(rest.CopyConfig(s.opts.HubConfig), s.managerOptions(addonHubCache(ns)))
	if err != nil {
		return fmt.Errorf("creating the hub manager: %w", err)
	}
	hubClientset, err := kubernetes.NewForConfig(s.opts.HubConfig)
	if err != nil {
		return fmt.Errorf("creating the hub clientset: %w", err)
	}
	managedClientset, err := kubernetes.NewForConfig(managedCfg)
	if err != nil {
		return fmt.Errorf("creating the spoke clientset: %w", err)
	}
	hubRecorder, err := s.eventRecorder(hubClientset, statussync.ControllerName)
	if err != nil {
		return fmt.Errorf("recording events on the hub: %w", err)
	}
	specRecorder, err := s.eventRecorder(managedClientset, specsync.ControllerName)
	if err != nil {
		return fmt.Errorf("recording events on the spoke: %w", err)
	}

	// Spec-sync and status-sync ask each other for reconciles over these channels when the hub
	// and the spoke copies of a policy disagree.
	specSyncRequests := make(chan event.GenericEvent, syncRequestBuffer)
	statusSyncRequests := make(chan event.GenericEvent, syncRequestBuffer)

	statusWatches, statusWatchEvents := depclient.NewControllerRuntimeSource()
	statusWatcher, err := depclient.New(managedCfg, statusWatches, &depclient.Options{
		EnableCache:             true,
		DisableInitialReconcile: true,
	})
	if err != nil {
		return fmt.Errorf("creating the status-sync dependency watcher: %w", err)
	}
	if err := s.startWatcher(ctx, "status-sync dependency watcher", statusWatcher); err != nil {
		return err
	}
	status := &statussync.PolicyReconciler{
		ClusterNamespaceOnHub: ns,
		HubClient:             hubMgr.GetClient(),
		HubRecorder:           hubRecorder,
		ManagedClient:         managedMgr.GetClient(),
		ManagedRecorder:       managedMgr.GetEventRecorder(statussync.ControllerName),
		DynamicWatcher:        statusWatcher,
		Scheme:                managedMgr.GetScheme(),
		ConcurrentReconciles:  concurrency,
		SpecSyncRequests:      specSyncRequests,
	}
	statusSyncSource := source.Channel(statusSyncRequests, &handler.EnqueueRequestForObject{})
	if err := status.SetupWithManager(managedMgr, statusSyncSource, statusWatchEvents); err != nil {
		return fmt.Errorf("setting up %s: %w", statussync.ControllerName, err)
	}

	templateWatches, templateWatchEvents := depclient.NewControllerRuntimeSource()
	templateWatcher, err := depclient.New(managedCfg, templateWatches, nil)
	if err != nil {
		return fmt.Errorf("creating the template-sync dependency watcher: %w", err)
	}
	if err := s.startWatcher(ctx, "template-sync dependency watcher", templateWatcher); err != nil {
		return err
	}
	templates := &templatesync.PolicyReconciler{
		Client:           managedMgr.GetClient(),
		DynamicWatcher:   templateWatcher,
		Scheme:           managedMgr.GetScheme(),
		Config:           managedMgr.GetConfig(),
		Recorder:         managedMgr.GetEventRecorder(templatesync.ControllerName),
		ClusterNamespace: ns,
		Clientset:        managedClientset,
		InstanceName:     instanceName(ns),
		// Gatekeeper is not installed on a spoke and its sync controller does not run.
		DisableGkSync:        true,
		ConcurrentReconciles: concurrency,
	}
	if err := templates.Setup(managedMgr, templateWatchEvents); err != nil {
		return fmt.Errorf("setting up %s: %w", templatesync.ControllerName, err)
	}

	spec := &specsync.PolicyReconciler{
		HubClient:            hubMgr.GetClient(),
		ManagedClient:        managedMgr.GetClient(),
		ManagedRecorder:      specRecorder,
		Scheme:               hubMgr.GetScheme(),
		TargetNamespace:      ns,
		ConcurrentReconciles: concurrency,
		StatusSyncRequests:   statusSyncRequests,
	}
	specSyncSource := source.Channel(specSyncRequests, &handler.EnqueueRequestForObject{})
	if err := spec.SetupWithManager(hubMgr, specSyncSource); err != nil {
		return fmt.Errorf("setting up %s: %w", specsync.ControllerName, err)
	}
	secrets := &secretsync.SecretReconciler{
		Client:               hubMgr.GetClient(),
		ManagedClient:        managedMgr.GetClient(),
		Scheme:               hubMgr.GetScheme(),
		TargetNamespace:      ns,
		ConcurrentReconciles: concurrency,
	}
	if err := secrets.SetupWithManager(hubMgr); err != nil {
		return fmt.Errorf("setting up %s: %w", secretsync.ControllerName, err)
	}

	s.startManager("framework-addon spoke manager", managedMgr)
	s.startManager("framework-addon hub manager", hubMgr)
	return nil
}

// addonSpokeCache limits the addon's spoke cache as the addon does: the cluster namespace,
// template CRDs only, compliance events only (slimmed), the encryption key Secret only.
func addonSpokeCache(ns string) cache.Options {
	complianceEvents := fields.AndSelectors(
		fields.OneTermEqualSelector("involvedObject.kind", "Policy"),
		fields.OneTermNotEqualSelector("reason", "PolicySpecSync"),
		fields.OneTermNotEqualSelector("reason", "PolicyTemplateSync"),
		fields.OneTermNotEqualSelector("reason", "PolicyStatusSync"),
	)
	return cache.Options{
		DefaultNamespaces: map[string]cache.Config{ns: {}},
		ByObject: map[client.Object]cache.ByObject{
			&apiextensionsv1.CustomResourceDefinition{}: {
				Label: labels.SelectorFromSet(labels.Set{utils.PolicyTypeLabel: "template"}),
			},
			&corev1.Event{}: {
				Namespaces: map[string]cache.Config{ns: {
					FieldSelector: complianceEvents,
					Transform:     slimEvent,
				}},
			},
			&corev1.Secret{}: {
				Namespaces: map[string]cache.Config{ns: {
					FieldSelector: fields.OneTermEqualSelector("metadata.name", secretsync.SecretName),
				}},
			},
		},
	}
}

// addonHubCache limits the addon's hub cache to the cluster namespace and, of its Secrets, to
// the encryption key.
func addonHubCache(ns string) cache.Options {
	return cache.Options{
		DefaultNamespaces: map[string]cache.Config{ns: {}},
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {
				Namespaces: map[string]cache.Config{ns: {
					FieldSelector: fields.OneTermEqualSelector("metadata.name", secretsync.SecretName),
				}},
			},
		},
	}
}

// slimEvent keeps only the fields of an Event that status-sync reads.
func slimEvent(obj any) (any, error) {
	ev, ok := obj.(*corev1.Event)
	if !ok {
		return obj, nil
	}
	return &corev1.Event{
		TypeMeta: ev.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name:            ev.Name,
			Namespace:       ev.Namespace,
			UID:             ev.UID,
			ResourceVersion: ev.ResourceVersion,
		},
		InvolvedObject: ev.InvolvedObject,
		Reason:         ev.Reason,
		Message:        ev.Message,
		LastTimestamp:  ev.LastTimestamp,
	}, nil
}

// eventRecorder starts an event broadcaster to cs, which Stop shuts down, and returns a
// recorder reporting as controller.
func (s *Spoke) eventRecorder(cs kubernetes.Interface, controller string) (events.EventRecorder, error) {
	b := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	s.broadcasters = append(s.broadcasters, b)
	if err := b.StartRecordingToSinkWithContext(s.runCtx); err != nil {
		return nil, err
	}
	return b.NewRecorder(s.scheme, controller), nil
}

// startWatcher runs a dependency watcher until Stop and waits until it accepts watches.
func (s *Spoke) startWatcher(ctx context.Context, name string, w depclient.DynamicWatcher) error {
	started := w.Started()
	s.goRun(name, w.Start)
	if err := s.waitFor(ctx, started); err != nil {
		return fmt.Errorf("starting the %s: %w", name, err)
	}
	return nil
}

// instanceName stands for the controller pod's host name in the events the controllers write.
func instanceName(cluster string) string {
	return "realspoke-" + cluster
}
