package cgu

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/talmjob"
)

// bandwidthFacts: c1, c2 and c3 behind one link of 100 Mbit/s, c1 on a line of 10 Mbit/s,
// c2 and c3 on lines of 100, pulling 1 GB each, in a rollout not enabled, with the states
// the status kept.
func bandwidthFacts(kept map[string]string) Facts {
	f := precacheFacts(kept)
	f.Upgrade.Spec.Enable = ptr.To(false)
	labels := map[string]map[string]string{
		"c1": {"example.com/link": "rack-a", "example.com/line": "10"},
		"c2": {"example.com/link": "rack-a", "example.com/line": "100"},
		"c3": {"example.com/link": "rack-a", "example.com/line": "100"},
	}
	f.Precache.Bandwidth = &Bandwidth{Labels: labels, Within: 2 * time.Hour, Spec: ranv1alpha1.PrecacheBandwidth{
		LinkLabel: "example.com/link", LineLabel: "example.com/line",
		Links:       []ranv1alpha1.PrecacheLink{{Name: "rack-a", Mbps: 100}},
		PayloadSize: ptr.To(resource.MustParse("1G")),
	}}
	return f
}

func TestDecidePrecachingAgainstBandwidth(t *testing.T) {
	// Nothing under way: the slow c1 first (800 s alone), on its whole 10 Mbit/s; then c2 on
	// the 90 left (more than a quarter of its line); c3 would get nothing.
	in := Decide(bandwidthFacts(nil), Config{MaxConcurrentPrecaching: 1}, decideAt)
	want := map[string]string{"c1": talmjob.PreparingToStart, "c2": talmjob.PreparingToStart, "c3": talmjob.NotStarted}
	if got := in.Status.Precaching.Status; !maps.Equal(got, want) {
		t.Fatalf("states %v, want %v: the budget, not the hub-wide cap of 1, decides", got, want)
	}
	// c2 under way holds the whole link at its line: nothing else starts.
	in = Decide(bandwidthFacts(map[string]string{"c2": running}), Config{}, decideAt)
	want = map[string]string{"c1": talmjob.NotStarted, "c2": running, "c3": talmjob.NotStarted}
	if got := in.Status.Precaching.Status; !maps.Equal(got, want) {
		t.Errorf("states %v beside c2, want %v", got, want)
	}
}

// The plan of what is left: with the three clusters left, the link's 3 GB at 100 Mbit/s take
// 240 s; c1 alone at its 10 takes 800 s and bounds the plan.
func TestPrecachePlanAndItsLateness(t *testing.T) {
	f := bandwidthFacts(nil)
	in := Decide(f, Config{}, decideAt)
	plan := in.Status.Precaching.Plan
	if plan == nil || plan.ETA == nil {
		t.Fatalf("plan %+v, want an ETA", plan)
	}
	if want := decideAt.Add(800 * time.Second).Truncate(time.Minute).Add(time.Minute); !plan.ETA.Time.Equal(want) {
		t.Errorf("ETA %s, want %s", plan.ETA, want)
	}
	if plan.Bound != "line of c1" || plan.Bytes != 3e9 || plan.Late != "" || plan.Deadline != nil {
		t.Errorf("plan %+v, want bound by c1's line, 3 GB, no deadline", plan)
	}
	msg := condition(in.Status, ranv1alpha1.ConditionPrecachingSucceeded).Message
	if !strings.Contains(msg, "the bandwidth plan ends at") {
		t.Errorf("PrecachingSuceeded says %q, not the plan's end", msg)
	}

}

// The deadline is when the maintenance windows next let the rollout start.
func TestPrecachePlanDeadline(t *testing.T) {
	f := bandwidthFacts(nil)
	// The rollout starts in 10 minutes: the plan is late by the rest.
	f.Upgrade.Spec.MaintenanceWindows = &ranv1alpha1.MaintenanceWindows{StartAt: &metav1.Time{Time: decideAt.Add(10 * time.Minute)}}
	plan := Decide(f, Config{}, decideAt).Status.Precaching.Plan
	if want := plan.ETA.Sub(decideAt.Add(10 * time.Minute)).String(); plan.Late != want || plan.Late == "" {
		t.Errorf("late %q, want %q", plan.Late, want)
	}

	// A daily window opening at 23:00 UTC: the deadline is its next opening.
	f.Upgrade.Spec.MaintenanceWindows = &ranv1alpha1.MaintenanceWindows{Windows: []ranv1alpha1.MaintenanceWindow{
		{Start: "23:00", Duration: metav1.Duration{Duration: time.Hour}}}}
	plan = Decide(f, Config{}, decideAt).Status.Precaching.Plan
	if want := time.Date(2026, 11, 27, 23, 0, 0, 0, time.UTC); plan.Deadline == nil || !plan.Deadline.Time.Equal(want) || plan.Late != "" {
		t.Errorf("deadline %v late %q, want the window's opening %s, in time", plan.Deadline, plan.Late, want)
	}

}

