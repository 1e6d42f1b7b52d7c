package metrics

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

const (
	upgradesMetric = "cgu_operator_upgrades"
	clustersMetric = "cgu_operator_clusters"
	waitingMetric  = "cgu_operator_upgrades_waiting"
	overdueMetric  = "cgu_operator_batches_overdue"
)

// states maps each label value of a gauge to its value ("" for a gauge without labels).
type states map[string]float64

// zeroUpgrades, zeroClusters and zeroWaiting are the gauges with nothing reported.
var (
	zeroUpgrades = states{"NotStarted": 0, "CannotStart": 0, "NotCompleted": 0, "TimedOut": 0, "Completed": 0}
	zeroClusters = states{"pending": 0, "in_progress": 0, "completed": 0, "timed_out": 0, "failed": 0, "held": 0}
	zeroWaiting  = states{
		"Paused": 0, "WaitingForApproval": 0, "ManagedPolicyChanged": 0, "OutsideMaintenanceWindow": 0, "BatchSoaking": 0,
		"FailureBudgetExceeded": 0, "MissingBlockingCR": 0, "IncompleteBlockingCR": 0, "BlockingCRCycle": 0,
	}
)

func newRecorder(t *testing.T, opts ...Option) (*Recorder, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	return New(reg, opts...), reg
}

// status is the status of a CGU in state with counts c.
func status(state ranv1alpha1.UpgradeState, c ranv1alpha1.ClusterCounts) *ranv1alpha1.ClusterGroupUpgradeStatus {
	return &ranv1alpha1.ClusterGroupUpgradeStatus{State: state, Counts: c}
}

// gauge gathers the gauge name and checks that it has exactly the series of want, none
// negative, with want's values; missing keys of want count as zero.
func gauge(t *testing.T, reg *prometheus.Registry, name string, zero, want states) {
	t.Helper()
	got := gather(t, reg, name)
	full := states{}
	for k := range zero {
		full[k] = want[k]
	}
	if len(got) != len(full) {
		t.Fatalf("%s has series %v, want one for each of %v", name, got, full)
	}
	for k, v := range full {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("%s{state=%q} is missing", name, k)
		case g < 0:
			t.Errorf("%s{state=%q} = %v, negative", name, k, g)
		case g != v:
			t.Errorf("%s{state=%q} = %v, want %v", name, k, g, v)
		}
	}
}

func gather(t *testing.T, reg prometheus.Gatherer, name string) states {
	t.Helper()
	gauges, err := gatherGauges(reg)
	if err != nil {
		t.Fatal(err)
	}
	return gauges[name]
}

