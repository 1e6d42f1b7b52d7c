package plan

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func clusterNames(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%02d", prefix, i+1)
	}
	return out
}

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// shapes are the plans checked against golden files in testdata/.
var shapes = map[string]Input{
	"no-canaries":                {Clusters: clusterNames("sno", 7), MaxConcurrency: 3},
	"exact-multiple":             {Clusters: clusterNames("sno", 6), MaxConcurrency: 3},
	"max-concurrency-zero":       {Clusters: clusterNames("sno", 5), MaxConcurrency: 0},
	"max-concurrency-above-size": {Clusters: clusterNames("sno", 5), MaxConcurrency: 50},
	"max-concurrency-one":        {Clusters: clusterNames("sno", 3), MaxConcurrency: 1},
	"canaries-then-batches": {
		Clusters: clusterNames("sno", 12), Canaries: []string{"sno-01", "sno-07"}, MaxConcurrency: 4,
	},
	"canaries-out-of-order": {
		Clusters: clusterNames("sno", 6), Canaries: []string{"sno-05", "sno-02"}, MaxConcurrency: 2,
	},
	"every-cluster-a-canary": {
		Clusters: clusterNames("sno", 3), Canaries: []string{"sno-03", "sno-02", "sno-01"}, MaxConcurrency: 2,
	},
	"compliant-left-out": {
		Clusters: clusterNames("sno", 8), MaxConcurrency: 3, Compliant: set("sno-02", "sno-03", "sno-08"),
	},
	"compliant-canary-left-out": {
		Clusters: clusterNames("sno", 6), Canaries: []string{"sno-01", "sno-02"}, MaxConcurrency: 2,
		Compliant: set("sno-01"),
	},
	"unplaced-left-out": {
		Clusters: clusterNames("sno", 6), Canaries: []string{"sno-02"}, MaxConcurrency: 2,
		Compliant: set("sno-01"), Unplaced: set("sno-02", "sno-05"),
	},
	"all-compliant":    {Clusters: clusterNames("sno", 4), MaxConcurrency: 2, Compliant: set(clusterNames("sno", 4)...)},
	"nothing-selected": {MaxConcurrency: 2},
	"single-cluster":   {Clusters: []string{"sno-01"}, MaxConcurrency: 10},
	"window-after-canaries": {
		Clusters: clusterNames("sno", 12), Canaries: []string{"sno-01", "sno-07"}, MaxConcurrency: 4, Window: true,
		Compliant: set("sno-03"),
	},
	"window-wider-than-the-fleet": {Clusters: clusterNames("sno", 5), MaxConcurrency: 5, Window: true},
	"progressive-default": {
		Clusters: clusterNames("sno", 3500), Canaries: []string{"sno-01"}, MaxConcurrency: 500, Progressive: &DefaultGrowth,
	},
	"progressive-factor": {
		Clusters: clusterNames("sno", 100), MaxConcurrency: 20, Progressive: &Growth{Factor: 3, Stop: true},
	},
	"progressive-one-stage": {Clusters: clusterNames("sno", 5), MaxConcurrency: 10, Progressive: &Growth{Steps: []Step{{Count: 8}}}},
	"selection-order-kept": {
		Clusters: []string{"zeta", "alpha", "mike", "bravo", "yankee"}, MaxConcurrency: 2,
	},
	"thousand-clusters": {
		Clusters: clusterNames("sno", 1000), Canaries: []string{"sno-500"}, MaxConcurrency: 250,
		Compliant: set("sno-01", "sno-1000"),
	},
}

// render writes a plan as the golden files hold it; long batches show their ends only.
func render(p Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "batches: %d (canary: %d), clusters: %d\n", len(p.Batches), p.CanaryBatches(), p.Clusters())
	for i, batch := range p.Batches {
		kind := "batch"
		switch {
		case batch.Canary:
			kind = "canary"
		case batch.Window > 0:
			kind = fmt.Sprintf("window of %d", batch.Window)
		case len(batch.Stages) > 0:
			kind = fmt.Sprintf("stages of %v", batch.Stages)
			if batch.StopUnhealthy {
				kind += ", stop when unhealthy"
			}
		}
		shown := batch.Clusters
		if len(shown) > 6 {
			shown = append(append(append([]string{}, shown[:3]...), "..."), shown[len(shown)-2:]...)
		}
		fmt.Fprintf(&b, "%d %s (%d): %s\n", i+1, kind, len(batch.Clusters), strings.Join(shown, " "))
	}
	fmt.Fprintf(&b, "skipped, already compliant: %s\n", strings.Join(p.SkippedCompliant, " "))
	if len(p.Unplaced) > 0 {
		fmt.Fprintf(&b, "skipped, no policy placed: %s\n", strings.Join(p.Unplaced, " "))
	}
	return b.String()
}

func TestGoldenPlans(t *testing.T) {
	for name, in := range shapes {
		t.Run(name, func(t *testing.T) {
			p, err := Build(in)
			if err != nil {
				t.Fatal(err)
			}
			got := render(p)
			path := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./pkg/plan -update to write it)", err)
			}
			if got != string(want) {
				t.Fatalf("plan differs from %s:\n--- got\n%s--- want\n%s", path, got, want)
			}
		})
	}
}

