package cgu

import (
	"fmt"
	"testing"
	"time"

	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

// BenchmarkDecide decides one pass of a running rollout of 3,500 clusters through two
// managed policies in batches of 250, half of the first batch compliant: the cost the
// decision adds to each reconcile of a fleet-sized rollout, gather and writes aside.
func BenchmarkDecide(b *testing.B) {
	const clusters, batchSize = 3500, 250
	f := fresh()
	names := make([]string, clusters)
	for i := range names {
		names[i] = fmt.Sprintf("sno-%04d", i)
	}
	f.Plan = plan.Plan{}
	for start := 0; start < clusters; start += batchSize {
		f.Plan.Batches = append(f.Plan.Batches, plan.Batch{Clusters: names[start:min(start+batchSize, clusters)]})
	}
	f.Start.Selected = names
	f.Roots = []*policyv1.Policy{policy("upgrade", nil, names...), policy("operators", nil, names...)}
	f = next(b, f, Decide(f, Config{}, decideAt), policy("upgrade", names[:batchSize/2], names...), policy("operators", nil, names...))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Decide(f, Config{}, decideAt.Add(time.Minute))
	}
}
