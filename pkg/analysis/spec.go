package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// DefaultInterval is how long between two measurements of a gate that sets no interval.
const DefaultInterval = time.Minute

// DefaultMeasurements is how many conclusive measurements a gate that sets none takes.
const DefaultMeasurements = 3

// Spec is a gate of spec.analysis ready to run: the judgement's Gate, its query and interval.
type Spec struct {
	Gate
	Query    string
	Interval time.Duration
	// Invalid says why the gate cannot run (FromSpec's error): it is not measured, and is
	// inconclusive.
	Invalid string
}

// FromSpec reads a gate of spec.analysis, its defaults applied. The error says what cannot
// run, naming the gate: a query that does not parse as PromQL or gives no instant vector, a
// condition or a number admission would have refused (an object stored before its CRD
// checked them).
func FromSpec(ag ranv1alpha1.AnalysisGate) (Spec, error) {
	s := Spec{Gate: Gate{Name: ag.Name, Mode: Absolute, Measurements: ag.Measurements, FailureLimit: ag.FailureLimit},
		Query: ag.Query, Interval: DefaultInterval}
	fail := func(format string, a ...any) (Spec, error) {
		return Spec{}, fmt.Errorf("gate %s: %s", ag.Name, fmt.Sprintf(format, a...))
	}
	if s.Measurements <= 0 {
		s.Measurements = DefaultMeasurements
	}
	if s.FailureLimit >= s.Measurements {
		return fail("failureLimit %d is not below measurements %d", s.FailureLimit, s.Measurements)
	}
	if ag.Interval != "" {
		d, err := time.ParseDuration(ag.Interval)
		if err != nil || d < 5*time.Second {
			return fail("interval %q is not a duration of at least 5s", ag.Interval)
		}
		s.Interval = d
	}
	if err := CheckQuery(ag.Query); err != nil {
		return fail("%v", err)
	}
	if ag.Mode == ranv1alpha1.AnalysisComparison {
		if ag.SuccessCondition != "" || ag.FailureCondition != "" {
			return fail("a Comparison gate takes no successCondition or failureCondition")
		}
		if err := s.comparison(ag.Comparison); err != nil {
			return fail("%v", err)
		}
		return s, nil
	}
	if err := s.conditions(ag.SuccessCondition, ag.FailureCondition); err != nil {
		return fail("%v", err)
	}
	return s, nil
}

// conditions gives an Absolute gate its success and failure conditions, either or both,
// refusing two that a value could meet at once.
func (s *Spec) conditions(success, failure string) error {
	if success == "" && failure == "" {
		return fmt.Errorf("an Absolute gate needs successCondition, failureCondition or both")
	}
	var err error
	if success != "" {
		if s.Success, err = ParseCondition(success); err != nil {
			return fmt.Errorf("successCondition: %w", err)
		}
	}
	if failure != "" {
		if s.Failure, err = ParseCondition(failure); err != nil {
			return fmt.Errorf("failureCondition: %w", err)
		}
	}
	if v, ok := Contradict(s.Success, s.Failure); ok {
		return fmt.Errorf("successCondition %q and failureCondition %q contradict: a value of %s meets both", success, failure,
			strconv.FormatFloat(v, 'g', 6, 64))
	}
	return nil
}

// comparison makes s a Comparison tuned by c (the defaults when nil).
func (s *Spec) comparison(c *ranv1alpha1.ComparisonTest) error {
	s.Mode, s.HigherIsWorse = Comparison, true
	if c == nil {
		return nil
	}
	if c.HigherIsWorse != nil {
		s.HigherIsWorse = *c.HigherIsWorse
	}
	s.MinSamples = c.MinSamples
	var err error
	if s.Tolerance, err = number(c.Tolerance, 0); err != nil || s.Tolerance < 0 {
		return fmt.Errorf("tolerance %q is not a number of at least 0", c.Tolerance)
	}
	if s.Alpha, err = number(c.Alpha, DefaultAlpha); err != nil || s.Alpha <= 0 || s.Alpha > 0.5 {
		return fmt.Errorf("alpha %q is not a number above 0 and at most 0.5", c.Alpha)
	}
	return nil
}

// number parses a decimal string, def when empty.
func number(s string, def float64) (float64, error) {
	if s == "" {
		return def, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
		err = fmt.Errorf("not a finite number")
	}
	return v, err
}

// ParseCondition reads a success condition: an operator (<, <=, >, >=) and a number, such
// as "< 0.05".
func ParseCondition(s string) (Condition, error) {
	t := strings.TrimSpace(s)
	for _, op := range []Op{LessEqual, GreaterEqual, Less, Greater} { // the two-character ones first
		if rest, ok := strings.CutPrefix(t, string(op)); ok {
			v, err := number(rest, math.NaN())
			if err != nil || math.IsNaN(v) {
				break
			}
			return Condition{Op: op, Threshold: v}, nil
		}
	}
	return Condition{}, fmt.Errorf("%q is not an operator (<, <=, >, >=) and a number, such as \"< 0.05\"", s)
}

// Summary is what one measurement shows on a plot: its outcome, the upgraded clusters'
// worst value (an Absolute gate, the value furthest the failing way) or median (a
// Comparison), and the baseline's median (a Comparison). NaN when there is none.
type Summary struct {
	At              time.Time
	Outcome         Phase
	Value, Baseline float64
}

// Summarize is measurement m of gate g, for the upgraded clusters, as a Summary.
func Summarize(g Gate, upgraded []string, m Measurement) Summary {
	out := Summary{At: m.At, Outcome: Passed, Value: math.NaN(), Baseline: math.NaN()}
	switch o := judgeOne(g, upgraded, m); {
	case o.inconclusive != "":
		out.Outcome = Inconclusive
	case o.failed != "":
		out.Outcome = Failed
	}
	values := make([]float64, 0, len(upgraded))
	for _, c := range upgraded {
		if v, ok := m.Values[c]; ok && !math.IsNaN(v) {
			values = append(values, v)
		}
	}
	if g.Mode == Comparison {
		out.Value = median(values)
		baseline := make([]float64, 0, len(m.Baseline))
		for _, v := range m.Baseline {
			if !math.IsNaN(v) {
				baseline = append(baseline, v)
			}
		}
		out.Baseline = median(baseline)
		return out
	}
	if len(values) > 0 {
		if op := cmp.Or(g.Success.Op, flip(g.Failure.Op)); op == Greater || op == GreaterEqual {
			out.Value = slices.Min(values) // a floor: the lowest value is the worst
		} else {
			out.Value = slices.Max(values)
		}
	}
	return out
}

// flip is the direction a success condition has when op is the failure condition's: a
// failure above a threshold means success below it.
func flip(op Op) Op {
	switch op {
	case Greater, GreaterEqual:
		return Less
	case Less, LessEqual:
		return Greater
	}
	return op
}

// median is the middle value, NaN of none.
func median(values []float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(values))
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
