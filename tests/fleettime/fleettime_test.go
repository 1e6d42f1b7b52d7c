package fleettime

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// seeds are the fleets each scenario is drawn for: the targets hold over all of them.
var seeds = []uint64{1, 2, 3, 4, 5}

// scenario is a fleet and the targets the Window mode must meet against TALM's batches on it.
type scenario struct {
	name  string
	fleet func(seed uint64) Fleet
}

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

// The schedule's targets, simulated time against simulated time (no wall clock): on the
// same fleets, Window upgrades in at most 0.75 of the batches' time, never has more clusters
// in progress than maxConcurrency (nor than the batches), and lets no more failed clusters
// past the budget than the batches do, summed over the seeds. FLEETTIME_OUT=file writes the
// report there (make bench-fleettime).
func TestWindowAgainstBatches(t *testing.T) {
	var report strings.Builder
	fmt.Fprintf(&report, "Fleet time by rollout mode (tests/fleettime: pkg/rollout.Decide on simulated clusters, simulated time)\n")
	for _, sc := range scenarios {
		fmt.Fprintf(&report, "\n%s; seeds %v\n", sc.name, seeds)
		var batchTime, windowTime time.Duration
		batchPast, windowPast := 0, 0
		for _, seed := range seeds {
			fl := sc.fleet(seed)
			batches, err := Run(fl, ranv1alpha1.ModeBatches)
			if err != nil {
				t.Fatal(err)
			}
			window, err := Run(fl, ranv1alpha1.ModeWindow)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&report, "  seed %d  %s  past budget %d\n", seed, batches, batches.PastBudget(fl.MaxFailures))
			fmt.Fprintf(&report, "  seed %d  %s  past budget %d\n", seed, window, window.PastBudget(fl.MaxFailures))
			batchTime += batches.Time
			windowTime += window.Time
			batchPast += batches.PastBudget(fl.MaxFailures)
			windowPast += window.PastBudget(fl.MaxFailures)
			if window.Peak > fl.MaxConcurrency || window.Peak > batches.Peak {
				t.Errorf("%s, seed %d: Window had %d clusters in progress at once, batches %d, maxConcurrency %d",
					sc.name, seed, window.Peak, batches.Peak, fl.MaxConcurrency)
			}
		}
		ratio := windowTime.Seconds() / batchTime.Seconds()
		fmt.Fprintf(&report, "  Window/Batches time %.2f (target <= 0.75); failures past the budget: Window %d, Batches %d (target: Window <= Batches)\n",
			ratio, windowPast, batchPast)
		if ratio > 0.75 {
			t.Errorf("%s: Window took %.2f of the batches' time, more than 0.75", sc.name, ratio)
		}
		if windowPast > batchPast {
			t.Errorf("%s: Window let %d failed clusters past the budget, batches %d", sc.name, windowPast, batchPast)
		}
	}
	t.Log("\n" + report.String())
	if out := os.Getenv("FLEETTIME_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(report.String()), 0o600); err != nil {
			t.Fatal(err)
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
