package rollout

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

// staged is one progressive batch of n clusters s01..sNN growing through sizes.
func staged(n int, sizes ...int) plan.Batch {
	b := plan.Batch{Stages: sizes}
	for i := 1; i <= n; i++ {
		b.Clusters = append(b.Clusters, fmt.Sprintf("s%02d", i))
	}
	return b
}

// stepFleet is a fleet whose one policy is a step, so that a test can fail a cluster.
func stepFleet(t *testing.T, b plan.Batch) *fleet {
	fl := newFleet(t, []plan.Batch{b}, 1)
	fl.f.Policies[0].Step = true
	fl.f.Policies[0].Done = map[string]bool{}
	fl.f.Policies[0].Failed = map[string]string{}
	return fl
}

// finish makes every cluster in progress done, failing those named.
func (fl *fleet) finish(d Decision, fail ...string) {
	for _, name := range enforced(d) {
		if slices.Contains(fail, name) {
			fl.f.Policies[0].Failed[name] = "Degraded"
			continue
		}
		fl.f.Policies[0].Done[name] = true
	}
}

func (fl *fleet) expectStage(d Decision, number, size int, running ...string) {
	fl.t.Helper()
	if d.Stage == nil || d.Stage.Number != number || d.Stage.Size != size {
		fl.t.Fatalf("stage %+v, want stage %d of %d clusters", d.Stage, number, size)
	}
	if got := enforced(d); !slices.Equal(got, running) {
		fl.t.Fatalf("stage %d runs %v, want %v", number, got, running)
	}
	for _, name := range running {
		if c := d.Progress.Clusters[name]; c.Stage != number || !c.Started.Equal(d.Stage.Started) {
			fl.t.Fatalf("%s is in stage %d since %v, want stage %d since %v", name, c.Stage, c.Started, number, d.Stage.Started)
		}
	}
}

func TestStagesGrowAfterEachHealthyStage(t *testing.T) {
	fl := stepFleet(t, staged(10, 1, 2, 4))
	fl.f.TimeoutMinutes = 120
	d := fl.decide(0)
	fl.expectStage(d, 1, 1, "s01")
	// Ten clusters take four stages (1, 2, 4, then the 3 left): the first gets a quarter.
	if want := t0.Add(30 * time.Minute); !d.Stage.Deadline.Equal(want) || !d.Wake.Equal(want) {
		t.Fatalf("stage 1 times out at %v (wake %v), want %v", d.Stage.Deadline, d.Wake, want)
	}
	if !strings.Contains(d.Message, "stage 1 (1 cluster): 0 of 10 clusters done") {
		t.Fatalf("message %q", d.Message)
	}
	fl.finish(d)
	d = fl.decide(time.Minute)
	fl.expectStage(d, 2, 2, "s02", "s03")
	// 119 minutes left, and three stages for nine clusters (2, 4, 3).
	if want := t0.Add(time.Minute + 119*time.Minute/3); !d.Stage.Deadline.Equal(want) {
		t.Fatalf("stage 2 times out at %v, want %v", d.Stage.Deadline, want)
	}
	fl.finish(d)
	d = fl.decide(2 * time.Minute)
	fl.expectStage(d, 3, 4, "s04", "s05", "s06", "s07")
	fl.finish(d)
	d = fl.decide(3 * time.Minute)
	fl.expectStage(d, 4, 4, "s08", "s09", "s10")
	if d.Stage.Step != 2 || d.Stage.Resets != 0 || d.Stage.Unhealthy != "" {
		t.Fatalf("stage 4 %+v, want the last step and no reset", d.Stage)
	}
	fl.finish(d)
	d = fl.decide(4 * time.Minute)
	fl.expect(d, ranv1alpha1.StateCompleted, 0, "All 10 clusters")
}

