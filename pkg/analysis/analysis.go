// Package analysis judges a batch by what its clusters' metrics say: the pure part of an
// analysis gate (issue 33). A gate's query is measured at intervals, each measurement a value
// per cluster of the batch (and, for a comparison, per cluster not upgraded yet); Judge turns
// the measurements taken so far into a verdict: still running, passed, failed, or
// inconclusive. An endpoint that could not answer makes a measurement inconclusive, never a
// pass.
//
// Nothing here reads a clock or a network: the controller measures, records the
// measurements, and asks again.
package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// Mode is how a measurement is judged: Absolute, every upgraded cluster's value must meet
// the success condition; Comparison, the upgraded clusters' values must not be worse than the
// baseline's (the clusters not upgraded yet), by the one-sided Mann-Whitney U test
// (CompareSamples).
type Mode string

// The modes.
const (
	Absolute   Mode = "Absolute"
	Comparison Mode = "Comparison"
)

// Op compares a value with a threshold.
type Op string

// The comparisons of a success condition.
const (
	Less         Op = "<"
	LessEqual    Op = "<="
	Greater      Op = ">"
	GreaterEqual Op = ">="
)

// Condition is what a value must meet: Value Op Threshold.
type Condition struct {
	Op        Op
	Threshold float64
}

// Met reports whether v meets the condition; NaN never does.
func (c Condition) Met(v float64) bool {
	if math.IsNaN(v) {
		return false
	}
	switch c.Op {
	case Less:
		return v < c.Threshold
	case LessEqual:
		return v <= c.Threshold
	case Greater:
		return v > c.Threshold
	case GreaterEqual:
		return v >= c.Threshold
	}
	return false
}

func (c Condition) String() string { return fmt.Sprintf("value %s %g", c.Op, c.Threshold) }

// Gate is one query of an analysis gate, as the judgement needs it.
type Gate struct {
	Name string
	Mode Mode
	// Measurements is how many conclusive measurements the gate takes before it passes.
	Measurements int
	// FailureLimit is how many failed measurements the gate tolerates: one more fails it.
	FailureLimit int
	// Success and Failure are the conditions of an Absolute gate, either or both (an Op of
	// "" is unset). A value fails when it meets Failure, or misses Success when there is no
	// Failure; it passes when it meets Success, or misses Failure when there is no Success;
	// with both, a value that meets neither is inconclusive.
	Success, Failure Condition
	// HigherIsWorse says, for a Comparison, which way is worse.
	HigherIsWorse bool
	// Tolerance is, for a Comparison, how much worse than the baseline the upgraded
	// clusters may be: the baseline is moved that far the worse way before the test.
	Tolerance float64
	// Alpha is a Comparison's significance level (0.05 when zero).
	Alpha float64
	// MinSamples is the fewest values each side of a Comparison needs (DefaultMinSamples
	// when zero): fewer make the measurement inconclusive.
	MinSamples int
}

// DefaultMinSamples is the fewest values each side of a comparison needs: the test's normal
// approximation is not trusted below it.
const DefaultMinSamples = 8

// DefaultAlpha is a comparison's significance level when the gate sets none.
const DefaultAlpha = 0.05

// Measurement is one run of a gate's query.
type Measurement struct {
	At time.Time
	// Err is why the endpoint gave no answer (unreachable, an error, a malformed result):
	// the measurement is inconclusive.
	Err string
	// Values are the upgraded clusters' values, by cluster; Baseline the not-upgraded
	// clusters' (Comparison only).
	Values, Baseline map[string]float64
}

// Phase is where a gate stands.
type Phase string

// The phases.
const (
	Running      Phase = "Running"
	Passed       Phase = "Passed"
	Failed       Phase = "Failed"
	Inconclusive Phase = "Inconclusive"
	// Skipped is a Comparison that cannot be made in a batch: the plan leaves too few
	// clusters on a side (Skip).
	Skipped Phase = "Skipped"
)

// Verdict is a gate's judgement of its measurements so far.
type Verdict struct {
	Phase Phase
	// Conclusive, Failures and Inconclusives count the measurements by outcome.
	Conclusive, Failures, Inconclusives int
	// Clusters are, for an Absolute gate, the clusters that missed the condition in the
	// measurements that failed, sorted.
	Clusters []string
	// Message says why, in one sentence.
	Message string
}

// Judge judges the measurements of gate, in the order taken, for the upgraded clusters:
// Failed once more measurements failed than FailureLimit, Passed once Measurements
// conclusive ones are in without that, Inconclusive while the last measurement is, Running
// otherwise. A measurement missing an upgraded cluster's value is inconclusive: a cluster
// the query does not see is not a cluster that passed.
func Judge(g Gate, upgraded []string, ms []Measurement) Verdict {
	v := Start(g)
	for _, m := range ms {
		v = v.Add(g, upgraded, m)
	}
	return v
}

