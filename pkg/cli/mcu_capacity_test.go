package cli_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/cli"
)

// The worker capacity of a rollout's multi-node clusters is shown when the rollout adds some,
// and not otherwise.
func TestShowManagedClustersUpgradeWorkerCapacity(t *testing.T) {
	m := &ranv1alpha1.ManagedClustersUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "to-4.16"},
		Spec: ranv1alpha1.ManagedClustersUpgradeSpec{ClusterVersion: ranv1alpha1.MCUClusterVersion{Channel: "eus-4.16", Version: "4.16.12"}}}
	var without strings.Builder
	if err := cli.ShowManagedClustersUpgrade(&without, m); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(without.String(), "Worker capacity") {
		t.Errorf("a rollout adding no capacity shows it:\n%s", without.String())
	}
	m.Status.WorkerCapacity = &ranv1alpha1.CapacitySummary{Total: 4, Added: 2, NotReady: 1, Removed: 1}
	var with strings.Builder
	if err := cli.ShowManagedClustersUpgrade(&with, m); err != nil {
		t.Fatal(err)
	}
	want := "\nWorker capacity (multi-node clusters; not ready: upgraded without the new machines):\n" +
		"  TOTAL  ADDED  NOT READY  REMOVED\n" +
		"  4      2      1          1\n"
	if !strings.HasSuffix(with.String(), want) {
		t.Errorf("shown:\n%s\nwant it to end with:\n%s", with.String(), want)
	}
}
