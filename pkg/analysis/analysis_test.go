package analysis

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func seq(from, to, step float64) []float64 {
	var out []float64
	for v := from; v <= to; v += step {
		out = append(out, v)
	}
	return out
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// The test's statistic and p-value, worked out by hand (rank sums, the tie-corrected
// variance, the continuity correction) for three pairs of samples.
func TestCompareSamples(t *testing.T) {
	cases := map[string]struct {
		upgraded, baseline []float64
		higherIsWorse      bool
		u, p               float64
	}{
		"every upgraded value above every baseline one":  {seq(11, 20, 1), seq(1, 10, 1), true, 100, 9.13358955547752e-05},
		"interleaved: no difference":                     {seq(1, 19, 2), seq(2, 20, 2), true, 45, 0.6612075210237622},
		"ties ranked by their mean rank":                 {append(repeat(2, 8), 3, 3), append(repeat(1, 5), repeat(2, 5)...), true, 80, 0.004078136772078322},
		"lower is worse: the same samples the other way": {seq(1, 10, 1), seq(11, 20, 1), false, 100, 9.13358955547752e-05},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := CompareSamples(c.upgraded, c.baseline, c.higherIsWorse, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got.U != c.u || math.Abs(got.P-c.p) > 1e-12 {
				t.Errorf("U %v p %v, want U %v p %v", got.U, got.P, c.u, c.p)
			}
		})
	}
}

