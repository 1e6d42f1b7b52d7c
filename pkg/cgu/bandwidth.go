package cgu

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/pipe"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/prestart"
	"github.com/cgu-operator/cgu-operator/pkg/talmjob"
)

// Pre-caching against bandwidth (a PreCachingConfig's spec.bandwidth): which clusters start
// pre-caching is pkg/pipe's Admit over the clusters under way and those not started, and the
// plan of what is left (pipe.Plan) says when pre-caching ends.

// mbps is a megabit a second in bytes a second.
const mbps = 1e6 / 8

// A pull is judged once it ran slowAfter: slow when its rate is under slowShare of what the
// network gives it. At most maxSlowListed are named.
const (
	slowAfter     = 2 * time.Minute
	slowShare     = 0.25
	maxSlowListed = 10
)

// Bandwidth is what pre-caching against bandwidth is decided from.
type Bandwidth struct {
	Spec ranv1alpha1.PrecacheBandwidth
	// Labels are each planned cluster's ManagedCluster labels.
	Labels map[string]map[string]string
	// Within is the precache Jobs' timeout.
	Within time.Duration
}

// Reports are what the precache Jobs reported, by cluster, as their report views show.
type Reports map[string]precache.Summary

// reportsOf reads the summaries the clusters' report views show.
func reportsOf(j Jobs) Reports {
	out := Reports{}
	for c, views := range j.Views {
		data := views[talmjob.Precache.ReportView].Data[precache.SummaryKey]
		var s precache.Summary
		if data != "" && json.Unmarshal([]byte(data), &s) == nil {
			out[c] = s
		}
	}
	return out
}

// budget is the spec's capacities in bytes a second.
func (b *Bandwidth) budget(pulls map[string]pipe.Pull) pipe.Budget {
	out := pipe.Budget{Registry: float64(b.Spec.RegistryMbps) * mbps, Links: map[string]float64{}, Within: b.Within}
	for _, l := range b.Spec.Links {
		out.Links[l.Name] = float64(l.Mbps) * mbps
	}
	if b.Spec.DefaultLinkMbps > 0 {
		for _, p := range pulls {
			if _, named := out.Links[p.Link]; p.Link != "" && !named {
				out.Links[p.Link] = float64(b.Spec.DefaultLinkMbps) * mbps
			}
		}
	}
	return out
}

// estimate is what a cluster that has not reported pulls: the largest report, else the
// spec's payloadSize, else 0 (unknown).
func (b *Bandwidth) estimate(reports Reports) int64 {
	var largest int64
	for _, r := range reports {
		largest = max(largest, r.ToPull)
	}
	if largest > 0 {
		return largest
	}
	if b.Spec.PayloadSize != nil {
		return b.Spec.PayloadSize.Value()
	}
	return 0
}

// pulls are the clusters' pulls: their link and line from their labels, and what they still
// pull, from their report or the estimate.
func (b *Bandwidth) pulls(order []string, reports Reports) map[string]pipe.Pull {
	out := make(map[string]pipe.Pull, len(order))
	estimate := b.estimate(reports)
	for _, c := range order {
		p := pipe.Pull{Cluster: c, Bytes: estimate}
		labels := b.Labels[c]
		if b.Spec.LinkLabel != "" {
			p.Link = labels[b.Spec.LinkLabel]
		}
		if b.Spec.LineLabel != "" {
			if v, err := strconv.ParseInt(labels[b.Spec.LineLabel], 10, 64); err == nil && v > 0 {
				p.Rate = float64(v) * mbps
			}
		}
		if r, ok := reports[c]; ok && r.ToPull > 0 {
			p.Bytes = max(r.ToPull-r.Bytes, 0)
		}
		out[c] = p
	}
	return out
}

// pulling is what one pass reads once of pre-caching against the budget: the reports, each
// planned cluster's pull, the budget in bytes a second, and whether what a cluster pulls is
// known (a report or payloadSize).
type pulling struct {
	reports Reports
	pulls   map[string]pipe.Pull
	budget  pipe.Budget
	known   bool
}

// read reads the planned clusters' pulls from their labels and report views.
func (b *Bandwidth) read(order []string, jobs Jobs) pulling {
	reports := reportsOf(jobs)
	pulls := b.pulls(order, reports)
	return pulling{reports: reports, pulls: pulls, budget: b.budget(pulls), known: b.estimate(reports) > 0}
}

