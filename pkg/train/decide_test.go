package train

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

var t0 = time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)

// world is a train and its rollouts as a test drives them, pass after pass.
type world struct {
	t        *testing.T
	train    *ranv1alpha1.ReleaseTrain
	now      time.Time
	versions []string
	rollouts map[Key]Rollout
	last     Intents
}

func newWorld(t *testing.T, rings ...ranv1alpha1.TrainRing) *world {
	t.Helper()
	return &world{
		t: t, now: t0, rollouts: map[Key]Rollout{},
		train: &ranv1alpha1.ReleaseTrain{
			ObjectMeta: metav1.ObjectMeta{Namespace: "trains", Name: "fleet", Generation: 1},
			Spec: ranv1alpha1.ReleaseTrainSpec{
				Releases: ranv1alpha1.TrainReleases{Channel: "stable-4.16"},
				Rings:    rings,
			},
		},
	}
}

func ring(name string, soak time.Duration, minClusters int32, maxFailed int32, hubs ...string) ranv1alpha1.TrainRing {
	r := ranv1alpha1.TrainRing{Name: name, Hubs: hubs, Qualification: ranv1alpha1.RingQualification{MaxFailed: maxFailed}}
	if soak > 0 {
		r.Qualification.Soak = &metav1.Duration{Duration: soak}
	}
	if minClusters > 0 {
		r.Qualification.MinClusters = ptr.To(minClusters)
	}
	return r
}

// pass runs Decide and applies its intents as the controller would: the status is written,
// the rollouts to ensure exist (new ones report nothing yet), those to delete are gone.
func (w *world) pass() Intents {
	w.t.Helper()
	in := Decide(Facts{Train: w.train.DeepCopy(), Now: w.now, Source: Source{Versions: w.versions, Read: true}, Rollouts: w.rollouts})
	w.train.Status = in.Status
	for _, e := range in.Ensure {
		if _, ok := w.rollouts[e.Key]; !ok {
			w.rollouts[e.Key] = Rollout{Parts: w.parts(e.Index)}
		}
	}
	for _, k := range in.Delete {
		delete(w.rollouts, k)
	}
	w.last = in
	return in
}

func (w *world) parts(ring int) []Part {
	hubs := w.train.Spec.Rings[ring].Hubs
	if len(hubs) == 0 {
		return []Part{{Reporting: true}}
	}
	var out []Part
	for _, h := range hubs {
		out = append(out, Part{Hub: h, Reporting: true})
	}
	return out
}

// report sets what every part of a rollout reports.
func (w *world) report(ring, version string, total, complete, failed int, ended bool) {
	w.t.Helper()
	ro, ok := w.rollouts[Key{ring, version}]
	if !ok {
		w.t.Fatalf("no rollout of %s in ring %s", version, ring)
	}
	for i := range ro.Parts {
		ro.Parts[i].Reported = true
		ro.Parts[i].Total, ro.Parts[i].Complete, ro.Parts[i].Failed, ro.Parts[i].Ended = total, complete, failed, ended
	}
}

func (w *world) release(version string) ranv1alpha1.LedgerRelease {
	w.t.Helper()
	for _, r := range w.train.Status.Ledger {
		if r.Version == version {
			return r
		}
	}
	w.t.Fatalf("release %s is not in the ledger: %+v", version, w.train.Status.Ledger)
	return ranv1alpha1.LedgerRelease{}
}

func (w *world) wantRing(version, ring string, want ranv1alpha1.RingState) {
	w.t.Helper()
	for _, lr := range w.release(version).Rings {
		if lr.Name == ring {
			w.check(lr.State == want, "release %s in ring %s is %s, want %s", version, ring, lr.State, want)
			return
		}
	}
	w.t.Fatalf("release %s never entered ring %s", version, ring)
}

func (w *world) wantState(version string, want ranv1alpha1.ReleaseState) {
	w.t.Helper()
	if got := w.release(version); got.State != want {
		w.t.Fatalf("release %s is %s (%s), want %s", version, got.State, got.Message, want)
	}
}