// TestPlanInvariants checks, for many shapes, what every plan must hold whatever its golden
// file says: every selected cluster is planned exactly once or skipped as compliant, canaries
// lead one per batch, and no other batch exceeds maxConcurrency.
func TestPlanInvariants(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for _, maxC := range []int{-1, 0, 1, 2, 3, 7, 40, 41} {
			for _, canaries := range [][]string{nil, {"c-01"}, {"c-03", "c-01"}} {
				if n < 3 && len(canaries) > 0 {
					continue
				}
				in := Input{Clusters: clusterNames("c", n), Canaries: canaries, MaxConcurrency: maxC, Compliant: set("c-02", "c-05")}
				p, err := Build(in)
				if err != nil {
					t.Fatalf("n=%d max=%d canaries=%v: %v", n, maxC, canaries, err)
				}
				checkInvariants(t, in, p)
			}
		}
	}
}

func checkInvariants(t *testing.T, in Input, p Plan) {
	t.Helper()
	seen := map[string]int{}
	for i, b := range p.Batches {
		if len(b.Clusters) == 0 {
			t.Fatalf("%+v: batch %d is empty", in, i)
		}
		if b.Canary && (len(b.Clusters) != 1 || i >= p.CanaryBatches()) {
			t.Fatalf("%+v: canary batch %d is %v", in, i, b.Clusters)
		}
		if !b.Canary && in.MaxConcurrency > 0 && len(b.Clusters) > in.MaxConcurrency {
			t.Fatalf("%+v: batch %d has %d clusters", in, i, len(b.Clusters))
		}
		for _, c := range b.Clusters {
			seen[c]++
		}
	}
	for _, c := range p.SkippedCompliant {
		seen[c]++
	}
	for _, c := range in.Clusters {
		if seen[c] != 1 {
			t.Fatalf("%+v: cluster %s appears %d times", in, c, seen[c])
		}
	}
	if len(seen) != len(in.Clusters) {
		t.Fatalf("%+v: plan holds clusters that were not selected", in)
	}
}

func TestCanariesMustBeSelected(t *testing.T) {
	_, err := Build(Input{Clusters: []string{"a", "b"}, Canaries: []string{"b", "x", "y"}, MaxConcurrency: 1})
	if !errors.Is(err, ErrCanaryNotSelected) || !strings.Contains(err.Error(), ": x, y") {
		t.Fatalf("error %v, want ErrCanaryNotSelected naming x and y", err)
	}
}

func TestBatchesDoNotShareBackingArrays(t *testing.T) {
	p, err := Build(Input{Clusters: clusterNames("c", 4), MaxConcurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	p.Batches[0].Clusters = append(p.Batches[0].Clusters, "intruder")
	if p.Batches[1].Clusters[0] != "c-03" {
		t.Fatalf("appending to one batch changed the next: %v", p.Batches[1].Clusters)
	}
}

func TestWithout(t *testing.T) {
	p := Plan{Batches: []Batch{{Canary: true, Clusters: []string{"c"}}, {Clusters: []string{"a", "b"}}, {Clusters: []string{"d"}}},
		SkippedCompliant: []string{"z"}}
	got := p.Without(set("c", "b"))
	if render(got) != render(Plan{Batches: []Batch{{Clusters: []string{"a"}}, {Clusters: []string{"d"}}}, SkippedCompliant: []string{"z"}}) {
		t.Fatalf("got %s, want the canary batch gone and b dropped from its batch", render(got))
	}
	if render(p.Without(nil)) != render(p) {
		t.Fatalf("dropping nothing changed the plan: %s", render(p.Without(nil)))
	}
}

// The stage sizes: stated steps (counts and percentages of the clusters, rounded up) or a
// factor's powers, each capped at the top, then the top, ending at the first size that
// reaches it.
func TestGrowthSizes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		g     Growth
		n, mc int
		want  []int
	}{
		{"default, 3500 by 500", DefaultGrowth, 3500, 500, []int{35, 175, 500}},
		{"default, 100 by 50", DefaultGrowth, 100, 50, []int{1, 5, 25, 50}},
		{"default without a cap", DefaultGrowth, 200, 0, []int{2, 10, 50, 200}},
		{"a percentage rounds up", Growth{Steps: []Step{{Percent: 0.5}}}, 1001, 100, []int{6, 100}},
		{"counts, capped", Growth{Steps: []Step{{Count: 3}, {Count: 700}, {Count: 5}}}, 3500, 500, []int{3, 500}},
		{"factor 4", Growth{Factor: 4}, 3500, 500, []int{1, 4, 16, 64, 256, 500}},
		{"factor above the fleet", Growth{Factor: 10}, 30, 0, []int{1, 10, 30}},
		{"one cluster", DefaultGrowth, 1, 500, []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.g.Sizes(tc.n, tc.mc); !slices.Equal(got, tc.want) {
				t.Fatalf("Sizes(%d, %d) = %v, want %v", tc.n, tc.mc, got, tc.want)
			}
		})
	}
}
