package main

import (
	"bytes"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/tests/golden"
)

// matchGolden compares got with testdata/<name>.golden, or rewrites the file with -update.
func matchGolden(t *testing.T, name, got string) {
	t.Helper()
	if err := golden.Check(name, got); err != nil {
		t.Error(err)
	}
}

// fleetOf300 is the demo's rollout of `make demo CLUSTERS=300 MAX_CONCURRENCY=40` once it
// completed but for one cluster that timed out: sno-001 and sno-002 the canaries, then
// batches of 40, the last of 18.
func fleetOf300(t *testing.T) (*ranv1alpha1.ClusterGroupUpgrade, []batchView) {
	t.Helper()
	opts, err := parseFlags([]string{"--clusters=300", "--max-concurrency=40"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	cgu := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "demo-upgrade"},
		Spec: ranv1alpha1.ClusterGroupUpgradeSpec{RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: 40, Timeout: 6}}}
	var batches []batchView
	for i := 1; i <= 300; {
		b := batchView{index: len(batches) + 1, canary: i <= 2, started: start.Add(time.Duration(len(batches)) * 10 * time.Second)}
		b.finished = b.started.Add(8 * time.Second)
		size := 40
		if b.canary {
			size = 1
		}
		var names []string
		for ; i <= 300 && len(b.clusters) < size; i++ {
			c := clusterView{name: opts.clusterName(i), state: ranv1alpha1.ClusterCompleted}
			if c.name == "sno-150" {
				c.state = ranv1alpha1.ClusterTimedOut
			}
			b.clusters = append(b.clusters, c)
			names = append(names, c.name)
		}
		batches = append(batches, b)
		cgu.Status.RemediationPlan = append(cgu.Status.RemediationPlan, names)
	}
	completedAt := metav1.NewTime(start.Add(100 * time.Second))
	cgu.Status.State, cgu.Status.Message = ranv1alpha1.StateTimedOut, "Timed out; cluster sno-150 is not compliant yet, still watching"
	cgu.Status.Plan = &ranv1alpha1.PlanSummary{Clusters: 300, Batches: len(batches), CanaryBatches: 2}
	cgu.Status.Conditions = []metav1.Condition{
		{Type: ranv1alpha1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: "TimedOut"},
		{Type: ranv1alpha1.ConditionSucceeded, Status: metav1.ConditionFalse, Reason: "TimedOut", Message: "Policy remediation took too long"},
	}
	cgu.Status.ComputedMaxConcurrency = 40
	cgu.Status.ManagedPoliciesNs = map[string]string{"upgrade-4.16.12": "demo"}
	cgu.Status.Status.CompletedAt = &completedAt
	for _, b := range batches {
		for _, c := range b.clusters {
			state := ranv1alpha1.TALMClusterComplete
			if c.state == ranv1alpha1.ClusterTimedOut {
				state = ranv1alpha1.TALMClusterTimedOut
			}
			cgu.Status.Clusters = append(cgu.Status.Clusters, ranv1alpha1.ClusterFinalState{Name: c.name, State: state})
		}
	}
	return cgu, batches
}

// At 300 clusters the plan and the summary write each long batch as its count and runs of
// names; --all-clusters lists every name, wrapped.
func TestTextOfAFleetOf300(t *testing.T) {
	cgu, batches := fleetOf300(t)
	for name, all := range map[string]bool{"plan-300": false, "plan-300-all-clusters": true} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			term := newTerminal(&out, &out, true)
			term.allClusters = all
			term.plan(cgu, batches)
			matchGolden(t, name, out.String())
		})
	}
	for name, all := range map[string]bool{"summary-300": false, "summary-300-all-clusters": true} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			term := newTerminal(&out, &out, true)
			term.allClusters = all
			if code := term.summary(result{last: snapshot{cgu: cgu, batches: batches}, elapsed: 100 * time.Second}); code != 1 {
				t.Errorf("a rollout that timed out exits %d, want 1", code)
			}
			matchGolden(t, name, out.String())
		})
	}
}