func TestAnUnhealthyStageSendsTheGrowthBack(t *testing.T) {
	fl := stepFleet(t, staged(12, 1, 2, 4))
	fl.f.TimeoutMinutes = 600
	d := fl.decide(0)
	fl.finish(d)
	d = fl.decide(time.Minute)
	fl.expectStage(d, 2, 2, "s02", "s03")
	fl.finish(d, "s03")
	d = fl.decide(2 * time.Minute)
	fl.expectStage(d, 3, 1, "s04")
	if d.Stage.Step != 0 || d.Stage.Resets != 1 ||
		d.Stage.Unhealthy != "Stage 2 had 1 failed or timed-out of 2 clusters, more than its share of the failure budget (none without spec.maxFailures), and sent the growth back to 1 clusters" {
		t.Fatalf("after the failure: %+v", d.Stage)
	}
	fl.finish(d)
	d = fl.decide(3 * time.Minute)
	fl.expectStage(d, 4, 2, "s05", "s06")
	if d.Stage.Resets != 1 {
		t.Fatalf("resets %d after a healthy stage, want still 1", d.Stage.Resets)
	}
	fl.finish(d)
	d = fl.decide(4 * time.Minute)
	fl.expectStage(d, 5, 4, "s07", "s08", "s09", "s10")
	fl.finish(d)
	d = fl.decide(5 * time.Minute)
	fl.expectStage(d, 6, 4, "s11", "s12")
	fl.finish(d)
	d = fl.decide(6 * time.Minute)
	fl.expect(d, ranv1alpha1.StateTimedOut, 0, "Clusters failed; 1 clusters failed, cluster s03 among them")
}

// With a failure budget, a stage is healthy while its failures are within its share of it,
// rounded up: here 2 of 20 clusters, so one failure in a stage of up to 10.
func TestAStageIsHealthyWithinItsShareOfTheBudget(t *testing.T) {
	fl := stepFleet(t, staged(20, 2, 10))
	fl.f.TimeoutMinutes = 600
	budget := 2
	fl.f.Gates.MaxFailures = &budget
	d := fl.decide(0)
	fl.finish(d)
	d = fl.decide(time.Minute)
	fl.expectStage(d, 2, 10, "s03", "s04", "s05", "s06", "s07", "s08", "s09", "s10", "s11", "s12")
	fl.finish(d, "s05")
	d = fl.decide(2 * time.Minute)
	fl.expectStage(d, 3, 10, "s13", "s14", "s15", "s16", "s17", "s18", "s19", "s20")
	if d.Stage.Resets != 0 {
		t.Fatalf("one failure of ten reset the growth: %+v", d.Stage)
	}
	fl.finish(d, "s20")
	d = fl.decide(3 * time.Minute)
	fl.expect(d, ranv1alpha1.StateTimedOut, 0, "2 clusters failed")

	// Two failures in a stage of two are over its share (one): the growth starts again, one
	// cluster at a time now that the budget is spent to its last failure.
	fl = stepFleet(t, staged(20, 2, 10))
	fl.f.Gates.MaxFailures = &budget
	fl.f.TimeoutMinutes = 600
	d = fl.decide(0)
	fl.finish(d, "s01", "s02")
	d = fl.decide(time.Minute)
	fl.expectStage(d, 2, 1, "s03")
	if d.Stage.Step != 0 || !strings.Contains(d.Stage.Unhealthy, "Stage 1 had 2 failed or timed-out of 2 clusters, more than its share of the failure budget (1 for 2 clusters under spec.maxFailures 2)") {
		t.Fatalf("stage 2 %+v", d.Stage)
	}
}

// A stage narrows as a window does when failures ate into the budget: at the failure rate
// seen so far, it would not spend more than the budget left.
func TestAStageNarrowsAsTheBudgetRunsOut(t *testing.T) {
	fl := stepFleet(t, staged(40, 4, 20))
	fl.f.TimeoutMinutes = 600
	budget := 4
	fl.f.Gates.MaxFailures = &budget
	d := fl.decide(0)
	fl.finish(d, "s01")
	// One failure of four is within the stage's share (ceil(4*4/40) = 1), but the rate seen
	// (1 in 4) with 3 failures left lets 12 clusters go, not 20.
	d = fl.decide(time.Minute)
	if d.Stage.Number != 2 || d.Stage.Size != 12 || d.Stage.Step != 1 || len(enforced(d)) != 12 {
		t.Fatalf("stage 2 %+v runs %d clusters, want the second step narrowed to 12", d.Stage, len(enforced(d)))
	}
}