// gatherGauges returns the values of every gauge by the value of its one label, from one
// scrape. It does not call t.Fatal, so that goroutines other than the test's may use it.
func gatherGauges(reg prometheus.Gatherer) (map[string]states, error) {
	families, err := reg.Gather()
	if err != nil {
		return nil, fmt.Errorf("gather: %w", err)
	}
	out := map[string]states{}
	for _, mf := range families {
		if mf.GetType() != dto.MetricType_GAUGE {
			continue
		}
		values := states{}
		for _, m := range mf.GetMetric() {
			var key string
			if ls := m.GetLabel(); len(ls) > 0 {
				key = ls[0].GetValue()
			}
			values[key] = m.GetGauge().GetValue()
		}
		out[mf.GetName()] = values
	}
	return out, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func counts(pending, inProgress, completed, timedOut, failed int) ranv1alpha1.ClusterCounts {
	return ranv1alpha1.ClusterCounts{
		Total:   pending + inProgress + completed + timedOut + failed,
		Pending: pending, InProgress: inProgress, Completed: completed, TimedOut: timedOut, Failed: failed,
	}
}

func TestStateGaugesStartAtZero(t *testing.T) {
	_, reg := newRecorder(t)
	gauge(t, reg, upgradesMetric, zeroUpgrades, nil)
	gauge(t, reg, clustersMetric, zeroClusters, nil)
	gauge(t, reg, waitingMetric, zeroWaiting, nil)
	gauge(t, reg, overdueMetric, states{"": 0}, nil)
	gauge(t, reg, "cgu_operator_hub_clusters_in_progress", states{"": 0}, nil)
	gauge(t, reg, "cgu_operator_hub_clusters_in_progress_limit", states{"": 0}, nil)
}

func TestStateGauges(t *testing.T) {
	r, reg := newRecorder(t)

	r.Upgrade("ns/a", status(ranv1alpha1.StateNotStarted, counts(10, 0, 0, 0, 0)))
	r.Upgrade("ns/b", status(ranv1alpha1.StateNotCompleted, counts(4, 3, 2, 1, 0)))
	r.Upgrade("other/b", status(ranv1alpha1.StateNotCompleted, counts(0, 5, 0, 0, 1)))
	r.Upgrade("ns/c", status(ranv1alpha1.StateCannotStart, counts(7, 0, 0, 0, 0)))
	gauge(t, reg, upgradesMetric, zeroUpgrades, states{"NotStarted": 1, "NotCompleted": 2, "CannotStart": 1})
	gauge(t, reg, clustersMetric, zeroClusters,
		states{"pending": 21, "in_progress": 8, "completed": 2, "timed_out": 1, "failed": 1})

	// a starts, b times out, c becomes startable and completes at once.
	r.Upgrade("ns/a", status(ranv1alpha1.StateNotCompleted, counts(8, 2, 0, 0, 0)))
	r.Upgrade("ns/b", status(ranv1alpha1.StateTimedOut, counts(0, 0, 6, 4, 0)))
	r.Upgrade("ns/c", status(ranv1alpha1.StateCompleted, counts(0, 0, 7, 0, 0)))
	gauge(t, reg, upgradesMetric, zeroUpgrades, states{"NotCompleted": 2, "TimedOut": 1, "Completed": 1})
	gauge(t, reg, clustersMetric, zeroClusters,
		states{"pending": 8, "in_progress": 7, "completed": 13, "timed_out": 4, "failed": 1})

	r.Forget("ns/b")
	r.Forget("ns/b")
	r.Forget("never/reported")
	gauge(t, reg, upgradesMetric, zeroUpgrades, states{"NotCompleted": 2, "Completed": 1})
	gauge(t, reg, clustersMetric, zeroClusters,
		states{"pending": 8, "in_progress": 7, "completed": 7, "failed": 1})

	for _, key := range []string{"ns/a", "other/b", "ns/c"} {
		r.Forget(key)
	}
	gauge(t, reg, upgradesMetric, zeroUpgrades, nil)
	gauge(t, reg, clustersMetric, zeroClusters, nil)
}

func TestReportingTwiceDoesNotDoubleCount(t *testing.T) {
	r, reg := newRecorder(t)
	for range 3 {
		r.Upgrade("ns/a", status(ranv1alpha1.StateNotCompleted, counts(1, 2, 3, 0, 0)))
	}
	gauge(t, reg, upgradesMetric, zeroUpgrades, states{"NotCompleted": 1})
	gauge(t, reg, clustersMetric, zeroClusters, states{"pending": 1, "in_progress": 2, "completed": 3})
}

func TestUnknownStateAndNegativeCounts(t *testing.T) {
	r, reg := newRecorder(t)
	r.Upgrade("ns/new", status("", counts(3, 0, 0, 0, 0)))
	r.Upgrade("ns/odd", status(ranv1alpha1.StateCompleted, ranv1alpha1.ClusterCounts{Completed: 2, Failed: -5}))
	gauge(t, reg, upgradesMetric, zeroUpgrades, states{"Completed": 1})
	gauge(t, reg, clustersMetric, zeroClusters, states{"pending": 3, "completed": 2})

	r.Upgrade("ns/new", status(ranv1alpha1.StateNotStarted, counts(3, 0, 0, 0, 0)))
	r.Forget("ns/odd")
	gauge(t, reg, upgradesMetric, zeroUpgrades, states{"NotStarted": 1})
	gauge(t, reg, clustersMetric, zeroClusters, states{"pending": 3})
}

// histogram returns the sample count and sum of name{outcome}.
func histogram(t *testing.T, reg prometheus.Gatherer, name, outcome string) (uint64, float64) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label(m, "outcome") == outcome {
				return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
			}
		}
	}
	t.Fatalf("%s{outcome=%q} not found", name, outcome)
	return 0, 0
}

