package rollout

import (
	"slices"
	"strings"
	"testing"
	"time"

	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

// fleet plays the facts of a rollout over time: which cluster complies with which policy
// (every policy is placed on every cluster).
type fleet struct {
	t *testing.T
	f Facts
}

func newFleet(t *testing.T, batches []plan.Batch, policies int) *fleet {
	fl := &fleet{t: t}
	fl.f = Facts{Now: t0, Enabled: true, Plan: plan.Plan{Batches: batches}, TimeoutMinutes: 60, Policies: make([]PolicyFacts, policies)}
	for i := range fl.f.Policies {
		fl.f.Policies[i].Compliance = map[string]policyv1.ComplianceState{}
		for _, b := range batches {
			for _, c := range b.Clusters {
				fl.f.Policies[i].Compliance[c] = policyv1.NonCompliant
			}
		}
	}
	return fl
}

// decide decides at now and keeps the progress, as the controller records it in status.
func (fl *fleet) decide(now time.Duration) Decision {
	fl.f.Now = t0.Add(now)
	d := Decide(fl.f)
	fl.f.Progress = d.Progress
	return d
}

func (fl *fleet) comply(cluster string, policy int) {
	fl.f.Policies[policy].Compliance[cluster] = policyv1.Compliant
}

// relapse makes a cluster NonCompliant with a policy again.
func (fl *fleet) relapse(cluster string, policy int) {
	fl.f.Policies[policy].Compliance[cluster] = policyv1.NonCompliant
}

func (fl *fleet) expect(d Decision, state ranv1alpha1.UpgradeState, batch int, message string) {
	fl.t.Helper()
	if d.State != state || (state == ranv1alpha1.StateNotCompleted && d.Progress.Batch != batch) || !strings.Contains(d.Message, message) {
		fl.t.Fatalf("got %s batch %d %q, want %s batch %d containing %q", d.State, d.Progress.Batch, d.Message, state, batch, message)
	}
}

func canaryAndTwo() []plan.Batch {
	return []plan.Batch{
		{Canary: true, Clusters: []string{"c1"}},
		{Clusters: []string{"a1", "a2"}},
		{Clusters: []string{"b1"}},
	}
}

func TestRolloutThroughItsBatches(t *testing.T) {
	fl := newFleet(t, canaryAndTwo(), 2)
	d := fl.decide(0)
	fl.expect(d, ranv1alpha1.StateNotCompleted, 0, "Canary batch 1 of 3: 0 of 1")
	if got := d.Enforce[0]; len(got) != 1 || got[0] != "c1" {
		t.Fatalf("enforce = %v, want policy 0 on c1", d.Enforce)
	}
	if want := t0.Add(20 * time.Minute); !d.BatchDeadline.Equal(want) || !d.Wake.Equal(want) {
		t.Fatalf("deadline %v wake %v, want a third of an hour", d.BatchDeadline, d.Wake)
	}

	fl.comply("c1", 0)
	d = fl.decide(5 * time.Minute)
	if got := d.Enforce[1]; len(got) != 1 || got[0] != "c1" || len(d.Enforce[0]) != 0 {
		t.Fatalf("enforce = %v, want policy 1 on c1 only", d.Enforce)
	}

	fl.comply("c1", 1)
	d = fl.decide(10 * time.Minute)
	fl.expect(d, ranv1alpha1.StateNotCompleted, 1, "Batch 2 of 3: 0 of 2")
	if want := t0.Add(10*time.Minute + 25*time.Minute); !d.BatchDeadline.Equal(want) {
		t.Fatalf("batch 2 deadline = %v, want half of the 50 minutes left", d.BatchDeadline)
	}

	for _, c := range []string{"a1", "a2"} {
		fl.comply(c, 0)
		fl.comply(c, 1)
	}
	fl.comply("b1", 0) // b1 already complies with the first policy: it starts at the second
	d = fl.decide(20 * time.Minute)
	fl.expect(d, ranv1alpha1.StateNotCompleted, 2, "Batch 3 of 3")
	if got := d.Enforce[1]; len(got) != 1 || got[0] != "b1" {
		t.Fatalf("enforce = %v, want policy 1 on b1", d.Enforce)
	}
	if !d.BatchDeadline.Equal(t0.Add(time.Hour)) {
		t.Fatalf("the last batch's deadline = %v, want the overall deadline", d.BatchDeadline)
	}

	fl.comply("b1", 1)
	fl.expect(fl.decide(25*time.Minute), ranv1alpha1.StateCompleted, 0, "All 4 clusters are compliant")
}

func TestCanaryTimeoutEndsTheRollout(t *testing.T) {
	fl := newFleet(t, canaryAndTwo(), 1)
	fl.decide(0)
	d := fl.decide(20 * time.Minute)
	fl.expect(d, ranv1alpha1.StateTimedOut, 0, "Canary batch 1 timed out")
	if d.Progress.Clusters["c1"].State != ranv1alpha1.ClusterTimedOut || len(d.Enforce) != 0 {
		t.Fatalf("c1 = %+v enforce = %v, want c1 TimedOut and nothing enforced", d.Progress.Clusters["c1"], d.Enforce)
	}
}

func TestBatchTimeoutContinueAndAbort(t *testing.T) {
	run := func(abort bool) Decision {
		fl := newFleet(t, canaryAndTwo(), 1)
		fl.f.Abort = abort
		fl.comply("c1", 0)
		fl.decide(0)       // the canary completes at once; batch 2 starts with 30 minutes
		fl.comply("a1", 0) // a2 never complies
		return fl.decide(30 * time.Minute)
	}
	d := run(false)
	if d.State != ranv1alpha1.StateNotCompleted || d.Progress.Batch != 2 {
		t.Fatalf("Continue: got %s batch %d, want batch 3 running", d.State, d.Progress.Batch+1)
	}
	d = run(true)
	if d.State != ranv1alpha1.StateTimedOut || !strings.Contains(d.Message, "batchTimeoutAction is Abort") {
		t.Fatalf("Abort: got %s %q", d.State, d.Message)
	}
}

func TestTimedOutRolloutCompletesLate(t *testing.T) {
	fl := newFleet(t, []plan.Batch{{Clusters: []string{"a1", "a2"}}}, 1)
	fl.comply("a1", 0)
	fl.decide(0)
	d := fl.decide(time.Hour)
	fl.expect(d, ranv1alpha1.StateTimedOut, 0, "The rollout ran out of time")
	if d.Progress.Clusters["a2"].State != ranv1alpha1.ClusterTimedOut {
		t.Fatalf("a2 = %+v, want TimedOut", d.Progress.Clusters["a2"])
	}
	fl.expect(fl.decide(90*time.Minute), ranv1alpha1.StateTimedOut, 0, "cluster a2 is not compliant yet, still watching")
	fl.comply("a2", 0)
	fl.expect(fl.decide(2*time.Hour), ranv1alpha1.StateCompleted, 0, "All 2 clusters")
}

func TestBeforeTheStart(t *testing.T) {
	batches := []plan.Batch{{Clusters: []string{"a1"}}}
	cases := map[string]struct {
		enabled bool
		invalid *Problem
		blocked *Problem
		want    ranv1alpha1.UpgradeState
		reason  string
	}{
		"not enabled":             {want: ranv1alpha1.StateNotStarted, reason: ranv1alpha1.ReasonNotEnabled},
		"invalid and not enabled": {invalid: &Problem{Reason: "NotAllManagedPoliciesExist", Message: "x"}, want: ranv1alpha1.StateNotStarted, reason: "NotAllManagedPoliciesExist"},
		"invalid and enabled":     {enabled: true, invalid: &Problem{Reason: "ClusterNotFound", Message: "x"}, want: ranv1alpha1.StateCannotStart, reason: "ClusterNotFound"},
		"blocked":                 {enabled: true, blocked: &Problem{Reason: ranv1alpha1.ReasonMissingBlockingCR, Message: "x"}, want: ranv1alpha1.StateCannotStart, reason: ranv1alpha1.ReasonMissingBlockingCR},
		"blocked and not enabled": {blocked: &Problem{Reason: ranv1alpha1.ReasonIncompleteBlockingCR, Message: "x"}, want: ranv1alpha1.StateNotStarted, reason: ranv1alpha1.ReasonNotEnabled},
		"unblocked starts":        {enabled: true, want: ranv1alpha1.StateNotCompleted, reason: ranv1alpha1.ReasonInProgress},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fl := newFleet(t, batches, 1)
			fl.f.Enabled, fl.f.Invalid, fl.f.Blocked = tc.enabled, tc.invalid, tc.blocked
			d := fl.decide(0)
			if d.State != tc.want || d.Reason != tc.reason {
				t.Fatalf("got %s/%s, want %s/%s", d.State, d.Reason, tc.want, tc.reason)
			}
			if started := !d.Progress.Started.IsZero(); started != (tc.want == ranv1alpha1.StateNotCompleted) {
				t.Fatalf("started = %v in state %s", started, d.State)
			}
		})
	}
}