func (w *world) running(ring, version string) bool {
	_, ok := w.rollouts[Key{ring, version}]
	return ok
}

// check fails the test with the message unless ok.
func (w *world) check(ok bool, format string, args ...any) {
	w.t.Helper()
	if !ok {
		w.t.Fatalf(format, args...)
	}
}

func (w *world) events() []string {
	var out []string
	for _, e := range w.last.Events {
		out = append(out, e.Reason)
	}
	return out
}

func TestReleaseQualifiesRingByRing(t *testing.T) {
	w := newWorld(t, ring("canary", 2*time.Hour, 2, 0), ring("early", time.Hour, 0, 1), ring("fleet", 0, 0, 5))
	w.train.Spec.Releases.CheckInterval = &metav1.Duration{Duration: 6 * time.Hour}
	w.versions = []string{"4.16.9", "4.16.10"}
	w.pass()
	w.check(w.running("canary", "4.16.10") && !w.running("canary", "4.16.9"), "the newest release enters the first ring alone; rollouts: %v", w.rollouts)
	w.check(len(w.train.Status.Ledger) == 1, "only the newest release is taken: %+v", w.train.Status.Ledger)
	w.check(w.last.Ensure[0].Name == "fleet-canary-4.16.10", "rollout name %q", w.last.Ensure[0].Name)

	w.report("canary", "4.16.10", 3, 1, 0, false)
	w.now = w.now.Add(time.Hour)
	w.pass()
	w.wantRing("4.16.10", "canary", ranv1alpha1.RingRolling)

	w.report("canary", "4.16.10", 3, 2, 0, false)
	w.now = w.now.Add(time.Hour)
	in := w.pass()
	w.wantRing("4.16.10", "canary", ranv1alpha1.RingSoaking)
	w.check(in.After == 2*time.Hour && !w.running("early", "4.16.10"), "ring early waits the soak out (after %s); rollouts %v", in.After, w.rollouts)

	w.now = w.now.Add(119 * time.Minute)
	w.pass()
	w.check(!w.running("early", "4.16.10"), "entered ring early a minute before the soak ended")
	w.now = w.now.Add(time.Minute)
	w.pass()
	w.wantRing("4.16.10", "canary", ranv1alpha1.RingQualified)
	w.check(w.running("early", "4.16.10"), "qualified after the soak, it enters ring early: %v", w.rollouts)
	w.check(w.running("canary", "4.16.10"), "the canary ring's rollout goes on after the release qualified")

	w.report("early", "4.16.10", 10, 9, 1, true)
	w.now = w.now.Add(30 * time.Minute)
	w.pass()
	w.now = w.now.Add(time.Hour)
	w.pass()
	w.check(w.running("fleet", "4.16.10"), "one failure within early's budget of 1 qualifies after 1h: %+v", w.release("4.16.10"))
	w.report("fleet", "4.16.10", 100, 100, 0, true)
	w.pass()
	w.wantState("4.16.10", ranv1alpha1.ReleaseDelivered)
	c := meta.FindStatusCondition(w.train.Status.Conditions, ranv1alpha1.TrainConditionProgressing)
	w.check(c.Reason == ranv1alpha1.TrainReasonIdle, "Progressing %s: %s", c.Reason, c.Message)
	lr := w.release("4.16.10").Rings
	w.check(len(lr) == 3 && lr[0].Complete == 2 && lr[1].Failed == 1 && lr[2].Clusters == 100, "the ledger keeps each ring's counts: %+v", lr)
}