// What cannot be judged says why, and is never a pass.
func TestCompareSamplesRefuses(t *testing.T) {
	cases := map[string]struct {
		upgraded, baseline []float64
		min                int
		want               string
	}{
		"too few upgraded values":  {seq(1, 7, 1), seq(1, 10, 1), 0, "too few samples: 7 upgraded and 10 baseline values, 8 each needed"},
		"too few baseline values":  {seq(1, 3, 1), seq(1, 2, 1), 3, "too few samples: 3 upgraded and 2 baseline values, 3 each needed"},
		"a value that is no value": {append(seq(1, 7, 1), math.NaN()), seq(1, 8, 1), 0, "a value is not a number"},
		"every value the same":     {repeat(1, 8), repeat(1, 8), 0, "every value is the same"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := CompareSamples(c.upgraded, c.baseline, true, c.min); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func values(clusters []string, vs ...float64) map[string]float64 {
	out := map[string]float64{}
	for i, c := range clusters {
		out[c] = vs[i]
	}
	return out
}

var t0 = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// An absolute gate passes after its measurements when every cluster stays within the
// condition, fails on one failure more than it tolerates and names the clusters, and is
// inconclusive, never passed, while the endpoint does not answer or a cluster has no value.
func TestJudgeAbsolute(t *testing.T) {
	batch := []string{"sno-1", "sno-2", "sno-3"}
	g := Gate{Name: "error-rate", Mode: Absolute, Measurements: 3, FailureLimit: 1, Success: Condition{Op: Less, Threshold: 0.05}}
	good := Measurement{At: t0, Values: values(batch, 0.01, 0.02, 0.0)}
	bad := Measurement{At: t0, Values: values(batch, 0.01, 0.2, 0.07)}
	down := Measurement{At: t0, Err: "connection refused"}
	blind := Measurement{At: t0, Values: values(batch[:2], 0.01, 0.02)}
	cases := map[string]struct {
		ms       []Measurement
		phase    Phase
		clusters []string
		message  string
	}{
		"nothing measured yet":            {nil, Running, nil, "error-rate: 0 of 3 measurements taken, 0 failed"},
		"good so far":                     {[]Measurement{good, good}, Running, nil, "2 of 3 measurements taken"},
		"good throughout":                 {[]Measurement{good, good, good}, Passed, nil, "error-rate passed 3 of 3 measurements"},
		"one failure tolerated":           {[]Measurement{good, bad, good}, Passed, []string{"sno-2", "sno-3"}, "passed 2 of 3"},
		"two failures fail it":            {[]Measurement{bad, good, bad}, Failed, []string{"sno-2", "sno-3"}, "error-rate failed 2 of 3 measurements (1 tolerated): sno-2, sno-3 missed value < 0.05"},
		"the endpoint down":               {[]Measurement{good, down}, Inconclusive, nil, "error-rate is inconclusive: the endpoint gave no answer: connection refused"},
		"down, then back":                 {[]Measurement{good, down, good}, Running, nil, "2 of 3 measurements taken"},
		"down three times: no pass":       {[]Measurement{down, down, down}, Inconclusive, nil, "connection refused"},
		"a cluster the query misses":      {[]Measurement{good, good, blind}, Inconclusive, nil, "no value for sno-3"},
		"a NaN is no value: never a pass": {[]Measurement{{Values: values(batch, 0.01, math.NaN(), 0.0)}}, Inconclusive, nil, "no value for sno-2"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			v := Judge(g, batch, c.ms)
			if v.Phase != c.phase || !slices.Equal(v.Clusters, c.clusters) || !strings.Contains(v.Message, c.message) {
				t.Errorf("%s %v %q, want %s %v containing %q", v.Phase, v.Clusters, v.Message, c.phase, c.clusters, c.message)
			}
		})
	}
}

// A comparison gate fails when the upgraded clusters are worse than the baseline beyond
// chance, passes within it, and is inconclusive on too few samples.
func TestJudgeComparison(t *testing.T) {
	var upgraded, baseline []string
	for i := range 10 {
		upgraded = append(upgraded, "up-"+string(rune('a'+i)))
		baseline = append(baseline, "base-"+string(rune('a'+i)))
	}
	g := Gate{Name: "latency", Mode: Comparison, Measurements: 1, HigherIsWorse: true}
	m := func(up, base []float64) []Measurement {
		return []Measurement{{At: t0, Values: values(upgraded, up...), Baseline: values(baseline, base...)}}
	}
	if v := Judge(g, upgraded, m(seq(11, 20, 1), seq(1, 10, 1))); v.Phase != Failed || !strings.Contains(v.Message, "worse than the baseline") {
		t.Errorf("worse: %s %q", v.Phase, v.Message)
	}
	if v := Judge(g, upgraded, m(seq(1, 19, 2), seq(2, 20, 2))); v.Phase != Passed {
		t.Errorf("alike: %s %q", v.Phase, v.Message)
	}
	better := g
	better.HigherIsWorse = false // higher is better: higher upgraded values pass
	if v := Judge(better, upgraded, m(seq(11, 20, 1), seq(1, 10, 1))); v.Phase != Passed {
		t.Errorf("better: %s %q", v.Phase, v.Message)
	}
	// Worse by 10 each: beyond a tolerance of 5, within one of 12.
	if v := Judge(withTolerance(g, 5), upgraded, m(seq(11, 20, 1), seq(1, 10, 1))); v.Phase != Failed {
		t.Errorf("worse beyond the tolerance: %s %q", v.Phase, v.Message)
	}
	if v := Judge(withTolerance(g, 12), upgraded, m(seq(11, 20, 1), seq(1, 10, 1))); v.Phase != Passed {
		t.Errorf("worse within the tolerance: %s %q", v.Phase, v.Message)
	}
	lower := withTolerance(better, 12) // lower is worse: 10 lower is within 12
	if v := Judge(lower, upgraded, m(seq(1, 10, 1), seq(11, 20, 1))); v.Phase != Passed {
		t.Errorf("lower within the tolerance: %s %q", v.Phase, v.Message)
	}
	if v := Judge(withTolerance(better, 5), upgraded, m(seq(1, 10, 1), seq(11, 20, 1))); v.Phase != Failed {
		t.Errorf("lower beyond the tolerance: %s %q", v.Phase, v.Message)
	}
	few := []Measurement{{At: t0, Values: values(upgraded, seq(11, 20, 1)...), Baseline: values(baseline[:3], 1, 2, 3)}}
	if v := Judge(g, upgraded, few); v.Phase != Inconclusive || !strings.Contains(v.Message, "too few samples") {
		t.Errorf("few: %s %q", v.Phase, v.Message)
	}
}

func withTolerance(g Gate, tolerance float64) Gate {
	g.Tolerance = tolerance
	return g
}

func TestConditionMet(t *testing.T) {
	for _, c := range []struct {
		cond Condition
		v    float64
		want bool
	}{
		{Condition{Less, 1}, 0.5, true}, {Condition{Less, 1}, 1, false}, {Condition{LessEqual, 1}, 1, true},
		{Condition{Greater, 1}, 1, false}, {Condition{GreaterEqual, 1}, 1, true}, {Condition{Greater, 1}, math.NaN(), false},
		{Condition{"==", 1}, 1, false},
	} {
		if got := c.cond.Met(c.v); got != c.want {
			t.Errorf("%v met by %v: %v, want %v", c.cond, c.v, got, c.want)
		}
	}
}

// A verdict kept between measurements and given one at a time is the verdict of all of them;
// once final, it stays.
func TestVerdictAddsOneMeasurementAtATime(t *testing.T) {
	upgraded := []string{"a", "b"}
	g := Gate{Name: "errors", Mode: Absolute, Measurements: 3, FailureLimit: 1, Success: Condition{Op: Less, Threshold: 1}}
	ms := []Measurement{
		{At: t0, Values: values(upgraded, 0.5, 2)},
		{At: t0, Err: "connection refused"},
		{At: t0, Values: values(upgraded, 0.5, 0.5)},
		{At: t0, Values: values(upgraded, 0.5, 0.5)},
		{At: t0, Values: values(upgraded, 3, 3)}, // after the pass: not counted
	}
	v := Start(g)
	for i, m := range ms {
		v = v.Add(g, upgraded, m)
		if want := Judge(g, upgraded, ms[:i+1]); !slices.Equal(v.Clusters, want.Clusters) || v.Phase != want.Phase || v.Message != want.Message ||
			v.Conclusive != want.Conclusive || v.Failures != want.Failures || v.Inconclusives != want.Inconclusives {
			t.Fatalf("after %d measurements: %+v, Judge says %+v", i+1, v, want)
		}
	}
	if v.Phase != Passed || v.Failures != 1 || !slices.Equal(v.Clusters, []string{"b"}) || !v.Final() {
		t.Fatalf("verdict %+v, want Passed with one tolerated failure of b", v)
	}
}
