package badinput_test

import (
	"encoding/json"
	"testing"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// TestUndecodableSpecs shows why the API refuses some values its OpenAPI types alone would
// let through: the operator's typed cache could not decode them, and one such object in a
// list fails the whole list, so every ClusterGroupUpgrade of the hub would go unreconciled.
func TestUndecodableSpecs(t *testing.T) {
	for name, spec := range map[string]string{
		"a window duration that is no Go duration": `{"remediationStrategy":{"maxConcurrency":1},"maintenanceWindows":{"windows":[{"start":"22:00","duration":"forever"}]}}`,
		"a duration beyond int64 nanoseconds":      `{"remediationStrategy":{"maxConcurrency":1},"batchSoak":"99999999999h"}`,
		"a cluster deadline in days":               `{"remediationStrategy":{"maxConcurrency":1},"clusterProgressDeadline":"1d"}`,
		"maxFailures beyond int32":                 `{"remediationStrategy":{"maxConcurrency":1},"maxFailures":3000000000}`,
	} {
		list := `{"items":[{"metadata":{"name":"fine"},"spec":{"remediationStrategy":{"maxConcurrency":1}}},{"metadata":{"name":"hostile"},"spec":` + spec + `}]}`
		if err := json.Unmarshal([]byte(list), &ranv1alpha1.ClusterGroupUpgradeList{}); err == nil {
			t.Errorf("%s: decoded; the CEL rule refusing it may go", name)
		}
	}
}
