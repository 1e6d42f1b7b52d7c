// Package fleettime measures how long a fleet takes to upgrade in each rollout mode, with
// upgrade durations as real clusters show them: it plays a rollout's decisions (the
// operator's own pkg/rollout.Decide, on the plan pkg/plan builds) against simulated clusters
// in simulated time, event by event, so that a 3,500-cluster night takes seconds.
//
// The clusters' upgrade durations are drawn from a lognormal distribution around a median
// (60 minutes by default, sigma 0.25: half of the clusters take 51 to 71 minutes), and a
// share of them (1%) take three times as long: the long tail of a slow image pull or a
// stuck drain. A share of them (FailRate) fail the health check after their upgrade. The
// draw is seeded: every mode sees the same fleet.
//
// What the hub adds (the propagator, the spokes' status) is seconds against upgrades of an
// hour, and is what `make bench-fleet` measures; this package measures the schedule.
package fleettime

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

// Fleet describes the simulated fleet and its rollout.
type Fleet struct {
	Clusters       int
	MaxConcurrency int
	// Median is the median upgrade duration; Sigma the lognormal's shape.
	Median time.Duration
	Sigma  float64
	// TailRate of the clusters take TailFactor times as long.
	TailRate, TailFactor float64
	// FailRate of the clusters fail the health check after their upgrade.
	FailRate float64
	// TimeoutMinutes is spec.remediationStrategy.timeout.
	TimeoutMinutes int
	// MaxFailures is spec.maxFailures; nil means no budget.
	MaxFailures *int
	Seed        uint64
	// StopUnhealthy makes an unhealthy stage of the Progressive mode stop the rollout
	// (progressive.onUnhealthy Stop) instead of sending the growth back.
	StopUnhealthy bool
}

// Night is the default fleet: 3,500 clusters, 500 at a time, one hour a cluster, a 1% tail
// at three hours, 0.5% failing, a two-day timeout, a budget of 1% failures.
func Night() Fleet {
	budget := 35
	return Fleet{Clusters: 3500, MaxConcurrency: 500, Median: time.Hour, Sigma: 0.25, TailRate: 0.01, TailFactor: 3,
		FailRate: 0.005, TimeoutMinutes: 2880, MaxFailures: &budget, Seed: 1}
}

// Result is how one rollout of the fleet went.
type Result struct {
	Mode ranv1alpha1.RolloutMode
	// Stop is true for a Progressive rollout whose unhealthy stages stop it.
	Stop bool
	// Time is from the start until the rollout finished (every cluster ended, or the
	// rollout ended early).
	Time time.Duration
	// Peak and Mean count the clusters in progress (upgrading or being verified), the mean
	// weighted by time.
	Peak int
	Mean float64
	// The clusters by final state; NotStarted were never started.
	Completed, Failed, TimedOut, NotStarted int
	// State is the rollout's state at the end.
	State ranv1alpha1.UpgradeState
	// Decisions is how many decisions the rollout took.
	Decisions int
}

// PastBudget is how many failed or timed-out clusters there are beyond the budget.
func (r Result) PastBudget(budget *int) int {
	if budget == nil {
		return 0
	}
	return max(r.Failed+r.TimedOut-*budget, 0)
}

func (r Result) String() string {
	return fmt.Sprintf("%-11s %8s  peak %4d  mean %6.1f  completed %4d  failed %3d  timed out %3d  not started %4d  %s",
		r.Name(), r.Time.Round(time.Minute), r.Peak, r.Mean, r.Completed, r.Failed, r.TimedOut, r.NotStarted, r.State)
}

// Name is the mode, and for a Progressive rollout what an unhealthy stage does.
func (r Result) Name() string {
	switch {
	case r.Mode != ranv1alpha1.ModeProgressive:
		return string(r.Mode)
	case r.Stop:
		return "Prog/Stop"
	}
	return "Prog/Reset"
}

// Draw returns each cluster's upgrade duration and whether it fails.
func (fl Fleet) Draw() ([]time.Duration, []bool) {
	rng := rand.New(rand.NewPCG(fl.Seed, 0x5eed)) //nolint:gosec // a seeded draw, the same for every mode and run

	durations := make([]time.Duration, fl.Clusters)
	fails := make([]bool, fl.Clusters)
	for i := range durations {
		d := float64(fl.Median) * math.Exp(fl.Sigma*rng.NormFloat64())
		if rng.Float64() < fl.TailRate {
			d *= fl.TailFactor
		}
		durations[i] = time.Duration(d).Round(time.Second)
		fails[i] = rng.Float64() < fl.FailRate
	}
	return durations, fails
}

// start is when every simulated rollout starts.
var start = time.Date(2026, 11, 27, 22, 0, 0, 0, time.UTC)

