package upgradecheck

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cgu-operator/cgu-operator/tests/world/graphserver"
)

// BenchmarkJudgeFleet judges a z-stream target with a conditional risk on 10,000 clusters, as
// a reconcile of a rollout that has not started does.
func BenchmarkJudgeFleet(b *testing.B) {
	const clusters = 10_000
	cv := cluster("4.14.1", "stable-4.14", available("4.14.2"),
		conditionalUpdate("4.14.3", metav1.ConditionFalse, graphserver.AlwaysRisk("A")))
	targets := []Target{{Policy: "upgrade", Kind: KindClusterVersion, Version: "4.14.3"}}
	b.ReportAllocs()
	for b.Loop() {
		for range clusters {
			JudgeCluster(ClusterInput{Targets: targets, Cluster: cv, AcceptRisks: []string{"A"}})
		}
	}
}

// BenchmarkSummary bounds the status of 10,000 verdicts, a tenth of them held.
func BenchmarkSummary(b *testing.B) {
	const clusters = 10_000
	names := make([]string, clusters)
	verdicts := make(map[string]Verdict, clusters)
	for i := range clusters {
		names[i] = fmt.Sprintf("sno-%05d", i)
		v := Verdict{Outcome: Proceed, Reason: ReasonInAvailableUpdates, Message: "Update from 4.14.1 to 4.14.2 is in the cluster's available updates"}
		if i%10 == 0 {
			v = Verdict{Outcome: Hold, Reason: ReasonNotRecommended, Message: "Update from 4.14.1 to 4.14.3 is not recommended"}
		}
		verdicts[names[i]] = v
	}
	b.ReportAllocs()
	for b.Loop() {
		Summary(names, verdicts)
	}
}