func TestEmptyPlanCompletesAtOnce(t *testing.T) {
	fl := newFleet(t, nil, 1)
	d := fl.decide(0)
	if d.State != ranv1alpha1.StateCompleted || d.Progress.Started.IsZero() {
		t.Fatalf("got %s started %v, want Completed at once", d.State, d.Progress.Started)
	}
}

func TestACanaryStillSoakingAtItsDeadlineCompletes(t *testing.T) {
	fl := newFleet(t, []plan.Batch{{Canary: true, Clusters: []string{"c1"}}}, 1)
	fl.decide(0)
	fl.comply("c1", 0)
	fl.f.Policies[0].Soak = 10 * time.Minute
	fl.decide(55 * time.Minute) // c1 complies late in the hour and starts soaking
	// At the deadline the canary times out before its soak ended, but it complies with every
	// policy: a rollout whose clusters all comply is Completed, with a Completed reason.
	d := fl.decide(60 * time.Minute)
	if d.State != ranv1alpha1.StateCompleted || d.Reason != ranv1alpha1.ReasonCompleted || strings.Contains(d.Message, "timed out") {
		t.Fatalf("got %s/%s %q, want Completed throughout", d.State, d.Reason, d.Message)
	}
}

// TestLateClusterWatchedUntilTheDeadline plays TALM's timeout-not-block-next-batch: the timeout
// lowered to one minute times batch 1 out after its share (30 seconds), batch 2 starts and
// completes, and the rollout stays in progress, enforcing nothing, until the overall deadline:
// the late cluster complying before it completes the rollout; otherwise it times out there.
func TestLateClusterWatchedUntilTheDeadline(t *testing.T) {
	for _, complies := range []bool{true, false} {
		fl := newFleet(t, []plan.Batch{{Clusters: []string{"a"}}, {Clusters: []string{"b"}}}, 1)
		fl.decide(0)
		fl.f.TimeoutMinutes = 1
		d := fl.decide(31 * time.Second)
		fl.expect(d, ranv1alpha1.StateNotCompleted, 1, "")
		if c := d.Progress.Clusters["b"]; c.State != ranv1alpha1.ClusterInProgress {
			t.Fatalf("batch 2 shows b %s, want InProgress", c.State)
		}
		fl.comply("b", 0)
		d = fl.decide(40 * time.Second)
		fl.expect(d, ranv1alpha1.StateNotCompleted, 1, "cluster a timed out and is not compliant yet")
		if d.Reason != ranv1alpha1.ReasonInProgress || !d.Wake.Equal(t0.Add(time.Minute)) || len(enforced(d)) != 0 {
			t.Fatalf("waiting: reason %s, wake %v, enforced %v; want InProgress until the deadline, nothing enforced", d.Reason, d.Wake, enforced(d))
		}
		if complies {
			fl.comply("a", 0)
			fl.expect(fl.decide(50*time.Second), ranv1alpha1.StateCompleted, 1, "")
			continue
		}
		fl.expect(fl.decide(time.Minute), ranv1alpha1.StateTimedOut, 1, "cluster a is not compliant yet")
	}
}

