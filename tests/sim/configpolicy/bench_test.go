package configpolicy

import (
	"strings"
	"testing"
)

// BenchmarkEvaluateClusterVersionPolicy evaluates the two ConfigurationPolicies of a ClusterVersion
// upgrade policy (desired version, enforce; completed history, inform) on one simulated cluster,
// as a fleet simulation does for every spoke on every round.
func BenchmarkEvaluateClusterVersionPolicy(b *testing.B) {
	desired := configurationPolicy(b, "remediationAction: enforce\nobject-templates:"+desiredVersionTemplate)
	completed := configurationPolicy(b, "remediationAction: inform\nobject-templates:"+completedHistoryTemplate)
	prepared := []*Prepared{Prepare(desired), Prepare(completed)}

	upgrading := strings.Replace(clusterVersion, "desiredUpdate: {version: 4.16.10", "desiredUpdate: {version: 4.16.12", 1)
	upgrading = strings.Replace(upgrading, "  history:\n", "  history:\n  - {state: Partial, version: 4.16.12, "+
		"image: \"quay.io/openshift-release-dev/ocp-release@sha256:ccc\", startedTime: \"2025-11-21T12:00:00Z\", "+
		"completionTime: null, verified: true}\n", 1)
	done := strings.Replace(upgrading, "state: Partial", "state: Completed", 1)

	states := map[string]string{"upgrading": upgrading, "completed": done}

	for state, cv := range states {
		store := newTestStore(b, objects(b, cv))

		b.Run(state+"/prepared", func(b *testing.B) {
			b.ReportAllocs()

			for b.Loop() {
				for _, p := range prepared {
					if res := p.Evaluate(store, testNow); res.Err != nil {
						b.Fatal(res.Err)
					}
				}
			}
		})

		b.Run(state+"/typed", func(b *testing.B) {
			b.ReportAllocs()

			for b.Loop() {
				Evaluate(desired, store, testNow)
				Evaluate(completed, store, testNow)
			}
		})
	}
}
