package metrics

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// progressing returns a status in state whose Progressing condition has reason.
func progressing(state ranv1alpha1.UpgradeState, status metav1.ConditionStatus, reason string) *ranv1alpha1.ClusterGroupUpgradeStatus {
	return &ranv1alpha1.ClusterGroupUpgradeStatus{State: state, Conditions: []metav1.Condition{
		{Type: ranv1alpha1.ConditionValidated, Status: metav1.ConditionTrue, Reason: ranv1alpha1.ReasonValidationCompleted},
		{Type: ranv1alpha1.ConditionProgressing, Status: status, Reason: reason},
	}}
}

// waitingFor returns a NotCompleted status waiting between batches for reason, as the
// Progressing condition says too.
func waitingFor(reason string) *ranv1alpha1.ClusterGroupUpgradeStatus {
	st := progressing(ranv1alpha1.StateNotCompleted, metav1.ConditionTrue, reason)
	st.Waiting = &ranv1alpha1.WaitingStatus{Reason: reason, Batch: 2}
	return st
}

func TestWaitingReason(t *testing.T) {
	cases := map[string]struct {
		status *ranv1alpha1.ClusterGroupUpgradeStatus
		want   string
	}{
		"no status":                  {&ranv1alpha1.ClusterGroupUpgradeStatus{}, ""},
		"in progress":                {progressing(ranv1alpha1.StateNotCompleted, metav1.ConditionTrue, ranv1alpha1.ReasonInProgress), ""},
		"completed":                  {progressing(ranv1alpha1.StateCompleted, metav1.ConditionFalse, ranv1alpha1.ReasonCompleted), ""},
		"not enabled":                {progressing(ranv1alpha1.StateNotStarted, metav1.ConditionFalse, ranv1alpha1.ReasonNotEnabled), ""},
		"timed out":                  {progressing(ranv1alpha1.StateTimedOut, metav1.ConditionFalse, ranv1alpha1.ReasonTimedOut), ""},
		"hub capacity reached":       {progressing(ranv1alpha1.StateNotCompleted, metav1.ConditionTrue, ranv1alpha1.ReasonHubCapacityReached), ""},
		"paused between batches":     {waitingFor(ranv1alpha1.ReasonPaused), "Paused"},
		"paused during a batch":      {progressing(ranv1alpha1.StateNotCompleted, metav1.ConditionTrue, ranv1alpha1.ReasonPaused), "Paused"},
		"approval":                   {waitingFor(ranv1alpha1.ReasonWaitingForApproval), "WaitingForApproval"},
		"changed policy":             {waitingFor(ranv1alpha1.ReasonManagedPolicyChanged), "ManagedPolicyChanged"},
		"window":                     {waitingFor(ranv1alpha1.ReasonOutsideMaintenanceWindow), "OutsideMaintenanceWindow"},
		"soak":                       {waitingFor(ranv1alpha1.ReasonBatchSoaking), "BatchSoaking"},
		"pre-caching before a start": {waitingFor(ranv1alpha1.ReasonPrecachingInProgress), ""},
		"failure budget": {progressing(ranv1alpha1.StateTimedOut, metav1.ConditionFalse, ranv1alpha1.ReasonFailureBudgetExceeded),
			"FailureBudgetExceeded"},
		"missing blocking CGU": {progressing(ranv1alpha1.StateCannotStart, metav1.ConditionFalse, ranv1alpha1.ReasonMissingBlockingCR),
			"MissingBlockingCR"},
		"incomplete blocking CGU": {progressing(ranv1alpha1.StateCannotStart, metav1.ConditionFalse, ranv1alpha1.ReasonIncompleteBlockingCR),
			"IncompleteBlockingCR"},
		"blocking cycle": {progressing(ranv1alpha1.StateCannotStart, metav1.ConditionFalse, ranv1alpha1.ReasonBlockingCRCycle),
			"BlockingCRCycle"},
		"waiting wins over the condition": {func() *ranv1alpha1.ClusterGroupUpgradeStatus {
			st := progressing(ranv1alpha1.StateNotCompleted, metav1.ConditionTrue, ranv1alpha1.ReasonPaused)
			st.Waiting = &ranv1alpha1.WaitingStatus{Reason: ranv1alpha1.ReasonWaitingForApproval}
			return st
		}(), "WaitingForApproval"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := WaitingReason(tc.status); got != tc.want {
				t.Errorf("WaitingReason = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWaitingGauge(t *testing.T) {
	r, reg := newRecorder(t)
	r.Upgrade("ns/a", waitingFor(ranv1alpha1.ReasonWaitingForApproval))
	r.Upgrade("ns/b", waitingFor(ranv1alpha1.ReasonWaitingForApproval))
	r.Upgrade("ns/c", progressing(ranv1alpha1.StateCannotStart, metav1.ConditionFalse, ranv1alpha1.ReasonIncompleteBlockingCR))
	r.Upgrade("ns/d", progressing(ranv1alpha1.StateNotCompleted, metav1.ConditionTrue, ranv1alpha1.ReasonInProgress))
	gauge(t, reg, waitingMetric, zeroWaiting, states{"WaitingForApproval": 2, "IncompleteBlockingCR": 1})
	gauge(t, reg, upgradesMetric, zeroUpgrades, states{"NotCompleted": 3, "CannotStart": 1})

	// a is approved and runs its batch; c's blocking CGU completes and c starts; b's failure
	// budget is spent.
	r.Upgrade("ns/a", progressing(ranv1alpha1.StateNotCompleted, metav1.ConditionTrue, ranv1alpha1.ReasonInProgress))
	r.Upgrade("ns/c", progressing(ranv1alpha1.StateNotCompleted, metav1.ConditionTrue, ranv1alpha1.ReasonInProgress))
	r.Upgrade("ns/b", progressing(ranv1alpha1.StateTimedOut, metav1.ConditionFalse, ranv1alpha1.ReasonFailureBudgetExceeded))
	gauge(t, reg, waitingMetric, zeroWaiting, states{"FailureBudgetExceeded": 1})

	r.Forget("ns/b")
	gauge(t, reg, waitingMetric, zeroWaiting, nil)
}

func TestHeldClusters(t *testing.T) {
	r, reg := newRecorder(t)
	r.Upgrade("ns/a", status(ranv1alpha1.StateCompleted, ranv1alpha1.ClusterCounts{Total: 5, Completed: 3, Held: 2}))
	r.Upgrade("ns/b", status(ranv1alpha1.StateNotCompleted, ranv1alpha1.ClusterCounts{Total: 4, InProgress: 3, Held: 1}))
	gauge(t, reg, clustersMetric, zeroClusters, states{"completed": 3, "in_progress": 3, "held": 3})

	r.Upgrade("ns/b", status(ranv1alpha1.StateNotCompleted, ranv1alpha1.ClusterCounts{Total: 4, InProgress: 3, Held: -1}))
	r.Forget("ns/a")
	gauge(t, reg, clustersMetric, zeroClusters, states{"in_progress": 3})
}

// running returns a NotCompleted status whose current batch times out at deadline.
func running(deadline time.Time) *ranv1alpha1.ClusterGroupUpgradeStatus {
	st := progressing(ranv1alpha1.StateNotCompleted, metav1.ConditionTrue, ranv1alpha1.ReasonInProgress)
	at := metav1.NewTime(deadline)
	st.CurrentBatch = &ranv1alpha1.BatchStatus{Index: 1, TimeoutAt: &at}
	return st
}

func TestBatchesOverdue(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(start)
	r, reg := newRecorder(t, WithClock(clk))
	overdue := func(want float64) {
		t.Helper()
		gauge(t, reg, overdueMetric, states{"": 0}, states{"": want})
	}

	r.Upgrade("ns/a", running(start.Add(time.Hour)))
	r.Upgrade("ns/b", running(start.Add(2*time.Hour)))
	paused := running(start.Add(time.Hour))
	paused.PausedAt = &metav1.Time{Time: start}
	r.Upgrade("ns/paused", paused)
	soaking := running(start.Add(time.Hour))
	soaking.Waiting = &ranv1alpha1.WaitingStatus{Reason: ranv1alpha1.ReasonBatchSoaking, Batch: 1}
	r.Upgrade("ns/soaking", soaking)
	timedOut := running(start.Add(time.Hour))
	timedOut.State = ranv1alpha1.StateTimedOut
	r.Upgrade("ns/timed-out", timedOut)
	r.Upgrade("ns/no-batch", progressing(ranv1alpha1.StateNotCompleted, metav1.ConditionTrue, ranv1alpha1.ReasonInProgress))
	overdue(0)

	clk.SetTime(start.Add(time.Hour)) // a's deadline, not past it yet
	overdue(0)
	clk.SetTime(start.Add(time.Hour + time.Second))
	overdue(1)
	clk.SetTime(start.Add(3 * time.Hour))
	overdue(2)

	// The operator acts: a's batch times out and the next one starts, b's rollout ends.
	r.Upgrade("ns/a", running(start.Add(5*time.Hour)))
	r.Upgrade("ns/b", progressing(ranv1alpha1.StateTimedOut, metav1.ConditionFalse, ranv1alpha1.ReasonTimedOut))
	overdue(0)
	clk.SetTime(start.Add(6 * time.Hour))
	overdue(1)
	r.Forget("ns/a")
	overdue(0)
}

func TestHubClusters(t *testing.T) {
	r, reg := newRecorder(t)
	r.HubClusters(12, 50)
	gauge(t, reg, "cgu_operator_hub_clusters_in_progress", states{"": 0}, states{"": 12})
	gauge(t, reg, "cgu_operator_hub_clusters_in_progress_limit", states{"": 0}, states{"": 50})
	r.HubClusters(-1, 0)
	gauge(t, reg, "cgu_operator_hub_clusters_in_progress", states{"": 0}, nil)
	gauge(t, reg, "cgu_operator_hub_clusters_in_progress_limit", states{"": 0}, nil)
}

// seriesCount counts the series a scrape of reg shows: one a gauge or counter, and for a
// histogram one a bucket (+Inf included), its sum and its count.
func seriesCount(t *testing.T, reg prometheus.Gatherer) int {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	n := 0
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			if mf.GetType() == dto.MetricType_HISTOGRAM {
				n += len(m.GetHistogram().GetBucket()) + 3
				continue
			}
			n++
		}
	}
	return n
}

// TestSeriesCount checks the number of series docs/metrics.md states against a scrape of a
// new Recorder, which also shows that every series exists before anything is reported.
func TestSeriesCount(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`make the same (\d+) series`).FindSubmatch(doc)
	if m == nil {
		t.Fatal(`docs/metrics.md does not say "make the same N series"`)
	}
	want, err := strconv.Atoi(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	r, reg := newRecorder(t)
	if got := seriesCount(t, reg); got != want {
		t.Errorf("a new Recorder exports %d series, docs/metrics.md says %d", got, want)
	}

	// Reports change values, never the series.
	r.Upgrade("ns/a", waitingFor(ranv1alpha1.ReasonPaused))
	r.Upgrade("ns/b", running(time.Now().Add(-time.Hour)))
	r.HubClusters(3, 10)
	r.BatchEnded(OutcomeCompleted, time.Hour)
	r.ClusterEnded(ranv1alpha1.ClusterFailed, time.Minute)
	r.RemediationError(OperationCopy)
	r.EventDropped()
	if got := seriesCount(t, reg); got != want {
		t.Errorf("after reports the Recorder exports %d series, want %d still", got, want)
	}
}
