// Command benchcurve fits the scale curve of the fleet benchmark: it reads the JSON lines
// `make bench-fleet` appends to the file BENCH_JSON names, one run per fleet size, and for
// each phase and figure fits y = a * n^b over the fleet size n (least squares on the logs),
// then prints the figures measured, the exponent, and the fit's projection to the sizes
// asked for. `make bench-curve` runs the fleets and then this.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// figures is what one phase of one run measured (tests/bench Figures).
type figures struct {
	Clusters         int     `json:"clusters"`
	Policies         int     `json:"policies"`
	Phase            string  `json:"phase"`
	SettledSeconds   float64 `json:"settledSeconds"`
	ConvergedSeconds float64 `json:"convergedSeconds"`
	OverFloor        float64 `json:"overFloor"`
	Requests         float64 `json:"requests"`
	Writes           float64 `json:"writes"`
	Events           float64 `json:"events"`
	RSSMiB           float64 `json:"rssMiB"`
	Error            string  `json:"error"`
}

// metric is one figure the curve fits.
type metric struct {
	name string
	of   func(figures) float64
}

var metrics = []metric{
	{"hub settled (s)", func(f figures) float64 { return f.SettledSeconds }},
	{"converged (s)", func(f figures) float64 { return f.ConvergedSeconds }},
	{"x Override floor", func(f figures) float64 { return f.OverFloor }},
	{"requests", func(f figures) float64 { return f.Requests }},
	{"writes (events aside)", func(f figures) float64 { return f.Writes }},
	{"events", func(f figures) float64 { return f.Events }},
	{"operator RSS peak (MiB)", func(f figures) float64 { return f.RSSMiB }},
}

func main() {
	project := flag.String("project", "3500,10000", "Fleet sizes to project the fits to")
	flag.Parse()
	var sizes []float64
	for _, s := range strings.Split(*project, ",") {
		n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchcurve: -project:", err)
			os.Exit(2)
		}
		sizes = append(sizes, n)
	}
	var runs []figures
	for _, path := range flag.Args() {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchcurve:", err)
			os.Exit(1)
		}
		more, err := read(f)
		_ = f.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "benchcurve: %s: %v\n", path, err)
			os.Exit(1)
		}
		runs = append(runs, more...)
	}
	fmt.Print(render(runs, sizes))
}

// read reads JSON lines of figures.
func read(r io.Reader) ([]figures, error) {
	var out []figures
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var f figures
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, f)
	}
	return out, sc.Err()
}

// fit returns a and b of y = a * x^b, the least-squares line through (log x, log y), over the
// points with positive values; ok is false with fewer than two distinct x.
func fit(xs, ys []float64) (a, b float64, ok bool) {
	var lx, ly []float64
	for i := range xs {
		if xs[i] > 0 && ys[i] > 0 {
			lx, ly = append(lx, math.Log(xs[i])), append(ly, math.Log(ys[i]))
		}
	}
	if len(lx) < 2 || slices.Min(lx) == slices.Max(lx) {
		return 0, 0, false
	}
	n := float64(len(lx))
	var sx, sy, sxx, sxy float64
	for i := range lx {
		sx, sy, sxx, sxy = sx+lx[i], sy+ly[i], sxx+lx[i]*lx[i], sxy+lx[i]*ly[i]
	}
	b = (n*sxy - sx*sy) / (n*sxx - sx*sx)
	a = math.Exp((sy - b*sx) / n)
	return a, b, true
}

// render writes one markdown table per phase and policy count: each figure at each size
// measured, the fitted exponent and the projections.
func render(runs []figures, project []float64) string {
	type key struct {
		phase    string
		policies int
	}
	groups := map[key][]figures{}
	var keys []key
	for _, r := range runs {
		if r.Error != "" {
			continue
		}
		k := key{r.Phase, r.Policies}
		if _, seen := groups[k]; !seen {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	var b strings.Builder
	for _, k := range keys {
		g := groups[k]
		slices.SortFunc(g, func(x, y figures) int { return x.Clusters - y.Clusters })
		fmt.Fprintf(&b, "\n%s, %d policies\n\n| figure |", k.phase, k.policies)
		for _, r := range g {
			fmt.Fprintf(&b, " %d |", r.Clusters)
		}
		b.WriteString(" exponent |")
		for _, n := range project {
			fmt.Fprintf(&b, " fit at %.0f |", n)
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(g)+1+len(project)) + "\n")
		for _, m := range metrics {
			xs, ys := make([]float64, len(g)), make([]float64, len(g))
			measured := false
			for i, r := range g {
				xs[i], ys[i] = float64(r.Clusters), m.of(r)
				measured = measured || ys[i] > 0
			}
			if !measured {
				continue
			}
			fmt.Fprintf(&b, "| %s |", m.name)
			for _, y := range ys {
				fmt.Fprintf(&b, " %s |", number(y))
			}
			a, e, ok := fit(xs, ys)
			if !ok {
				b.WriteString(" – |" + strings.Repeat(" – |", len(project)) + "\n")
				continue
			}
			fmt.Fprintf(&b, " %.2f |", e)
			for _, n := range project {
				fmt.Fprintf(&b, " %s |", number(a*math.Pow(n, e)))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// number writes a figure with three significant digits.
func number(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