func TestFailureStopsReleaseInItsRing(t *testing.T) {
	w := newWorld(t, ring("canary", 0, 0, 0), ring("fleet", 0, 0, 0))
	w.versions = []string{"4.16.10"}
	w.pass()
	w.report("canary", "4.16.10", 3, 2, 1, false)
	w.pass()
	w.wantState("4.16.10", ranv1alpha1.ReleaseStopped)
	if w.running("fleet", "4.16.10") {
		t.Fatal("a release that failed ring canary entered ring fleet")
	}
	if got := w.events(); len(got) != 1 || got[0] != EventReleaseFailed {
		t.Fatalf("events %v", got)
	}

	w.versions = append(w.versions, "4.16.11")
	w.pass()
	w.wantState("4.16.11", ranv1alpha1.ReleaseWaiting)
	if w.running("canary", "4.16.11") {
		t.Fatal("a newer release entered ring canary before its rollout of 4.16.10 ended")
	}
	w.report("canary", "4.16.10", 3, 2, 1, true)
	w.pass()
	if !w.running("canary", "4.16.11") || w.running("canary", "4.16.10") {
		t.Fatalf("the newer release replaces the ended rollout: %v", w.rollouts)
	}
	w.report("canary", "4.16.11", 3, 3, 0, false)
	w.pass()
	if !w.running("fleet", "4.16.11") {
		t.Fatalf("4.16.11 qualified and entered ring fleet: %+v", w.release("4.16.11"))
	}
	w.wantState("4.16.10", ranv1alpha1.ReleaseStopped)
}

func TestRolloutEndingShortOfMinClustersFails(t *testing.T) {
	w := newWorld(t, ring("canary", 0, 5, 3), ring("fleet", 0, 0, 0))
	w.versions = []string{"4.16.10"}
	w.pass()
	w.report("canary", "4.16.10", 4, 4, 0, true)
	w.pass()
	w.wantState("4.16.10", ranv1alpha1.ReleaseStopped)
	if msg := w.release("4.16.10").Message; msg != "stopped: its rollout in ring canary ended with 4 clusters running it, fewer than 5" {
		t.Fatalf("message %q", msg)
	}
}

func TestApprovalHoldsNewRelease(t *testing.T) {
	w := newWorld(t, ring("canary", 0, 0, 0))
	w.train.Spec.Approval = &ranv1alpha1.TrainApproval{Required: true}
	w.versions = []string{"4.16.10"}
	w.pass()
	w.wantState("4.16.10", ranv1alpha1.ReleaseAwaitingApproval)
	if len(w.rollouts) != 0 {
		t.Fatal("a release awaiting approval entered a ring")
	}
	if c := meta.FindStatusCondition(w.train.Status.Conditions, ranv1alpha1.TrainConditionProgressing); c.Reason != ranv1alpha1.TrainReasonAwaitingApproval {
		t.Fatalf("Progressing %s", c.Reason)
	}
	w.train.Spec.Approval.Approved = []string{"4.16.10"}
	w.pass()
	if !w.running("canary", "4.16.10") {
		t.Fatal("approved, it enters ring canary")
	}
}

func TestNewerReleaseSupersedesWaitingOne(t *testing.T) {
	w := newWorld(t, ring("canary", 0, 0, 0), ring("fleet", 0, 0, 0))
	w.versions = []string{"4.16.10"}
	w.pass()
	w.report("canary", "4.16.10", 2, 2, 0, false)
	w.pass() // qualified: enters fleet
	w.report("fleet", "4.16.10", 5, 1, 0, false)
	w.versions = []string{"4.16.10", "4.16.11"}
	w.pass()
	w.report("canary", "4.16.10", 2, 2, 0, true)
	w.pass() // canary takes 4.16.11
	w.report("canary", "4.16.11", 2, 2, 0, true)
	w.versions = []string{"4.16.10", "4.16.11", "4.16.12"}
	w.pass() // 4.16.11 qualified, waits for fleet; canary takes 4.16.12
	w.wantState("4.16.11", ranv1alpha1.ReleaseWaiting)
	w.report("canary", "4.16.12", 2, 2, 0, true)
	w.pass() // 4.16.12 qualified too
	w.report("fleet", "4.16.10", 5, 5, 0, true)
	w.pass()
	if !w.running("fleet", "4.16.12") || w.running("fleet", "4.16.11") {
		t.Fatalf("ring fleet takes the newest qualified release: %v", w.rollouts)
	}
	w.wantState("4.16.11", ranv1alpha1.ReleaseSuperseded)
	w.wantState("4.16.10", ranv1alpha1.ReleaseDelivered)
	w.wantRing("4.16.12", "canary", ranv1alpha1.RingQualified)
}

