package fleettime

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/cgu-operator/cgu-operator/pkg/pipe"
)

// The pre-cache phase: every site pulls its release payload before the rollout starts, and
// the network, not the schedule, says how fast. The sites' pulls share the registry (or
// mirror) and their racks' uplinks as TCP flows do (pipe.Fair, recomputed whenever a pull
// starts or ends), each at most its own line. A strategy only says which sites start when.
//
// Each site's precache Job has a deadline (the operator's --precache-timeout). A run not done
// by then fails; the images it finished stay on the node (the precache program checks what
// is present first) and the images it was pulling are lost. Here a failed site runs again
// (TALM would leave it out of the upgrade instead); the failed runs are counted.

// Sites describes the simulated sites' pre-caching.
type Sites struct {
	Sites int
	// Payload is what each site pulls, Images images of equal size, Parallel at once (the
	// precache program's --parallel): a run that fails loses the images it was pulling.
	Payload          int64
	Images, Parallel int
	// Lines are the sites' line rates in bytes a second, drawn evenly.
	Lines []float64
	// RackSize sites share an uplink of Uplink bytes a second.
	RackSize int
	Uplink   float64
	// Registry is what the registry serves to every site together, in bytes a second.
	Registry float64
	// Timeout is each run's deadline.
	Timeout time.Duration
	Seed    uint64
}

const (
	mbit = 1e6 / 8
	gib  = 1 << 30
)

// Edge is the default: 3,500 single-node sites pulling a 14 GiB payload of 180 images, 4 at a
// time, on lines of 50 Mbit/s to 1 Gbit/s, in racks of 50 behind 2 Gbit/s uplinks, from a
// 10 Gbit/s mirror, each run bounded by the operator's default timeout of 2 hours.
func Edge() Sites {
	return Sites{Sites: 3500, Payload: 14 * gib, Images: 180, Parallel: 4,
		Lines:    []float64{50 * mbit, 100 * mbit, 200 * mbit, 500 * mbit, 1000 * mbit},
		RackSize: 50, Uplink: 2000 * mbit, Registry: 10000 * mbit, Timeout: 2 * time.Hour, Seed: 1}
}

// Pulls are the sites' pulls, in the sites' order, and the budget they share.
func (s Sites) Pulls() ([]pipe.Pull, pipe.Budget) {
	rng := rand.New(rand.NewPCG(s.Seed, 0xcac4e)) //nolint:gosec // a seeded draw, the same for every strategy
	pulls := make([]pipe.Pull, s.Sites)
	b := pipe.Budget{Registry: s.Registry, Links: map[string]float64{}, Within: s.Timeout}
	for i := range pulls {
		rack := fmt.Sprintf("rack-%03d", i/s.RackSize)
		b.Links[rack] = s.Uplink
		pulls[i] = pipe.Pull{Cluster: fmt.Sprintf("sno-%05d", i+1), Bytes: s.Payload, Link: rack, Rate: s.Lines[rng.IntN(len(s.Lines))]}
	}
	return pulls, b
}

// Strategy says which waiting sites start now, given those pulling (in the order they
// started) and those waiting (in the sites' order, the sites that failed last).
type Strategy struct {
	Name  string
	Start func(running, waiting []pipe.Pull, b pipe.Budget) []pipe.Pull
}

// AllAtOnce starts every site at once, as TALM does.
var AllAtOnce = Strategy{Name: "all at once (TALM)", Start: func(_, waiting []pipe.Pull, _ pipe.Budget) []pipe.Pull {
	return waiting
}}

// Fixed starts sites in order while fewer than n pull (the operator's
// --max-concurrent-precaching, 100 by default).
func Fixed(n int) Strategy {
	return Strategy{Name: fmt.Sprintf("%d at a time", n), Start: func(running, waiting []pipe.Pull, _ pipe.Budget) []pipe.Pull {
		return waiting[:min(len(waiting), max(n-len(running), 0))]
	}}
}

// Planned starts what pipe.Admit starts: the operator's bandwidth-aware schedule.
var Planned = Strategy{Name: "planned (pipe.Admit)", Start: pipe.Admit}

// Precached is how one strategy pre-cached the sites.
type Precached struct {
	Strategy string
	// Time is when the last site had its payload; Floor the registry's and links' bytes at
	// their capacity, or the slowest site at its line (pipe.Floor).
	Time, Floor time.Duration
	// Runs counts the precache runs; Failed those that ran past the timeout.
	Runs, Failed int
	// Lost is the bytes pulled by failed runs for images they did not finish.
	Lost int64
	// Thinnest is the least share of its line a site got while its uplink was full: below
	// pipe.MinShare, the uplink was split thinner than any plan splits it.
	Thinnest float64
	// Decisions counts the moments the strategy started sites at.
	Decisions int
}

