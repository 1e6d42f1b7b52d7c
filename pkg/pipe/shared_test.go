package pipe

import (
	"testing"
	"time"
)

func TestSharedSplitsALinkFairly(t *testing.T) {
	// Two sites behind a 100 MiB/s link, on lines of 10 and 100 MiB/s: the slow one takes its
	// 10, the other the 90 left. 900 MiB each: the fast one ends at 10 s, the slow one at 90.
	pulls := []Pull{{Cluster: "slow", Bytes: 900 * mb, Rate: 10 * mb, Link: "l"}, {Cluster: "fast", Bytes: 900 * mb, Rate: 100 * mb, Link: "l"}}
	s := Shared(pulls, Budget{Links: map[string]float64{"l": 100 * mb}}, 0)
	if got := slotOf(t, s, "fast").End; got != 10*time.Second {
		t.Fatalf("fast ended at %s, want 10s at 90 MiB/s", got)
	}
	if got := slotOf(t, s, "slow").End; got != 90*time.Second {
		t.Fatalf("slow ended at %s, want 90s at its line", got)
	}
	// Both asked for their lines at once: 110 MiB/s on a link of 100.
	if s.PeakLinks["l"] != 110*mb {
		t.Fatalf("asked %.0f MiB/s of the link, want 110", s.PeakLinks["l"]/mb)
	}
}

func TestSharedRunsConcurrencyAtOnceInTheOrderGiven(t *testing.T) {
	pulls := fleet(5, 100*mb, 100*mb, "")
	s := Shared(pulls, Budget{}, 2)
	want := []time.Duration{0, 0, time.Second, time.Second, 2 * time.Second}
	for i, sl := range s.Slots {
		if sl.Cluster != pulls[i].Cluster || sl.Start != want[i] {
			t.Fatalf("slot %d: %+v, want %s at %s", i, sl, pulls[i].Cluster, want[i])
		}
	}
	if s.Makespan != 3*time.Second {
		t.Fatalf("makespan %s, want 3s", s.Makespan)
	}
}

// A fixed number of pulls at a time leaves the registry idle while slow sites pull; the plan
// keeps it full. On the fleet of racks, 100 at a time (the operator's default) takes more than
// twice the plan's time. All at once, in this fluid model, ends at the floor too: what it
// costs is the links it oversubscribes.
func TestAFixedConcurrencyLeavesTheRegistryIdle(t *testing.T) {
	pulls, b := racks()
	plan, fixed, all := Plan(pulls, b), Shared(pulls, b, 100), Shared(pulls, b, 0)
	if ratio := float64(fixed.Makespan) / float64(plan.Makespan); ratio < 2 {
		t.Fatalf("100 at a time took %s, the plan %s: %.2fx, want more than 2x", fixed.Makespan, plan.Makespan, ratio)
	}
	for l, c := range b.Links {
		if plan.PeakLinks[l] > c*(1+1e-9) {
			t.Fatalf("the plan oversubscribed %s", l)
		}
	}
	if all.PeakLinks["rack-00"] <= b.Links["rack-00"] || all.PeakRegistry <= b.Registry {
		t.Fatalf("all at once asked %.0f of rack-00's %.0f and %.0f of the registry's %.0f: want both oversubscribed",
			all.PeakLinks["rack-00"], b.Links["rack-00"], all.PeakRegistry, b.Registry)
	}
}
