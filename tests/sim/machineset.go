package sim

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// MachineSetGVK is the machine API's MachineSet, which scales a multi-node cluster's workers.
var MachineSetGVK = schema.GroupVersionKind{Group: "machine.openshift.io", Version: "v1beta1", Kind: "MachineSet"}

// MachineAPINamespace holds the MachineSets.
const MachineAPINamespace = "openshift-machine-api"

// The labels the machine API puts on a MachineSet's selector and machine template.
const (
	labelMachineSet  = "machine.openshift.io/cluster-api-machineset"
	labelMachineRole = "machine.openshift.io/cluster-api-machine-role"
)

// WorkerMachineSet is the name of a multi-node spoke's worker MachineSet.
func WorkerMachineSet(cluster string) string { return cluster + "-worker-0" }

// MachineBehaviour says how the simulated machine API brings machines up.
type MachineBehaviour struct {
	// ReadyAfter is how long a new machine takes to become a ready node; a removed one is
	// gone at once.
	ReadyAfter time.Duration
	// NeverReady makes new machines never become ready (no capacity in the cloud, a bad
	// image): the MachineSet reports them, not ready.
	NeverReady bool
}

// machineSets simulates the machine API of a multi-node spoke: one worker MachineSet of
// Workers machines (none on a single-node cluster). Its status follows spec.replicas as the
// machine-api operator's does: status.replicas at once (the machines are created or deleted),
// readyReplicas and availableReplicas once the new machines are ready (ReadyAfter from the
// first step that saw the scale-up), at once for a scale-down, never with NeverReady;
// observedGeneration once the status describes the spec's generation.
type machineSets struct {
	cluster   string
	workers   int
	behaviour MachineBehaviour
	// since is when the scale-up to pending replicas was first seen.
	pending int64
	since   time.Time
	// journal is what the worker MachineSet and pool went through (MachineSetJournal).
	journal []WorkerCapacity
}

// WorkerCapacity is the state of a spoke's worker MachineSet, with the rendered config the
// worker pool's machines run at the time: an entry of Simulator.MachineSetJournal.
type WorkerCapacity struct {
	Replicas, Ready int64
	WorkerConfig    string
}

func newMachineSets(spec SpokeSpec) *machineSets {
	return &machineSets{cluster: spec.Name, workers: spec.Workers, behaviour: spec.Machines}
}

// Step makes the worker MachineSet exist, then moves its status toward its spec; it asks to
// run again when new machines are due to be ready.
func (m *machineSets) Step(objects configpolicy.Store, now time.Time) (time.Duration, error) {
	if m.workers == 0 {
		return 0, nil
	}
	obj, err := objects.Get(MachineSetGVK, MachineAPINamespace, WorkerMachineSet(m.cluster))
	if errors.Is(err, configpolicy.ErrNotFound) {
		if err := m.create(objects); err != nil {
			return 0, err
		}
		m.note(objects, int64(m.workers), int64(m.workers))
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	want, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	ready, _, _ := unstructured.NestedInt64(obj.Object, "status", "readyReplicas")
	var again time.Duration
	switch {
	case want <= ready:
		ready, m.pending = want, 0
	case m.pending != want:
		m.pending, m.since = want, now
		again = m.readyIn(now)
	case !m.behaviour.NeverReady && !now.Before(m.since.Add(m.behaviour.ReadyAfter)):
		ready, m.pending = want, 0
	default:
		again = m.readyIn(now)
	}
	next := obj.DeepCopy()
	setMachineSetStatus(next, want, ready)
	m.note(objects, want, ready)
	if equality.Semantic.DeepEqual(next.Object, obj.Object) {
		return again, nil
	}
	if err := objects.Update(next); err != nil {
		return 0, fmt.Errorf("machine set %s: %w", next.GetName(), err)
	}
	return again, nil
}

// note journals the MachineSet's replicas and ready machines, with the worker pool's
// rendered config, when one of them changed.
func (m *machineSets) note(objects configpolicy.Store, replicas, ready int64) {
	e := WorkerCapacity{Replicas: replicas, Ready: ready}
	if pool, err := objects.Get(MachineConfigPoolGVK, "", PoolWorker); err == nil {
		e.WorkerConfig, _, _ = unstructured.NestedString(pool.Object, "status", "configuration", "name")
	}
	if n := len(m.journal); n == 0 || m.journal[n-1] != e {
		m.journal = append(m.journal, e)
	}
}

// MachineSetJournal returns what a multi-node spoke's worker MachineSet went through, in
// order: each change of its replicas, its ready machines or the worker pool's rendered
// config, as the simulator's steps saw them.
func (s *Simulator) MachineSetJournal(cluster string) ([]WorkerCapacity, error) {
	var out []WorkerCapacity
	err := s.readOperator(cluster, func(op Operator) bool {
		m, ok := op.(*machineSets)
		if ok {
			out = slices.Clone(m.journal)
		}
		return ok
	})
	return out, err
}

// readyIn is how long until the pending machines are ready; zero when they never are.
func (m *machineSets) readyIn(now time.Time) time.Duration {
	if m.behaviour.NeverReady {
		return 0
	}
	return max(m.since.Add(m.behaviour.ReadyAfter).Sub(now), time.Nanosecond)
}

// create makes the worker MachineSet, its namespace first, with every machine ready.
func (m *machineSets) create(objects configpolicy.Store) error {
	if _, err := objects.Get(configpolicy.NamespaceGVK, "", MachineAPINamespace); errors.Is(err, configpolicy.ErrNotFound) {
		ns := &unstructured.Unstructured{}
		ns.SetGroupVersionKind(configpolicy.NamespaceGVK)
		ns.SetName(MachineAPINamespace)
		if err := objects.Create(ns); err != nil {
			return err
		}
	}
	name := WorkerMachineSet(m.cluster)
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(MachineSetGVK)
	obj.SetNamespace(MachineAPINamespace)
	obj.SetName(name)
	obj.SetGeneration(1)
	obj.SetLabels(map[string]string{labelMachineRole: PoolWorker})
	_ = unstructured.SetNestedField(obj.Object, int64(m.workers), "spec", "replicas")
	_ = unstructured.SetNestedStringMap(obj.Object, map[string]string{labelMachineSet: name}, "spec", "selector", "matchLabels")
	_ = unstructured.SetNestedStringMap(obj.Object, map[string]string{labelMachineSet: name, labelMachineRole: PoolWorker},
		"spec", "template", "metadata", "labels")
	setMachineSetStatus(obj, int64(m.workers), int64(m.workers))
	return objects.Create(obj)
}

// setMachineSetStatus writes a MachineSet's status: want machines exist, ready of them ready.
func setMachineSetStatus(obj *unstructured.Unstructured, want, ready int64) {
	_ = unstructured.SetNestedField(obj.Object, want, "status", "replicas")
	_ = unstructured.SetNestedField(obj.Object, want, "status", "fullyLabeledReplicas")
	_ = unstructured.SetNestedField(obj.Object, ready, "status", "readyReplicas")
	_ = unstructured.SetNestedField(obj.Object, ready, "status", "availableReplicas")
	_ = unstructured.SetNestedField(obj.Object, obj.GetGeneration(), "status", "observedGeneration")
}
