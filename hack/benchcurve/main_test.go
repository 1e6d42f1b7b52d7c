package main

import (
	"math"
	"strings"
	"testing"
)

func TestFit(t *testing.T) {
	// y = 3 * x^1.5, exactly.
	xs := []float64{500, 1000, 2000, 3500}
	ys := make([]float64, len(xs))
	for i, x := range xs {
		ys[i] = 3 * math.Pow(x, 1.5)
	}
	a, b, ok := fit(xs, ys)
	if !ok || math.Abs(a-3) > 1e-6 || math.Abs(b-1.5) > 1e-9 {
		t.Errorf("fit = %v, %v, %v; want 3, 1.5", a, b, ok)
	}
	if _, _, ok := fit([]float64{500, 500}, []float64{1, 2}); ok {
		t.Error("a fit over one size")
	}
}

func TestRender(t *testing.T) {
	runs, err := read(strings.NewReader(`
{"clusters":500,"policies":10,"phase":"operator-override","convergedSeconds":100,"rssMiB":80}
{"clusters":1000,"policies":10,"phase":"operator-override","convergedSeconds":200,"rssMiB":80}
{"clusters":2000,"policies":10,"phase":"operator-override","error":"timed out"}
`))
	if err != nil {
		t.Fatal(err)
	}
	out := render(runs, []float64{10000})
	for _, want := range []string{
		"operator-override, 10 policies",
		"| figure | 500 | 1000 | exponent | fit at 10000 |", // the failed run is left out
		"| converged (s) | 100 | 200 | 1.00 | 2000 |",
		"| operator RSS peak (MiB) | 80 | 80 | 0.00 | 80 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}
