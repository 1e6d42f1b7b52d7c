package rollout

import (
	"fmt"
	"strings"
	"testing"
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/analysis"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

// errorRatio is an Absolute gate: every upgraded cluster's value below 0.05, two
// measurements a minute apart.
func errorRatio() analysis.Spec {
	return analysis.Spec{Gate: analysis.Gate{Name: "errors", Mode: analysis.Absolute, Measurements: 2,
		Success: analysis.Condition{Op: analysis.Less, Threshold: 0.05}}, Query: `x{cluster=~"{{clusters}}"}`, Interval: time.Minute}
}

// analysed is a fleet of two batches of two clusters, one policy, with an analysis.
func analysed(t *testing.T, abort bool, gates ...analysis.Spec) *fleet {
	fl := newFleet(t, []plan.Batch{{Clusters: []string{"a1", "a2"}}, {Clusters: []string{"b1", "b2"}}}, 1)
	fl.f.Gates.Analysis = &Analysis{Gates: gates, Abort: abort}
	return fl
}

// batchEnded plays the first batch to its end at one minute: both clusters comply, and the
// analysis starts.
func (fl *fleet) batchEnded() Decision {
	fl.decide(0)
	fl.comply("a1", 0)
	fl.comply("a2", 0)
	return fl.decide(time.Minute)
}

// measure plays the controller: it measures what MeasureNow asks for at now with values,
// then decides.
func (fl *fleet) measure(now time.Duration, values map[string]float64, err string) Decision {
	fl.t.Helper()
	at := t0.Add(now)
	due, upgraded, _ := MeasureNow(fl.f.Gates.Analysis, fl.f.Progress, fl.f.Plan, at)
	fl.f.Gates.Analysis.Measured = map[string]analysis.Measurement{}
	for _, g := range due {
		m := analysis.Measurement{At: at, Err: err, Values: map[string]float64{}}
		for _, c := range upgraded {
			if v, ok := values[c]; ok && err == "" {
				m.Values[c] = v
			}
		}
		fl.f.Gates.Analysis.Measured[g.Name] = m
	}
	d := fl.decide(now)
	fl.f.Gates.Analysis.Measured = nil
	return d
}

func TestAnalysisPassesThenTheNextBatchStarts(t *testing.T) {
	fl := analysed(t, true, errorRatio())
	d := fl.batchEnded()
	expectWait(t, d, ranv1alpha1.ReasonBatchAnalysis, 1)
	if d.Progress.Analysis == nil || !d.Wake.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("analysis %+v wake %v: want it started, measured an interval later", d.Progress.Analysis, d.Wake)
	}
	if due, _, _ := MeasureNow(fl.f.Gates.Analysis, d.Progress, fl.f.Plan, t0.Add(90*time.Second)); len(due) != 0 {
		t.Fatalf("a measurement due before its interval: %v", due)
	}
	if due, up, _ := MeasureNow(fl.f.Gates.Analysis, d.Progress, fl.f.Plan, t0.Add(2*time.Minute)); len(due) != 1 || strings.Join(up, ",") != "a1,a2" {
		t.Fatalf("due %v upgraded %v, want the gate on a1,a2", due, up)
	}
	ok := map[string]float64{"a1": 0.01, "a2": 0.02}
	d = fl.measure(2*time.Minute, ok, "")
	expectWait(t, d, ranv1alpha1.ReasonBatchAnalysis, 1)
	if !d.Wake.Equal(t0.Add(3 * time.Minute)) {
		t.Fatalf("wake %v, want the next measurement an interval later", d.Wake)
	}
	d = fl.measure(3*time.Minute, ok, "")
	fl.expect(d, ranv1alpha1.StateNotCompleted, 1, "Batch 2 of 2")
	if len(d.Ended) != 1 || d.Ended[0].Analysis == nil || d.Ended[0].Analysis.Gates[0].Verdict.Phase != analysis.Passed {
		t.Fatalf("ended %+v, want batch 1 ended with its gate passed", d.Ended)
	}
	if d.Progress.Analysis != nil {
		t.Fatalf("the new batch carries the old analysis")
	}
}

func TestAnalysisFailureFailsTheNamedClustersAndAborts(t *testing.T) {
	fl := analysed(t, true, errorRatio())
	fl.batchEnded()
	d := fl.measure(2*time.Minute, map[string]float64{"a1": 0.01, "a2": 0.3}, "")
	if d.State != ranv1alpha1.StateTimedOut || !strings.Contains(d.Message, "failed its analysis") || !strings.Contains(d.Message, "a2") {
		t.Fatalf("got %s %q, want the rollout ended naming a2", d.State, d.Message)
	}
	if got := d.Progress.Clusters["a2"]; got.State != ranv1alpha1.ClusterFailed || got.Reason != ranv1alpha1.ReasonAnalysisFailed {
		t.Fatalf("a2 = %+v, want Failed AnalysisFailed", got)
	}
	if got := d.Progress.Clusters["a1"]; got.State != ranv1alpha1.ClusterCompleted {
		t.Fatalf("a1 = %+v, want it Completed: its value met the condition", got)
	}
	if !d.EndedEarly || d.Progress.Done.Failed != 1 {
		t.Fatalf("ended early %v, failed %d: want the rollout ended before batch 2 with one failure", d.EndedEarly, d.Progress.Done.Failed)
	}
}

