package plan

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// sites labels clusters site-a-1, site-a-2, ... with site=a, region by the site's parity.
func sites(perSite map[string]int) ([]string, map[string]map[string]string) {
	var clusters []string
	labels := map[string]map[string]string{}
	for _, site := range slices.Sorted(maps.Keys(perSite)) {
		for i := 1; i <= perSite[site]; i++ {
			c := fmt.Sprintf("site-%s-%d", site, i)
			clusters = append(clusters, c)
			labels[c] = map[string]string{"site": site}
		}
	}
	return clusters, labels
}

func TestSpreadOnePerSite(t *testing.T) {
	clusters, labels := sites(map[string]int{"a": 3, "b": 3, "c": 3, "d": 3})
	in := Input{Clusters: clusters, MaxConcurrency: 4, Spread: []Spread{{Key: "site", MaxPerBatch: 1}}, Labels: labels}
	p, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"site-a-1", "site-b-1", "site-c-1", "site-d-1"},
		{"site-a-2", "site-b-2", "site-c-2", "site-d-2"},
		{"site-a-3", "site-b-3", "site-c-3", "site-d-3"},
	}
	if got := batchClusters(p); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("batches %v, want %v", got, want)
	}
	if p.SpreadAdded != 0 {
		t.Errorf("SpreadAdded %d, want 0: four sites fill batches of four", p.SpreadAdded)
	}
	wantUse := []SpreadUse{{Spread: Spread{Key: "site", MaxPerBatch: 1}, Values: 4, Largest: 3}}
	if !slices.Equal(p.Spread, wantUse) {
		t.Errorf("spread %+v, want %+v", p.Spread, wantUse)
	}
	// Without the spread, the same selection makes batches of one site each but the last.
	in.Spread = nil
	plain, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := batchClusters(plain)[0]; !slices.Equal(got, []string{"site-a-1", "site-a-2", "site-a-3", "site-b-1"}) {
		t.Fatalf("plain first batch %v", got)
	}
}

func TestSpreadAddsBatchesForALargeSite(t *testing.T) {
	// Site a has five clusters, one per batch: five batches, though ten clusters fit in
	// three of four. The others fill the batches in selection order.
	clusters, labels := sites(map[string]int{"a": 5, "b": 3, "c": 2})
	p, err := Build(Input{Clusters: clusters, MaxConcurrency: 4, Spread: []Spread{{Key: "site", MaxPerBatch: 1}}, Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Batches) != 5 || p.SpreadAdded != 2 {
		t.Fatalf("%d batches, %d added; want 5 and 2: %v", len(p.Batches), p.SpreadAdded, batchClusters(p))
	}
	for i, b := range p.Batches {
		if !strings.HasPrefix(b.Clusters[0], "site-a-") {
			t.Errorf("batch %d does not hold one of site a's clusters first: %v", i+1, b.Clusters)
		}
	}
}

func TestSpreadLeavesUnlabeledClustersUnbounded(t *testing.T) {
	labels := map[string]map[string]string{"g1-x": {"pair": "1"}, "g1-y": {"pair": "1"}}
	in := Input{Clusters: []string{"g1-x", "g1-y", "loose-1", "loose-2"}, MaxConcurrency: 3,
		Spread: []Spread{{Key: "pair", MaxPerBatch: 1}}, Labels: labels}
	p, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"g1-x", "loose-1", "loose-2"}, {"g1-y"}}
	if got := batchClusters(p); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("batches %v, want %v", got, want)
	}
	if p.Spread[0].Unlabeled != 2 || p.Spread[0].Values != 1 {
		t.Errorf("use %+v, want 1 value and 2 unlabeled", p.Spread[0])
	}
}

func TestSpreadKeepsCanariesFirst(t *testing.T) {
	clusters, labels := sites(map[string]int{"a": 2, "b": 2})
	p, err := Build(Input{Clusters: clusters, Canaries: []string{"site-b-2"}, MaxConcurrency: 2,
		Spread: []Spread{{Key: "site", MaxPerBatch: 1}}, Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"site-b-2"}, {"site-a-1", "site-b-1"}, {"site-a-2"}}
	if got := batchClusters(p); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("batches %v, want %v", got, want)
	}
	if !p.Batches[0].Canary || p.Batches[1].Canary {
		t.Error("the canary batch lost its place")
	}
}

