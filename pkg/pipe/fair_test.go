package pipe

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(math.Abs(a), math.Abs(b)) }

func TestFairNestsTheLinksInTheRegistry(t *testing.T) {
	// Link a (30) full at 10 each; b unbounded, its two pulls share the registry's 70 left,
	// but the slow one takes only its 5: the other takes 50, its line.
	pulls := []Pull{
		{Cluster: "a1", Rate: 50, Link: "a"}, {Cluster: "a2", Rate: 50, Link: "a"}, {Cluster: "a3", Rate: 50, Link: "a"},
		{Cluster: "b1", Rate: 5, Link: "b"}, {Cluster: "b2", Rate: 50, Link: "b"}, {Cluster: "free"},
	}
	got := Fair(pulls, Budget{Registry: 100, Links: map[string]float64{"a": 30}})
	// The registry's 100: a's 30, b1's 5, and b2 and free share the 65 left: 32.5 each.
	want := []float64{10, 10, 10, 5, 32.5, 32.5}
	for i := range want {
		if !near(got[i], want[i]) {
			t.Fatalf("%s got %.3f, want %.3f (all: %v)", pulls[i].Cluster, got[i], want[i], got)
		}
	}
	if r := Fair([]Pull{{Cluster: "lab"}}, Budget{}); !math.IsInf(r[0], 1) {
		t.Fatalf("an unbounded pull got %v", r)
	}
}

// On random fleets, no capacity is exceeded, and every pull is held by something full: its
// line, its link or the registry (else it could have had more).
func TestFairFillsWhatItCan(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 4))
	for run := range 300 {
		pulls, b := randomFleet(rng)
		if err := fairHolds(pulls, b, Fair(pulls, b)); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
	}
}

func fairHolds(pulls []Pull, b Budget, rates []float64) error {
	total, on := 0.0, map[string]float64{}
	for i, p := range pulls {
		total += rates[i]
		on[p.Link] += rates[i]
	}
	if b.Registry > 0 && total > b.Registry*(1+1e-6) {
		return fmt.Errorf("%.0f through a registry of %.0f", total, b.Registry)
	}
	full := func(used, capacity float64) bool { return capacity > 0 && used >= capacity*(1-1e-6) }
	for i, p := range pulls {
		if math.IsInf(rates[i], 1) {
			continue
		}
		linkCap, bounded := b.Links[p.Link]
		bounded = bounded && p.Link != ""
		if bounded && on[p.Link] > linkCap*(1+1e-6) {
			return fmt.Errorf("link %s carries %.0f of %.0f", p.Link, on[p.Link], linkCap)
		}
		held := (p.Rate > 0 && rates[i] >= p.Rate*(1-1e-6)) || full(total, b.Registry) || (bounded && full(on[p.Link], linkCap))
		if !held {
			return fmt.Errorf("%s at %.0f, held by nothing", p.Cluster, rates[i])
		}
	}
	return nil
}
