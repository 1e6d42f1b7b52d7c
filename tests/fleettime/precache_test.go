package fleettime

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cgu-operator/cgu-operator/pkg/pipe"
)

// sitesScenarios are the fleets the pre-cache targets hold on, over every seed: the edge
// fleet, where the mirror is what limits, and one whose racks' uplinks limit.
var sitesScenarios = []struct {
	name  string
	sites func(seed uint64) Sites
}{
	{"3,500 sites, racks of 50 on 2 Gbit/s uplinks, a 10 Gbit/s mirror", func(seed uint64) Sites {
		s := Edge()
		s.Seed = seed
		return s
	}},
	{"3,500 sites, racks of 50 on 500 Mbit/s uplinks, a 40 Gbit/s mirror", func(seed uint64) Sites {
		s := Edge()
		s.Seed, s.Uplink, s.Registry = seed, 500*mbit, 40000*mbit
		return s
	}},
}

// The pre-cache targets, simulated time on the same sites for every strategy:
//   - the planned schedule pre-caches every site within 1.1x of the floor (the bytes at the
//     mirror's and the uplinks' capacity, or the slowest site at its line), with no run past
//     its timeout, and never splits a full uplink below pipe.MinShare of a site's line;
//   - it takes less time than all at once (TALM) and than a fixed concurrency of 100 (the
//     operator's --max-concurrent-precaching).
//
// FLEETTIME_PRECACHE_OUT=file writes the report there (make bench-fleettime).
func TestPrecacheFitsThePipe(t *testing.T) {
	var report strings.Builder
	fmt.Fprintf(&report, "Pre-caching by strategy (tests/fleettime: Precache, the network shared by pipe.Fair, simulated time)\n")
	strategies := []Strategy{Planned, AllAtOnce, Fixed(100)}
	for _, sc := range sitesScenarios {
		fmt.Fprintf(&report, "\n%s, %d GiB a site; seeds %v\n", sc.name, Edge().Payload/gib, seeds)
		worst := make([]float64, len(strategies))
		best := make([]float64, len(strategies))
		for i := range best {
			best[i] = 1e9
		}
		for _, seed := range seeds {
			s := sc.sites(seed)
			results := make([]Precached, len(strategies))
			for i, st := range strategies {
				results[i] = Precache(s, st)
				fmt.Fprintf(&report, "  seed %d  %s\n", seed, results[i])
				worst[i] = max(worst[i], results[i].Ratio())
				best[i] = min(best[i], results[i].Ratio())
			}
			planned := results[0]
			if planned.Ratio() > 1.1 {
				t.Errorf("%s, seed %d: the plan took %.3fx the floor, more than 1.1x", sc.name, seed, planned.Ratio())
			}
			if planned.Failed > 0 {
				t.Errorf("%s, seed %d: %d planned runs went past the timeout", sc.name, seed, planned.Failed)
			}
			if planned.Thinnest < pipe.MinShare {
				t.Errorf("%s, seed %d: the plan split an uplink down to %.3f of a line", sc.name, seed, planned.Thinnest)
			}
			for _, other := range results[1:] {
				if planned.Time >= other.Time {
					t.Errorf("%s, seed %d: the plan took %s, %s %s", sc.name, seed, planned.Time, other.Strategy, other.Time)
				}
			}
		}
		fmt.Fprintf(&report, "  against the floor, best to worst over the seeds:")
		for i, st := range strategies {
			fmt.Fprintf(&report, " %s %.3f-%.3fx;", st.Name, best[i], worst[i])
		}
		fmt.Fprintf(&report, "\n  targets: planned <= 1.1x the floor, no planned run past the timeout, no uplink split below %.2f of a line, planned faster than the others\n", pipe.MinShare)
	}
	t.Log("\n" + report.String())
	if out := os.Getenv("FLEETTIME_PRECACHE_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(report.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// The simulation's physics: a lone site pulls at its line and ends when its bytes do; a
// run past its timeout keeps the whole images it pulled (in groups of Parallel) and runs
// again for the rest.
func TestPrecacheOfOneSite(t *testing.T) {
	s := Sites{Sites: 1, Payload: 100 * gib, Images: 100, Parallel: 4, Lines: []float64{1 * gib}, RackSize: 1,
		Uplink: 10 * gib, Registry: 10 * gib, Timeout: 3600e9, Seed: 1}
	if r := Precache(s, Planned); r.Time.Seconds() != 100 || r.Runs != 1 || r.Failed != 0 {
		t.Fatalf("%s: want 100 s in one run", r)
	}
	// At 10 MiB/s, 100 GiB take 10,240 s: the first hour pulls 35.16 GiB, whole groups of
	// four 1 GiB images: 32 GiB stay, 3.16 GiB are lost; the second hour pulls 35.16 more,
	// 32 stay; the third run needs 36 GiB, 3,686.4 s at the line: past the hour again, 32
	// stay; the fourth pulls the last 4 GiB in 409.6 s.
	s.Lines = []float64{10 << 20}
	r := Precache(s, AllAtOnce)
	if r.Runs != 4 || r.Failed != 3 || r.Time.Seconds() != 3*3600+410 {
		t.Fatalf("%s (%s): want 4 runs, 3 failed, 3 h 6 min 50 s", r, r.Time)
	}
	if want := int64(3 * (3600*(10<<20) - 32*gib)); r.Lost != want {
		t.Fatalf("lost %d bytes, want %d", r.Lost, want)
	}
}
