package sim

import (
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// reactDelay is how soon an operator asks to run again after it changed an object that an
// operator stepped before it in the round reacts to (the managed-upgrade-operator writing the
// ClusterVersion spec for the cluster-version operator): a round steps each operator once, and
// the next round comes from enforcement or from the delays the operators return.
const reactDelay = time.Millisecond

// readOperator calls f on each operator of a spoke, with the spoke locked, until f reports it
// found the one it looks for.
func (s *Simulator) readOperator(cluster string, f func(Operator) bool) error {
	sp := s.spoke(cluster)
	if sp == nil {
		return fmt.Errorf("no simulated spoke %q", cluster)
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	for _, op := range sp.operators {
		if f(op) {
			return nil
		}
	}
	return fmt.Errorf("simulated spoke %q does not run the operator asked for", cluster)
}

// changeOperator is readOperator followed by a sync of the spoke, so that the change shows.
func (s *Simulator) changeOperator(cluster string, f func(Operator) bool) error {
	if err := s.readOperator(cluster, f); err != nil {
		return err
	}
	s.Poke(cluster)
	return nil
}

// decodeField decodes the field (for example "spec" or "status") of an object into out; an
// absent field leaves out as it is.
func decodeField(obj *unstructured.Unstructured, field string, out any) error {
	v, ok := obj.Object[field]
	if !ok || v == nil {
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%s of %s %s: %w", field, obj.GetKind(), obj.GetName(), err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s of %s %s: %w", field, obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

// toMap converts a typed value (a pointer to a struct) to its unstructured form.
func toMap(v any) (map[string]any, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v)
	if err != nil {
		return nil, fmt.Errorf("converting %T: %w", v, err)
	}
	return m, nil
}

// storeStatus stores status (a pointer to a struct) as the status of obj when it differs from
// the stored one, as a controller's status update does.
func storeStatus(objects configpolicy.Store, obj *unstructured.Unstructured, status any) error {
	m, err := toMap(status)
	if err != nil {
		return err
	}
	if equalJSON(obj.Object["status"], m) {
		return nil
	}
	updated := obj.DeepCopy()
	updated.Object["status"] = m
	if err := objects.Update(updated); err != nil {
		return fmt.Errorf("status of %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// ensureNamespaces creates the namespaces that do not exist yet.
func ensureNamespaces(objects configpolicy.Store, names ...string) error {
	for _, name := range names {
		if _, err := objects.Get(configpolicy.NamespaceGVK, "", name); err == nil {
			continue
		}
		ns := &unstructured.Unstructured{}
		ns.SetGroupVersionKind(configpolicy.NamespaceGVK)
		ns.SetName(name)
		if err := createIfMissing(objects, ns); err != nil {
			return err
		}
	}
	return nil
}

// createIfMissing creates obj unless an object of that name exists.
func createIfMissing(objects configpolicy.Store, obj *unstructured.Unstructured) error {
	if _, err := objects.Get(obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName()); err == nil {
		return nil
	}
	if err := objects.Create(obj); err != nil {
		return fmt.Errorf("creating %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// soonest returns the smaller of two positive delays, zero counting as none.
func soonest(a, b time.Duration) time.Duration {
	if a <= 0 || (b > 0 && b < a) {
		return b
	}
	return a
}
