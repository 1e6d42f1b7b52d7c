package realspoke

import (
	"context"
	"fmt"
	"math"
	"time"

	depclient "github.com/stolostron/kubernetes-dependency-watches/client"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	configpolicyv1 "open-cluster-management.io/config-policy-controller/api/v1"
	cpcontrollers "open-cluster-management.io/config-policy-controller/controllers"
	cpcommon "open-cluster-management.io/config-policy-controller/pkg/common"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

const (
	// ocmPolicyNamespace is where standalone users put ConfigurationPolicies; the controller
	// watches it besides the cluster namespace by default.
	ocmPolicyNamespace = "open-cluster-management-policies"
	// namespaceSelectorBuffer is the size of the channel on which the NamespaceSelector
	// reconciler asks for ConfigurationPolicy evaluations, as in the controller.
	namespaceSelectorBuffer = 20
	// includeTerminatingNamespaces is the controller's default for selecting terminating
	// namespaces; the NamespaceSelector reconciler refuses an empty value.
	includeTerminatingNamespaces = "IfMatch"
)

// startConfigPolicyController wires the config-policy-controller as its main does on a managed
// cluster with WATCH_NAMESPACE set to the cluster namespace: one manager on the spoke with the
// NamespaceSelector and ConfigurationPolicy reconcilers. Left out: the OperatorPolicy
// reconciler (off by default), standalone hub templates, the addon lease, the health checks.
func (s *Spoke) startConfigPolicyController(ctx context.Context) error {
	cfg := clientConfig(s.cfg)
	mgr, err := ctrl.NewManager(cfg, s.managerOptions(configPolicyCache(s.opts.ClusterName)))
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}

	nsSelectorRequests := make(chan event.GenericEvent, namespaceSelectorBuffer)
	nsSelector, err := cpcommon.NewNamespaceSelectorReconciler(
		mgr.GetClient(), nsSelectorRequests, includeTerminatingNamespaces,
	)
	if err != nil {
		return fmt.Errorf("creating the NamespaceSelector reconciler: %w", err)
	}
	if err := nsSelector.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the NamespaceSelector reconciler: %w", err)
	}

	objectWatches, objectWatchEvents := depclient.NewControllerRuntimeSource()
	objectWatcher, err := depclient.New(cfg, objectWatches, &depclient.Options{
		DisableInitialReconcile: true,
		EnableCache:             true,
	})
	if err != nil {
		return fmt.Errorf("creating the object-templates dependency watcher: %w", err)
	}
	if err := s.startWatcher(ctx, "object-templates dependency watcher", objectWatcher); err != nil {
		return err
	}

	targetClientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating the target clientset: %w", err)
	}
	targetDynamic, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating the target dynamic client: %w", err)
	}
	backoff := wholeSeconds(s.opts.EvaluationBackoff)
	reconciler := &cpcontrollers.ConfigurationPolicyReconciler{
		Client:                 mgr.GetClient(),
		DecryptionConcurrency:  5,
		DynamicWatcher:         objectWatcher,
		Scheme:                 mgr.GetScheme(),
		Recorder:               mgr.GetEventRecorder(cpcontrollers.ControllerName),
		InstanceName:           instanceName(s.opts.ClusterName),
		TargetK8sClient:        targetClientset,
		TargetK8sDynamicClient: targetDynamic,
		SelectorReconciler:     &nsSelector,
		EnableMetrics:          true,
		EvalBackoffSeconds:     backoff,
		ItemLimiters:           cpcontrollers.NewPerItemRateLimiter[reconcile.Request](backoff, 1),
		ClusterName:            s.opts.ClusterName,
	}
	nsSelectorSource := source.Channel(nsSelectorRequests, &handler.EnqueueRequestForObject{})
	if err := reconciler.SetupWithManager(mgr, concurrency, objectWatchEvents, nsSelectorSource); err != nil {
		return fmt.Errorf("setting up %s: %w", cpcontrollers.ControllerName, err)
	}

	s.startManager("config-policy-controller manager", mgr)
	return nil
}

// configPolicyCache limits the controller's cache as it does with WATCH_NAMESPACE set:
// ConfigurationPolicies and Secrets of the watched namespaces, its own CRD only, slimmed
// Namespaces, and no periodic resync.
func configPolicyCache(ns string) cache.Options {
	watched := func() map[string]cache.Config {
		return map[string]cache.Config{ns: {}, ocmPolicyNamespace: {}}
	}
	noResync := time.Duration(0)
	return cache.Options{
		SyncPeriod: &noResync,
		ByObject: map[client.Object]cache.ByObject{
			&apiextensionsv1.CustomResourceDefinition{}: {
				Field: fields.OneTermEqualSelector("metadata.name", cpcontrollers.CRDName),
			},
			&corev1.Namespace{}:                   {Transform: slimNamespace},
			&configpolicyv1.ConfigurationPolicy{}: {Namespaces: watched()},
			&corev1.Secret{}:                      {Namespaces: watched()},
		},
	}
}

// wholeSeconds returns d in whole seconds, at least one, as the controller's backoff option.
func wholeSeconds(d time.Duration) uint32 {
	secs := int64(d / time.Second)
	switch {
	case secs < 1:
		return 1
	case secs > math.MaxUint32:
		return math.MaxUint32
	}
	return uint32(secs)
}

// slimNamespace keeps only the fields of a Namespace that namespace selection reads.
func slimNamespace(obj any) (any, error) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return obj, nil
	}
	return &corev1.Namespace{
		TypeMeta: ns.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name:              ns.Name,
			Labels:            ns.Labels,
			DeletionTimestamp: ns.DeletionTimestamp,
			ResourceVersion:   ns.ResourceVersion,
		},
	}, nil
}
