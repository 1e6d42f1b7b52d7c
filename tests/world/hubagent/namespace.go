package hubagent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// FinalizeNamespace does for a Terminating namespace of a test apiserver what a cluster's
// namespace controller does, which envtest does not run: it deletes the namespace's objects
// of every namespaced resource that can be listed and deleted and, once none is left,
// removes the namespace's `kubernetes` finalizer, so that the namespace goes. It fails when
// the namespace is not being deleted or objects are left (one with a finalizer, say): call
// it again later, in an Eventually.
func FinalizeNamespace(ctx context.Context, cfg *rest.Config, name string) error {
	cfg = rest.CopyConfig(cfg)
	// Listing every kind draws deprecation warnings (v1 Endpoints), of no use here.
	cfg.WarningHandler = rest.NoWarnings{}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ns, err := kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if ns.DeletionTimestamp.IsZero() {
		return fmt.Errorf("namespace %s is not being deleted", name)
	}
	left, err := deleteContent(ctx, kube.Discovery(), dyn, name)
	if err != nil {
		return err
	}
	if left > 0 {
		return fmt.Errorf("namespace %s still holds %d objects", name, left)
	}
	ns.Spec.Finalizers = slices.DeleteFunc(ns.Spec.Finalizers, func(f corev1.FinalizerName) bool { return f == corev1.FinalizerKubernetes })
	_, err = kube.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
	return err
}

// deleteContent deletes the objects of a namespace and returns how many are left.
func deleteContent(ctx context.Context, disco discovery.DiscoveryInterface, dyn dynamic.Interface, namespace string) (int, error) {
	lists, err := discovery.ServerPreferredNamespacedResources(disco)
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return 0, err
	}
	left := 0
	var errs []error
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "deletecollection") {
				continue
			}
			objects := dyn.Resource(gv.WithResource(r.Name)).Namespace(namespace)
			if err := objects.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
				errs = append(errs, err)
				continue
			}
			remaining, err := objects.List(ctx, metav1.ListOptions{})
			if err != nil {
				errs = append(errs, err)
				continue
			}
			left += len(remaining.Items)
		}
	}
	return left, errors.Join(errs...)
}