func TestBatchEnded(t *testing.T) {
	r, reg := newRecorder(t)
	r.BatchEnded(OutcomeCompleted, 10*time.Minute)
	r.BatchEnded(OutcomeCompleted, 90*time.Second)
	r.BatchEnded(OutcomeTimedOut, 4*time.Hour)
	r.BatchEnded(OutcomeTimedOut, -time.Second)
	r.BatchEnded(OutcomeFailed, time.Hour)
	r.BatchEnded("aborted", time.Hour)

	cases := map[string]struct {
		count uint64
		sum   float64
	}{
		OutcomeCompleted: {2, 690},
		OutcomeTimedOut:  {2, 14400},
	}
	for outcome, want := range cases {
		count, sum := histogram(t, reg, "cgu_operator_batch_duration_seconds", outcome)
		if count != want.count || sum != want.sum {
			t.Errorf("batch %s: count %d sum %v, want %d and %v", outcome, count, sum, want.count, want.sum)
		}
	}
	if n := testutil.CollectAndCount(reg, "cgu_operator_batch_duration_seconds"); n != 2 {
		t.Errorf("batch histogram has %d series, want 2 (completed, timed_out)", n)
	}
}

func TestClusterEnded(t *testing.T) {
	r, reg := newRecorder(t)
	r.ClusterEnded(ranv1alpha1.ClusterCompleted, time.Minute)
	r.ClusterEnded(ranv1alpha1.ClusterCompleted, 2*time.Minute)
	r.ClusterEnded(ranv1alpha1.ClusterTimedOut, time.Hour)
	r.ClusterEnded(ranv1alpha1.ClusterFailed, 30*time.Second)
	r.ClusterEnded(ranv1alpha1.ClusterPending, time.Hour)
	r.ClusterEnded(ranv1alpha1.ClusterInProgress, time.Hour)

	cases := map[string]struct {
		count uint64
		sum   float64
	}{
		OutcomeCompleted: {2, 180},
		OutcomeTimedOut:  {1, 3600},
		OutcomeFailed:    {1, 30},
	}
	for outcome, want := range cases {
		count, sum := histogram(t, reg, "cgu_operator_cluster_duration_seconds", outcome)
		if count != want.count || sum != want.sum {
			t.Errorf("cluster %s: count %d sum %v, want %d and %v", outcome, count, sum, want.count, want.sum)
		}
	}
	if n := testutil.CollectAndCount(reg, "cgu_operator_cluster_duration_seconds"); n != 3 {
		t.Errorf("cluster histogram has %d series, want 3 (completed, timed_out, failed)", n)
	}
}