func TestUnreachableHubHoldsItsRing(t *testing.T) {
	w := newWorld(t, ring("east", 0, 0, 0, "hub-east", "hub-west"), ring("rest", 0, 0, 0))
	w.versions = []string{"4.16.10"}
	w.pass()
	w.report("east", "4.16.10", 10, 5, 0, false)
	w.pass()
	ro := w.rollouts[Key{"east", "4.16.10"}]
	ro.Parts[1].Reporting = false
	ro.Parts[0].Complete, ro.Parts[1].Complete = 10, 10
	w.pass()
	c := meta.FindStatusCondition(w.train.Status.Conditions, ranv1alpha1.TrainConditionHubsReporting)
	if c.Status != metav1.ConditionFalse || c.Reason != ranv1alpha1.TrainReasonHubUnreachable {
		t.Fatalf("HubsReporting %s %s", c.Status, c.Reason)
	}
	if got := w.train.Status.Rings[0].Unreachable; len(got) != 1 || got[0] != "hub-west" {
		t.Fatalf("unreachable %v", got)
	}
	w.wantRing("4.16.10", "east", ranv1alpha1.RingRolling)
	w.check(!w.running("rest", "4.16.10"), "a ring with a hub not reporting qualified")
	if lr := w.release("4.16.10").Rings[0]; lr.Complete != 10 {
		t.Fatalf("the counts stay as last reported while held: %+v", lr)
	}
	if got := w.events(); len(got) != 1 || got[0] != EventHubUnreachable {
		t.Fatalf("events %v", got)
	}
	w.pass()
	if got := w.events(); len(got) != 0 {
		t.Fatalf("the hold is told once: %v", got)
	}
	ro.Parts[1].Reporting = true
	w.pass()
	if !w.running("rest", "4.16.10") {
		t.Fatalf("resumed: %+v", w.release("4.16.10"))
	}
	if lr := w.release("4.16.10").Rings[0]; lr.Complete != 20 || lr.Clusters != 20 {
		t.Fatalf("both hubs counted: %+v", lr)
	}
}

func TestExistingRolloutIsAdopted(t *testing.T) {
	w := newWorld(t, ring("canary", 0, 0, 0))
	w.versions = []string{"4.16.10"}
	w.rollouts[Key{"canary", "4.16.10"}] = Rollout{Parts: []Part{{Reporting: true}}}
	in := w.pass()
	if len(w.train.Status.Ledger) != 1 || len(w.release("4.16.10").Rings) != 1 {
		t.Fatalf("adopted once: %+v", w.train.Status.Ledger)
	}
	if len(in.Ensure) != 1 || len(in.Delete) != 0 {
		t.Fatalf("ensure %v delete %v", in.Ensure, in.Delete)
	}
}

func TestLedgerIsBounded(t *testing.T) {
	w := newWorld(t, ring("canary", 0, 0, 0))
	for i := range 30 {
		v := fmt.Sprintf("4.16.%d", i)
		w.versions = append(w.versions, v)
		w.pass()
		w.report("canary", v, 1, 1, 0, true)
		w.pass()
	}
	if n := len(w.train.Status.Ledger); n != ranv1alpha1.TrainLedgerLimit {
		t.Fatalf("ledger of %d releases", n)
	}
	if got := w.train.Status.Ledger[0].Version; got != "4.16.29" {
		t.Fatalf("newest first: %s", got)
	}
}

func TestPausedTrainStartsNothing(t *testing.T) {
	w := newWorld(t, ring("canary", 0, 0, 0))
	w.train.Spec.Paused = true
	w.versions = []string{"4.16.10"}
	w.pass()
	if len(w.rollouts) != 0 {
		t.Fatal("a paused train started a rollout")
	}
	w.wantState("4.16.10", ranv1alpha1.ReleaseWaiting)
}

func TestNewestOrdersBySemver(t *testing.T) {
	if got := Newest([]string{"4.16.9", "4.16.10", "junk", "4.16.10-rc.1"}); got != "4.16.10" {
		t.Fatalf("newest %s", got)
	}
	if Newest(nil) != "" {
		t.Fatal("newest of nothing")
	}
}

