package fleettime

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// seeds are the fleets each scenario is drawn for: the targets hold over all of them.
var seeds = []uint64{1, 2, 3, 4, 5}

// modeSeeds are the seeds TestModesAgainstBatches plays: the first FLEETTIME_SEEDS of seeds,
// every one with make bench-fleettime, the first alone without it. Each seed is eight
// rollouts of 3,500 clusters, about 25 s of CPU: make test runs the smoke, every target on one
// fleet a scenario, and keeps its CPU for the suites that need the hub.
func modeSeeds(t *testing.T) []uint64 {
	t.Helper()
	v := os.Getenv("FLEETTIME_SEEDS")
	if v == "" {
		return seeds[:1]
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > len(seeds) {
		t.Fatalf("FLEETTIME_SEEDS=%q: want a number of seeds from 1 to %d", v, len(seeds))
	}
	return seeds[:n]
}

// scenario is a fleet and the targets the Window mode must meet against TALM's batches on it.
type scenario struct {
	name  string
	fleet func(seed uint64) Fleet
}

// badRelease is the index of the scenario of a release that fails on 5% of the clusters.
const badRelease = 1

var scenarios = []scenario{
	{"a night: 3,500 clusters, 500 at a time, 0.5% failing", func(seed uint64) Fleet {
		fl := Night()
		fl.Seed = seed
		return fl
	}},
	{"a bad release: 5% failing, a budget of 35", func(seed uint64) Fleet {
		fl := Night()
		fl.FailRate, fl.Seed = 0.05, seed
		return fl
	}},
}

// mode is a rollout mode, and for Progressive whether an unhealthy stage stops it.
type mode struct {
	mode ranv1alpha1.RolloutMode
	stop bool
}

// tally sums one mode's figures over the seeds.
type tally struct {
	time time.Duration
	past int
	peak int
}

func (t *tally) add(r Result, budget *int) {
	t.time += r.Time
	t.past += r.PastBudget(budget)
	t.peak = max(t.peak, r.Peak)
}

// The schedule's targets, simulated time against simulated time (no wall clock), on the
// same fleets:
//   - Window upgrades in at most 0.75 of the batches' time, never has more clusters in
//     progress than maxConcurrency (nor than the batches), and lets no more failed clusters
//     past the budget than the batches do, summed over the seeds;
//   - Progressive never has more than maxConcurrency in progress, and on a bad release lets
//     fewer failed clusters past the budget than the batches, with no more in progress than
//     its second size (its growth never got past it).
//
// FLEETTIME_OUT=file writes the report there (make bench-fleettime).
func TestModesAgainstBatches(t *testing.T) {
	var report strings.Builder
	fmt.Fprintf(&report, "Fleet time by rollout mode (tests/fleettime: pkg/rollout.Decide on simulated clusters, simulated time)\n")
	modes := []mode{{ranv1alpha1.ModeBatches, false}, {ranv1alpha1.ModeWindow, false}, {ranv1alpha1.ModeProgressive, false}, {ranv1alpha1.ModeProgressive, true}}
	seeds := modeSeeds(t)
	for i, sc := range scenarios {
		fmt.Fprintf(&report, "\n%s; seeds %v\n", sc.name, seeds)
		sums := make([]tally, len(modes))
		for _, seed := range seeds {
			for m, md := range modes {
				fl := sc.fleet(seed)
				fl.StopUnhealthy = md.stop
				r, err := Run(fl, md.mode)
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&report, "  seed %d  %s  past budget %d\n", seed, r, r.PastBudget(fl.MaxFailures))
				sums[m].add(r, fl.MaxFailures)
				if r.Peak > fl.MaxConcurrency {
					t.Errorf("%s, seed %d: %s had %d clusters in progress at once, maxConcurrency %d", sc.name, seed, r.Name(), r.Peak, fl.MaxConcurrency)
				}
			}
		}
		checkTargets(t, &report, sc, i == badRelease, modes[1:], sums)
		fmt.Fprintf(&report, "\n")
	}
	t.Log("\n" + report.String())
	if out := os.Getenv("FLEETTIME_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(report.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// checkTargets reports the modes' figures against the batches' (sums[0]) for a scenario and
// checks the targets: Window's always, Progressive's on the bad release.
func checkTargets(t *testing.T, report *strings.Builder, sc scenario, bad bool, modes []mode, sums []tally) {
	t.Helper()
	batches, window := sums[0], sums[1]
	fmt.Fprintf(report, "  time against Batches:")
	for m, md := range modes {
		r := Result{Mode: md.mode, Stop: md.stop}
		fmt.Fprintf(report, " %s %.2f;", r.Name(), sums[m+1].time.Seconds()/batches.time.Seconds())
	}
	fmt.Fprintf(report, " failures past the budget: Batches %d, Window %d, Prog/Reset %d, Prog/Stop %d\n",
		batches.past, window.past, sums[2].past, sums[3].past)
	ratio := window.time.Seconds() / batches.time.Seconds()
	fmt.Fprintf(report, "  targets: Window/Batches time <= 0.75; Window past the budget <= Batches; peak <= %d",
		sc.fleet(0).MaxConcurrency)
	if window.peak > batches.peak {
		t.Errorf("%s: Window had %d clusters in progress at once, batches %d", sc.name, window.peak, batches.peak)
	}
	if ratio > 0.75 {
		t.Errorf("%s: Window took %.2f of the batches' time, more than 0.75", sc.name, ratio)
	}
	if window.past > batches.past {
		t.Errorf("%s: Window let %d failed clusters past the budget, batches %d", sc.name, window.past, batches.past)
	}
	if !bad {
		return
	}
	fmt.Fprintf(report, "; Progressive past the budget < Batches, peak <= the second size (175)")
	for _, m := range []int{2, 3} {
		if sums[m].past >= batches.past || sums[m].peak > 175 {
			t.Errorf("%s: Progressive (stop %v) let %d failed clusters past the budget (batches %d), %d in progress at once",
				sc.name, modes[m-1].stop, sums[m].past, batches.past, sums[m].peak)
		}
	}
}

// The draw follows its description: the median near an hour, about 1% of the clusters in
// the tail at three times, about FailRate failing.
func TestDraw(t *testing.T) {
	fl := Night()
	fl.Clusters = 20000
	durations, fails := fl.Draw()
	below, tail, failing := 0, 0, 0
	for i, d := range durations {
		if d < fl.Median {
			below++
		}
		if d > 2*fl.Median {
			tail++
		}
		if fails[i] {
			failing++
		}
	}
	if share := float64(below) / float64(len(durations)); share < 0.48 || share > 0.52 {
		t.Errorf("%.3f of the durations are below the median", share)
	}
	// Above twice the median: the tail (1%) and 0.3% of the others (sigma 0.25).
	if share := float64(tail) / float64(len(durations)); share < 0.008 || share > 0.017 {
		t.Errorf("%.4f of the durations are above twice the median", share)
	}
	if share := float64(failing) / float64(len(durations)); share < 0.003 || share > 0.007 {
		t.Errorf("%.4f of the clusters fail", share)
	}
}
