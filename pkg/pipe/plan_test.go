package pipe

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

const (
	mb = 1 << 20
	gb = 1 << 30
)

func fleet(n int, bytes int64, rate float64, link string) []Pull {
	out := make([]Pull, n)
	for i := range out {
		out[i] = Pull{Cluster: fmt.Sprintf("%s-%04d", link, i), Bytes: bytes, Rate: rate, Link: link}
	}
	return out
}

func slotOf(t *testing.T, s Schedule, cluster string) Slot {
	t.Helper()
	for _, sl := range s.Slots {
		if sl.Cluster == cluster {
			return sl
		}
	}
	t.Fatalf("%s is not in the schedule", cluster)
	return Slot{}
}

func TestARegistryBoundFleetEndsAtTheRegistrysPace(t *testing.T) {
	pulls := fleet(100, 10*gb, 100*mb, "")
	b := Budget{Registry: 1000 * mb}
	s := Plan(pulls, b)
	if want := 1024 * time.Second; Floor(pulls, b) != want {
		t.Fatalf("floor %s, want %s: 1,000 GiB at 1,000 MiB/s", Floor(pulls, b), want)
	}
	if s.Makespan > Floor(pulls, b)+time.Second {
		t.Fatalf("makespan %s, want the floor %s: ten pulls at a time fill the registry", s.Makespan, Floor(pulls, b))
	}
	if s.PeakRegistry > b.Registry*(1+1e-9) {
		t.Fatalf("reserved %.0f B/s at the registry, more than its %.0f", s.PeakRegistry, b.Registry)
	}
}

func TestASharedLinkIsNeverOversubscribed(t *testing.T) {
	// Ten sites behind a 200 MiB/s link, each line 100 MiB/s: two at a time.
	pulls := append(fleet(10, 1*gb, 100*mb, "rack-a"), fleet(4, 1*gb, 100*mb, "rack-b")...)
	b := Budget{Registry: 10 * gb, Links: map[string]float64{"rack-a": 200 * mb}}
	s := Plan(pulls, b)
	if got := s.PeakLinks["rack-a"]; got > 200*mb*(1+1e-9) {
		t.Fatalf("rack-a carried %.0f MiB/s, more than its 200", got/mb)
	}
	started := 0
	for _, sl := range s.Slots {
		if sl.Start == 0 && sl.Cluster[:6] == "rack-a" {
			started++
		}
	}
	if started != 2 {
		t.Fatalf("%d of rack-a's pulls started at once, want 2", started)
	}
	// rack-a's 10 GiB at 200 MiB/s: 51.2 s; rack-b's pulls all run at once, 10.24 s.
	if want := Floor(pulls, b); s.Makespan > want+time.Second || want != seconds(float64(10*gb)/(200*mb)) {
		t.Fatalf("makespan %s, floor %s, want both rack-a's 51.2s", s.Makespan, want)
	}
	if end := slotOf(t, s, "rack-b-0003").End; end > 11*time.Second {
		t.Fatalf("rack-b's last pull ended at %s: its unbounded link should not wait for rack-a's", end)
	}
}

func TestTheSlowestPullStartsFirst(t *testing.T) {
	// One site on a 10 MiB/s line among 50 on 1 GiB/s lines, a registry of 2 GiB/s: the slow
	// site needs 102.4 s alone, the rest 25.6 s together.
	pulls := append(fleet(50, 1*gb, 1*gb, "fast"), Pull{Cluster: "slow", Bytes: 1 * gb, Rate: 10 * mb})
	b := Budget{Registry: 2 * gb}
	s := Plan(pulls, b)
	if got := slotOf(t, s, "slow"); got.Start != 0 {
		t.Fatalf("the slow site started at %s, want first", got.Start)
	}
	if s.Slots[0].Cluster != "slow" {
		t.Fatalf("first slot %s, want slow", s.Slots[0].Cluster)
	}
	if want := Floor(pulls, b); s.Makespan > want+time.Second {
		t.Fatalf("makespan %s, want the slow site's own %s", s.Makespan, want)
	}
}

func TestAPullStartsOnlyWithAQuarterOfItsLine(t *testing.T) {
	// A 100 MiB/s link, lines of 80 MiB/s: the second pull would get 20 MiB/s, a quarter is 20:
	// it starts; a third would get nothing.
	pulls := fleet(3, 80*mb, 80*mb, "l")
	s := Plan(pulls, Budget{Links: map[string]float64{"l": 100 * mb}})
	at0 := 0
	for _, sl := range s.Slots {
		if sl.Start == 0 {
			at0++
		}
	}
	if at0 != 2 {
		t.Fatalf("%d pulls started at once, want 2", at0)
	}
	// Below a quarter: lines of 90 MiB/s leave 10 for the second, under its 22.5.
	s = Plan(fleet(3, 90*mb, 90*mb, "l"), Budget{Links: map[string]float64{"l": 100 * mb}})
	if s.Slots[1].Start == 0 {
		t.Fatalf("a second pull started with %d MiB/s of its 90", 10)
	}
}

