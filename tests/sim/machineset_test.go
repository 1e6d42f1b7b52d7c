package sim

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// machineSetCluster is the multi-node spoke of these tests.
const machineSetCluster = "c1"

// machineSetReplicas reads the worker MachineSet's spec.replicas, status.replicas and
// status.readyReplicas.
func machineSetReplicas(t *testing.T, store configpolicy.Store) (spec, made, ready int64) {
	t.Helper()
	obj, err := store.Get(MachineSetGVK, MachineAPINamespace, WorkerMachineSet(machineSetCluster))
	if err != nil {
		t.Fatal(err)
	}
	spec, _, _ = unstructured.NestedInt64(obj.Object, "spec", "replicas")
	made, _, _ = unstructured.NestedInt64(obj.Object, "status", "replicas")
	ready, _, _ = unstructured.NestedInt64(obj.Object, "status", "readyReplicas")
	return spec, made, ready
}

func scaleWorkers(t *testing.T, store configpolicy.Store, replicas int64) {
	t.Helper()
	mutate(t, store, MachineSetGVK, MachineAPINamespace, WorkerMachineSet(machineSetCluster), func(obj *unstructured.Unstructured) {
		if err := unstructured.SetNestedField(obj.Object, replicas, "spec", "replicas"); err != nil {
			t.Fatal(err)
		}
	})
}

// A multi-node spoke's worker MachineSet starts with its workers ready; a scale-up is ready
// ReadyAfter later (the step asks to run again then), a scale-down at once.
func TestMachineSetsScaleUpAfterReadyAfterAndDownAtOnce(t *testing.T) {
	store := newSpokeStore(t, "4.16.10")
	sets := newMachineSets(SpokeSpec{Name: machineSetCluster, Workers: 2, Machines: MachineBehaviour{ReadyAfter: 3 * time.Minute}})
	round(t, store, opsT0, sets)
	if spec, made, ready := machineSetReplicas(t, store); spec != 2 || made != 2 || ready != 2 {
		t.Fatalf("at the start: replicas %d, made %d, ready %d; want 2 of each", spec, made, ready)
	}

	scaleWorkers(t, store, 3)
	if again := round(t, store, opsT0.Add(time.Minute), sets); again != 3*time.Minute {
		t.Errorf("asks to run again in %v, want the machine's 3m", again)
	}
	if _, made, ready := machineSetReplicas(t, store); made != 3 || ready != 2 {
		t.Errorf("made %d, ready %d before the new machine is up; want 3 and 2", made, ready)
	}
	round(t, store, opsT0.Add(3*time.Minute), sets)
	if _, _, ready := machineSetReplicas(t, store); ready != 2 {
		t.Errorf("ready %d a minute before the new machine is up, want 2", ready)
	}
	round(t, store, opsT0.Add(4*time.Minute), sets)
	if _, _, ready := machineSetReplicas(t, store); ready != 3 {
		t.Errorf("ready %d once the new machine is up, want 3", ready)
	}

	scaleWorkers(t, store, 2)
	round(t, store, opsT0.Add(5*time.Minute), sets)
	if spec, made, ready := machineSetReplicas(t, store); spec != 2 || made != 2 || ready != 2 {
		t.Errorf("after the scale-down: replicas %d, made %d, ready %d; want 2 of each", spec, made, ready)
	}
	want := []WorkerCapacity{{Replicas: 2, Ready: 2}, {Replicas: 3, Ready: 2}, {Replicas: 3, Ready: 3}, {Replicas: 2, Ready: 2}}
	if !slices.Equal(sets.journal, want) {
		t.Errorf("journal %+v, want %+v", sets.journal, want)
	}
}

// Machines that never become ready stay not ready; a single-node spoke has no MachineSet.
func TestMachineSetsNeverReadyAndSingleNode(t *testing.T) {
	store := newSpokeStore(t, "4.16.10")
	sets := newMachineSets(SpokeSpec{Name: machineSetCluster, Workers: 2, Machines: MachineBehaviour{NeverReady: true}})
	round(t, store, opsT0, sets)
	scaleWorkers(t, store, 4)
	for _, after := range []time.Duration{time.Minute, time.Hour} {
		if again := round(t, store, opsT0.Add(after), sets); again != 0 {
			t.Errorf("asks to run again in %v for machines that never come up", again)
		}
	}
	if _, made, ready := machineSetReplicas(t, store); made != 4 || ready != 2 {
		t.Errorf("made %d, ready %d; want the 4 machines made, 2 ready", made, ready)
	}

	sno := newSpokeStore(t, "4.16.10")
	round(t, sno, opsT0, newMachineSets(SpokeSpec{Name: "sno"}))
	if objs, err := sno.List(MachineSetGVK, ""); err != nil || len(objs) != 0 {
		t.Errorf("a single-node spoke has MachineSets %v, %v", objs, err)
	}
}
