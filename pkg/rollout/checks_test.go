package rollout

import (
	"strings"
	"testing"
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

// checkHolds returns a Gates.Check that holds the clusters of held, with their reason.
func checkHolds(held map[string]string) func(string) *Hold {
	return func(c string) *Hold {
		if r, ok := held[c]; ok {
			return &Hold{Cluster: c, Reason: r, Message: "cluster " + c + " is held: " + r}
		}
		return nil
	}
}

// A cluster the checks hold is not enforced, does not keep its batch from ending, ends Held,
// does not count against the failure budget, and the rollout completes with the others.
func TestCheckedClustersAreHeldNotFailed(t *testing.T) {
	rf := newRecordedFleet(t, []plan.Batch{{Clusters: []string{"a1", "a2"}}, {Clusters: []string{"b1"}}}, 1)
	rf.f.TimeoutMinutes = 240
	zero := 0
	held := map[string]string{"a2": "NotRecommended"}
	rf.f.Gates = Gates{Check: checkHolds(held), MaxFailures: &zero}

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
	held := map[string]string{"a2": "RiskUnknown"}
	fl.f.Gates = Gates{Check: checkHolds(held)}
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
	fl.f.Gates = Gates{Check: checkHolds(map[string]string{"a2": "Downgrade"})}
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
	held := map[string]string{}
	fl.f.Gates = Gates{Check: checkHolds(held)}
	fl.decide(0)
	held["a1"] = "NotRecommended"
	fl.comply("a1", 0)
	d := fl.decide(time.Minute)
	if got := d.Enforce[1]; len(got) != 1 {
		t.Fatalf("enforce %v, want a1 on its second policy", d.Enforce)
	}
}