func TestAnUnhealthyStageStopsTheRolloutWhenItSaysSo(t *testing.T) {
	b := staged(8, 2, 4)
	b.StopUnhealthy = true
	fl := stepFleet(t, b)
	fl.f.TimeoutMinutes = 600
	d := fl.decide(0)
	fl.expectStage(d, 1, 2, "s01", "s02")
	fl.finish(d, "s02")
	d = fl.decide(time.Minute)
	fl.expect(d, ranv1alpha1.StateTimedOut, 0, "Stage 1 had 1 failed or timed-out of 2 clusters")
	if !strings.Contains(d.Message, "stops the rollout") {
		t.Fatalf("message %q", d.Message)
	}
	for _, c := range b.Clusters[2:] {
		if st := d.Progress.Clusters[c].State; st != ranv1alpha1.ClusterPending || d.Progress.Clusters[c].Stage != 0 {
			t.Errorf("%s is %s in stage %d, want never started", c, st, d.Progress.Clusters[c].Stage)
		}
	}
}

// A stage's clusters share its deadline; one that stalls times out with it, alone, and
// makes the stage unhealthy.
func TestAStalledClusterTimesOutWithItsStage(t *testing.T) {
	fl := stepFleet(t, staged(4, 2))
	fl.f.TimeoutMinutes = 60
	fl.decide(0)
	fl.f.Policies[0].Done["s01"] = true
	d := fl.decide(time.Minute)
	fl.expectStage(d, 1, 2, "s02")
	d = fl.decide(30 * time.Minute) // two stages of two: each has half an hour
	fl.expectStage(d, 2, 2, "s03", "s04")
	if c := d.Progress.Clusters["s02"]; c.State != ranv1alpha1.ClusterTimedOut {
		t.Fatalf("s02 is %s at its stage's deadline", c.State)
	}
	if d.Stage.Resets != 1 || d.Stage.Size != 2 {
		t.Fatalf("stage 2 %+v, want a reset to the first size", d.Stage)
	}
}

// A stage fills up as the hub-wide cap lets its clusters start; the next one waits for it.
func TestAStageFillsUpUnderTheHubCap(t *testing.T) {
	fl := stepFleet(t, staged(5, 2, 3))
	fl.f.TimeoutMinutes = 600
	one := 1
	fl.f.Gates.Capacity = &one
	d := fl.decide(0)
	fl.expectStage(d, 1, 2, "s01")
	if len(d.Holds) == 0 || d.Holds[0].Cluster != "s02" {
		t.Fatalf("holds %+v, want s02 held by the cap", d.Holds)
	}
	fl.finish(d)
	d = fl.decide(time.Minute)
	if got := enforced(d); !slices.Equal(got, []string{"s02"}) || d.Progress.Clusters["s02"].Stage != 1 || d.Stage.Number != 1 {
		t.Fatalf("after s01: %v run, s02 in stage %d, stage %+v; want s02 filling stage 1",
			got, d.Progress.Clusters["s02"].Stage, d.Stage)
	}
	fl.finish(d)
	fl.f.Gates.Capacity = nil
	d = fl.decide(2 * time.Minute)
	fl.expectStage(d, 2, 3, "s03", "s04", "s05")
}

// A pause, a closed maintenance window and the spent budget keep the next stage from
// starting.
func TestNothingStartsAStageWhileTheGatesAreShut(t *testing.T) {
	fl := stepFleet(t, staged(4, 1, 3))
	fl.f.TimeoutMinutes = 600
	d := fl.decide(0)
	fl.finish(d)
	fl.f.Gates.Paused = true
	d = fl.decide(time.Minute)
	if got := enforced(d); len(got) != 0 || d.Stage.Number != 1 {
		t.Fatalf("paused: %v run, stage %+v", got, d.Stage)
	}
	fl.f.Gates.Paused = false
	fl.f.Gates.WindowClosed = true
	d = fl.decide(2 * time.Minute)
	if got := enforced(d); len(got) != 0 {
		t.Fatalf("window closed: %v run", got)
	}
	fl.f.Gates.WindowClosed = false
	d = fl.decide(3 * time.Minute)
	fl.expectStage(d, 2, 3, "s02", "s03", "s04")
}