func TestSpreadRefused(t *testing.T) {
	clusters, labels := sites(map[string]int{"a": 6, "b": 1})
	for _, tc := range []struct {
		name   string
		in     Input
		want   error
		phrase string
	}{{
		name: "a key no cluster carries",
		in:   Input{Clusters: clusters, MaxConcurrency: 2, Spread: []Spread{{Key: "stie", MaxPerBatch: 1}}, Labels: labels},
		want: ErrSpreadUnlabeled, phrase: `"stie"`,
	}, {
		name: "more batches than the timeout's minutes",
		in:   Input{Clusters: clusters, MaxConcurrency: 7, MaxBatches: 5, Spread: []Spread{{Key: "site", MaxPerBatch: 1}}, Labels: labels},
		want: ErrSpreadTooManyBatches, phrase: "it needs 6 batches (maxConcurrency alone makes 1) and spec.remediationStrategy.timeout gives 5 minutes",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(tc.in)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.phrase) {
				t.Fatalf("error %v, want %v saying %q", err, tc.want, tc.phrase)
			}
		})
	}
	// Within the minutes, the same spread is planned.
	if _, err := Build(Input{Clusters: clusters, MaxConcurrency: 7, MaxBatches: 6, Spread: []Spread{{Key: "site", MaxPerBatch: 1}}, Labels: labels}); err != nil {
		t.Fatal(err)
	}
}

// TestSpreadHoldsOnRandomFleets plans random fleets: every batch honours every bound and
// maxConcurrency, every cluster is planned once, clusters of a batch keep selection order,
// and with one spread key the plan has the fewest batches the bounds allow.
func TestSpreadHoldsOnRandomFleets(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 4))
	for trial := range 3000 {
		n := 1 + r.IntN(60)
		keys := 1 + r.IntN(3)
		in := Input{MaxConcurrency: r.IntN(12), Labels: map[string]map[string]string{}}
		for k := range keys {
			in.Spread = append(in.Spread, Spread{Key: fmt.Sprintf("k%d", k), MaxPerBatch: 1 + r.IntN(3)})
		}
		for i := range n {
			c := fmt.Sprintf("c%03d", i)
			in.Clusters = append(in.Clusters, c)
			in.Labels[c] = map[string]string{}
			for k := range keys {
				if r.IntN(10) > 0 { // one in ten without the label
					in.Labels[c][fmt.Sprintf("k%d", k)] = fmt.Sprint(r.IntN(1 + r.IntN(8)))
				}
			}
		}
		p, err := Build(in)
		if errors.Is(err, ErrSpreadUnlabeled) {
			continue
		}
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		checkPlan(t, in, p)
		checkSpreadBounds(t, in, p)
		if keys == 1 {
			if fewest := fewestBatches(in); len(p.Batches) != fewest {
				t.Fatalf("trial %d: %d batches, the fewest is %d: %+v", trial, len(p.Batches), fewest, in)
			}
		}
	}
}

func checkSpreadBounds(t *testing.T, in Input, p Plan) {
	t.Helper()
	index := map[string]int{}
	for i, c := range in.Clusters {
		index[c] = i
	}
	for bi, b := range p.Batches {
		if !slices.IsSortedFunc(b.Clusters, func(x, y string) int { return index[x] - index[y] }) {
			t.Fatalf("batch %d is out of selection order: %v", bi+1, b.Clusters)
		}
		for _, s := range in.Spread {
			count := map[string]int{}
			for _, c := range b.Clusters {
				if v, ok := in.Labels[c][s.Key]; ok {
					if count[v]++; count[v] > s.MaxPerBatch {
						t.Fatalf("batch %d holds %d clusters with %s=%s, more than %d: %v", bi+1, count[v], s.Key, v, s.MaxPerBatch, b.Clusters)
					}
				}
			}
		}
	}
}

// fewestBatches is the lower bound: the clusters over the batch size, and each value's
// clusters over its bound.
func fewestBatches(in Input) int {
	size := in.MaxConcurrency
	if size <= 0 || size > len(in.Clusters) {
		size = len(in.Clusters)
	}
	fewest := (len(in.Clusters) + size - 1) / size
	for _, s := range in.Spread {
		count := map[string]int{}
		for _, c := range in.Clusters {
			if v, ok := in.Labels[c][s.Key]; ok {
				count[v]++
				fewest = max(fewest, (count[v]+s.MaxPerBatch-1)/s.MaxPerBatch)
			}
		}
	}
	return fewest
}

func batchClusters(p Plan) [][]string {
	out := make([][]string, len(p.Batches))
	for i, b := range p.Batches {
		out[i] = b.Clusters
	}
	return out
}

// BenchmarkSpread plans 3,500 clusters over 350 sites in batches of 100, plainly and with at
// most two clusters of a site a batch: compare the two side by side.
func BenchmarkSpread(b *testing.B) {
	perSite := map[string]int{}
	for i := range 350 {
		perSite[fmt.Sprintf("%03d", i)] = 10
	}
	clusters, labels := sites(perSite)
	for _, bc := range []struct {
		name   string
		spread []Spread
	}{{"plain", nil}, {"two-a-site", []Spread{{Key: "site", MaxPerBatch: 2}}}} {
		b.Run(bc.name, func(b *testing.B) {
			in := Input{Clusters: clusters, MaxConcurrency: 100, Spread: bc.spread, Labels: labels}
			for b.Loop() {
				if _, err := Build(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