// Run plays the rollout of the fleet in mode, until it finishes or fails to move.
func Run(fl Fleet, mode ranv1alpha1.RolloutMode) (Result, error) {
	pl, err := newPlayer(fl, mode)
	if err != nil {
		return Result{}, err
	}
	for {
		d := rollout.Decide(pl.f)
		pl.r.Decisions++
		pl.f.Progress = d.Progress
		pl.startUpgrades(d)
		if d.Progress.Finished {
			pl.r.State, pl.r.Time = d.State, pl.f.Now.Sub(start)
			break
		}
		next := d.Wake
		if pl.done.Len() > 0 && (next.IsZero() || pl.done[0].at.Before(next)) {
			next = pl.done[0].at
		}
		if next.IsZero() || next.Before(pl.f.Now) {
			return pl.r, fmt.Errorf("%s: the rollout stopped moving at %s: %s %s", mode, pl.f.Now.Sub(start), d.State, d.Message)
		}
		pl.endUpgrades(next)
	}
	if pl.r.Time > 0 {
		pl.r.Mean = pl.weighted / pl.r.Time.Seconds()
	}
	count(&pl.r, pl.f.Progress, fl.Clusters, pl.started)
	return pl.r, nil
}

// player is one rollout being played: the facts the next decision takes, the upgrades under
// way, and the figures so far.
type player struct {
	f          rollout.Facts
	r          Result
	durations  []time.Duration
	fails      []bool
	index      map[string]int
	compliance map[string]policyv1.ComplianceState
	started    map[string]bool
	done       upgrades
	// inProgress clusters were in progress since last; weighted sums them over time.
	inProgress int
	last       time.Time
	weighted   float64
}

func newPlayer(fl Fleet, mode ranv1alpha1.RolloutMode) (*player, error) {
	pl := &player{r: Result{Mode: mode, Stop: fl.StopUnhealthy && mode == ranv1alpha1.ModeProgressive}, index: make(map[string]int, fl.Clusters),
		compliance: make(map[string]policyv1.ComplianceState, fl.Clusters), started: make(map[string]bool, fl.Clusters), last: start}
	pl.durations, pl.fails = fl.Draw()
	names := make([]string, fl.Clusters)
	for i := range names {
		names[i] = fmt.Sprintf("sno-%05d", i+1)
		pl.index[names[i]] = i
		pl.compliance[names[i]] = policyv1.NonCompliant
	}
	in := plan.Input{Clusters: names, MaxConcurrency: fl.MaxConcurrency, Window: mode == ranv1alpha1.ModeWindow}
	if mode == ranv1alpha1.ModeProgressive {
		g := plan.DefaultGrowth
		g.Stop = fl.StopUnhealthy
		in.Progressive = &g
	}
	p, err := plan.Build(in)
	if err != nil {
		return nil, err
	}
	pl.f = rollout.Facts{Now: start, Enabled: true, Plan: p, TimeoutMinutes: fl.TimeoutMinutes,
		Policies: []rollout.PolicyFacts{{Compliance: pl.compliance}},
		Gates:    rollout.Gates{MaxFailures: fl.MaxFailures, Verify: true, Verifications: map[string]rollout.Verification{}}}
	return pl, nil
}

// startUpgrades starts the upgrade of each cluster the decision enforces the policy on for
// the first time, and counts the clusters in progress.
func (pl *player) startUpgrades(d rollout.Decision) {
	pl.weighted += float64(pl.inProgress) * pl.f.Now.Sub(pl.last).Seconds()
	pl.last = pl.f.Now
	for _, name := range d.Enforce[0] {
		if !pl.started[name] {
			pl.started[name] = true
			heap.Push(&pl.done, upgrade{at: pl.f.Now.Add(pl.durations[pl.index[name]]), cluster: name})
		}
	}
	pl.inProgress = 0
	for _, c := range d.Progress.Clusters {
		if c.State == ranv1alpha1.ClusterInProgress {
			pl.inProgress++
		}
	}
	pl.r.Peak = max(pl.r.Peak, pl.inProgress)
}

// endUpgrades moves the time to now and ends the upgrades due by then: the cluster complies,
// and its health check answers.
func (pl *player) endUpgrades(now time.Time) {
	pl.f.Now = now
	for pl.done.Len() > 0 && !pl.done[0].at.After(now) {
		u := heap.Pop(&pl.done).(upgrade)
		pl.compliance[u.cluster] = policyv1.Compliant
		pl.f.Gates.Verifications[u.cluster] = rollout.Verification{Done: true, Healthy: !pl.fails[pl.index[u.cluster]],
			Reason: "HealthCheckFailed"}
	}
}

// count sorts the clusters by their final state, as the rollout counted them when its
// batches ended; the clusters never started are counted apart.
func count(r *Result, p rollout.Progress, clusters int, started map[string]bool) {
	r.Completed, r.Failed, r.TimedOut = p.Done.Completed, p.Done.Failed, p.Done.TimedOut
	r.NotStarted = clusters - len(started)
}

// upgrade is a cluster's upgrade ending at a time.
type upgrade struct {
	at      time.Time
	cluster string
}

// upgrades is a min-heap of upgrades by end time.
type upgrades []upgrade

func (u upgrades) Len() int           { return len(u) }
func (u upgrades) Less(i, j int) bool { return u[i].at.Before(u[j].at) }
func (u upgrades) Swap(i, j int)      { u[i], u[j] = u[j], u[i] }
func (u *upgrades) Push(x any)        { *u = append(*u, x.(upgrade)) }
func (u *upgrades) Pop() any {
	old := *u
	x := old[len(old)-1]
	*u = old[:len(old)-1]
	return x
}
