package rollout

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/analysis"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

// A batch's analysis (spec.analysis, docs/analysis.md) starts once its clusters ended, with
// at least one completed: each gate measures the completed clusters (and, for a Comparison,
// clusters of the later batches, not upgraded yet) at its interval, the first time an
// interval after the start, and the batch ends only once every gate passed or was skipped,
// after the soak. A gate that fails fails the
// clusters it names (an Absolute gate) or every upgraded cluster (a Comparison); with
// onFailure Abort the rollout then ends. A gate still not passed at the batch's deadline
// fails: an inconclusive measurement is never a pass. The controller measures (MeasureNow
// says what), Decide judges, and the batch's record keeps the verdicts.

// Analysis is the analysis a rollout runs, for Gates; nil without spec.analysis.
type Analysis struct {
	Gates []analysis.Spec
	// Abort ends the rollout once a gate failed (onFailure Abort); otherwise the failed
	// clusters count against spec.maxFailures.
	Abort bool
	// Measured are the measurements the controller took for this decision, by gate name.
	Measured map[string]analysis.Measurement
}

// AnalysisRun is the current batch's analysis as recorded.
type AnalysisRun struct {
	Started time.Time
	// Gates are the gates' verdicts, in the spec's order.
	Gates []GateRun
}

// GateRun is one gate's verdict and its latest measurements.
type GateRun struct {
	Name, Query  string
	Verdict      analysis.Verdict
	Measurements []analysis.Summary
}

// Failed is the first gate of the run that failed, nil when none did.
func (r *AnalysisRun) Failed() *GateRun {
	if r == nil {
		return nil
	}
	for i := range r.Gates {
		if r.Gates[i].Verdict.Phase == analysis.Failed {
			return &r.Gates[i]
		}
	}
	return nil
}

// gate is the run of the gate named name, nil when it has none.
func (r *AnalysisRun) gate(name string) *GateRun {
	for i := range r.Gates {
		if r.Gates[i].Name == name {
			return &r.Gates[i]
		}
	}
	return nil
}

// Upgraded are the clusters of a batch that completed, in plan order: the clusters an
// analysis measures.
func Upgraded(batch plan.Batch, clusters map[string]Cluster) []string {
	var out []string
	for _, name := range batch.Clusters {
		if clusters[name].State == ranv1alpha1.ClusterCompleted {
			out = append(out, name)
		}
	}
	return out
}

// BaselineLimit bounds a Comparison's baseline: a sample that size tells a shift as well as
// the whole fleet would, and keeps the query's list of clusters short.
const BaselineLimit = 250

// Baseline are the clusters of the batches after batch (0-based), not upgraded yet: a
// Comparison's baseline; beyond BaselineLimit of them, that many spread evenly over the
// plan's order.
func Baseline(p plan.Plan, batch int) []string {
	var all []string
	for i := batch + 1; i < len(p.Batches); i++ {
		all = append(all, p.Batches[i].Clusters...)
	}
	if len(all) <= BaselineLimit {
		return all
	}
	out := make([]string, BaselineLimit)
	for i := range out {
		out[i] = all[i*len(all)/BaselineLimit]
	}
	return out
}

// MeasureNow returns the gates the controller must measure before deciding at now, with
// the clusters to measure: the gates of the current batch's analysis that have not ended
// and whose next measurement is due. Nothing before the analysis started.
func MeasureNow(a *Analysis, p Progress, pl plan.Plan, now time.Time) (due []analysis.Spec, upgraded, baseline []string) {
	if a == nil || p.Analysis == nil || p.BatchEnded || p.Finished || p.Batch >= len(pl.Batches) {
		return nil, nil, nil
	}
	for _, g := range a.Gates {
		if run := p.Analysis.gate(g.Name); g.Invalid != "" || (run != nil && run.Verdict.Final()) {
			continue
		}
		if !now.Before(nextMeasurement(p.Analysis, g)) {
			due = append(due, g)
		}
	}
	if len(due) == 0 {
		return nil, nil, nil
	}
	return due, Upgraded(pl.Batches[p.Batch], p.Clusters), Baseline(pl, p.Batch)
}

// nextMeasurement is when gate g measures next: an interval after the start (the metrics of
// a cluster that just completed still show it before its upgrade), then an interval after its
// last measurement.
func nextMeasurement(run *AnalysisRun, g analysis.Spec) time.Time {
	gr := run.gate(g.Name)
	if gr == nil || len(gr.Measurements) == 0 {
		return run.Started.Add(g.Interval)
	}
	return gr.Measurements[len(gr.Measurements)-1].At.Add(g.Interval)
}