// TestInvalidLooksAgainWhenAsked: a problem whose fix the operator cannot watch (a replica's
// unresolved hub template) wakes the rollout after its Recheck; others wait for a new fact.
func TestInvalidLooksAgainWhenAsked(t *testing.T) {
	fl := newFleet(t, []plan.Batch{{Clusters: []string{"a"}}}, 1)
	fl.f.Invalid = &Problem{Reason: ranv1alpha1.ReasonNotAllManagedPoliciesExist, Message: "Invalid managed policies: p", Recheck: time.Minute}
	d := fl.decide(0)
	if d.State != ranv1alpha1.StateCannotStart || !d.Wake.Equal(t0.Add(time.Minute)) {
		t.Fatalf("got %s waking at %v, want CannotStart waking a minute later", d.State, d.Wake)
	}
	fl.f.Invalid.Recheck = 0
	if d := fl.decide(0); !d.Wake.IsZero() {
		t.Fatalf("a problem without Recheck wakes at %v", d.Wake)
	}
}

// A cluster that took both updates of a path no longer complies with the first one's policy:
// marked intermediate, it does not keep the rollout from completing; unmarked, it does.
func TestIntermediatePolicyNeedNotStayCompliant(t *testing.T) {
	for _, intermediate := range []bool{true, false} {
		fl := newFleet(t, []plan.Batch{{Clusters: []string{"eus"}}}, 2)
		fl.f.Policies[0].Intermediate = intermediate
		fl.decide(0)
		fl.comply("eus", 0)
		fl.decide(time.Minute)
		fl.comply("eus", 1)
		fl.relapse("eus", 0) // on the target now, not on the hop's release
		d := fl.decide(2 * time.Minute)
		if intermediate {
			fl.expect(d, ranv1alpha1.StateCompleted, 0, "All 1 clusters are compliant")
		} else if d.State == ranv1alpha1.StateCompleted {
			t.Fatalf("completed with a cluster not compliant with a policy that is not intermediate: %q", d.Message)
		}
	}
}