// The stages go through the batch records, and a decision on the records read back goes on
// where the last one was.
func TestStagesRoundTripThroughTheRecords(t *testing.T) {
	b := staged(6, 1, 2)
	fl := stepFleet(t, b)
	fl.f.TimeoutMinutes = 600
	d := fl.decide(0)
	fl.finish(d)
	d = fl.decide(time.Minute)
	records := plan.Records(plan.Plan{Batches: []plan.Batch{b}}, "ns", "u")
	statuses := RecordStatuses(records, d, plan.Plan{Batches: []plan.Batch{b}}, []string{"p"}, fl.f.Now)
	for i := range records {
		records[i].Status = statuses[records[i].Name]
	}
	if got := records[0].Status.Clusters[1]; got.Stage != 2 || got.StartedAt == nil {
		t.Fatalf("s02's record %+v, want stage 2 and its start", got)
	}
	back := Recorded(records, []string{"p"}, t0)
	if c := back.Clusters["s03"]; c.Stage != 2 || !c.Started.Equal(t0.Add(time.Minute)) || back.Clusters["s04"].Stage != 0 {
		t.Fatalf("read back %+v", back.Clusters)
	}
	fl.f.Progress = back
	fl.finish(d)
	d = fl.decide(2 * time.Minute)
	fl.expectStage(d, 3, 2, "s04", "s05")
}

// An unhealthy last stage sends nothing back and stops nothing: nothing is left to start.
func TestAnUnhealthyLastStageOnlySaysSo(t *testing.T) {
	for _, stop := range []bool{false, true} {
		b := staged(3, 2)
		b.StopUnhealthy = stop
		fl := stepFleet(t, b)
		fl.f.TimeoutMinutes = 600
		d := fl.decide(0)
		fl.finish(d)
		d = fl.decide(time.Minute)
		fl.expectStage(d, 2, 2, "s03")
		fl.finish(d, "s03")
		d = fl.decide(2 * time.Minute)
		fl.expect(d, ranv1alpha1.StateTimedOut, 0, "Clusters failed; 1 clusters failed, cluster s03 among them")
		if d.Stage == nil || d.Stage.Resets != 0 || d.Stage.Stopped ||
			d.Stage.Unhealthy != "Stage 2 had 1 failed or timed-out of 1 clusters, more than its share of the failure budget (none without spec.maxFailures), and was the last stage" {
			t.Fatalf("stop %v: the last stage %+v", stop, d.Stage)
		}
	}
}

// The status shows the stage, and leaves each cluster's start and stage to the batch
// records, which keeps status.currentBatch within its size budget (api/v1alpha1's size test).
func TestStatusShowsTheStageNotEachClustersStart(t *testing.T) {
	b := staged(4, 1, 3)
	fl := stepFleet(t, b)
	fl.f.TimeoutMinutes = 600
	d := fl.decide(0)
	var st ranv1alpha1.ClusterGroupUpgradeStatus
	Status(&st, d, plan.Plan{Batches: []plan.Batch{b}})
	if s := st.CurrentBatch.Stage; s == nil || s.Number != 1 || s.Size != 1 || s.Step != 1 || s.StartedAt == nil || s.TimeoutAt == nil {
		t.Fatalf("status.currentBatch.stage %+v", st.CurrentBatch.Stage)
	}
	for _, c := range st.CurrentBatch.Clusters {
		if c.StartedAt != nil || c.Stage != 0 {
			t.Fatalf("status.currentBatch.clusters carries %s's start or stage: %+v", c.Name, c)
		}
	}
}
