package rollout

import (
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

func twoBatches() []plan.Batch {
	return []plan.Batch{{Clusters: []string{"a1"}}, {Clusters: []string{"b1"}}}
}

// gatedFleet is a fleet with the default four-hour timeout.
func gatedFleet(t *testing.T, batches []plan.Batch, policies int) *fleet {
	fl := newFleet(t, batches, policies)
	fl.f.TimeoutMinutes = 240
	return fl
}

// expectWait checks a decision waits between batches for reason, before the given batch.
func expectWait(t *testing.T, d Decision, reason string, batch int) {
	t.Helper()
	if d.State != ranv1alpha1.StateNotCompleted || d.Waiting == nil || d.Waiting.Reason != reason || d.Waiting.Batch != batch || d.Reason != reason {
		t.Fatalf("got %s/%s waiting %+v, want NotCompleted waiting %s before batch %d", d.State, d.Reason, d.Waiting, reason, batch)
	}
	if len(d.Enforce) != 0 {
		t.Fatalf("a waiting rollout enforces %v", d.Enforce)
	}
}

func TestApprovalGate(t *testing.T) {
	fl := gatedFleet(t, twoBatches(), 1)
	fl.f.Gates = Gates{Approval: Approval{Batch: 1}}
	fl.decide(0)
	fl.comply("a1", 0)
	d := fl.decide(time.Minute)
	expectWait(t, d, ranv1alpha1.ReasonWaitingForApproval, 2)
	if !strings.Contains(d.Message, "kubectl cgu approve") || len(d.Ended) != 1 || !d.Progress.BatchEnded {
		t.Fatalf("message %q, ended %d batches, batch ended %v", d.Message, len(d.Ended), d.Progress.BatchEnded)
	}
	expectWait(t, fl.decide(10*time.Minute), ranv1alpha1.ReasonWaitingForApproval, 2)
	fl.f.Gates.Approval.Approved = []int{1}
	d = fl.decide(11 * time.Minute)
	fl.expect(d, ranv1alpha1.StateNotCompleted, 1, "Batch 2 of 2")
	if got := d.Enforce[0]; len(got) != 1 || got[0] != "b1" {
		t.Fatalf("enforce %v, want b1", d.Enforce)
	}
}

func TestMaintenanceWindowGate(t *testing.T) {
	fl := gatedFleet(t, twoBatches(), 1)
	opens := t0.Add(2 * time.Hour)
	fl.f.Gates = Gates{WindowClosed: true, WindowOpens: opens}
	fl.f.Gates.WindowClosed = false // the first batch starts inside a window
	fl.decide(0)
	fl.comply("a1", 0)
	fl.f.Gates.WindowClosed = true
	d := fl.decide(time.Minute)
	expectWait(t, d, ranv1alpha1.ReasonOutsideMaintenanceWindow, 2)
	if !d.Wake.Equal(opens) || !strings.Contains(d.Message, opens.Format(time.RFC3339)) {
		t.Fatalf("wake %v message %q, want the window's opening", d.Wake, d.Message)
	}
	fl.f.Gates.WindowClosed = false
	fl.expect(fl.decide(2*time.Hour), ranv1alpha1.StateNotCompleted, 1, "Batch 2 of 2")
}

func TestBatchSoak(t *testing.T) {
	fl := gatedFleet(t, twoBatches(), 1)
	fl.f.Gates = Gates{BatchSoak: 30 * time.Minute}
	fl.decide(0)
	fl.comply("a1", 0)
	d := fl.decide(5 * time.Minute)
	expectWait(t, d, ranv1alpha1.ReasonBatchSoaking, 1)
	if want := t0.Add(35 * time.Minute); !d.Wake.Equal(want) || d.Progress.BatchEnded || len(d.Ended) != 0 {
		t.Fatalf("wake %v (want %v), batch ended %v: the batch is not done while it soaks", d.Wake, want, d.Progress.BatchEnded)
	}
	fl.relapse("a1", 0) // a relapse during the soak
	d = fl.decide(20 * time.Minute)
	if d.Waiting == nil || !strings.Contains(d.Message, "no longer compliant") {
		t.Fatalf("relapse: %+v %q", d.Waiting, d.Message)
	}
	fl.comply("a1", 0)
	fl.expect(fl.decide(36*time.Minute), ranv1alpha1.StateNotCompleted, 1, "Batch 2 of 2")
}

func TestFailureBudget(t *testing.T) {
	batches := []plan.Batch{{Clusters: []string{"a1", "a2"}}, {Clusters: []string{"b1"}}, {Clusters: []string{"c1"}}}
	fl := gatedFleet(t, batches, 1)
	fl.f.Gates = Gates{MaxFailures: ptr.To(0)}
	fl.decide(0)
	fl.comply("a1", 0)
	d := fl.decide(81 * time.Minute) // past batch 1's deadline (a third of 4 hours), a2 late
	if d.State != ranv1alpha1.StateTimedOut || d.Reason != ranv1alpha1.ReasonFailureBudgetExceeded || !d.EndedEarly {
		t.Fatalf("got %s/%s early %v, want TimedOut for the failure budget", d.State, d.Reason, d.EndedEarly)
	}
	if !strings.HasPrefix(d.Message, "1 clusters failed or timed out, more than spec.maxFailures (0) allows; no new batch starts; cluster a2 is not compliant yet") {
		t.Fatalf("message %q", d.Message)
	}
	fl2 := gatedFleet(t, batches, 1)
	fl2.f.Gates = Gates{MaxFailures: ptr.To(1)}
	fl2.decide(0)
	fl2.comply("a1", 0)
	fl2.expect(fl2.decide(81*time.Minute), ranv1alpha1.StateNotCompleted, 1, "Batch 2 of 3")
}

// A pause holds new batches, new clusters and next policies; clusters on a policy go on and
// may complete; the time paused moves every deadline.
func TestPause(t *testing.T) {
	batches := []plan.Batch{{Clusters: []string{"a1", "a2"}}, {Clusters: []string{"b1"}}}
	fl := gatedFleet(t, batches, 2)
	fl.decide(0)
	fl.comply("a1", 0)
	fl.comply("a2", 0)
	fl.comply("a2", 1)
	fl.f.Gates = Gates{Paused: true, PausedFor: 0}
	d := fl.decide(time.Minute)
	if c := d.Progress.Clusters["a1"]; c.State != ranv1alpha1.ClusterInProgress || c.Policy != 0 {
		t.Fatalf("a1 = %+v, want held on policy 0 while paused", c)
	}
	if c := d.Progress.Clusters["a2"]; c.State != ranv1alpha1.ClusterInProgress || c.Policy != 0 {
		t.Fatalf("a2 = %+v, want held on policy 0 while paused (policy 1 would start)", c)
	}
	if d.Reason != ranv1alpha1.ReasonPaused {
		t.Fatalf("reason %s, want Paused", d.Reason)
	}

	by := func(paused time.Duration) Decision {
		fl.f.Gates.PausedFor = paused
		return fl.decide(paused + time.Minute)
	}
	d = by(3 * time.Hour) // paused for three hours: far past the unpaused deadline, nothing times out
	if c := d.Progress.Clusters["a1"]; c.State == ranv1alpha1.ClusterTimedOut {
		t.Fatal("a cluster timed out while the rollout was paused")
	}
	if want := t0.Add(2*time.Hour + 3*time.Hour); !d.BatchDeadline.Equal(want) {
		t.Fatalf("deadline %v, want the unpaused one moved by three hours (%v)", d.BatchDeadline, want)
	}

	fl.f.Gates.Paused = false
	d = fl.decide(3*time.Hour + 2*time.Minute)
	if c := d.Progress.Clusters["a1"]; c.Policy != 1 {
		t.Fatalf("a1 = %+v, want on policy 1 once resumed", c)
	}
	if c := d.Progress.Clusters["a2"]; c.State != ranv1alpha1.ClusterCompleted {
		t.Fatalf("a2 = %+v, want completed once resumed", c)
	}
}

func TestPauseBetweenBatches(t *testing.T) {
	fl := gatedFleet(t, twoBatches(), 1)
	fl.decide(0)
	fl.comply("a1", 0)
	fl.f.Gates = Gates{Paused: true}
	expectWait(t, fl.decide(time.Minute), ranv1alpha1.ReasonPaused, 2)
	fl.f.Gates = Gates{PausedFor: time.Hour}
	d := fl.decide(time.Hour + time.Minute)
	fl.expect(d, ranv1alpha1.StateNotCompleted, 1, "Batch 2 of 2")
	if want := t0.Add(4*time.Hour + time.Hour); !d.BatchDeadline.Equal(want) {
		t.Fatalf("last batch deadline %v, want the overall one moved by the hour paused (%v)", d.BatchDeadline, want)
	}
	if d.Progress.PausedBeforeBatch != time.Hour {
		t.Fatalf("paused before batch 2 = %v, want the hour", d.Progress.PausedBeforeBatch)
	}
}

// A wait between batches survives the batch records: it is read back and decided the same.
func TestRecordsCarryAWait(t *testing.T) {
	rf := newRecordedFleet(t, twoBatches(), 1)
	rf.f.TimeoutMinutes = 240
	rf.f.Gates = Gates{Approval: Approval{Batch: 1}}
	rf.decide(0)
	rf.comply("a1", 0)
	expectWait(t, rf.decide(time.Minute), ranv1alpha1.ReasonWaitingForApproval, 2)
	d := rf.decide(2 * time.Minute)
	expectWait(t, d, ranv1alpha1.ReasonWaitingForApproval, 2)
	if d.Progress.Done.Completed != 1 || d.Progress.Finished {
		t.Fatalf("done %+v finished %v, want batch 1 counted once and the rollout not finished", d.Progress.Done, d.Progress.Finished)
	}
	rf.f.Gates.Approval.Approved = []int{1}
	rf.comply("b1", 0)
	d = rf.decide(3 * time.Minute)
	if d.State != ranv1alpha1.StateCompleted {
		t.Fatalf("got %s %q, want Completed", d.State, d.Message)
	}
}

func TestClusterProgressDeadline(t *testing.T) {
	fl := gatedFleet(t, twoBatches(), 1)
	fl.f.Gates = Gates{ClusterDeadline: 30 * time.Minute}
	fl.decide(0)
	d := fl.decide(31 * time.Minute) // the batch has two hours; the cluster only thirty minutes
	if len(d.Ended) != 1 || d.Ended[0].Clusters["a1"].State != ranv1alpha1.ClusterTimedOut {
		t.Fatalf("ended %+v, want batch 1 ended with a1 timed out at its own deadline", d.Ended)
	}
	fl.expect(d, ranv1alpha1.StateNotCompleted, 1, "Batch 2 of 2")
}

func TestStartWaitsForAWindow(t *testing.T) {
	fl := gatedFleet(t, twoBatches(), 1)
	opens := t0.Add(time.Hour)
	fl.f.Gates = Gates{WindowClosed: true, WindowOpens: opens}
	d := fl.decide(0)
	if d.State != ranv1alpha1.StateNotStarted || d.Reason != ranv1alpha1.ReasonOutsideMaintenanceWindow || !d.Progress.Started.IsZero() || !d.Wake.Equal(opens) {
		t.Fatalf("got %s/%s started %v wake %v, want NotStarted until the window opens", d.State, d.Reason, d.Progress.Started, d.Wake)
	}
	fl.f.Gates = Gates{}
	fl.expect(fl.decide(time.Hour), ranv1alpha1.StateNotCompleted, 0, "Batch 1 of 2")
}

func TestBusyClustersWait(t *testing.T) {
	fl := gatedFleet(t, []plan.Batch{{Clusters: []string{"a1", "a2"}}}, 1)
	busy := map[string]string{"a2": "ns/other"}
	fl.f.Gates = Gates{Busy: busy}
	d := fl.decide(0)
	if d.Reason != ranv1alpha1.ReasonWaitingForOtherUpgrade || !strings.Contains(d.Message, "cluster a2 waits for ns/other") {
		t.Fatalf("got %s %q, want a2 waiting for ns/other", d.Reason, d.Message)
	}
	if c := d.Progress.Clusters["a2"]; c.State != ranv1alpha1.ClusterPending || c.Reason != ranv1alpha1.ReasonWaitingForOtherUpgrade {
		t.Fatalf("a2 = %+v, want Pending for the other upgrade", c)
	}
	if got := d.Enforce[0]; len(got) != 1 || got[0] != "a1" {
		t.Fatalf("enforce %v, want a1 only", d.Enforce)
	}
	delete(busy, "a2")
	if got := fl.decide(time.Minute).Enforce[0]; len(got) != 2 {
		t.Fatalf("enforce %v, want both once a2 is free", got)
	}
}

func TestHubCapacity(t *testing.T) {
	fl := gatedFleet(t, []plan.Batch{{Clusters: []string{"a1", "a2", "a3"}}}, 1)
	fl.f.Gates = Gates{Capacity: ptr.To(1)}
	d := fl.decide(0)
	if got := d.Enforce[0]; len(got) != 1 || got[0] != "a1" || d.Reason != ranv1alpha1.ReasonHubCapacityReached || len(d.Holds) != 2 {
		t.Fatalf("enforce %v reason %s holds %v, want a1 only, two held by the cap", d.Enforce, d.Reason, d.Holds)
	}
	fl.f.Gates = Gates{Capacity: ptr.To(0)} // a1 is in progress and counted by the hub already
	d = fl.decide(time.Minute)
	if got := d.Enforce[0]; len(got) != 1 {
		t.Fatalf("enforce %v, want a1 to go on under a full cap", got)
	}
	d = fl.decide(4 * time.Hour) // the batch's deadline: the held clusters time out without starting
	if d.State != ranv1alpha1.StateTimedOut {
		t.Fatalf("got %s, want TimedOut", d.State)
	}
}

func TestStartWaitsForPrecaching(t *testing.T) {
	fl := gatedFleet(t, twoBatches(), 1)
	fl.f.Gates = Gates{Precaching: "1 of 2 clusters done"}
	d := fl.decide(0)
	if d.State != ranv1alpha1.StateNotStarted || d.Reason != ranv1alpha1.ReasonPrecachingInProgress || !strings.Contains(d.Message, "1 of 2") {
		t.Fatalf("got %s/%s %q, want NotStarted waiting for pre-caching", d.State, d.Reason, d.Message)
	}
	fl.f.Gates = Gates{}
	fl.expect(fl.decide(time.Minute), ranv1alpha1.StateNotCompleted, 0, "Batch 1 of 2")
}

func TestStartWaitsForTheBackup(t *testing.T) {
	fl := gatedFleet(t, twoBatches(), 1)
	deadline := fl.f.Now.Add(20 * time.Minute)
	fl.f.Gates = Gates{Precaching: "1 of 2 clusters done", Backup: "Backup in progress: 0 of 2 clusters done", BackupDeadline: deadline}
	if d := fl.decide(0); d.Reason != ranv1alpha1.ReasonPrecachingInProgress {
		t.Fatalf("got %s, want pre-caching first, as TALM", d.Reason)
	}
	fl.f.Gates.Precaching = ""
	d := fl.decide(0)
	if d.State != ranv1alpha1.StateNotStarted || d.Reason != ranv1alpha1.ReasonNotStarted || !strings.Contains(d.Message, "0 of 2") || !d.Wake.Equal(deadline) {
		t.Fatalf("got %s/%s %q wake %s, want NotStarted waiting for the backup until %s", d.State, d.Reason, d.Message, d.Wake, deadline)
	}
	fl.f.Gates = Gates{}
	fl.expect(fl.decide(time.Minute), ranv1alpha1.StateNotCompleted, 0, "Batch 1 of 2")
}

// A frozen fleet starts no batch and no cluster; a cluster already working goes on to its
// next policy (unlike a pause) and completes.
func TestFleetFrozen(t *testing.T) {
	const why = "the fleet is frozen by FleetFreeze manual: incident"
	batches := []plan.Batch{{Clusters: []string{"a1", "a2"}}, {Clusters: []string{"b1"}}}
	fl := gatedFleet(t, batches, 2)
	fl.f.Gates = Gates{Capacity: ptr.To(1)} // a1 starts, a2 waits for room
	fl.decide(0)
	fl.comply("a1", 0)
	fl.f.Gates = Gates{Frozen: why}
	d := fl.decide(time.Minute)
	if c := d.Progress.Clusters["a1"]; c.State != ranv1alpha1.ClusterInProgress || c.Policy != 1 {
		t.Fatalf("a1 = %+v, want on policy 1: a frozen fleet lets working clusters go on", c)
	}
	if c := d.Progress.Clusters["a2"]; c.State != ranv1alpha1.ClusterPending || c.Reason != ranv1alpha1.ReasonFleetFrozen {
		t.Fatalf("a2 = %+v, want Pending, frozen", c)
	}
	if d.Reason != ranv1alpha1.ReasonFleetFrozen || !strings.Contains(d.Message, why+": clusters already working finish, no cluster or batch starts") {
		t.Fatalf("got %s %q, want FleetFrozen saying why", d.Reason, d.Message)
	}
	if got := d.Enforce[1]; len(got) != 1 || got[0] != "a1" || len(d.Enforce[0]) != 0 {
		t.Fatalf("enforce %v, want only a1 on policy 1", d.Enforce)
	}
	fl.comply("a1", 1)
	fl.f.Gates = Gates{Frozen: why, Capacity: ptr.To(1)}
	d = fl.decide(2 * time.Minute)
	if c := d.Progress.Clusters["a1"]; c.State != ranv1alpha1.ClusterCompleted {
		t.Fatalf("a1 = %+v, want completed while frozen", c)
	}
	if len(d.Enforce[0]) != 0 {
		t.Fatalf("a2 started while frozen: %v", d.Enforce)
	}
	fl.f.Gates = Gates{Capacity: ptr.To(1)}
	fl.decide(3 * time.Minute)
	fl.comply("a2", 0)
	fl.comply("a2", 1)
	fl.f.Gates = Gates{Frozen: why}
	expectWait(t, fl.decide(4*time.Minute), ranv1alpha1.ReasonFleetFrozen, 2)
	fl.f.Gates = Gates{}
	fl.expect(fl.decide(5*time.Minute), ranv1alpha1.StateNotCompleted, 1, "Batch 2 of 2")
}
