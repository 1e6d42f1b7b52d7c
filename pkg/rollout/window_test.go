package rollout

import (
	"slices"
	"testing"
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

// canaryAndWindow is a canary, then six clusters two at a time.
func canaryAndWindow() []plan.Batch {
	return []plan.Batch{
		{Canary: true, Clusters: []string{"c1"}},
		{Clusters: []string{"w1", "w2", "w3", "w4", "w5", "w6"}, Window: 2},
	}
}

func enforced(d Decision) []string {
	out := slices.Clone(d.Enforce[0])
	slices.Sort(out)
	return out
}

func TestWindowStartsTheNextClusterWhenOneIsDone(t *testing.T) {
	fl := newFleet(t, canaryAndWindow(), 1)
	fl.f.TimeoutMinutes = 120
	fl.decide(0)
	fl.comply("c1", 0)
	d := fl.decide(time.Minute)
	fl.expect(d, ranv1alpha1.StateNotCompleted, 1, "")
	if got := enforced(d); !slices.Equal(got, []string{"w1", "w2"}) {
		t.Fatalf("the window starts with %v, want w1 and w2", got)
	}
	// The batch has 119 minutes and three waves: each cluster gets 39m40s from its start.
	share := (119 * time.Minute) / 3
	if c := d.Progress.Clusters["w1"]; !c.Started.Equal(t0.Add(time.Minute)) {
		t.Fatalf("w1 started at %v", c.Started)
	}
	if c := d.Progress.Clusters["w3"]; c.State != ranv1alpha1.ClusterPending || c.Reason != "" {
		t.Fatalf("w3 is %s %q, want Pending for a slot", c.State, c.Reason)
	}
	if want := t0.Add(time.Minute + share); !d.Wake.Equal(want) {
		t.Fatalf("wake %v, want w1's own deadline %v", d.Wake, want)
	}

	By := func(at time.Duration, cluster string) Decision {
		fl.comply(cluster, 0)
		return fl.decide(at)
	}
	d = By(10*time.Minute, "w2")
	if got := enforced(d); !slices.Equal(got, []string{"w1", "w3"}) {
		t.Fatalf("after w2 completed: %v in progress, want w1 and w3 (w2's slot, at once)", got)
	}
	if c := d.Progress.Clusters["w3"]; !c.Started.Equal(t0.Add(10 * time.Minute)) {
		t.Fatalf("w3 started at %v, want at minute 10", c.Started)
	}

	// w1 never complies: it times out at its own deadline, not the batch's; w4 takes its slot.
	d = fl.decide(time.Minute + share)
	if c := d.Progress.Clusters["w1"]; c.State != ranv1alpha1.ClusterTimedOut {
		t.Fatalf("w1 is %s at its deadline", c.State)
	}
	if got := enforced(d); !slices.Equal(got, []string{"w3", "w4"}) {
		t.Fatalf("after w1 timed out: %v, want w3 and w4", got)
	}
	for _, c := range []string{"w3", "w4", "w5", "w6"} {
		d = By(time.Minute+share+time.Minute, c)
	}
	// As TALM: the late cluster is watched until the overall deadline, then the rollout times out.
	fl.expect(d, ranv1alpha1.StateNotCompleted, 1, "cluster w1 timed out and is not compliant yet")
	if got := enforced(d); len(got) != 0 {
		t.Fatalf("while it waits for w1, %v are enforced, want none", got)
	}
	if want := t0.Add(120 * time.Minute); !d.Wake.Equal(want) {
		t.Fatalf("wake %v, want the overall deadline %v", d.Wake, want)
	}
	d = fl.decide(120 * time.Minute)
	fl.expect(d, ranv1alpha1.StateTimedOut, 1, "cluster w1 is not compliant yet")
	if d.Progress.Done.Completed != 6 || d.Progress.Done.TimedOut != 1 {
		t.Fatalf("done %+v, want 6 completed (the canary too) and 1 timed out", d.Progress.Done)
	}
}

func TestWindowStopsStartingWhenTheFailureBudgetIsSpent(t *testing.T) {
	fl := newFleet(t, []plan.Batch{{Clusters: []string{"w1", "w2", "w3", "w4", "w5"}, Window: 2}}, 1)
	fl.f.TimeoutMinutes = 100
	budget := 0
	fl.f.Gates.MaxFailures = &budget
	fl.f.Policies[0].Step = true
	fl.f.Policies[0].Done = map[string]bool{}
	fl.f.Policies[0].Failed = map[string]string{}
	d := fl.decide(0)
	if got := enforced(d); !slices.Equal(got, []string{"w1", "w2"}) {
		t.Fatalf("in progress %v", got)
	}
	// w1 fails: the budget of none is spent, nothing new starts, w2 goes on.
	fl.f.Policies[0].Failed["w1"] = "Degraded"
	d = fl.decide(time.Minute)
	if got := enforced(d); !slices.Equal(got, []string{"w2"}) {
		t.Fatalf("after the failure: %v in progress, want w2 alone", got)
	}
	fl.expect(d, ranv1alpha1.StateNotCompleted, 0, "")
	// w2 completes: the window ends, its clusters that never started left out.
	fl.f.Policies[0].Done["w2"] = true
	d = fl.decide(2 * time.Minute)
	fl.expect(d, ranv1alpha1.StateTimedOut, 0, "more than spec.maxFailures (0) allows")
	if d.Reason != ranv1alpha1.ReasonFailureBudgetExceeded {
		t.Fatalf("reason %s", d.Reason)
	}
	for _, c := range []string{"w3", "w4", "w5"} {
		if st := d.Progress.Clusters[c].State; st != ranv1alpha1.ClusterPending && st != "" {
			t.Errorf("%s is %s, want never started", c, st)
		}
	}
}

func TestWindowWaitsWhilePausedOrOutsideItsMaintenanceWindow(t *testing.T) {
	fl := newFleet(t, []plan.Batch{{Clusters: []string{"w1", "w2", "w3"}, Window: 1}}, 1)
	fl.f.TimeoutMinutes = 300
	d := fl.decide(0)
	if got := enforced(d); !slices.Equal(got, []string{"w1"}) {
		t.Fatalf("in progress %v", got)
	}
	fl.f.Gates.WindowClosed = true
	fl.comply("w1", 0)
	d = fl.decide(time.Minute)
	if got := enforced(d); len(got) != 0 || d.Progress.Clusters["w1"].State != ranv1alpha1.ClusterCompleted {
		t.Fatalf("window closed: %v in progress, w1 %s; want none started, w1 completed", got, d.Progress.Clusters["w1"].State)
	}
	fl.f.Gates.WindowClosed = false
	fl.f.Gates.Paused = true
	d = fl.decide(2 * time.Minute)
	if got := enforced(d); len(got) != 0 {
		t.Fatalf("paused: %v in progress", got)
	}
	fl.f.Gates.Paused = false
	d = fl.decide(3 * time.Minute)
	if got := enforced(d); !slices.Equal(got, []string{"w2"}) {
		t.Fatalf("open and resumed: %v in progress, want w2", got)
	}
}

// The window's size and each cluster's start go through the batch records and come back.
func TestWindowProgressRoundTripsThroughTheRecords(t *testing.T) {
	batches := []plan.Batch{{Clusters: []string{"w1", "w2", "w3"}, Window: 2}}
	fl := newFleet(t, batches, 1)
	d := fl.decide(0)
	records := plan.Records(plan.Plan{Batches: batches}, "ns", "u")
	statuses := RecordStatuses(records, d, plan.Plan{Batches: batches}, []string{"p"}, fl.f.Now)
	for i := range records {
		records[i].Status = statuses[records[i].Name]
	}
	if got := records[0].Status.Clusters[0].StartedAt; got == nil || !got.Time.Equal(t0) {
		t.Fatalf("w1's record has startedAt %v", got)
	}
	back := Recorded(records, []string{"p"}, t0)
	if !back.Clusters["w1"].Started.Equal(t0) || back.Clusters["w3"].State != ranv1alpha1.ClusterPending {
		t.Fatalf("read back %+v", back.Clusters)
	}
}

// With the budget spent to its last failure (failures equal to maxFailures), the window goes
// on one cluster at a time rather than stopping short of its end.
func TestWindowGoesOnOneAtATimeAtTheEdgeOfTheBudget(t *testing.T) {
	fl := stepFleet(t, plan.Batch{Clusters: []string{"w1", "w2", "w3", "w4", "w5"}, Window: 3})
	fl.f.TimeoutMinutes = 100
	budget := 1
	fl.f.Gates.MaxFailures = &budget
	d := fl.decide(0)
	if got := enforced(d); !slices.Equal(got, []string{"w1", "w2", "w3"}) {
		t.Fatalf("the window starts with %v", got)
	}
	fl.f.Policies[0].Failed["w1"] = "Degraded"
	fl.f.Policies[0].Done["w2"], fl.f.Policies[0].Done["w3"] = true, true
	d = fl.decide(time.Minute)
	if got := enforced(d); !slices.Equal(got, []string{"w4"}) {
		t.Fatalf("after one failure of three, at a budget of one: %v in progress, want w4 alone", got)
	}
	fl.f.Policies[0].Done["w4"] = true
	d = fl.decide(2 * time.Minute)
	if got := enforced(d); !slices.Equal(got, []string{"w5"}) {
		t.Fatalf("then %v, want w5", got)
	}
	fl.f.Policies[0].Done["w5"] = true
	d = fl.decide(3 * time.Minute)
	fl.expect(d, ranv1alpha1.StateTimedOut, 0, "1 clusters failed")
}

func TestWindowFillsTheSlotsFreedWhileStartsArePacedTogether(t *testing.T) {
	fl := newFleet(t, []plan.Batch{{Clusters: []string{"w1", "w2", "w3", "w4", "w5", "w6"}, Window: 3}}, 1)
	fl.f.TimeoutMinutes = 120
	// The pacing never holds the window's first clusters.
	fl.f.Gates.StartsPaced = true
	d := fl.decide(0)
	if got := enforced(d); !slices.Equal(got, []string{"w1", "w2", "w3"}) {
		t.Fatalf("the window starts with %v, want w1 to w3", got)
	}
	// w1 and w2 are done while starts are paced: their slots stay free.
	fl.comply("w1", 0)
	fl.comply("w2", 0)
	d = fl.decide(time.Second)
	if got := enforced(d); !slices.Equal(got, []string{"w3"}) {
		t.Fatalf("while starts are paced: %v in progress, want w3", got)
	}
	if c := d.Progress.Clusters["w4"]; c.State != ranv1alpha1.ClusterPending || c.Reason != "" {
		t.Fatalf("w4 is %s %q while starts are paced, want Pending for a slot", c.State, c.Reason)
	}
	// Once the pacing is over, both slots are filled in the same decision.
	fl.f.Gates.StartsPaced = false
	d = fl.decide(2 * time.Second)
	if got := enforced(d); !slices.Equal(got, []string{"w3", "w4", "w5"}) {
		t.Fatalf("after the pacing: %v in progress, want w3, w4 and w5", got)
	}
	for _, c := range []string{"w4", "w5"} {
		if got := d.Progress.Clusters[c].Started; !got.Equal(t0.Add(2 * time.Second)) {
			t.Fatalf("%s started at %v, want with the other", c, got)
		}
	}
}