// What the clusters pull comes from their reports, else payloadSize, else nothing is known.
func TestPrecachePlanBytes(t *testing.T) {
	// c1's report view shows 400 MB pulled of 2 GB; the others' estimate is its report, the
	// largest.
	f := bandwidthFacts(map[string]string{"c1": running})
	summary, _ := json.Marshal(precache.Summary{Run: "r", Phase: precache.PhasePulling, ToPull: 2e9, Bytes: 4e8})
	f.Precache.Jobs.Views["c1"] = map[string]talmjob.View{talmjob.Precache.ReportView: {Exists: true, Answered: true, Found: true,
		Data: map[string]string{precache.SummaryKey: string(summary)}}}
	plan := Decide(f, Config{}, decideAt).Status.Precaching.Plan
	if plan.Bytes != 16e8+2e9+2e9 {
		t.Errorf("%d bytes left, want c1's 1.6 GB and 2 GB for each of the others", plan.Bytes)
	}

	// No payload size and no report: the plan has no ETA, and the clusters still start.
	f = bandwidthFacts(nil)
	f.Precache.Bandwidth.Spec.PayloadSize = nil
	in := Decide(f, Config{}, decideAt)
	if in.Status.Precaching.Plan.ETA != nil || in.Status.Precaching.Status["c1"] != talmjob.PreparingToStart {
		t.Errorf("plan %+v, c1 %s: want no ETA and c1 started", in.Status.Precaching.Plan, in.Status.Precaching.Status["c1"])
	}

	// Every cluster done: no plan.
	done := map[string]string{"c1": succeeded, "c2": succeeded, "c3": succeeded}
	if p := Decide(bandwidthFacts(done), Config{}, decideAt).Status.Precaching.Plan; p != nil {
		t.Errorf("plan %+v with nothing left", p)
	}
}

// A pull far below its share is named once it ran two minutes; one at half its share, or
// one that just started, is not.
func TestSlowPullsAreNamed(t *testing.T) {
	f := bandwidthFacts(map[string]string{"c1": running, "c2": running, "c3": running})
	view := func(started time.Duration, pulled int64) map[string]talmjob.View {
		summary, _ := json.Marshal(precache.Summary{Phase: precache.PhasePulling, ToPull: 4e9, Bytes: pulled})
		job := &batchv1.Job{Status: batchv1.JobStatus{Active: 1, StartTime: &metav1.Time{Time: decideAt.Add(-started)}}}
		return map[string]talmjob.View{
			talmjob.Precache.JobView:    {Exists: true, Answered: true, Found: true, Job: job},
			talmjob.Precache.ReportView: {Exists: true, Answered: true, Found: true, Data: map[string]string{precache.SummaryKey: string(summary)}},
		}
	}
	// The link's 100 Mbit/s shared: c1 its line of 10, c2 and c3 45 each. In 10 minutes c1
	// pulled 1 MB (13 kbit/s), c2 half its share's bytes; c3 started a minute ago with nothing.
	f.Precache.Jobs.Views["c1"] = view(10*time.Minute, 1e6)
	f.Precache.Jobs.Views["c2"] = view(10*time.Minute, int64(600*45*mbps/2))
	f.Precache.Jobs.Views["c3"] = view(time.Minute, 0)
	plan := Decide(f, Config{}, decideAt).Status.Precaching.Plan
	want := []ranv1alpha1.SlowPull{{Cluster: "c1", Kbps: 13, ShareKbps: 10000}}
	if plan == nil || !slices.Equal(plan.Slow, want) || plan.SlowCount != 1 {
		t.Fatalf("plan %+v, want c1 alone slow: %+v", plan, want)
	}
}
