package cgu

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/talmjob"
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

// BenchmarkDecidePrecachingAgainstBandwidth decides one pass of the pre-caching of 3,500
// clusters in 70 racks under a bandwidth budget, 200 of them pulling and reporting, against
// the same pass under the hub-wide cap: what the budget's admission, plan and slow-pull
// check add to a reconcile.
func BenchmarkDecidePrecachingAgainstBandwidth(b *testing.B) {
	const clusters, pulling = 3500, 200
	names := make([]string, clusters)
	kept := map[string]string{}
	for i := range names {
		names[i] = fmt.Sprintf("sno-%04d", i)
		if i < pulling {
			kept[names[i]] = running
		}
	}
	f := precacheFacts(kept)
	f.Plan = plan.Plan{Batches: []plan.Batch{{Clusters: names}}}
	f.Start.Selected = names
	f.Precache.Jobs = prestartJobs(names, kept)
	summary, _ := json.Marshal(precache.Summary{Phase: precache.PhasePulling, ToPull: 15 << 30, Bytes: 5 << 30})
	labels := map[string]map[string]string{}
	lines := []string{"50", "100", "200", "500", "1000"}
	for i, c := range names {
		labels[c] = map[string]string{"example.com/rack": fmt.Sprintf("rack-%02d", i/50), "example.com/line": lines[i%len(lines)]}
		if i < pulling {
			job := &batchv1.Job{Status: batchv1.JobStatus{Active: 1, StartTime: &metav1.Time{Time: decideAt.Add(-time.Hour)}}}
			f.Precache.Jobs.Views[c] = map[string]talmjob.View{
				talmjob.Precache.JobView:    {Exists: true, Answered: true, Found: true, Job: job},
				talmjob.Precache.ReportView: {Exists: true, Answered: true, Found: true, Data: map[string]string{precache.SummaryKey: string(summary)}},
			}
		}
	}
	budget := &Bandwidth{Labels: labels, Within: 2 * time.Hour, Spec: ranv1alpha1.PrecacheBandwidth{
		RegistryMbps: 10000, LinkLabel: "example.com/rack", DefaultLinkMbps: 2000, LineLabel: "example.com/line"}}
	for _, bc := range []struct {
		name      string
		bandwidth *Bandwidth
	}{{"cap", nil}, {"bandwidth", budget}} {
		b.Run(bc.name, func(b *testing.B) {
			f.Precache.Bandwidth = bc.bandwidth
			b.ReportAllocs()
			for b.Loop() {
				Decide(f, Config{MaxConcurrentPrecaching: 300}, decideAt)
			}
		})
	}
}

// BenchmarkDecideWindow decides one pass of a Window rollout of 1,000 clusters with
// 63-character names through ten managed policies, 250 at a time: 125 clusters done, 250
// in progress, the status's pace running. The whole fleet is one batch, so every pass steps
// and records all of it: the per-reconcile cost that sets the operator's CPU in the mode.
func BenchmarkDecideWindow(b *testing.B) {
	const clusters, window, policies = 1000, 250, 10
	f := fresh()
	names := make([]string, clusters)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%04d", strings.Repeat("s", 58), i)
	}
	f.Plan = plan.Plan{Batches: []plan.Batch{{Clusters: names, Window: window}}}
	f.Start.Selected = names
	f.Upgrade.Spec.Clusters = names
	f.Upgrade.Spec.ManagedPolicies = nil
	roots := func(compliant []string) []*policyv1.Policy {
		var out []*policyv1.Policy
		for i := range policies {
			out = append(out, policy(fmt.Sprintf("policy-%d", i), compliant, names...))
		}
		return out
	}
	for _, p := range roots(nil) {
		f.Upgrade.Spec.ManagedPolicies = append(f.Upgrade.Spec.ManagedPolicies, p.Name)
	}
	f.Roots = roots(nil)
	in := Decide(f, Config{}, decideAt)
	f = next(b, f, in, roots(names[:window/2])...)
	in = Decide(f, Config{}, decideAt.Add(time.Minute))
	f = next(b, f, in, roots(names[:window/2])...)
	states := map[ranv1alpha1.ClusterState]int{}
	for _, c := range f.Progress.Clusters {
		states[c.State]++
	}
	if states[ranv1alpha1.ClusterCompleted] != window/2 || states[ranv1alpha1.ClusterInProgress] != window {
		b.Fatalf("clusters by state before the pass %v, want %d completed and %d in progress", states, window/2, window)
	}
	f.ProgressPaced = true // as on most passes of a busy window: the status waits for its pace
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Decide(f, Config{}, decideAt.Add(2*time.Minute))
	}
}
