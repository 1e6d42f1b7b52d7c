package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/names"
)

// upgrade returns a CGU in a state, with conditions and the current batch given.
func upgrade(state ranv1alpha1.UpgradeState, enable bool, batch *ranv1alpha1.BatchStatus, conditions ...metav1.Condition) *ranv1alpha1.ClusterGroupUpgrade {
	return &ranv1alpha1.ClusterGroupUpgrade{
		Spec: ranv1alpha1.ClusterGroupUpgradeSpec{Enable: ptr.To(enable)},
		Status: ranv1alpha1.ClusterGroupUpgradeStatus{State: state, CurrentBatch: batch, Conditions: conditions,
			Counts: ranv1alpha1.ClusterCounts{InProgress: countWaiting(batch)}},
	}
}

func countWaiting(b *ranv1alpha1.BatchStatus) int {
	n := 0
	if b != nil {
		for _, c := range b.Clusters {
			if c.State == ranv1alpha1.ClusterInProgress {
				n++
			}
		}
	}
	return n
}

func progressing(reason, message string) metav1.Condition {
	return metav1.Condition{Type: ranv1alpha1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: reason, Message: message}
}

func inProgress(name, policy string) ranv1alpha1.ClusterProgress {
	return ranv1alpha1.ClusterProgress{Name: name, State: ranv1alpha1.ClusterInProgress, CurrentPolicy: policy}
}

func completed(name string) ranv1alpha1.ClusterProgress {
	return ranv1alpha1.ClusterProgress{Name: name, State: ranv1alpha1.ClusterCompleted}
}

func TestWaitingFor(t *testing.T) {
	cases := map[string]struct {
		cgu  *ranv1alpha1.ClusterGroupUpgrade
		want string
	}{
		"not enabled": {
			cgu:  upgrade(ranv1alpha1.StateNotStarted, false, nil, progressing(ranv1alpha1.ReasonNotEnabled, "Not enabled: set spec.enable to true to start")),
			want: "spec.enable to be true",
		},
		"not enabled, before the operator's first status": {
			cgu:  upgrade("", false, nil),
			want: "the operator to look at it",
		},
		"enabled, not looked at yet": {
			cgu:  upgrade(ranv1alpha1.StateNotStarted, true, nil),
			want: "the operator to start it",
		},
		"blocked by another CGU": {
			cgu: upgrade(ranv1alpha1.StateCannotStart, true, nil, progressing(ranv1alpha1.ReasonIncompleteBlockingCR,
				"Blocked by ClusterGroupUpgrades that have not completed: ztp/platform (NotCompleted)")),
			want: "a blocking CGU: Blocked by ClusterGroupUpgrades that have not completed: ztp/platform (NotCompleted)",
		},
		"an invalid spec, enabled": {
			cgu: upgrade(ranv1alpha1.StateCannotStart, true, nil, progressing(ranv1alpha1.ReasonNotAllManagedPoliciesExist,
				"Managed policies not found on the selected clusters: operators")),
			want: "the spec to be fixed: NotAllManagedPoliciesExist: Managed policies not found on the selected clusters: operators",
		},
		"an invalid spec, not enabled": {
			cgu:  upgrade(ranv1alpha1.StateNotStarted, false, nil, progressing(ranv1alpha1.ReasonClusterNotFound, "Clusters not found on the hub: x")),
			want: "the spec to be fixed: ClusterNotFound: Clusters not found on the hub: x; then spec.enable to be true",
		},
		"one cluster of the batch": {
			cgu: upgrade(ranv1alpha1.StateNotCompleted, true, &ranv1alpha1.BatchStatus{Index: 2, Canary: true,
				Clusters: []ranv1alpha1.ClusterProgress{inProgress("spoke-7", "upgrade"), completed("spoke-8")}}),
			want: "1 cluster of batch 2 to comply: spoke-7 (upgrade)",
		},
		"the first few of many clusters": {
			cgu: upgrade(ranv1alpha1.StateNotCompleted, true, &ranv1alpha1.BatchStatus{Index: 3, Clusters: []ranv1alpha1.ClusterProgress{
				inProgress("a", "upgrade"), inProgress("b", "operators"), inProgress("c", "upgrade"), inProgress("d", "upgrade"), completed("e"),
			}}),
			want: "4 clusters of batch 3 to comply: a (upgrade), b (operators), c (upgrade) and 1 more",
		},
		"clusters not shown count too": {
			cgu: func() *ranv1alpha1.ClusterGroupUpgrade {
				c := upgrade(ranv1alpha1.StateNotCompleted, true, &ranv1alpha1.BatchStatus{Index: 1,
					Clusters: []ranv1alpha1.ClusterProgress{inProgress("a", "upgrade")}, ClustersNotShown: 9})
				c.Status.Counts.InProgress = 10
				return c
			}(),
			want: "10 clusters of batch 1 to comply: a (upgrade) and 9 more",
		},
		"a batch about to end": {
			cgu:  upgrade(ranv1alpha1.StateNotCompleted, true, &ranv1alpha1.BatchStatus{Index: 4, Clusters: []ranv1alpha1.ClusterProgress{completed("a")}}),
			want: "batch 4 to end",
		},
		"the analysis of a batch whose clusters ended": {
			cgu: upgrade(ranv1alpha1.StateNotCompleted, true, &ranv1alpha1.BatchStatus{Index: 2, Clusters: []ranv1alpha1.ClusterProgress{completed("a")},
				Analysis: &ranv1alpha1.BatchAnalysis{Gates: []ranv1alpha1.AnalysisGateStatus{
					{Name: "api-errors", Phase: ranv1alpha1.AnalysisInconclusive}, {Name: "latency", Phase: ranv1alpha1.AnalysisPassed},
					{Name: "vs-baseline", Phase: ranv1alpha1.AnalysisRunning}}}}),
			want: "the analysis of batch 2: api-errors (inconclusive), vs-baseline (running)",
		},
		"timed out": {
			cgu:  upgrade(ranv1alpha1.StateTimedOut, true, nil),
			want: "late clusters to comply (still watching)",
		},
		"completed": {
			cgu:  upgrade(ranv1alpha1.StateCompleted, true, nil),
			want: "nothing: completed",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := waitingFor(tc.cgu); got != tc.want {
				t.Errorf("waitingFor = %q\nwant          %q", got, tc.want)
			}
		})
	}
}