// A cluster that complied with an intermediate update is enforced on the next one only once
// the hub shows the first released on it; past a policy that is not intermediate, at once.
func TestHandOffFromAnIntermediatePolicy(t *testing.T) {
	for name, intermediate := range map[string]bool{"intermediate": true, "not intermediate": false} {
		t.Run(name, func(t *testing.T) {
			fl := newFleet(t, []plan.Batch{{Clusters: []string{"eus", "other"}}}, 2)
			fl.f.Policies[0].Intermediate = intermediate
			if d := fl.decide(0); !slices.Equal(d.Enforce[0], []string{"eus", "other"}) {
				t.Fatalf("first policy enforced on %v at the start", d.Enforce[0])
			}
			fl.comply("eus", 0)
			d := fl.decide(time.Minute)
			if got := fl.f.Progress.Clusters["eus"]; got.State != ranv1alpha1.ClusterInProgress || got.Policy != 1 {
				t.Fatalf("the cluster is %s at policy %d, want InProgress at 1", got.State, got.Policy)
			}
			if !slices.Equal(d.Enforce[0], []string{"other"}) {
				t.Fatalf("first policy enforced on %v, want only the cluster still on it", d.Enforce[0])
			}
			if !intermediate {
				if !slices.Equal(d.Enforce[1], []string{"eus"}) || d.Wake.Equal(fl.f.Now.Add(HandOffRecheck)) {
					t.Fatalf("next policy enforced on %v (wake %v), want at once", d.Enforce[1], d.Wake)
				}
				return
			}
			if len(d.Enforce[1]) != 0 || !d.Wake.Equal(fl.f.Now.Add(HandOffRecheck)) {
				t.Fatalf("next policy enforced on %v, wake %v: want none until released, a look again in %v", d.Enforce[1], d.Wake, HandOffRecheck)
			}
			if d := fl.decide(time.Minute + time.Second); len(d.Enforce[1]) != 0 {
				t.Fatalf("next policy enforced on %v before the hub released the first", d.Enforce[1])
			}
			fl.f.Policies[0].Released = map[string]bool{"eus": true}
			if d := fl.decide(time.Minute + 2*time.Second); !slices.Equal(d.Enforce[1], []string{"eus"}) || d.Wake.Equal(fl.f.Now.Add(HandOffRecheck)) {
				t.Fatalf("next policy enforced on %v (wake %v) once released, want the cluster", d.Enforce[1], d.Wake)
			}
		})
	}
}

