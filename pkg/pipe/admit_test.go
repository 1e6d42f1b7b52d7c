package pipe

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func clusters(pulls []Pull) []string {
	out := make([]string, len(pulls))
	for i, p := range pulls {
		out[i] = p.Cluster
	}
	return out
}

// With nothing under way, Admit starts what Plan starts at once, in the same order.
func TestAdmitStartsWhatThePlanStartsFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 2))
	for run := range 200 {
		pulls, b := randomFleet(rng)
		if run%2 == 0 {
			b.Within = time.Duration(60+rng.IntN(600)) * time.Second
		}
		var first []string
		for _, sl := range Plan(pulls, b).Slots {
			if sl.Start == 0 {
				first = append(first, sl.Cluster)
			}
		}
		// Plan lists the unbounded pulls first; Admit starts them first too.
		if got := clusters(Admit(nil, pulls, b)); !slices.Equal(got, first) {
			t.Fatalf("run %d: Admit started %v, the plan %v", run, got, first)
		}
	}
}

// The pulls under way keep what they hold: a link they fill starts nothing more, while a
// pull behind another link starts.
func TestAdmitKeepsRoomForThePullsUnderWay(t *testing.T) {
	b := Budget{Registry: 1000 * mb, Links: map[string]float64{"full": 100 * mb}}
	running := []Pull{{Cluster: "a", Bytes: gb, Rate: 60 * mb, Link: "full"}, {Cluster: "b", Bytes: gb, Rate: 60 * mb, Link: "full"}}
	waiting := []Pull{{Cluster: "c", Bytes: gb, Rate: 60 * mb, Link: "full"}, {Cluster: "d", Bytes: gb, Rate: 60 * mb, Link: "free"}}
	if got := clusters(Admit(running, waiting, b)); !slices.Equal(got, []string{"d"}) {
		t.Fatalf("started %v, want d alone: a and b hold rack full's 100 MiB/s", got)
	}
	// a and b hold 100 MiB/s of a registry of 110: the 10 left are under a quarter of d's line.
	b.Registry = 110 * mb
	if got := Admit(running, waiting, b); len(got) != 0 {
		t.Fatalf("started %v under a full registry", clusters(got))
	}
}

// A pull that could not end in time at the share left waits for more; without a bound on
// time, a quarter of its line is enough.
func TestWithinHoldsAPullUntilItCanEndInTime(t *testing.T) {
	b := Budget{Links: map[string]float64{"l": 100 * mb}}
	running := []Pull{{Cluster: "a", Bytes: gb, Rate: 40 * mb, Link: "l"}, {Cluster: "b", Bytes: gb, Rate: 40 * mb, Link: "l"}}
	waiting := []Pull{{Cluster: "c", Bytes: 4 * gb, Rate: 40 * mb, Link: "l"}}
	// 20 MiB/s left: half the line of c, more than a quarter.
	if got := Admit(running, waiting, b); len(got) != 1 {
		t.Fatalf("started %v, want c on 20 MiB/s", clusters(got))
	}
	// 4 GiB in 200 s needs 20.48 MiB/s.
	b.Within = 200 * time.Second
	if got := Admit(running, waiting, b); len(got) != 0 {
		t.Fatalf("started %v on 20 MiB/s, which ends it past 200s", clusters(got))
	}
	// A pull its whole line cannot end in time starts at its whole line.
	waiting[0].Bytes = 20 * gb
	if got := Admit(running[:1], waiting, b); len(got) != 1 {
		t.Fatalf("started %v, want c at its whole line of 40 MiB/s", clusters(got))
	}
	if got := Admit(running, waiting, b); len(got) != 0 {
		t.Fatalf("started %v below its line", clusters(got))
	}
}

// In a plan with a time bound, a pull that can end within it does.
func TestPlannedPullsEndWithinTheBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 3))
	for run := range 200 {
		pulls, b := randomFleet(rng)
		b.Within = time.Duration(60+rng.IntN(600)) * time.Second
		s := Plan(pulls, b)
		if err := keepsEveryBound(pulls, b, s); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		byCluster := map[string]Pull{}
		for _, p := range pulls {
			byCluster[p.Cluster] = p
		}
		for _, sl := range s.Slots {
			p := byCluster[sl.Cluster]
			alone := seconds(float64(p.Bytes) / ceiling(p, b))
			if took := sl.End - sl.Start; took > max(b.Within, alone)+time.Second {
				t.Fatalf("run %d: %s took %s, bound %s, alone at its ceiling %s", run, sl.Cluster, took, b.Within, alone)
			}
		}
	}
}