// starts are the clusters to start pre-caching now, in the order they start: pipe.Admit
// over the clusters under way (in plan order: the status keeps no start order) and those
// not started.
func (pl pulling) starts(order []string, states map[string]prestart.State) []string {
	pulls := pl.pulls
	var running, waiting []pipe.Pull
	for _, c := range order {
		switch {
		case states[c].Running():
			running = append(running, pulls[c])
		case states[c] == prestart.NotStarted:
			waiting = append(waiting, pulls[c])
		}
	}
	var out []string
	for _, p := range pipe.Admit(running, waiting, pl.budget) {
		out = append(out, p.Cluster)
	}
	return out
}

// plan is the plan of the pulls left (under way and not started) from now, with deadline
// (zero: none); nil when none is left.
func (pl pulling) plan(order []string, states map[string]prestart.State, now, deadline time.Time) *ranv1alpha1.PrecachePlan {
	pulls := pl.pulls
	var left []pipe.Pull
	out := &ranv1alpha1.PrecachePlan{}
	for _, c := range order {
		if s := states[c]; s.Running() || s == prestart.NotStarted {
			left = append(left, pulls[c])
			out.Bytes += pulls[c].Bytes
		}
	}
	if len(left) == 0 {
		return nil
	}
	if !deadline.IsZero() {
		out.Deadline = &metav1.Time{Time: deadline}
	}
	if !pl.known {
		return out
	}
	s := pipe.Plan(left, pl.budget)
	out.Unbounded = len(s.Unbounded)
	out.Bound = pipe.Bound(left, pl.budget)
	// To the minute, so that the status does not change with every pass.
	eta := now.Add(s.Makespan).Truncate(time.Minute).Add(time.Minute)
	out.ETA = &metav1.Time{Time: eta}
	if !deadline.IsZero() && eta.After(deadline) {
		out.Late = eta.Sub(deadline).String()
	}
	return out
}

// slow are the pulls under way, judged once they ran slowAfter, whose rate since their Job
// started (the report's bytes over the Job's time) is under slowShare of their Fair share
// among the pulls under way, the slowest against their share first.
func (pl pulling) slow(order []string, states map[string]prestart.State, jobs Jobs, now time.Time) []ranv1alpha1.SlowPull {
	var running []pipe.Pull
	for _, c := range order {
		if states[c].Running() {
			running = append(running, pl.pulls[c])
		}
	}
	shares := pipe.Fair(running, pl.budget)
	var out []ranv1alpha1.SlowPull
	for i, p := range running {
		r, reported := pl.reports[p.Cluster]
		job := jobs.Views[p.Cluster][talmjob.Precache.JobView].Job
		if !reported || r.Phase != precache.PhasePulling || job == nil || job.Status.StartTime == nil || math.IsInf(shares[i], 1) {
			continue
		}
		ran := now.Sub(job.Status.StartTime.Time)
		if ran < slowAfter {
			continue
		}
		if rate := float64(r.Bytes) / ran.Seconds(); rate < slowShare*shares[i] {
			out = append(out, ranv1alpha1.SlowPull{Cluster: p.Cluster, Kbps: int64(rate * 8 / 1e3), ShareKbps: int64(shares[i] * 8 / 1e3)})
		}
	}
	slices.SortStableFunc(out, func(a, b ranv1alpha1.SlowPull) int {
		// a.Kbps/a.ShareKbps against b's, in integers
		return cmp.Compare(a.Kbps*max(b.ShareKbps, 1), b.Kbps*max(a.ShareKbps, 1))
	})
	return out
}

// planMessage is what the plan adds to the PrecachingSuceeded condition's message while
// pre-caching runs.
func planMessage(p *ranv1alpha1.PrecachePlan) string {
	switch {
	case p == nil || p.ETA == nil:
		return ""
	case p.Late != "":
		return fmt.Sprintf("; the bandwidth plan ends at %s, %s after the start at %s (bound by the %s)",
			p.ETA.UTC().Format(time.RFC3339), p.Late, p.Deadline.UTC().Format(time.RFC3339), p.Bound)
	}
	return fmt.Sprintf("; the bandwidth plan ends at %s (bound by the %s)", p.ETA.UTC().Format(time.RFC3339), p.Bound)
}