// A best-effort policy (a soft timeout) holds a cluster until its time runs out, then the
// cluster goes on, the batch records name the policy it passed, and the rollout completes
// without it, as it would not with the same policy required.
func TestBestEffortPolicyPassedOnItsSoftTimeout(t *testing.T) {
	rf := newRecordedFleet(t, []plan.Batch{{Clusters: []string{"mno", "sno"}}}, 2)
	rf.f.Policies[0].SoftTimeout = 10 * time.Minute
	delete(rf.f.Policies[0].Compliance, "sno") // placed on the multi-node cluster only
	rf.decide(0)
	rf.comply("sno", 1)
	if d := rf.decide(5 * time.Minute); d.Progress.Clusters["mno"].Policy != 0 || !d.Wake.Equal(at(10*time.Minute)) {
		t.Fatalf("before its soft timeout the cluster is at policy %d, wake %v; want 0, waking at 10m",
			d.Progress.Clusters["mno"].Policy, d.Wake)
	}
	d := rf.decide(10 * time.Minute)
	if c := d.Progress.Clusters["mno"]; c.Policy != 1 || !slices.Equal(c.SoftTimedOut, []int{0}) {
		t.Fatalf("at its soft timeout the cluster is at policy %d, passed %v; want 1, [0]", c.Policy, c.SoftTimedOut)
	}
	if !slices.Equal(d.Enforce[1], []string{"mno"}) || len(d.Enforce[0]) != 0 {
		t.Fatalf("enforced %v, want only the next policy on the cluster", d.Enforce)
	}
	cp := rf.records[0].Status.Clusters[0]
	if cp.Name != "mno" || !slices.Equal(cp.SoftTimedOut, []string{"p0"}) || cp.CurrentPolicy != "p1" {
		t.Fatalf("record of mno: %+v, want softTimedOut [p0] on p1", cp)
	}
	rf.comply("mno", 1)
	d = rf.decide(12 * time.Minute)
	rf.expect(d, ranv1alpha1.StateCompleted, 0, "All 2 clusters are compliant")
	if c := d.Progress.Clusters["mno"]; !slices.Equal(c.SoftTimedOut, []int{0}) {
		t.Fatalf("the completed cluster forgot the policy it passed: %v", c.SoftTimedOut)
	}

	required := newFleet(t, []plan.Batch{{Clusters: []string{"mno"}}}, 2)
	required.decide(0)
	required.comply("mno", 1)
	if d := required.decide(30 * time.Minute); d.State == ranv1alpha1.StateCompleted || d.Progress.Clusters["mno"].Policy != 0 {
		t.Fatalf("a required policy was passed: %s, cluster at policy %d", d.State, d.Progress.Clusters["mno"].Policy)
	}
}