func (p Precached) String() string {
	return fmt.Sprintf("%-22s %8s  %.3fx the floor (%s)  runs %5d  failed %5d  lost %6.0f GiB  thinnest share of a line %.3f",
		p.Strategy, p.Time.Round(time.Minute), p.Ratio(), p.Floor.Round(time.Minute), p.Runs, p.Failed, float64(p.Lost)/gib, p.Thinnest)
}

// Ratio is Time against the floor.
func (p Precached) Ratio() float64 { return p.Time.Seconds() / p.Floor.Seconds() }

// site is one site's pull as it stands.
type site struct {
	pull pipe.Pull
	// left is what the site has still to pull; done what its run pulled so far.
	left, done float64
	started    float64
	rate       float64
}

// Precache plays a strategy on the sites until every site has its payload.
func Precache(s Sites, st Strategy) Precached {
	pulls, b := s.Pulls()
	out := Precached{Strategy: st.Name, Floor: pipe.Floor(pulls, b), Thinnest: 1}
	image := float64(s.Payload) / float64(s.Images)
	waiting := make([]*site, len(pulls))
	for i, p := range pulls {
		waiting[i] = &site{pull: p, left: float64(p.Bytes)}
	}
	var running []*site
	now, timeout := 0.0, s.Timeout.Seconds()
	for len(waiting)+len(running) > 0 {
		running, waiting = startSites(st, b, running, waiting, now, &out)
		share(running, b, &out)
		next := math.Inf(1)
		for _, r := range running {
			next = math.Min(next, math.Min(now+(r.left-r.done)/r.rate, r.started+timeout))
		}
		if math.IsInf(next, 1) {
			panic(fmt.Sprintf("%s: %d sites wait and none pulls", st.Name, len(waiting)))
		}
		dt := next - now
		now = next
		kept := running[:0]
		for _, r := range running {
			r.done += r.rate * dt
			switch {
			case r.left-r.done <= 1e-6*r.left || r.left-r.done < 1:
			case now >= r.started+timeout-1e-9:
				// Past the deadline: the whole images stay, the ones being pulled are lost.
				finished := math.Floor(r.done/(image*float64(s.Parallel))) * image * float64(s.Parallel)
				out.Failed++
				out.Lost += int64(r.done - finished)
				r.left -= finished
				r.done = 0
				waiting = append(waiting, r)
			default:
				kept = append(kept, r)
			}
		}
		running = kept
	}
	out.Time = time.Duration(now * float64(time.Second)).Round(time.Second)
	return out
}

// startSites asks the strategy which waiting sites start now, and starts them.
func startSites(st Strategy, b pipe.Budget, running, waiting []*site, now float64, out *Precached) ([]*site, []*site) {
	asRun := make([]pipe.Pull, len(running))
	for i, r := range running {
		asRun[i] = r.pull
		asRun[i].Bytes = int64(r.left - r.done)
	}
	byName := make(map[string]*site, len(waiting))
	asWait := make([]pipe.Pull, len(waiting))
	for i, w := range waiting {
		byName[w.pull.Cluster] = w
		asWait[i] = w.pull
		asWait[i].Bytes = int64(w.left)
	}
	starting := st.Start(asRun, asWait, b)
	if len(starting) == 0 {
		return running, waiting
	}
	out.Decisions++
	begun := make(map[string]bool, len(starting))
	for _, p := range starting {
		w := byName[p.Cluster]
		w.started, w.done = now, 0
		running = append(running, w)
		begun[p.Cluster] = true
		out.Runs++
	}
	left := waiting[:0]
	for _, w := range waiting {
		if !begun[w.pull.Cluster] {
			left = append(left, w)
		}
	}
	return running, left
}

// share sets the running sites' rates as the network shares them, and records the thinnest
// share of a line a full uplink left a site.
func share(running []*site, b pipe.Budget, out *Precached) {
	pulls := make([]pipe.Pull, len(running))
	for i, r := range running {
		pulls[i] = r.pull
	}
	rates := pipe.Fair(pulls, b)
	onLink := map[string]float64{}
	for i, r := range running {
		r.rate = rates[i]
		onLink[r.pull.Link] += rates[i]
	}
	for _, r := range running {
		if c := b.Links[r.pull.Link]; c > 0 && onLink[r.pull.Link] >= c*(1-1e-9) {
			out.Thinnest = math.Min(out.Thinnest, r.rate/r.pull.Rate)
		}
	}
}
