package sim

import (
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// opsT0 is when the pure operator tests start.
var opsT0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// newSpokeStore returns a spoke's store holding only its ClusterVersion at version, installed
// at opsT0.
func newSpokeStore(t *testing.T, version string) *configpolicy.MapStore {
	t.Helper()
	store := configpolicy.NewMapStore(newMapper())
	cv, err := toUnstructured(NewClusterVersion(version, "stable-4.16", opsT0))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Create(cv); err != nil {
		t.Fatal(err)
	}
	return store
}

// round steps the operators in order at now, as one round of a spoke does, and returns the
// soonest delay they asked for.
func round(t *testing.T, store configpolicy.Store, now time.Time, ops ...Operator) time.Duration {
	t.Helper()
	var again time.Duration
	for _, op := range ops {
		a, err := op.Step(store, now)
		if err != nil {
			t.Fatalf("%T at %v: %v", op, now.Sub(opsT0), err)
		}
		again = soonest(again, a)
	}
	return again
}

func storedClusterVersion(t *testing.T, store configpolicy.Store) *configv1.ClusterVersion {
	t.Helper()
	cv, err := getClusterVersion(store)
	if err != nil {
		t.Fatal(err)
	}
	return cv
}

// mutate changes a stored object as a client would.
func mutate(t *testing.T, store configpolicy.Store, gvk schema.GroupVersionKind, namespace, name string,
	f func(*unstructured.Unstructured)) {
	t.Helper()
	obj, err := store.Get(gvk, namespace, name)
	if err != nil {
		t.Fatal(err)
	}
	obj = obj.DeepCopy()
	f(obj)
	if err := store.Update(obj); err != nil {
		t.Fatal(err)
	}
}

// askForUpdate sets the ClusterVersion's spec.desiredUpdate as an administrator would.
func askForUpdate(t *testing.T, store configpolicy.Store, version string) {
	t.Helper()
	mutate(t, store, clusterVersionGVK, "", "version", func(obj *unstructured.Unstructured) {
		if err := unstructured.SetNestedField(obj.Object, version, "spec", "desiredUpdate", "version"); err != nil {
			t.Fatal(err)
		}
	})
}

func storedClusterOperator(t *testing.T, store configpolicy.Store, name string) *configv1.ClusterOperator {
	t.Helper()
	obj, err := store.Get(clusterOperatorGVK, "", name)
	if err != nil {
		t.Fatal(err)
	}
	co := &configv1.ClusterOperator{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, co); err != nil {
		t.Fatal(err)
	}
	return co
}

func coCondition(co *configv1.ClusterOperator, t configv1.ClusterStatusConditionType) configv1.ClusterOperatorStatusCondition {
	for _, c := range co.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return configv1.ClusterOperatorStatusCondition{}
}

func nested(t *testing.T, obj *unstructured.Unstructured, fields ...string) string {
	t.Helper()
	v, _, err := unstructured.NestedFieldNoCopy(obj.Object, fields...)
	if err != nil {
		t.Fatal(err)
	}
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	t.Fatalf("%v of %s is %T, not a string", fields, obj.GetName(), v)
	return ""
}
