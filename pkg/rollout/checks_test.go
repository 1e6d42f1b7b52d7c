package rollout

import (
	"strings"
	"testing"
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

// checkHolds returns the Gates.Holds of the clusters of held, with their reason.
func checkHolds(held map[string]string) map[string]Hold {
	out := map[string]Hold{}
	for c, r := range held {
		out[c] = Hold{Cluster: c, Reason: r, Message: "cluster " + c + " is held: " + r}
	}
	return out
}

// A cluster the checks hold is not enforced, does not keep its batch from ending, ends Held,
// does not count against the failure budget, and the rollout completes with the others.
func TestCheckedClustersAreHeldNotFailed(t *testing.T) {
	rf := newRecordedFleet(t, []plan.Batch{{Clusters: []string{"a1", "a2"}}, {Clusters: []string{"b1"}}}, 1)
	rf.f.TimeoutMinutes = 240
	zero := 0
	held := map[string]string{"a2": "NotRecommended"}
	rf.f.Gates = Gates{Holds: checkHolds(held), MaxFailures: &zero}

	d := rf.decide(0)
	if got := d.Enforce[0]; len(got) != 1 || got[0] != "a1" {
		t.Fatalf("enforce %v, want a1 only", d.Enforce)
	}
	if c := d.Progress.Clusters["a2"]; c.State != ranv1alpha1.ClusterPending || c.Reason != "NotRecommended" {
		t.Fatalf("a2 = %+v, want Pending, NotRecommended", c)
	}
	if d.Reason != ranv1alpha1.ReasonClustersHeld || !strings.Contains(d.Message, "a2 is held") {
		t.Fatalf("reason %s message %q, want ClustersHeld naming a2", d.Reason, d.Message)
	}

	expectHeldToTheEnd(t, rf)
}

// expectHeldToTheEnd goes on with the fleet of TestCheckedClustersAreHeldNotFailed once a1
// complies.
func expectHeldToTheEnd(t *testing.T, rf *recordedFleet) {
	t.Helper()
	rf.comply("a1", 0)
	d := rf.decide(10 * time.Minute)
	if d.Progress.Batch != 1 || len(d.Ended) != 1 {
		t.Fatalf("batch %d ended %d, want the first batch ended and the second running", d.Progress.Batch, len(d.Ended))
	}
	if c := d.Ended[0].Clusters["a2"]; c.State != ranv1alpha1.ClusterHeld || c.Reason != "NotRecommended" {
		t.Fatalf("a2 ended %+v, want Held, NotRecommended", c)
	}
	if d.Progress.Done.Held != 1 || d.Progress.Done.Failed+d.Progress.Done.TimedOut != 0 {
		t.Fatalf("done %+v, want one held and nothing failed", d.Progress.Done)
	}

	rf.comply("b1", 0)
	d = rf.decide(20 * time.Minute)
	if d.State != ranv1alpha1.StateCompleted || d.Reason != ranv1alpha1.ReasonClustersHeld ||
		!strings.Contains(d.Message, "2 of 3 clusters are compliant") {
		t.Fatalf("got %s/%s %q, want Completed with one cluster held", d.State, d.Reason, d.Message)
	}
	st := statusOf(d, rf.f.Plan)
	if st.Counts.Held != 1 || st.Counts.Completed != 2 || st.Progress.Clusters != "3/3" {
		t.Fatalf("counts %+v progress %+v, want 2 completed and 1 held of 3", st.Counts, st.Progress)
	}
}

// A hold released while its batch runs (a risk accepted) lets the cluster start.
func TestReleasedHoldStarts(t *testing.T) {
	fl := gatedFleet(t, []plan.Batch{{Clusters: []string{"a1", "a2"}}}, 1)
	held := checkHolds(map[string]string{"a2": "RiskUnknown"})
	fl.f.Gates = Gates{Holds: held}
	fl.decide(0)
	delete(held, "a2")
	d := fl.decide(time.Minute)
	if got := d.Enforce[0]; len(got) != 2 {
		t.Fatalf("enforce %v, want both clusters once a2 is released", d.Enforce)
	}
}

// A held cluster in a batch whose other clusters never finish ends Held, not TimedOut, at the
// batch's deadline.
func TestHeldAtTheDeadline(t *testing.T) {
	fl := gatedFleet(t, []plan.Batch{{Clusters: []string{"a1", "a2"}}}, 1)
	fl.f.Gates = Gates{Holds: checkHolds(map[string]string{"a2": "Downgrade"})}
	fl.decide(0)
	d := fl.decide(4 * time.Hour)
	if d.State != ranv1alpha1.StateTimedOut || d.Progress.Done.Held != 1 || d.Progress.Done.TimedOut != 1 {
		t.Fatalf("got %s done %+v, want TimedOut with a1 timed out and a2 held", d.State, d.Progress.Done)
	}
	if c := d.Ended[0].Clusters["a2"]; c.State != ranv1alpha1.ClusterHeld {
		t.Fatalf("a2 = %+v, want Held", c)
	}
}

// A cluster already working is never held: the checks judge clusters before they start.
func TestChecksDoNotStopAStartedCluster(t *testing.T) {
	fl := gatedFleet(t, []plan.Batch{{Clusters: []string{"a1"}}}, 2)
	held := map[string]Hold{}
	fl.f.Gates = Gates{Holds: held}
	fl.decide(0)
	held["a1"] = Hold{Reason: "NotRecommended"}
	fl.comply("a1", 0)
	d := fl.decide(time.Minute)
	if got := d.Enforce[1]; len(got) != 1 {
		t.Fatalf("enforce %v, want a1 on its second policy", d.Enforce)
	}
}

// A cluster done with its policies waits for the health check after its upgrade: healthy
// completes it, unhealthy fails it (counted against the budget), and the records carry the
// wait.
func TestVerifyAfterTheUpgrade(t *testing.T) {
	rf := newRecordedFleet(t, []plan.Batch{{Clusters: []string{"a1", "a2"}}}, 1)
	rf.f.TimeoutMinutes = 240
	checks := map[string]Verification{"a1": {}, "a2": {}}
	rf.f.Gates = Gates{Verify: true, Verifications: checks}
	rf.decide(0)
	rf.comply("a1", 0)
	rf.comply("a2", 0)
	d := rf.decide(time.Minute)
	for _, name := range []string{"a1", "a2"} {
		if c := d.Progress.Clusters[name]; !c.Verifying() || !c.Since.Equal(t0.Add(time.Minute)) {
			t.Fatalf("%s = %+v, want InProgress, Verifying since 1m", name, c)
		}
	}
	if len(d.Enforce) != 0 {
		t.Fatalf("enforce %v, want nothing enforced while verifying", d.Enforce)
	}
	d = rf.decide(2 * time.Minute)
	if c := d.Progress.Clusters["a1"]; !c.Verifying() || !c.Since.Equal(t0.Add(time.Minute)) {
		t.Fatalf("a1 = %+v, want still verifying since 1m (read back from the records)", c)
	}
	checks["a1"] = Verification{Done: true, Healthy: true}
	checks["a2"] = Verification{Done: true, Reason: "ClusterOperatorsUnhealthy", Message: "dns is Degraded"}
	d = rf.decide(3 * time.Minute)
	if d.State != ranv1alpha1.StateTimedOut || d.Reason != ranv1alpha1.ReasonClustersFailed ||
		d.Progress.Done.Completed != 1 || d.Progress.Done.Failed != 1 {
		t.Fatalf("got %s/%s done %+v, want ClustersFailed with one completed and one failed", d.State, d.Reason, d.Progress.Done)
	}
	if c := d.Ended[0].Clusters["a2"]; c.State != ranv1alpha1.ClusterFailed || c.Reason != "ClusterOperatorsUnhealthy" {
		t.Fatalf("a2 = %+v, want Failed, ClusterOperatorsUnhealthy", c)
	}
}

// A cluster whose health check never answers times out at its deadline.
func TestVerifyTimesOut(t *testing.T) {
	fl := gatedFleet(t, []plan.Batch{{Clusters: []string{"a1"}}}, 1)
	fl.f.Gates = Gates{Verify: true}
	fl.decide(0)
	fl.comply("a1", 0)
	if d := fl.decide(time.Minute); !d.Progress.Clusters["a1"].Verifying() || d.Wake.IsZero() {
		t.Fatalf("a1 = %+v wake %v, want verifying with a wake at the deadline", d.Progress.Clusters["a1"], d.Wake)
	}
	if d := fl.decide(4 * time.Hour); d.Progress.Done.TimedOut != 1 {
		t.Fatalf("done %+v, want a1 timed out", d.Progress.Done)
	}
}

// A check that has not answered keeps the batch waiting; at the deadline the cluster ends
// Held.
func TestPendingCheckKeepsTheBatchWaiting(t *testing.T) {
	fl := gatedFleet(t, []plan.Batch{{Clusters: []string{"a1", "a2"}}, {Clusters: []string{"b1"}}}, 1)
	fl.f.Gates = Gates{Holds: map[string]Hold{"a2": {Reason: "HealthCheckPending", Pending: true}}}
	fl.decide(0)
	fl.comply("a1", 0)
	d := fl.decide(time.Minute)
	if d.Progress.Batch != 0 || d.Progress.BatchEnded || len(d.Ended) != 0 {
		t.Fatalf("batch %d ended %v, want the first batch still waiting for a2's check", d.Progress.Batch, d.Progress.BatchEnded)
	}
	d = fl.decide(2 * time.Hour) // the first batch's share of the four hours
	if len(d.Ended) != 1 || d.Ended[0].Clusters["a2"].State != ranv1alpha1.ClusterHeld {
		t.Fatalf("ended %+v, want the first batch ended at its deadline with a2 held", d.Ended)
	}
}