func TestNewerReleaseSupersedesOneAwaitingApproval(t *testing.T) {
	w := newWorld(t, ring("canary", 0, 0, 0))
	w.train.Spec.Approval = &ranv1alpha1.TrainApproval{Required: true}
	w.versions = []string{"4.16.10"}
	w.pass()
	w.versions = []string{"4.16.10", "4.16.11"}
	w.train.Spec.Approval.Approved = []string{"4.16.11"}
	w.pass()
	w.check(w.running("canary", "4.16.11"), "the approved newer release rolls out: %v", w.rollouts)
	w.wantState("4.16.10", ranv1alpha1.ReleaseSuperseded)
}

func TestLedgerNeverDropsARunningRelease(t *testing.T) {
	w := newWorld(t, ring("canary", 0, 0, 0))
	w.train.Spec.Approval = &ranv1alpha1.TrainApproval{Required: true, Approved: []string{"4.16.0"}}
	w.versions = []string{"4.16.0"}
	w.pass()
	for i := 1; i <= ranv1alpha1.TrainLedgerLimit+3; i++ {
		w.versions = append(w.versions, fmt.Sprintf("4.16.%d", i))
		w.pass()
	}
	w.check(len(w.train.Status.Ledger) == ranv1alpha1.TrainLedgerLimit, "ledger of %d", len(w.train.Status.Ledger))
	w.wantState("4.16.0", ranv1alpha1.ReleaseRolling)
	w.check(w.running("canary", "4.16.0"), "the running release keeps its rollout")
}

func TestLedgerKeepsTheCountsOfAReplacedRollout(t *testing.T) {
	w := newWorld(t, ring("regions", 0, 0, 2, "hub-east", "hub-west"))
	w.versions = []string{"4.16.10"}
	w.pass()
	ro := w.rollouts[Key{"regions", "4.16.10"}]
	ro.Parts[0].Reported, ro.Parts[0].Total, ro.Parts[0].Complete = true, 10, 4
	w.pass()
	w.check(w.release("4.16.10").Rings[0].Clusters == 0, "counts written before every hub reported: %+v", w.release("4.16.10").Rings[0])
	w.report("regions", "4.16.10", 10, 9, 1, true)
	w.pass()
	w.wantRing("4.16.10", "regions", ranv1alpha1.RingQualified)
	w.versions = append(w.versions, "4.16.11")
	w.pass()
	w.check(w.running("regions", "4.16.11"), "the newer release takes the ring")
	// The old rollout is being deleted hub by hub: one hub's part is gone.
	w.rollouts[Key{"regions", "4.16.10"}] = Rollout{Parts: []Part{{Hub: "hub-west", Reporting: true, Reported: true, Total: 10, Complete: 9, Failed: 1}}}
	w.pass()
	if lr := w.release("4.16.10").Rings[0]; lr.Clusters != 20 || lr.Complete != 18 || lr.Failed != 2 {
		t.Fatalf("the replaced rollout's counts changed: %+v", lr)
	}
}

func TestGatedRingQualifiesOnlyOnceItsRolloutEnded(t *testing.T) {
	canary := ring("canary", 0, 0, 0)
	canary.Rollout = &ranv1alpha1.MCURollout{Analysis: &ranv1alpha1.Analysis{Gates: []ranv1alpha1.AnalysisGate{{Name: "api-errors"}}}}
	w := newWorld(t, canary, ring("rest", 0, 0, 0))
	w.versions = []string{"4.16.10"}
	w.pass()
	// Every cluster completed, the last batch's analysis still runs: the rollout goes on.
	w.report("canary", "4.16.10", 3, 3, 0, false)
	w.pass()
	w.wantRing("4.16.10", "canary", ranv1alpha1.RingSoaking)
	w.check(!w.running("rest", "4.16.10"), "a release whose gates still run stays out of the next ring")
	w.report("canary", "4.16.10", 3, 3, 0, true)
	w.pass()
	w.wantRing("4.16.10", "canary", ranv1alpha1.RingQualified)
}