func TestAnalysisFailureWithContinueGoesOn(t *testing.T) {
	fl := analysed(t, false, errorRatio())
	fl.batchEnded()
	d := fl.measure(2*time.Minute, map[string]float64{"a1": 0.3, "a2": 0.3}, "")
	fl.expect(d, ranv1alpha1.StateNotCompleted, 1, "Batch 2 of 2")
	budget := 1
	fl = analysed(t, false, errorRatio())
	fl.f.Gates.MaxFailures = &budget
	fl.batchEnded()
	d = fl.measure(2*time.Minute, map[string]float64{"a1": 0.3, "a2": 0.3}, "")
	if d.State != ranv1alpha1.StateTimedOut || d.Reason != ranv1alpha1.ReasonFailureBudgetExceeded {
		t.Fatalf("got %s %s, want the budget of 1 spent by two failed clusters", d.State, d.Reason)
	}
}

func TestAnalysisInconclusiveHoldsUntilTheDeadline(t *testing.T) {
	fl := analysed(t, true, errorRatio())
	fl.batchEnded()
	d := fl.measure(2*time.Minute, nil, "connection refused")
	expectWait(t, d, ranv1alpha1.ReasonAnalysisInconclusive, 1)
	if !strings.Contains(d.Message, "connection refused") {
		t.Fatalf("message %q does not say why", d.Message)
	}
	// The endpoint answers again: two good measurements pass.
	ok := map[string]float64{"a1": 0.01, "a2": 0.01}
	fl.measure(3*time.Minute, ok, "")
	d = fl.measure(4*time.Minute, ok, "")
	fl.expect(d, ranv1alpha1.StateNotCompleted, 1, "Batch 2 of 2")

	// Never answering: at the batch's deadline (30 minutes, half the hour) the gate fails.
	fl = analysed(t, true, errorRatio())
	fl.batchEnded()
	for m := 2; m < 30; m++ {
		d = fl.measure(time.Duration(m)*time.Minute, nil, "connection refused")
		expectWait(t, d, ranv1alpha1.ReasonAnalysisInconclusive, 1)
	}
	d = fl.measure(30*time.Minute, nil, "connection refused")
	if d.State != ranv1alpha1.StateTimedOut || !strings.Contains(d.Message, "did not pass by the batch's deadline") {
		t.Fatalf("got %s %q, want the analysis failed at the deadline", d.State, d.Message)
	}
	if d.Progress.Done.Failed != 2 {
		t.Fatalf("failed %d, want both upgraded clusters failed", d.Progress.Done.Failed)
	}
}

func TestAnalysisSkipsAComparisonWithoutBaseline(t *testing.T) {
	cmp := analysis.Spec{Gate: analysis.Gate{Name: "vs-baseline", Mode: analysis.Comparison, Measurements: 1, HigherIsWorse: true, MinSamples: 3},
		Query: `x{cluster=~"{{clusters}}"}`, Interval: time.Minute}
	fl := analysed(t, true, cmp)
	d := fl.batchEnded()
	fl.expect(d, ranv1alpha1.StateNotCompleted, 1, "Batch 2 of 2")
	if g := d.Ended[0].Analysis.Gates[0].Verdict; g.Phase != analysis.Skipped || !strings.Contains(g.Message, "3 each needed") {
		t.Fatalf("verdict %+v, want skipped for too few clusters", g)
	}
}

func TestAnalysisRecordedAndReadBack(t *testing.T) {
	fl := analysed(t, true, errorRatio())
	fl.batchEnded()
	d := fl.measure(2*time.Minute, map[string]float64{"a1": 0.01, "a2": 0.02}, "")
	st := AnalysisStatus(d.Progress.Analysis)
	if len(st.Gates) != 1 || st.Gates[0].Phase != ranv1alpha1.AnalysisRunning || len(st.Gates[0].Measurements) != 1 ||
		st.Gates[0].Measurements[0].Value != "0.02" || st.Gates[0].Measurements[0].Outcome != ranv1alpha1.AnalysisPassed {
		t.Fatalf("status %+v, want one passed measurement of worst value 0.02", st)
	}
	back := AnalysisFrom(st)
	fl.f.Progress.Analysis = back
	d = fl.measure(3*time.Minute, map[string]float64{"a1": 0.01, "a2": 0.02}, "")
	fl.expect(d, ranv1alpha1.StateNotCompleted, 1, "Batch 2 of 2")
}

func TestBaselineIsBoundedAndSpread(t *testing.T) {
	var batches []plan.Batch
	for b := range 10 {
		var clusters []string
		for c := range 100 {
			clusters = append(clusters, fmt.Sprintf("b%d-c%d", b, c))
		}
		batches = append(batches, plan.Batch{Clusters: clusters})
	}
	p := plan.Plan{Batches: batches}
	if got := Baseline(p, 8); len(got) != 100 || got[0] != "b9-c0" {
		t.Fatalf("the last batch's 100 clusters: got %d from %s", len(got), got[0])
	}
	got := Baseline(p, 0) // 900 clusters left
	if len(got) != BaselineLimit || got[0] != "b1-c0" || !strings.HasPrefix(got[len(got)-1], "b9-") {
		t.Fatalf("got %d clusters from %s to %s, want %d spread over batches 2 to 10", len(got), got[0], got[len(got)-1], BaselineLimit)
	}
	seen := map[string]bool{}
	for _, c := range got {
		if seen[c] {
			t.Fatalf("%s twice", c)
		}
		seen[c] = true
	}
}