func TestConditionWords(t *testing.T) {
	cases := map[string]struct {
		c    metav1.Condition
		want string
	}{
		"true with a message": {metav1.Condition{Status: metav1.ConditionTrue, Message: "12 clusters selected"}, "yes (12 clusters selected)"},
		"true without one":    {metav1.Condition{Status: metav1.ConditionTrue}, "yes"},
		"false": {metav1.Condition{Status: metav1.ConditionFalse, Reason: "NotAllManagedPoliciesExist", Message: "Managed policies not found: x"},
			"no — NotAllManagedPoliciesExist: Managed policies not found: x"},
		"unknown": {metav1.Condition{Status: metav1.ConditionUnknown, Reason: "Checking"}, "unknown — Checking"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := conditionWords(tc.c); got != tc.want {
				t.Errorf("conditionWords = %q, want %q", got, tc.want)
			}
		})
	}
	if got := conditionLabel(ranv1alpha1.ConditionClustersSelected); got != "Clusters selected" {
		t.Errorf("conditionLabel(ClustersSelected) = %q", got)
	}
}

func TestTimeLine(t *testing.T) {
	now := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { return ptr.To(metav1.NewTime(now.Add(d))) }
	cases := map[string]struct {
		minutes              int
		state                ranv1alpha1.UpgradeState
		started, completedAt *metav1.Time
		end                  time.Time
		wantLabel, wantText  string
	}{
		"not started, the default timeout": {minutes: 240, wantLabel: "Time left", wantText: "4h, counted from the start"},
		"running, the timeout lowered to zero": {minutes: 0, started: at(-4 * time.Minute),
			wantLabel: "Time left", wantText: "none: ran out 4m ago (timeout 0s)"},
		"running": {minutes: 60, state: ranv1alpha1.StateNotCompleted, started: at(-4 * time.Minute),
			wantLabel: "Time left", wantText: "56m of 1h (started 4m ago)"},
		"past the deadline": {minutes: 60, started: at(-65 * time.Minute),
			wantLabel: "Time left", wantText: "none: ran out 5m ago (timeout 1h)"},
		"completed": {state: ranv1alpha1.StateCompleted, started: at(-2 * time.Hour), completedAt: at(-3 * time.Minute),
			end: now.Add(-3 * time.Minute), wantLabel: "Ran", wantText: "1h57m (started 2h ago, ended 3m ago)"},
		"timed out: no time left, how long it ran": {minutes: 6, state: ranv1alpha1.StateTimedOut, started: at(-10 * time.Minute),
			end: now.Add(-4 * time.Minute), wantLabel: "Ran", wantText: "6m (started 10m ago, ended 4m ago)"},
		"timed out, its end unknown": {minutes: 6, state: ranv1alpha1.StateTimedOut, started: at(-10 * time.Minute),
			wantLabel: "Ran", wantText: "started 10m ago, ended at a time the hub does not say"},
		"completed without starting": {state: ranv1alpha1.StateCompleted, completedAt: at(-time.Minute), end: now.Add(-time.Minute),
			wantLabel: "Ran", wantText: "ended 1m ago"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cgu := &ranv1alpha1.ClusterGroupUpgrade{
				Spec:   ranv1alpha1.ClusterGroupUpgradeSpec{RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{Timeout: tc.minutes}},
				Status: ranv1alpha1.ClusterGroupUpgradeStatus{State: tc.state, StartedAt: tc.started, CompletedAt: tc.completedAt},
			}
			label, text := timeLine(cgu, tc.end, now)
			if label != tc.wantLabel || text != tc.wantText {
				t.Errorf("timeLine = %q, %q; want %q, %q", label, text, tc.wantLabel, tc.wantText)
			}
		})
	}
}

