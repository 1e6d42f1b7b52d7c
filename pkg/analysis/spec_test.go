package analysis

import (
	"math"
	"strings"
	"testing"
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

func TestFromSpec(t *testing.T) {
	no := false
	for _, tc := range []struct {
		name string
		in   ranv1alpha1.AnalysisGate
		want Spec
		err  string
	}{{
		name: "absolute, defaults",
		in:   ranv1alpha1.AnalysisGate{Name: "e", Query: `x{cluster=~"{{clusters}}"}`, SuccessCondition: " <= 0.05 "},
		want: Spec{Gate: Gate{Name: "e", Mode: Absolute, Measurements: 3, Success: Condition{Op: LessEqual, Threshold: 0.05}},
			Query: `x{cluster=~"{{clusters}}"}`, Interval: time.Minute},
	}, {
		name: "comparison",
		in: ranv1alpha1.AnalysisGate{Name: "c", Query: `x{cluster=~"{{clusters}}"}`, Mode: ranv1alpha1.AnalysisComparison, Interval: "30s",
			Measurements: 5, FailureLimit: 1, Comparison: &ranv1alpha1.ComparisonTest{HigherIsWorse: &no, Tolerance: "0.5", Alpha: ".01", MinSamples: 4}},
		want: Spec{Gate: Gate{Name: "c", Mode: Comparison, Measurements: 5, FailureLimit: 1, Tolerance: 0.5, Alpha: 0.01, MinSamples: 4},
			Query: `x{cluster=~"{{clusters}}"}`, Interval: 30 * time.Second},
	}, {
		name: "a query that does not parse",
		in:   ranv1alpha1.AnalysisGate{Name: "bad", Query: `rate(x{cluster=~"{{clusters}}"}`, SuccessCondition: "<1"},
		err:  "gate bad: the query does not parse as PromQL",
	}, {
		name: "a range vector",
		in:   ranv1alpha1.AnalysisGate{Name: "range", Query: `x{cluster=~"{{clusters}}"}[5m]`, SuccessCondition: "<1"},
		err:  "gives a range vector",
	}, {
		name: "no condition",
		in:   ranv1alpha1.AnalysisGate{Name: "e", Query: `x{cluster=~"{{clusters}}"}`},
		err:  "an Absolute gate needs successCondition, failureCondition or both",
	}, {
		name: "both conditions",
		in:   ranv1alpha1.AnalysisGate{Name: "e", Query: `x{cluster=~"{{clusters}}"}`, SuccessCondition: "< 0.05", FailureCondition: ">= 0.1"},
		want: Spec{Gate: Gate{Name: "e", Mode: Absolute, Measurements: 3, Success: Condition{Op: Less, Threshold: 0.05},
			Failure: Condition{Op: GreaterEqual, Threshold: 0.1}}, Query: `x{cluster=~"{{clusters}}"}`, Interval: time.Minute},
	}, {
		name: "conditions that contradict",
		in:   ranv1alpha1.AnalysisGate{Name: "e", Query: `x{cluster=~"{{clusters}}"}`, SuccessCondition: "< 0.1", FailureCondition: "> 0.05"},
		err:  `gate e: successCondition "< 0.1" and failureCondition "> 0.05" contradict: a value of 0.075 meets both`,
	}, {
		name: "a failure limit that can never fail",
		in:   ranv1alpha1.AnalysisGate{Name: "e", Query: `x{cluster=~"{{clusters}}"}`, SuccessCondition: "<1", Measurements: 2, FailureLimit: 2},
		err:  "failureLimit 2 is not below measurements 2",
	}, {
		name: "an alpha out of range",
		in: ranv1alpha1.AnalysisGate{Name: "c", Query: `x{cluster=~"{{clusters}}"}`, Mode: ranv1alpha1.AnalysisComparison,
			Comparison: &ranv1alpha1.ComparisonTest{Alpha: "0.9"}},
		err: "alpha \"0.9\"",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromSpec(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	g := Gate{Name: "e", Mode: Absolute, Success: Condition{Op: GreaterEqual, Threshold: 0.9}}
	s := Summarize(g, []string{"a", "b"}, Measurement{Values: map[string]float64{"a": 0.95, "b": 0.5}})
	if s.Outcome != Failed || s.Value != 0.5 || !math.IsNaN(s.Baseline) {
		t.Fatalf("got %+v, want failed with the lowest value for a floor", s)
	}
	s = Summarize(g, []string{"a", "b"}, Measurement{Err: "down"})
	if s.Outcome != Inconclusive || !math.IsNaN(s.Value) {
		t.Fatalf("got %+v, want inconclusive without a value", s)
	}
	c := Gate{Name: "c", Mode: Comparison, HigherIsWorse: true, MinSamples: 3}
	s = Summarize(c, []string{"a", "b", "c"}, Measurement{Values: map[string]float64{"a": 1, "b": 2, "c": 3},
		Baseline: map[string]float64{"x": 1, "y": 1, "z": 2, "w": 4}})
	if s.Value != 2 || s.Baseline != 1.5 {
		t.Fatalf("got %+v, want the medians 2 and 1.5", s)
	}
}

func TestContradict(t *testing.T) {
	c := func(op Op, v float64) Condition { return Condition{Op: op, Threshold: v} }
	for _, tc := range []struct {
		success, failure Condition
		meetsBoth        bool
	}{
		{c(Less, 0.05), c(Greater, 0.1), false},
		{c(Less, 0.05), c(GreaterEqual, 0.05), false},
		{c(LessEqual, 0.05), c(GreaterEqual, 0.05), true},
		{c(Less, 0.1), c(Greater, 0.05), true},
		{c(Less, 0.1), c(Less, 0.5), true},
		{c(Greater, 0.9), c(Less, 0.5), false},
		{c(Greater, 0.9), c(GreaterEqual, 0.99), true},
		{c(Greater, 0.5), c(Less, 0.9), true},
		{c(Less, 0.05), Condition{}, false},
	} {
		v, both := Contradict(tc.success, tc.failure)
		if both != tc.meetsBoth {
			t.Errorf("%v and %v: contradict %v, want %v", tc.success, tc.failure, both, tc.meetsBoth)
			continue
		}
		if both && (!tc.success.Met(v) || !tc.failure.Met(v)) {
			t.Errorf("%v and %v: the witness %g does not meet both", tc.success, tc.failure, v)
		}
	}
}

func TestJudgeWithBothConditions(t *testing.T) {
	g := Gate{Name: "e", Mode: Absolute, Measurements: 1, Success: Condition{Op: Less, Threshold: 0.05}, Failure: Condition{Op: Greater, Threshold: 0.1}}
	batch := []string{"a", "b"}
	for _, tc := range []struct {
		a, b    float64
		phase   Phase
		message string
	}{
		{0.01, 0.02, Passed, "passed 1 of 1"},
		{0.01, 0.07, Inconclusive, "b met neither value < 0.05 nor value > 0.1"},
		{0.2, 0.07, Failed, "a met the failure condition value > 0.1"},
	} {
		v := Judge(g, batch, []Measurement{{Values: map[string]float64{"a": tc.a, "b": tc.b}}})
		if v.Phase != tc.phase || !strings.Contains(v.Message, tc.message) {
			t.Errorf("%g, %g: %s %q, want %s containing %q", tc.a, tc.b, v.Phase, v.Message, tc.phase, tc.message)
		}
	}
	onlyFailure := Gate{Name: "e", Mode: Absolute, Measurements: 1, Failure: Condition{Op: Greater, Threshold: 0.1}}
	if v := Judge(onlyFailure, batch, []Measurement{{Values: map[string]float64{"a": 0.01, "b": 0.07}}}); v.Phase != Passed {
		t.Errorf("with a failure condition alone, values below it pass: %+v", v)
	}
}
