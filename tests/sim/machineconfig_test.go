package sim

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

func setPaused(t *testing.T, store configpolicy.Store, pool string, paused bool) {
	t.Helper()
	mutate(t, store, MachineConfigPoolGVK, "", pool, func(obj *unstructured.Unstructured) {
		if err := unstructured.SetNestedField(obj.Object, paused, "spec", "paused"); err != nil {
			t.Fatal(err)
		}
	})
}

func poolState(t *testing.T, store configpolicy.Store, pool string) (config string, updated string) {
	t.Helper()
	obj, err := store.Get(MachineConfigPoolGVK, "", pool)
	if err != nil {
		t.Fatal(err)
	}
	config, _, _ = unstructured.NestedString(obj.Object, "status", "configuration", "name")
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		if m := c.(map[string]any); m["type"] == "Updated" {
			updated, _ = m["status"].(string)
		}
	}
	return config, updated
}

// A paused worker pool keeps its machines on their config while the cluster takes two
// updates, and takes the second one's config once unpaused: the machines skip the first
// (OpenShift's EUS-to-EUS update). An unpaused pool follows each completed update.
func TestMachineConfigPoolsFollowCompletedUpdatesUnlessPaused(t *testing.T) {
	store := newSpokeStore(t, "4.14.30")
	cvo := &CVO{Cluster: "c1", Behaviour: Behaviour{Duration: time.Minute}}
	pools := newMachineConfigPools(SpokeSpec{Workers: 2})
	round(t, store, opsT0, cvo, pools)
	if config, updated := poolState(t, store, PoolWorker); config != RenderedConfig(PoolWorker, "4.14.30") || updated != "True" {
		t.Fatalf("worker pool at the start: %s Updated=%s", config, updated)
	}
	setPaused(t, store, PoolWorker, true)

	now := opsT0
	for _, version := range []string{"4.15.40", "4.16.10"} {
		askForUpdate(t, store, version)
		round(t, store, now, cvo, pools)
		now = now.Add(time.Minute)
		round(t, store, now, cvo, pools)
		round(t, store, now, cvo, pools)
		if got := completedVersion(storedClusterVersion(t, store)); got != version {
			t.Fatalf("cluster runs %s, want %s", got, version)
		}
		if config, updated := poolState(t, store, PoolMaster); config != RenderedConfig(PoolMaster, version) || updated != "True" {
			t.Errorf("master pool after %s: %s Updated=%s, want the release's config", version, config, updated)
		}
		if config, updated := poolState(t, store, PoolWorker); config != RenderedConfig(PoolWorker, "4.14.30") || updated != "False" {
			t.Errorf("paused worker pool after %s: %s Updated=%s, want its old config, not updated", version, config, updated)
		}
	}
	setPaused(t, store, PoolWorker, false)
	round(t, store, now, cvo, pools)
	if config, updated := poolState(t, store, PoolWorker); config != RenderedConfig(PoolWorker, "4.16.10") || updated != "True" {
		t.Errorf("unpaused worker pool: %s Updated=%s, want the running release's", config, updated)
	}
	want := []string{RenderedConfig(PoolWorker, "4.14.30"), RenderedConfig(PoolWorker, "4.16.10")}
	if got := pools.configs[PoolWorker]; !slices.Equal(got, want) {
		t.Errorf("worker pool went through %v, want %v", got, want)
	}
	if got := pools.configs[PoolMaster]; len(got) != 3 {
		t.Errorf("master pool went through %v, want each release", got)
	}
}

// A round in which nothing changed writes no pool.
func TestMachineConfigPoolsWriteNothingWhenNothingChanged(t *testing.T) {
	store := newSpokeStore(t, "4.14.30")
	pools := newMachineConfigPools(SpokeSpec{Workers: 2})
	round(t, store, opsT0, pools)
	before := map[string]string{}
	for _, pool := range []string{PoolMaster, PoolWorker} {
		obj, err := store.Get(MachineConfigPoolGVK, "", pool)
		if err != nil {
			t.Fatal(err)
		}
		before[pool] = obj.GetResourceVersion()
	}
	round(t, store, opsT0.Add(time.Minute), pools)
	for _, pool := range []string{PoolMaster, PoolWorker} {
		obj, err := store.Get(MachineConfigPoolGVK, "", pool)
		if err != nil {
			t.Fatal(err)
		}
		if obj.GetResourceVersion() != before[pool] {
			t.Errorf("pool %s written again: resourceVersion %s -> %s", pool, before[pool], obj.GetResourceVersion())
		}
	}
}