// An ended rollout's end and late clusters come from its batch records, else from TALM's
// status fields.
func TestEndOf(t *testing.T) {
	now := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { return ptr.To(metav1.NewTime(now.Add(d))) }
	record := func(finished *metav1.Time, clusters ...ranv1alpha1.ClusterProgress) ranv1alpha1.ClusterGroupUpgradeBatch {
		return ranv1alpha1.ClusterGroupUpgradeBatch{Status: ranv1alpha1.ClusterGroupUpgradeBatchStatus{FinishedAt: finished, Clusters: clusters}}
	}
	state := func(name string, s ranv1alpha1.ClusterState) ranv1alpha1.ClusterProgress {
		return ranv1alpha1.ClusterProgress{Name: name, State: s}
	}
	records := []ranv1alpha1.ClusterGroupUpgradeBatch{
		record(at(-9*time.Minute), state("sno-01", ranv1alpha1.ClusterCompleted)),
		record(at(-2*time.Minute), state("sno-03", ranv1alpha1.ClusterTimedOut), state("sno-04", ranv1alpha1.ClusterFailed)),
		record(at(-5*time.Minute), state("sno-02", ranv1alpha1.ClusterTimedOut)),
	}
	talm := []ranv1alpha1.ClusterFinalState{{Name: "a", State: ranv1alpha1.TALMClusterTimedOut}, {Name: "b", State: ranv1alpha1.TALMClusterFailed},
		{Name: "c", State: ranv1alpha1.TALMClusterComplete}}
	cases := map[string]struct {
		status  ranv1alpha1.ClusterGroupUpgradeStatus
		records []ranv1alpha1.ClusterGroupUpgradeBatch
		want    endedRollout
	}{
		"the records' last batch end and late clusters": {records: records,
			want: endedRollout{at: now.Add(-2 * time.Minute), timedOut: []string{"sno-03", "sno-02"}, failed: []string{"sno-04"}}},
		"TALM's completedAt first": {status: ranv1alpha1.ClusterGroupUpgradeStatus{Status: ranv1alpha1.UpgradeStatus{CompletedAt: at(-3 * time.Minute)}},
			records: records, want: endedRollout{at: now.Add(-3 * time.Minute), timedOut: []string{"sno-03", "sno-02"}, failed: []string{"sno-04"}}},
		"completedAt before TALM's": {status: ranv1alpha1.ClusterGroupUpgradeStatus{CompletedAt: at(-time.Minute),
			Status: ranv1alpha1.UpgradeStatus{CompletedAt: at(-3 * time.Minute)}}, want: endedRollout{at: now.Add(-time.Minute)}},
		"without records, TALM's clusters": {status: ranv1alpha1.ClusterGroupUpgradeStatus{Clusters: talm},
			want: endedRollout{timedOut: []string{"a"}, failed: []string{"b"}}},
		"the records rather than TALM's clusters": {status: ranv1alpha1.ClusterGroupUpgradeStatus{Clusters: talm}, records: records[:1],
			want: endedRollout{at: now.Add(-9 * time.Minute)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := endOf(&ranv1alpha1.ClusterGroupUpgrade{Status: tc.status}, tc.records)
			if !got.at.Equal(tc.want.at) || !slices.Equal(got.timedOut, tc.want.timedOut) || !slices.Equal(got.failed, tc.want.failed) {
				t.Errorf("endOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A rollout that timed out says how long it ran, not the time left, and names its late
// clusters, the first runs of a long list.
func TestWriteStatusOfAnEndedRollout(t *testing.T) {
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { return ptr.To(metav1.NewTime(now.Add(d))) }
	cgu := upgrade(ranv1alpha1.StateTimedOut, true, nil, metav1.Condition{Type: ranv1alpha1.ConditionProgressing,
		Status: metav1.ConditionFalse, Reason: "TimedOut", Message: "Timed out; 41 clusters are not compliant yet, still watching"})
	cgu.Namespace, cgu.Name = "fleet", "upgrade"
	cgu.Spec.RemediationStrategy = &ranv1alpha1.RemediationStrategySpec{Timeout: 240}
	cgu.Status.Message = "Timed out; 41 clusters are not compliant yet, still watching"
	cgu.Status.StartedAt = at(-4*time.Hour - 20*time.Minute)
	cgu.Status.Counts = ranv1alpha1.ClusterCounts{Total: 3500, Completed: 3457, TimedOut: 41, Failed: 2}
	var late []string
	for i := 100; i < 3500; i += 83 { // 41 clusters, no two in a row
		late = append(late, fmt.Sprintf("sno-%04d", i))
	}
	facts := statusFacts{ended: endedRollout{at: now.Add(-20 * time.Minute), timedOut: late, failed: []string{"sno-0042", "sno-0007"}}}
	var b strings.Builder
	if err := writeStatus(&b, painter{}, cgu, now, defaultWidth, facts); err != nil {
		t.Fatal(err)
	}
	matchTextGolden(t, "status-ended", b.String())
	if strings.Contains(b.String(), "Time left") {
		t.Errorf("an ended rollout shows the time left:\n%s", b.String())
	}
}

func TestStateExitCode(t *testing.T) {
	cases := map[ranv1alpha1.UpgradeState]int{
		ranv1alpha1.StateCompleted:    0,
		ranv1alpha1.StateNotStarted:   10,
		ranv1alpha1.StateNotCompleted: 10,
		"":                            10,
		ranv1alpha1.StateCannotStart:  11,
		ranv1alpha1.StateTimedOut:     12,
	}
	for state, want := range cases {
		if got := StateExitCode(state); got != want {
			t.Errorf("StateExitCode(%q) = %d, want %d", state, got, want)
		}
	}
}

func TestWriteStatusColour(t *testing.T) {
	now := time.Date(2026, 11, 21, 8, 4, 0, 0, time.UTC)
	started := metav1.NewTime(now.Add(-4 * time.Minute))
	cgu := upgrade(ranv1alpha1.StateNotCompleted, true, &ranv1alpha1.BatchStatus{Index: 1, Canary: true, StartedAt: &started,
		Clusters: []ranv1alpha1.ClusterProgress{inProgress("spoke-7", "upgrade"), completed("spoke-8")}})
	cases := map[string]struct {
		on   bool
		want []string
	}{
		"colour on":  {true, []string{"State:        \x1b[36mNotCompleted\x1b[0m\n", "spoke-7  \x1b[36mInProgress\x1b[0m  upgrade", "\x1b[32mCompleted\x1b[0m"}},
		"colour off": {false, []string{"State:        NotCompleted\n", "spoke-7  InProgress  upgrade", "Batch 1 (canary), started 4m ago\n"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			if err := writeStatus(&b, painter{on: tc.on}, cgu, now, defaultWidth, statusFacts{}); err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.want {
				if !strings.Contains(b.String(), want) {
					t.Errorf("status does not contain %q:\n%s", want, b.String())
				}
			}
			if !tc.on && strings.Contains(b.String(), "\x1b") {
				t.Errorf("status has escape sequences with colour off:\n%q", b.String())
			}
		})
	}
}

// A Progressive batch's headline shows its stage: size, step, start, deadline, the resets
// and the last unhealthy stage.
func TestBatchHeadlineShowsTheStage(t *testing.T) {
	now := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { return ptr.To(metav1.NewTime(now.Add(d))) }
	st := ranv1alpha1.ClusterGroupUpgradeStatus{Plan: &ranv1alpha1.PlanSummary{Batches: 2},
		CurrentBatch: &ranv1alpha1.BatchStatus{Index: 2, StartedAt: at(-3 * time.Hour), TimeoutAt: at(20 * time.Hour),
			Stage: &ranv1alpha1.StageStatus{Number: 4, Size: 35, Step: 1, StartedAt: at(-10 * time.Minute), TimeoutAt: at(2 * time.Hour),
				Resets: 1, Unhealthy: "Stage 3 had 4 failed or timed-out of 175 clusters, more than its share"}}}
	want := "Batch 2 of 2, started 3h ago, times out in 20h\n" +
		"Stage 4: 35 clusters (step 1 of the growth), started 10m ago, times out in 2h; the growth went back 1 time\n" +
		"Last unhealthy stage: Stage 3 had 4 failed or timed-out of 175 clusters, more than its share"
	if got := batchHeadline(st, 0, now); got != want {
		t.Errorf("headline:\n%s\nwant:\n%s", got, want)
	}
}

func TestStagesPhrase(t *testing.T) {
	if got, want := stagesPhrase([]int{35, 175, 500}, false), "stages of 35, 175, then 500 clusters; an unhealthy stage starts the growth again"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := stagesPhrase([]int{4}, true), "stages of 4 clusters; an unhealthy stage stops the rollout"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestWriteStatusShowsTheAnalysis(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	cgu := upgrade(ranv1alpha1.StateNotCompleted, true, &ranv1alpha1.BatchStatus{Index: 1, Clusters: []ranv1alpha1.ClusterProgress{completed("spoke-1")},
		Analysis: &ranv1alpha1.BatchAnalysis{StartedAt: metav1.NewTime(now.Add(-3 * time.Minute)), Gates: []ranv1alpha1.AnalysisGateStatus{{
			Name: "api-errors", Phase: ranv1alpha1.AnalysisFailed, Conclusive: 2, Failures: 1, Inconclusives: 1,
			Message: "api-errors failed 1 of 2 measurements (0 tolerated): spoke-1 missed value < 0.05"}}}})
	var b strings.Builder
	if err := writeStatus(&b, painter{}, cgu, now, defaultWidth, statusFacts{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Analysis, started 3m ago\n",
		"  GATE        PHASE   MEASURED                        MESSAGE\n",
		"  api-errors  Failed  1 ok, 1 failed, 1 inconclusive  api-errors failed 1 of 2 measurements (0 tolerated): spoke-1 missed value < 0.05\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, b.String())
		}
	}
}

// status reads a rollout that timed out from its batch records on the hub: its late
// cluster, not another rollout's, and how long it ran.
func TestStatusOfATimedOutRolloutFromItsRecords(t *testing.T) {
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { return ptr.To(metav1.NewTime(now.Add(d))) }
	record := func(upgrade string, index int, finished *metav1.Time, clusters ...ranv1alpha1.ClusterProgress) client.Object {
		return &ranv1alpha1.ClusterGroupUpgradeBatch{
			ObjectMeta: metav1.ObjectMeta{Namespace: "cgu-cli", Name: fmt.Sprintf("%s-b%d-p0", upgrade, index),
				Labels: map[string]string{ranv1alpha1.LabelUpgradeName: names.LabelValue(upgrade)}},
			Spec:   ranv1alpha1.ClusterGroupUpgradeBatchSpec{Upgrade: upgrade, Index: index, Clusters: []string{clusters[0].Name}},
			Status: ranv1alpha1.ClusterGroupUpgradeBatchStatus{StartedAt: at(-time.Hour), FinishedAt: finished, Clusters: clusters},
		}
	}
	timedOut := func(name string) ranv1alpha1.ClusterProgress {
		return ranv1alpha1.ClusterProgress{Name: name, State: ranv1alpha1.ClusterTimedOut}
	}
	c := fake.NewClientBuilder().WithScheme(newScheme()).WithObjects(
		record("upgrade", 1, at(-50*time.Minute), completed("cli-6")),
		record("upgrade", 2, at(-10*time.Minute), timedOut("cli-3"), completed("cli-4")),
		record("other", 1, at(-5*time.Minute), timedOut("cli-9")),
	).Build()
	cgu := upgrade(ranv1alpha1.StateTimedOut, true, nil)
	cgu.Namespace, cgu.Name = "cgu-cli", "upgrade"
	cgu.Spec.RemediationStrategy = &ranv1alpha1.RemediationStrategySpec{Timeout: 60}
	cgu.Status.StartedAt = at(-time.Hour)
	facts, err := readStatusFacts(context.Background(), c, cgu)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := writeStatus(&b, painter{}, cgu, now, defaultWidth, facts); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nTimed out:    1 cluster: cli-3\n", "\nRan:          50m (started 1h ago, ended 10m ago)\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, b.String())
		}
	}
	for _, unwanted := range []string{"Time left", "cli-9", "Failed:"} {
		if strings.Contains(b.String(), unwanted) {
			t.Errorf("status shows %q:\n%s", unwanted, b.String())
		}
	}
}