// Start is the verdict of a gate with no measurement yet.
func Start(g Gate) Verdict {
	return Verdict{Phase: Running, Message: fmt.Sprintf("%s: 0 of %d measurements taken, 0 failed", g.Name, max(g.Measurements, 1))}
}

// Final reports whether the verdict no longer changes: Passed, Failed or Skipped.
func (v Verdict) Final() bool { return v.Phase == Passed || v.Phase == Failed || v.Phase == Skipped }

// Skip is the verdict of a Comparison gate that cannot be made in a batch with upgraded
// clusters upgraded and baseline clusters not upgraded yet, because one side holds fewer
// than MinSamples; nil when it can be made, and for an Absolute gate.
func Skip(g Gate, upgraded, baseline int) *Verdict {
	need := g.MinSamples
	if need <= 0 {
		need = DefaultMinSamples
	}
	if g.Mode != Comparison || (upgraded >= need && baseline >= need) {
		return nil
	}
	return &Verdict{Phase: Skipped, Message: fmt.Sprintf(
		"%s is skipped: the batch has %d upgraded clusters and %d not upgraded yet, %d each needed to compare", g.Name, upgraded, baseline, need)}
}

// Add is the verdict once measurement m is judged too, so that a verdict kept between
// measurements (in a batch record, say) needs only the new one; Start is the first. A final
// verdict stays as it is.
func (v Verdict) Add(g Gate, upgraded []string, m Measurement) Verdict {
	if v.Final() {
		return v
	}
	o := judgeOne(g, upgraded, m)
	switch {
	case o.inconclusive != "":
		v.Inconclusives++
		v.Phase, v.Message = Inconclusive, fmt.Sprintf("%s is inconclusive: %s", g.Name, o.inconclusive)
		return v
	case o.failed != "":
		v.Failures++
		missed := map[string]bool{}
		for _, c := range append(v.Clusters, o.clusters...) {
			missed[c] = true
		}
		v.Clusters = slices.Sorted(maps.Keys(missed))
	}
	v.Conclusive++
	switch {
	case v.Failures > g.FailureLimit:
		v.Phase, v.Message = Failed, fmt.Sprintf("%s failed %d of %d measurements (%d tolerated): %s",
			g.Name, v.Failures, v.Conclusive, g.FailureLimit, o.failed)
	case v.Conclusive >= max(g.Measurements, 1):
		v.Phase, v.Message = Passed, fmt.Sprintf("%s passed %d of %d measurements", g.Name, v.Conclusive-v.Failures, v.Conclusive)
	default:
		v.Phase, v.Message = Running, fmt.Sprintf("%s: %d of %d measurements taken, %d failed", g.Name, v.Conclusive, max(g.Measurements, 1), v.Failures)
	}
	return v
}

// outcome is one measurement's judgement: inconclusive (why), failed (why, and for an
// Absolute gate the clusters that missed), or neither (passed).
type outcome struct {
	inconclusive, failed string
	clusters             []string
}

func judgeOne(g Gate, upgraded []string, m Measurement) outcome {
	if m.Err != "" {
		return outcome{inconclusive: "the endpoint gave no answer: " + m.Err}
	}
	var values []float64
	var absent []string
	for _, c := range upgraded {
		v, ok := m.Values[c]
		if !ok || math.IsNaN(v) {
			absent = append(absent, c)
			continue
		}
		values = append(values, v)
	}
	if len(absent) > 0 {
		return outcome{inconclusive: fmt.Sprintf("no value for %s", names(absent))}
	}
	if g.Mode == Absolute {
		return judgeAbsolute(g, upgraded, m.Values)
	}
	shift := g.Tolerance
	if !g.HigherIsWorse {
		shift = -shift
	}
	baseline := make([]float64, 0, len(m.Baseline))
	for _, v := range m.Baseline {
		baseline = append(baseline, v+shift)
	}
	c, err := CompareSamples(values, baseline, g.HigherIsWorse, g.MinSamples)
	if err != nil {
		return outcome{inconclusive: err.Error()}
	}
	alpha := g.Alpha
	if alpha <= 0 {
		alpha = DefaultAlpha
	}
	if c.P < alpha {
		return outcome{failed: fmt.Sprintf("the upgraded clusters are worse than the baseline (Mann-Whitney U %.1f, p %.3g < %g)", c.U, c.P, alpha)}
	}
	return outcome{}
}

// judgeAbsolute judges the upgraded clusters' values, every one present, by an Absolute
// gate's conditions.
func judgeAbsolute(g Gate, upgraded []string, values map[string]float64) outcome {
	var missed, between []string
	for _, c := range upgraded {
		switch failed, undecided := g.judgeValue(values[c]); {
		case failed:
			missed = append(missed, c)
		case undecided:
			between = append(between, c)
		}
	}
	switch {
	case len(missed) > 0:
		return outcome{failed: fmt.Sprintf("%s %s", names(missed), g.failedText()), clusters: missed}
	case len(between) > 0:
		return outcome{inconclusive: fmt.Sprintf("%s met neither %s nor %s", names(between), g.Success, g.Failure)}
	}
	return outcome{}
}

