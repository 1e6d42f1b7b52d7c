package bench_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The targets a fleet rollout must meet (docs/benchmarks.md, "Targets"). make bench-fleet
// prints them next to the figures and fails when one is missed.
const (
	// floorRatio bounds an operator phase's convergence against the floor of its mode and the
	// Override floor (the fastest any operator can be on the harness).
	floorRatio = 1.25
	// maxWritesPerCluster bounds the operator's writes per cluster, events aside.
	maxWritesPerCluster = 3.0
	// maxEventsPerCluster bounds the events per cluster.
	maxEventsPerCluster = 2.5
	// maxObject bounds the largest object the operator writes.
	maxObject = 256 << 10
	// maxSwitchP99 bounds the p99 of the time from a batch's last cluster done to the next
	// batch's first cluster enforced.
	maxSwitchP99 = 2 * time.Second
)

// maxRSS bounds the operator process's resident set for a fleet of the given size.
func maxRSS(clusters int) uint64 {
	if clusters <= 3500 {
		return 256 << 20
	}
	return 512 << 20
}

// verdict is one target judged on one phase.
type verdict struct {
	phase, target, figure string
	met                   bool
}

// targets judges every operator phase against the targets; a floor phase is judged only
// as the reference of a ratio. A figure not measured (a floor that did not run) is not
// judged.
func targets(c config, results []phaseResult) []verdict {
	byPhase := map[string]*phaseResult{}
	for i := range results {
		byPhase[results[i].phase] = &results[i]
	}
	var out []verdict
	for i := range results {
		r := &results[i]
		k := phaseKinds[r.phase]
		if !k.operator {
			continue
		}
		add := func(target, figure string, met bool) {
			out = append(out, verdict{phase: r.phase, target: target, figure: figure, met: met})
		}
		if r.err != nil {
			add("the rollout completes", r.err.Error(), false)
			continue
		}
		for _, floor := range floorsOf(k) {
			if f := byPhase[floor]; f != nil && f.err == nil && f.converged > 0 && r.converged > 0 {
				ratio := r.converged.Seconds() / f.converged.Seconds()
				add(fmt.Sprintf("converged within %.2fx %s", floorRatio, floor), fmt.Sprintf("%.2fx", ratio), ratio <= floorRatio)
			}
		}
		if p99 := percentile(r.switches, 0.99); len(r.switches) > 0 {
			add(fmt.Sprintf("batch switch p99 at most %s", maxSwitchP99), p99.Round(time.Millisecond).String(), p99 <= maxSwitchP99)
		}
		if r.operator != nil {
			add(fmt.Sprintf("operator RSS peak at most %s", mib(maxRSS(c.clusters))), mib(r.operator.RSSPeak), r.operator.RSSPeak <= maxRSS(c.clusters))
		}
		if r.requests != nil {
			out = append(out, requestVerdicts(r.phase, *r.requests, c.clusters)...)
		}
	}
	return out
}

// floorsOf are the floors an operator phase is read against: its mode's, and the Override
// floor.
func floorsOf(k phaseKind) []string {
	if k.floor == overrideFloor {
		return []string{overrideFloor}
	}
	return []string{k.floor, overrideFloor}
}

// requestVerdicts judges the operator's requests during a rollout: writes and events per
// cluster, the largest object, and nothing listed or watched anew after the caches synced.
func requestVerdicts(phase string, rq requestCounts, clusters int) []verdict {
	events := rq.after[eventCreates]
	writes := float64(total(rq.after, isWrite)-events) / float64(clusters)
	perCluster := float64(events) / float64(clusters)
	// A WATCH of a resource already watched before the sync renews an informer's watch (the
	// API server ends watches after a while); a LIST, or a WATCH of anything else, is an
	// informer started late or a read that bypassed the cache.
	var late []string
	for k, v := range rq.after {
		switch strings.SplitN(k, " ", 2)[0] {
		case "LIST":
			late = append(late, fmt.Sprintf("%d %s", v, k))
		case "WATCH":
			if rq.before[k] == 0 {
				late = append(late, fmt.Sprintf("%d %s", v, k))
			}
		}
	}
	lateFigure := "none"
	if len(late) > 0 {
		lateFigure = strings.Join(late, ", ")
	}
	return []verdict{
		{phase, fmt.Sprintf("writes per cluster, events aside, at most %.1f", maxWritesPerCluster), fmt.Sprintf("%.3f", writes), writes <= maxWritesPerCluster},
		{phase, fmt.Sprintf("events per cluster at most %.1f", maxEventsPerCluster), fmt.Sprintf("%.3f", perCluster), perCluster <= maxEventsPerCluster},
		{phase, fmt.Sprintf("largest object written at most %d KiB", maxObject>>10), fmt.Sprintf("%.1f KiB (%s)", float64(rq.largest)/1024, rq.largestOf), rq.largest <= maxObject},
		{phase, "no LIST after the caches synced, no WATCH but renewals", lateFigure, len(late) == 0},
	}
}

// writeTargets renders the verdicts as a table.
func writeTargets(b *strings.Builder, verdicts []verdict) {
	if len(verdicts) == 0 {
		return
	}
	b.WriteString("\n| phase | target | figure | |\n|---|---|---|---|\n")
	for _, v := range verdicts {
		mark := "met"
		if !v.met {
			mark = "**missed**"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", v.phase, v.target, strings.ReplaceAll(v.figure, "|", "/"), mark)
	}
}

// The targets can fail: a slow operator, a large object, a late LIST, a fat process are each
// a missed target.
func TestTargetsCanBeMissed(t *testing.T) {
	c := config{clusters: 1000}
	good := requestCounts{before: map[string]int{"WATCH policies": 1}, after: map[string]int{"PATCH placementbindings": 200, eventCreates: 1900,
		"GET policies": 50, "WATCH policies": 1}, largest: 100 << 10, largestOf: "PATCH clustergroupupgrades/status"}
	results := []phaseResult{
		{phase: overrideFloor, converged: 60 * time.Second},
		{phase: "operator-override", converged: 66 * time.Second, switches: []time.Duration{time.Second},
			operator: &childReport{RSSPeak: 120 << 20}, requests: &good},
	}
	for _, v := range targets(c, results) {
		if !v.met {
			t.Errorf("a good run missed %q: %s", v.target, v.figure)
		}
	}
	bad := requestCounts{after: map[string]int{"PATCH placementbindings": 3500, eventCreates: 2600, "WATCH configmaps": 1}, largest: 300 << 10, largestOf: "PUT x"}
	results[1] = phaseResult{phase: "operator-override", converged: 90 * time.Second, switches: []time.Duration{3 * time.Second},
		operator: &childReport{RSSPeak: 300 << 20}, requests: &bad}
	missed := map[string]bool{}
	for _, v := range targets(c, results) {
		if !v.met {
			missed[strings.SplitN(v.target, " ", 2)[0]] = true
		}
	}
	for _, want := range []string{"converged", "batch", "operator", "writes", "events", "largest", "no"} {
		if !missed[want] {
			t.Errorf("a bad run met the target starting %q; missed: %v", want, missed)
		}
	}
	results[1] = phaseResult{phase: "operator-override", err: fmt.Errorf("timed out")}
	if v := targets(c, results); len(v) != 1 || v[0].met {
		t.Errorf("a failed run: %+v", v)
	}
}