func TestAnUnboundedPullTakesNoTime(t *testing.T) {
	s := Plan([]Pull{{Cluster: "lab", Bytes: gb}}, Budget{})
	if len(s.Unbounded) != 1 || s.Makespan != 0 || len(s.Slots) != 1 {
		t.Fatalf("%+v, want lab unbounded in no time", s)
	}
	if s.Late(time.Minute) != 0 {
		t.Fatal("an empty schedule is late")
	}
}

func TestLate(t *testing.T) {
	s := Schedule{Makespan: 90 * time.Minute}
	if s.Late(time.Hour) != 30*time.Minute || s.Late(2*time.Hour) != 0 {
		t.Fatalf("late %s and %s", s.Late(time.Hour), s.Late(2*time.Hour))
	}
}

// Random fleets: every pull is scheduled once, none ends before it starts, no capacity is
// exceeded, and no schedule beats the floor.
func TestRandomFleetsKeepEveryBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 35))
	for run := range 200 {
		pulls, b := randomFleet(rng)
		if err := keepsEveryBound(pulls, b, Plan(pulls, b)); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
	}
}

// randomFleet is up to 60 pulls of a quarter GiB to 5 GiB, most with a line, most behind one
// of up to five links, up to four of which are bounded, and most with a bounded registry.
func randomFleet(rng *rand.Rand) ([]Pull, Budget) {
	b := Budget{Links: map[string]float64{}}
	for l := range rng.IntN(4) {
		b.Links[fmt.Sprintf("l%d", l)] = float64(50+rng.IntN(500)) * mb
	}
	if rng.IntN(4) > 0 {
		b.Registry = float64(200+rng.IntN(5000)) * mb
	}
	var pulls []Pull
	for i := range 1 + rng.IntN(60) {
		p := Pull{Cluster: fmt.Sprintf("c%d", i), Bytes: int64(1+rng.IntN(20)) * gb / 4}
		if rng.IntN(5) > 0 {
			p.Rate = float64(5+rng.IntN(1000)) * mb
		}
		if rng.IntN(3) > 0 {
			p.Link = fmt.Sprintf("l%d", rng.IntN(5))
		}
		pulls = append(pulls, p)
	}
	return pulls, b
}

func keepsEveryBound(pulls []Pull, b Budget, s Schedule) error {
	if len(s.Slots) != len(pulls) {
		return fmt.Errorf("%d slots for %d pulls", len(s.Slots), len(pulls))
	}
	seen := map[string]bool{}
	for _, sl := range s.Slots {
		if seen[sl.Cluster] || sl.End < sl.Start {
			return fmt.Errorf("slot %+v twice or backwards", sl)
		}
		seen[sl.Cluster] = true
	}
	if b.Registry > 0 && s.PeakRegistry > b.Registry*(1+1e-9) {
		return fmt.Errorf("registry %.0f over %.0f", s.PeakRegistry, b.Registry)
	}
	for l, c := range b.Links {
		if s.PeakLinks[l] > c*(1+1e-9) {
			return fmt.Errorf("link %s %.0f over %.0f", l, s.PeakLinks[l], c)
		}
	}
	if f := Floor(pulls, b); len(s.Unbounded) == 0 && s.Makespan+time.Second < f {
		return fmt.Errorf("makespan %s under the floor %s", s.Makespan, f)
	}
	return nil
}

// racks is a fleet of 3,500 sites on lines from 50 Mbit/s to 1 Gbit/s, each pulling a 14 GiB
// payload through a 10 Gbit/s mirror, 70 racks of 50 sites behind 2 Gbit/s uplinks.
func racks() ([]Pull, Budget) {
	const mbit = 1e6 / 8
	rng := rand.New(rand.NewPCG(3500, 36))
	lines := []float64{50 * mbit, 100 * mbit, 200 * mbit, 500 * mbit, 1000 * mbit}
	var pulls []Pull
	links := map[string]float64{}
	for i := range 3500 {
		rack := fmt.Sprintf("rack-%02d", i/50)
		links[rack] = 2000 * mbit
		pulls = append(pulls, Pull{Cluster: fmt.Sprintf("sno-%04d", i), Bytes: 14 * gb, Rate: lines[rng.IntN(len(lines))], Link: rack})
	}
	return pulls, Budget{Registry: 10000 * mbit, Links: links}
}

// The fleet of racks ends within 1.1x of the floor.
func TestAFleetOfSitesEndsNearTheFloor(t *testing.T) {
	pulls, b := racks()
	s := Plan(pulls, b)
	floor := Floor(pulls, b)
	if ratio := float64(s.Makespan) / float64(floor); ratio > 1.1 {
		t.Fatalf("makespan %s against a floor of %s: %.3fx, want at most 1.1x", s.Makespan, floor, ratio)
	}
	t.Logf("makespan %s, floor %s (%.3fx)", s.Makespan.Round(time.Second), floor.Round(time.Second), float64(s.Makespan)/float64(floor))
}

func BenchmarkPlanRacks(b *testing.B) {
	pulls, budget := racks()
	for b.Loop() {
		Plan(pulls, budget)
	}
}