// judgeValue judges one cluster's value by an Absolute gate's conditions: failed, or
// undecided (it meets neither of two conditions), or neither (passed).
func (g Gate) judgeValue(v float64) (failed, undecided bool) {
	hasSuccess, hasFailure := g.Success.Op != "", g.Failure.Op != ""
	switch {
	case hasFailure && g.Failure.Met(v):
		return true, false
	case hasSuccess && g.Success.Met(v):
		return false, false
	case hasSuccess && hasFailure:
		return false, true
	}
	return hasSuccess, false // misses the only condition, Success: failed; misses Failure: passed
}

// failedText says why a value failed an Absolute gate: it met the failure condition, or
// missed the success condition.
func (g Gate) failedText() string {
	if g.Failure.Op != "" {
		return "met the failure condition " + g.Failure.String()
	}
	return "missed " + g.Success.String()
}

// Contradict reports, for the two conditions of an Absolute gate, a value that meets both, if
// any: such conditions cannot judge it.
func Contradict(success, failure Condition) (float64, bool) {
	upper := func(c Condition) bool { return c.Op == Less || c.Op == LessEqual }
	switch s, f := success, failure; {
	case s.Op == "" || f.Op == "":
		return 0, false
	case upper(s) && upper(f):
		return math.Min(s.Threshold, f.Threshold) - 1, true
	case !upper(s) && !upper(f):
		return math.Max(s.Threshold, f.Threshold) + 1, true
	}
	lo, hi := success, failure // lo is the lower bound (>, >=), hi the upper (<, <=)
	if upper(lo) {
		lo, hi = hi, lo
	}
	switch {
	case lo.Threshold < hi.Threshold:
		return (lo.Threshold + hi.Threshold) / 2, true
	case lo.Threshold == hi.Threshold && lo.Op == GreaterEqual && hi.Op == LessEqual:
		return lo.Threshold, true
	}
	return 0, false
}

// Test is the result of CompareSamples.
type Test struct {
	// U is the Mann-Whitney statistic of the upgraded sample; P the one-sided p-value of
	// "the upgraded values are worse".
	U, P float64
}

// CompareSamples tests whether the upgraded values are worse than the baseline's (higher,
// or lower when higherIsWorse is false): the one-sided Mann-Whitney U test, ties ranked by
// their mean rank, with the normal approximation corrected for ties and continuity. Fewer
// than minSamples values on a side (DefaultMinSamples when zero or less), NaN among them,
// or samples all equal, cannot be judged: an error says which.
func CompareSamples(upgraded, baseline []float64, higherIsWorse bool, minSamples int) (Test, error) {
	if minSamples <= 0 {
		minSamples = DefaultMinSamples
	}
	if len(upgraded) < minSamples || len(baseline) < minSamples {
		return Test{}, fmt.Errorf("too few samples: %d upgraded and %d baseline values, %d each needed",
			len(upgraded), len(baseline), minSamples)
	}
	all := make([]ranked, 0, len(upgraded)+len(baseline))
	for _, side := range []struct {
		values   []float64
		upgraded bool
	}{{upgraded, true}, {baseline, false}} {
		for _, v := range side.values {
			if math.IsNaN(v) {
				return Test{}, fmt.Errorf("a value is not a number")
			}
			if !higherIsWorse {
				v = -v // lower is worse: rank the negated values, worse ranking higher either way
			}
			all = append(all, ranked{v: v, upgraded: side.upgraded})
		}
	}
	rankSum, ties := rankSums(all)
	n1, n2, n := float64(len(upgraded)), float64(len(baseline)), float64(len(all))
	u := rankSum - n1*(n1+1)/2
	variance := n1 * n2 / 12 * ((n + 1) - ties/(n*(n-1)))
	if variance <= 0 {
		return Test{}, fmt.Errorf("every value is the same: the samples cannot be told apart")
	}
	z := (u - n1*n2/2 - 0.5) / math.Sqrt(variance)
	return Test{U: u, P: 0.5 * math.Erfc(z/math.Sqrt2)}, nil
}

// ranked is a value of either sample.
type ranked struct {
	v        float64
	upgraded bool
}

// rankSums ranks the values of both samples together, ties by their mean rank, and returns
// the upgraded sample's rank sum and the tie term Σ(t³ - t) over the groups of ties.
func rankSums(all []ranked) (rankSum, ties float64) {
	slices.SortFunc(all, func(a, b ranked) int { return cmp.Compare(a.v, b.v) })
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // the mean of ranks i+1 .. j
		for k := i; k < j; k++ {
			if all[k].upgraded {
				rankSum += rank
			}
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	return rankSum, ties
}

// names lists clusters for a message: the first three and how many more.
func names(clusters []string) string {
	const shown = 3
	if len(clusters) <= shown {
		return strings.Join(clusters, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(clusters[:shown], ", "), len(clusters)-shown)
}
