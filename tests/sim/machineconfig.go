package sim

import (
	"errors"
	"fmt"
	"slices"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// MachineConfigPoolGVK is the machine-config operator's MachineConfigPool.
var MachineConfigPoolGVK = schema.GroupVersionKind{Group: "machineconfiguration.openshift.io", Version: "v1", Kind: "MachineConfigPool"}

// The pools every OpenShift cluster has, single-node ones included (whose worker pool has no
// machines).
const (
	PoolMaster = "master"
	PoolWorker = "worker"
)

// ClaimControlPlaneTopology is the cluster claim the klusterlet reports of an OpenShift
// cluster's Infrastructure status.controlPlaneTopology: SingleReplica for a single-node
// cluster, HighlyAvailable for three control-plane nodes.
const ClaimControlPlaneTopology = "controlplanetopology.openshift.io"

// The values of ClaimControlPlaneTopology.
const (
	TopologySingleReplica   = "SingleReplica"
	TopologyHighlyAvailable = "HighlyAvailable"
)

// Topology is the control-plane topology a spoke's claim reports: SingleReplica without
// workers, HighlyAvailable with.
func Topology(spec SpokeSpec) string {
	if spec.Workers > 0 {
		return TopologyHighlyAvailable
	}
	return TopologySingleReplica
}

// RenderedConfig is the name of the rendered MachineConfig a pool's machines run for a
// release: the machine-config operator renders one per pool and release.
func RenderedConfig(pool, version string) string { return "rendered-" + pool + "-" + version }

// machineConfigPools simulates the machine-config operator's pools of a spoke: the master
// pool and a worker pool of Workers machines (none on a single-node cluster). A pool that is
// not paused moves its machines to the rendered config of the release the cluster runs
// (the newest Completed entry of the ClusterVersion's history) once the update completed,
// and reports Updated; a paused pool keeps the config it has, Updated=False while it
// differs from the release's, and moves when unpaused. Each
// pool's configs are recorded in order (Simulator.PoolConfigs), which a real cluster keeps
// only in its machines' annotations.
type machineConfigPools struct {
	workers int
	// configs are the rendered configs each pool's machines went through, in order.
	configs map[string][]string
	// seen are the resourceVersions of the ClusterVersion and the pools the last step
	// left: a step that finds them unchanged has nothing to do.
	seen [3]string
}

func newMachineConfigPools(spec SpokeSpec) *machineConfigPools {
	return &machineConfigPools{workers: spec.Workers, configs: map[string][]string{}}
}

// Step makes the pools exist, then moves each one that is not paused to the running
// release's rendered config.
func (m *machineConfigPools) Step(objects configpolicy.Store, _ time.Time) (time.Duration, error) {
	if m.seen[0] != "" && m.seen == m.versions(objects) {
		return 0, nil
	}
	cv, err := getClusterVersion(objects)
	if err != nil {
		return 0, err
	}
	version := completedVersion(cv)
	if version == "" {
		return 0, nil
	}
	for _, pool := range []string{PoolMaster, PoolWorker} {
		if err := m.stepPool(objects, pool, version); err != nil {
			return 0, fmt.Errorf("machine config pool %s: %w", pool, err)
		}
	}
	m.seen = m.versions(objects)
	return 0, nil
}

// versions are the resourceVersions of the ClusterVersion and the pools ("" for one missing).
func (m *machineConfigPools) versions(objects configpolicy.Store) [3]string {
	var out [3]string
	for i, key := range []struct {
		gvk  schema.GroupVersionKind
		name string
	}{{clusterVersionGVK, "version"}, {MachineConfigPoolGVK, PoolMaster}, {MachineConfigPoolGVK, PoolWorker}} {
		if obj, err := objects.Get(key.gvk, "", key.name); err == nil {
			out[i] = obj.GetResourceVersion()
		}
	}
	return out
}

func (m *machineConfigPools) stepPool(objects configpolicy.Store, pool, version string) error {
	want := RenderedConfig(pool, version)
	obj, err := objects.Get(MachineConfigPoolGVK, "", pool)
	if errors.Is(err, configpolicy.ErrNotFound) {
		m.configs[pool] = []string{want}
		obj = &unstructured.Unstructured{}
		obj.SetGroupVersionKind(MachineConfigPoolGVK)
		obj.SetName(pool)
		_ = unstructured.SetNestedField(obj.Object, false, "spec", "paused")
		m.setStatus(obj, pool, want, want)
		return objects.Create(obj)
	}
	if err != nil {
		return err
	}
	current, _, _ := unstructured.NestedString(obj.Object, "status", "configuration", "name")
	if paused, _, _ := unstructured.NestedBool(obj.Object, "spec", "paused"); !paused && current != want {
		m.configs[pool] = append(m.configs[pool], want)
		current = want
	}
	next := obj.DeepCopy()
	m.setStatus(next, pool, current, want)
	if equality.Semantic.DeepEqual(next.Object, obj.Object) {
		return nil
	}
	return objects.Update(next)
}

// setStatus writes a pool's status: its machines on the rendered config current, Updated
// once that is the release's (want), Updating while it moves there.
func (m *machineConfigPools) setStatus(obj *unstructured.Unstructured, pool, current, want string) {
	machines := int64(m.workers)
	if pool == PoolMaster {
		machines = 3
		if m.workers == 0 {
			machines = 1
		}
	}
	updated := current == want
	done := int64(0)
	if updated {
		done = machines
	}
	_ = unstructured.SetNestedField(obj.Object, current, "status", "configuration", "name")
	_ = unstructured.SetNestedField(obj.Object, machines, "status", "machineCount")
	_ = unstructured.SetNestedField(obj.Object, done, "status", "updatedMachineCount")
	_ = unstructured.SetNestedSlice(obj.Object, []any{
		poolCondition("Updated", updated), poolCondition("Updating", false),
	}, "status", "conditions")
}

func poolCondition(kind string, status bool) any {
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	return map[string]any{"type": kind, "status": string(s)}
}

// completedVersion is the newest release the ClusterVersion's history shows Completed.
func completedVersion(cv *configv1.ClusterVersion) string {
	for _, h := range cv.Status.History {
		if h.State == configv1.CompletedUpdate {
			return h.Version
		}
	}
	return ""
}

// PoolConfigs returns the rendered configs a spoke's pool went through, in order: a paused
// pool's machines skip the releases the cluster ran while it was paused.
func (s *Simulator) PoolConfigs(cluster, pool string) ([]string, error) {
	var out []string
	err := s.readOperator(cluster, func(op Operator) bool {
		m, ok := op.(*machineConfigPools)
		if ok {
			out = slices.Clone(m.configs[pool])
		}
		return ok
	})
	return out, err
}