func TestHistogramBuckets(t *testing.T) {
	r, reg := newRecorder(t)
	r.BatchEnded(OutcomeCompleted, 45*time.Minute)
	want := `
# HELP cgu_operator_batch_duration_seconds Time from a batch's start to its end, by outcome (completed, timed_out).
# TYPE cgu_operator_batch_duration_seconds histogram
cgu_operator_batch_duration_seconds_bucket{outcome="completed",le="60"} 0
cgu_operator_batch_duration_seconds_bucket{outcome="completed",le="300"} 0
cgu_operator_batch_duration_seconds_bucket{outcome="completed",le="900"} 0
cgu_operator_batch_duration_seconds_bucket{outcome="completed",le="1800"} 0
cgu_operator_batch_duration_seconds_bucket{outcome="completed",le="3600"} 1
cgu_operator_batch_duration_seconds_bucket{outcome="completed",le="7200"} 1
cgu_operator_batch_duration_seconds_bucket{outcome="completed",le="14400"} 1
cgu_operator_batch_duration_seconds_bucket{outcome="completed",le="28800"} 1
cgu_operator_batch_duration_seconds_bucket{outcome="completed",le="86400"} 1
cgu_operator_batch_duration_seconds_bucket{outcome="completed",le="+Inf"} 1
cgu_operator_batch_duration_seconds_sum{outcome="completed"} 2700
cgu_operator_batch_duration_seconds_count{outcome="completed"} 1
cgu_operator_batch_duration_seconds_bucket{outcome="timed_out",le="60"} 0
cgu_operator_batch_duration_seconds_bucket{outcome="timed_out",le="300"} 0
cgu_operator_batch_duration_seconds_bucket{outcome="timed_out",le="900"} 0
cgu_operator_batch_duration_seconds_bucket{outcome="timed_out",le="1800"} 0
cgu_operator_batch_duration_seconds_bucket{outcome="timed_out",le="3600"} 0
cgu_operator_batch_duration_seconds_bucket{outcome="timed_out",le="7200"} 0
cgu_operator_batch_duration_seconds_bucket{outcome="timed_out",le="14400"} 0
cgu_operator_batch_duration_seconds_bucket{outcome="timed_out",le="28800"} 0
cgu_operator_batch_duration_seconds_bucket{outcome="timed_out",le="86400"} 0
cgu_operator_batch_duration_seconds_bucket{outcome="timed_out",le="+Inf"} 0
cgu_operator_batch_duration_seconds_sum{outcome="timed_out"} 0
cgu_operator_batch_duration_seconds_count{outcome="timed_out"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "cgu_operator_batch_duration_seconds"); err != nil {
		t.Fatal(err)
	}
}

func TestRemediationError(t *testing.T) {
	r, reg := newRecorder(t)
	r.RemediationError(OperationCopy)
	r.RemediationError(OperationCopy)
	r.RemediationError(OperationStatus)
	r.RemediationError("unknown")

	want := map[string]float64{OperationCopy: 2, OperationStatus: 1}
	for _, op := range operations {
		if got := testutil.ToFloat64(r.remediation[op]); got != want[op] {
			t.Errorf("remediation_errors_total{operation=%q} = %v, want %v", op, got, want[op])
		}
	}
	if n := testutil.CollectAndCount(reg, "cgu_operator_remediation_errors_total"); n != len(operations) {
		t.Errorf("remediation_errors_total has %d series, want %d", n, len(operations))
	}
}

func TestStage(t *testing.T) {
	r, reg := newRecorder(t)
	r.Stage(StageStarted)
	r.Stage(StageStarted)
	r.Stage(StageUnhealthy)
	r.Stage("ended")
	for event, want := range map[string]float64{StageStarted: 2, StageUnhealthy: 1} {
		if got := testutil.ToFloat64(r.stages[event]); got != want {
			t.Errorf("stages_total{event=%q} = %v, want %v", event, got, want)
		}
	}
	if n := testutil.CollectAndCount(reg, "cgu_operator_stages_total"); n != 2 {
		t.Errorf("stages_total has %d series, want 2", n)
	}
}

// TestConcurrentReports has many goroutines report, change and forget their CGUs while
// others scrape; every scrape must count each CGU once, and the final totals must add up.
func TestConcurrentReports(t *testing.T) {
	const workers, perWorker, rounds = 32, 20, 50
	r, reg := newRecorder(t)
	steps := []ranv1alpha1.UpgradeState{
		ranv1alpha1.StateNotStarted, ranv1alpha1.StateCannotStart, ranv1alpha1.StateNotCompleted,
		ranv1alpha1.StateTimedOut, ranv1alpha1.StateCompleted,
	}

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for round := range rounds {
				for i := range perWorker {
					key := fmt.Sprintf("ns-%d/cgu-%d", w, i)
					r.Upgrade(key, status(steps[(round+i)%len(steps)], counts(round, i, 1, 0, 0)))
					r.BatchEnded(OutcomeCompleted, time.Minute)
					r.RemediationError(OperationPlacement)
				}
			}
			// Each worker ends with its even CGUs Completed with 3 completed clusters, and
			// its odd CGUs forgotten.
			for i := range perWorker {
				key := fmt.Sprintf("ns-%d/cgu-%d", w, i)
				if i%2 == 1 {
					r.Forget(key)
					continue
				}
				r.Upgrade(key, status(ranv1alpha1.StateCompleted, counts(0, 0, 3, 0, 0)))
			}
		})
	}
	done := make(chan struct{})
	var scrapers sync.WaitGroup
	for range 4 {
		scrapers.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				scrapeIsConsistent(t, reg)
			}
		})
	}
	wg.Wait()
	close(done)
	scrapers.Wait()

	live := float64(workers * perWorker / 2)
	gauge(t, reg, upgradesMetric, zeroUpgrades, states{"Completed": live})
	gauge(t, reg, clustersMetric, zeroClusters, states{"completed": 3 * live})
	count, sum := histogram(t, reg, "cgu_operator_batch_duration_seconds", OutcomeCompleted)
	if reports := uint64(workers * perWorker * rounds); count != reports || sum != float64(reports)*60 {
		t.Errorf("batch histogram: count %d sum %v, want %d and %v", count, sum, reports, float64(reports)*60)
	}
	if got := testutil.ToFloat64(r.remediation[OperationPlacement]); got != workers*perWorker*rounds {
		t.Errorf("remediation errors = %v, want %d", got, workers*perWorker*rounds)
	}
}

// scrapeIsConsistent checks one scrape taken during TestConcurrentReports: no negative
// value, and as many completed clusters as reported by the CGUs counted (each CGU reports
// exactly one completed cluster until its final report of three Completed ones).
func scrapeIsConsistent(t *testing.T, reg prometheus.Gatherer) {
	gauges, err := gatherGauges(reg)
	if err != nil {
		t.Error(err)
		return
	}
	upgrades, clusters := gauges[upgradesMetric], gauges[clustersMetric]
	total := 0.0
	for s, v := range upgrades {
		if v < 0 {
			t.Errorf("upgrades{state=%q} = %v during the run", s, v)
		}
		total += v
	}
	for s, v := range clusters {
		if v < 0 {
			t.Errorf("clusters{state=%q} = %v during the run", s, v)
		}
	}
	if c := clusters["completed"]; c < total || c > 3*total {
		t.Errorf("%v completed clusters for %v CGUs in one scrape", c, total)
	}
}

func TestDefaultRegistersOnce(t *testing.T) {
	if first, second := Default(), Default(); first != second {
		t.Fatal("Default returned two recorders")
	}
	Default().Upgrade("default/test", status(ranv1alpha1.StateCannotStart, counts(2, 0, 0, 0, 0)))
	defer Default().Forget("default/test")
	if got := gather(t, ctrlmetrics.Registry, upgradesMetric)["CannotStart"]; got != 1 {
		t.Errorf("controller-runtime registry: upgrades{state=\"CannotStart\"} = %v, want 1", got)
	}
}

func TestEventDropped(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := New(reg)
	if n := testutil.CollectAndCount(reg, "cgu_operator_events_dropped_total"); n != 1 {
		t.Fatalf("events_dropped_total has %d series before any drop, want 1", n)
	}
	r.EventDropped()
	r.EventDropped()
	if got := testutil.ToFloat64(r.dropped); got != 2 {
		t.Fatalf("events_dropped_total = %v, want 2", got)
	}
}
