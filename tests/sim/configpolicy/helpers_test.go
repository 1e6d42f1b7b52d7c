package configpolicy

import (
	"io"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	configpolicyv1 "open-cluster-management.io/config-policy-controller/api/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/yaml"
)

var (
	testNow = time.Date(2025, 11, 21, 12, 0, 0, 0, time.UTC)

	configMapGVK      = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	widgetGVK         = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	clusterVersionGVK = schema.GroupVersionKind{Group: "config.openshift.io", Version: "v1", Kind: "ClusterVersion"}
	subscriptionGVK   = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "Subscription"}
	installPlanGVK    = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "InstallPlan"}
	machineSetGVK     = schema.GroupVersionKind{Group: "machine.openshift.io", Version: "v1beta1", Kind: "MachineSet"}
	poolGVK           = schema.GroupVersionKind{Group: "machineconfiguration.openshift.io", Version: "v1", Kind: "MachineConfigPool"}
)

// baseNamespaces are present in every test store.
var baseNamespaces = []string{
	`{apiVersion: v1, kind: Namespace, metadata: {name: default}}`,
	`{apiVersion: v1, kind: Namespace, metadata: {name: kube-system}}`,
	`{apiVersion: v1, kind: Namespace, metadata: {name: app-1, labels: {env: prod}}}`,
	`{apiVersion: v1, kind: Namespace, metadata: {name: app-2, labels: {env: prod}}}`,
	`{apiVersion: v1, kind: Namespace, metadata: {name: openshift-machine-api}}`,
}

func testMapper() *Mapper {
	m := NewMapper()
	m.Add(widgetGVK, "widgets", true)
	m.Add(subscriptionGVK, "subscriptions", true)
	m.Add(installPlanGVK, "installplans", true)
	m.Add(machineSetGVK, "machinesets", true)
	m.Add(poolGVK, "machineconfigpools", false)

	return m
}

// configurationPolicy builds the ConfigurationPolicy "p" in namespace "managed" from its spec.
func configurationPolicy(t testing.TB, specYAML string) *configpolicyv1.ConfigurationPolicy {
	t.Helper()

	var spec configpolicyv1.ConfigurationPolicySpec
	if err := yaml.UnmarshalStrict([]byte(specYAML), &spec); err != nil {
		t.Fatalf("Parsing policy spec: %v", err)
	}

	return &configpolicyv1.ConfigurationPolicy{
		TypeMeta: metav1.TypeMeta{
			APIVersion: configpolicyv1.GroupVersion.String(),
			Kind:       "ConfigurationPolicy",
		},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "managed", UID: "policy-uid"},
		Spec:       spec,
	}
}

// objects decodes YAML documents into objects, with integers as int64 like an API client.
func objects(t testing.TB, docs ...string) []*unstructured.Unstructured {
	t.Helper()

	out := make([]*unstructured.Unstructured, 0, len(docs))

	for _, doc := range docs {
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatalf("Converting object: %v", err)
		}

		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(js); err != nil {
			t.Fatalf("Decoding object: %v", err)
		}

		out = append(out, obj)
	}

	return out
}

// newTestStore returns a store with the base namespaces and the given objects.
func newTestStore(t testing.TB, objs []*unstructured.Unstructured) *MapStore {
	t.Helper()

	s := NewMapStore(testMapper())

	for _, obj := range append(objects(t, baseNamespaces...), objs...) {
		if err := s.Create(obj); err != nil {
			t.Fatalf("Creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}

	return s
}

// getter reads an object from a store, nil when absent.
type getter func(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured

func storeGetter(s Store) getter {
	return func(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
		obj, err := s.Get(gvk, namespace, name)
		if err != nil {
			return nil
		}

		return obj
	}
}

func messagesOf(conditions []Condition) []string {
	out := make([]string, len(conditions))
	for i, c := range conditions {
		out[i] = c.Message
	}

	return out
}

func TestMain(m *testing.M) {
	// The real controller used as an oracle logs through klog.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	ctrl.SetLogger(logr.Discard())

	os.Exit(m.Run())
}