// analyse runs the analysis of a batch whose clusters ended (and, from the second pass, the
// measurements taken): it returns the decision to wait with while a gate has not ended.
// Otherwise the batch may end: every gate passed or was skipped, or one failed and its
// clusters are marked failed in p.
func analyse(f Facts, p *Progress, batch plan.Batch, deadline time.Time) (Decision, bool) {
	a := f.Gates.Analysis
	if a == nil || len(a.Gates) == 0 {
		return Decision{}, false
	}
	upgraded := Upgraded(batch, p.Clusters)
	if p.Analysis == nil {
		if len(upgraded) == 0 {
			return Decision{}, false // nothing was upgraded: nothing to measure
		}
		p.Analysis = &AnalysisRun{Started: f.Now}
	}
	run := &AnalysisRun{Started: p.Analysis.Started}
	baseline := len(Baseline(f.Plan, p.Batch))
	for _, g := range a.Gates {
		run.Gates = append(run.Gates, judgeGate(f, g, p.Analysis.gate(g.Name), upgraded, baseline, deadline))
	}
	p.Analysis = run
	if failed := run.Failed(); failed != nil {
		p.Clusters = failAnalysed(p.Clusters, failedClusters(*failed, upgraded), f.Now)
		return Decision{}, false
	}
	return analysisWait(*p, a, deadline)
}

// judgeGate is gate g's run after this pass: old (nil before its first), with the measurement
// taken for it, and failed when it has not passed by the deadline.
func judgeGate(f Facts, g analysis.Spec, old *GateRun, upgraded []string, baseline int, deadline time.Time) GateRun {
	gr := GateRun{Name: g.Name, Query: g.Query, Verdict: analysis.Start(g.Gate)}
	if old != nil {
		gr.Verdict, gr.Measurements = old.Verdict, slices.Clone(old.Measurements)
	} else if skip := analysis.Skip(g.Gate, len(upgraded), baseline); skip != nil {
		gr.Verdict = *skip
	}
	if m, ok := f.Gates.Analysis.Measured[g.Name]; ok && !gr.Verdict.Final() {
		gr.Verdict = gr.Verdict.Add(g.Gate, upgraded, m)
		gr.Measurements = append(gr.Measurements, analysis.Summarize(g.Gate, upgraded, m))
		if n := len(gr.Measurements) - ranv1alpha1.AnalysisGateMeasurementLimit; n > 0 {
			gr.Measurements = gr.Measurements[n:]
		}
	}
	if g.Invalid != "" && !gr.Verdict.Final() {
		gr.Verdict.Phase, gr.Verdict.Message = analysis.Inconclusive, g.Invalid
	}
	if !gr.Verdict.Final() && !f.Now.Before(deadline) {
		gr.Verdict.Phase = analysis.Failed
		gr.Verdict.Message = fmt.Sprintf("%s did not pass by the batch's deadline (%s)", g.Name, gr.Verdict.Message)
	}
	return gr
}

// analysisWait is the decision to wait with while a gate of the analysis in p has not ended,
// waking for its next measurement; false when every gate ended.
func analysisWait(p Progress, a *Analysis, deadline time.Time) (Decision, bool) {
	var open []string
	reason, wake := ranv1alpha1.ReasonBatchAnalysis, deadline
	for i, gr := range p.Analysis.Gates {
		if gr.Verdict.Final() {
			continue
		}
		open = append(open, gr.Verdict.Message)
		if gr.Verdict.Phase == analysis.Inconclusive {
			reason = ranv1alpha1.ReasonAnalysisInconclusive
		}
		if next := nextMeasurement(p.Analysis, a.Gates[i]); a.Gates[i].Invalid == "" && next.Before(wake) {
			wake = next
		}
	}
	if len(open) == 0 {
		return Decision{}, false
	}
	w := &Wait{Reason: reason, Batch: p.Batch + 1,
		Message: fmt.Sprintf("Batch %d is analysed before it ends: %s", p.Batch+1, strings.Join(open, "; "))}
	return Decision{State: ranv1alpha1.StateNotCompleted, Reason: w.Reason, Message: w.Message, Progress: p,
		BatchDeadline: deadline, Waiting: w, Wake: wake}, true
}

// failedClusters are the clusters a failed gate fails: those an Absolute gate names, every
// upgraded cluster for a Comparison, or for a gate that failed by the deadline without
// naming any.
func failedClusters(gr GateRun, upgraded []string) []string {
	var named []string
	for _, name := range gr.Verdict.Clusters {
		if slices.Contains(upgraded, name) {
			named = append(named, name)
		}
	}
	if len(named) == 0 {
		return upgraded
	}
	return named
}

// failAnalysed marks the clusters failed by an analysis, in a copy of clusters.
func failAnalysed(clusters map[string]Cluster, failed []string, now time.Time) map[string]Cluster {
	out := maps.Clone(clusters)
	for _, name := range failed {
		c := out[name]
		c.State, c.Reason, c.Since, c.CompliantSince = ranv1alpha1.ClusterFailed, ranv1alpha1.ReasonAnalysisFailed, now, nil
		out[name] = c
	}
	return out
}

// analysisEnds says, for a batch whose analysis failed with onFailure Abort, why the
// rollout ends; "" otherwise.
func analysisEnds(f Facts, p Progress) string {
	if a := f.Gates.Analysis; a == nil || !a.Abort {
		return ""
	}
	if failed := p.Analysis.Failed(); failed != nil {
		return fmt.Sprintf("Batch %d failed its analysis and spec.analysis.onFailure is Abort: %s", p.Batch+1, failed.Verdict.Message)
	}
	return ""
}
