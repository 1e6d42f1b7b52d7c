package gates

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
)

var t0 = time.Date(2026, 11, 26, 22, 0, 0, 0, time.UTC)

// twoBatches is a plan of a canary batch and a batch of two, whose first batch runs with
// c1 working, c2 pending; c3 and c4 wait in the second batch.
func twoBatches() (plan.Plan, rollout.Progress) {
	p := plan.Plan{Batches: []plan.Batch{{Canary: true, Clusters: []string{"c1", "c2"}}, {Clusters: []string{"c3", "c4"}}}}
	progress := rollout.Progress{Started: t0, BatchStarted: t0, Clusters: map[string]rollout.Cluster{
		"c1": {State: ranv1alpha1.ClusterInProgress}, "c2": {State: ranv1alpha1.ClusterPending},
	}}
	return p, progress
}

func upgrade(mutate func(*ranv1alpha1.ClusterGroupUpgradeSpec)) *ranv1alpha1.ClusterGroupUpgrade {
	u := &ranv1alpha1.ClusterGroupUpgrade{}
	if mutate != nil {
		mutate(&u.Spec)
	}
	return u
}

func withHealth(before, after bool) func(*ranv1alpha1.ClusterGroupUpgradeSpec) {
	return func(s *ranv1alpha1.ClusterGroupUpgradeSpec) {
		s.UpgradeChecks = &ranv1alpha1.UpgradeChecks{Health: &ranv1alpha1.HealthChecks{BeforeUpgrade: before, AfterUpgrade: after}}
	}
}

func TestUnstarted(t *testing.T) {
	p, progress := twoBatches()
	if got := Unstarted(p, progress); !cmp.Equal(got, []string{"c2", "c3", "c4"}) {
		t.Errorf("running: %v, want c2 (pending) and the next batch", got)
	}
	if got := Unstarted(p, rollout.Progress{}); !cmp.Equal(got, []string{"c1", "c2", "c3", "c4"}) {
		t.Errorf("before the start: %v, want every planned cluster", got)
	}
	progress.BatchEnded = true
	if got := Unstarted(p, progress); !cmp.Equal(got, []string{"c3", "c4"}) {
		t.Errorf("between batches: %v, want the next batch only", got)
	}
}

func TestHolds(t *testing.T) {
	p, progress := twoBatches()
	held := upgradecheck.Verdict{Outcome: upgradecheck.Hold, Reason: upgradecheck.ReasonNotRecommended, Message: "not recommended"}
	unread := upgradecheck.Verdict{Outcome: upgradecheck.Hold, Reason: upgradecheck.ReasonClusterVersionUnknown, Message: "no view yet"}
	cases := map[string]struct {
		upgrade *ranv1alpha1.ClusterGroupUpgrade
		in      Input
		want    map[string]rollout.Hold
	}{
		"no checks hold nothing": {upgrade: upgrade(nil)},
		"an upgrade check holds; an unread ClusterVersion is pending": {
			upgrade: upgrade(nil),
			in:      Input{Verdicts: map[string]upgradecheck.Verdict{"c2": held, "c3": unread, "c4": {Outcome: upgradecheck.Proceed}}},
			want: map[string]rollout.Hold{
				"c2": {Cluster: "c2", Reason: upgradecheck.ReasonNotRecommended, Message: "cluster c2 is held: not recommended"},
				"c3": {Cluster: "c3", Reason: upgradecheck.ReasonClusterVersionUnknown, Message: "cluster c3 is held: no view yet", Pending: true},
			},
		},
		"the health check: no answer waits, unhealthy holds, healthy starts": {
			upgrade: upgrade(withHealth(true, false)),
			in: Input{HealthBefore: map[string]upgradecheck.HealthRun{
				"c2": {Reason: upgradecheck.ReasonHealthCheckPending, Message: "the Job runs"},
				"c3": {Done: true, Reason: upgradecheck.ReasonClusterOperatorsUnhealthy, Message: "dns is Degraded"},
				"c4": {Done: true, Healthy: true},
			}},
			want: map[string]rollout.Hold{
				"c2": {Cluster: "c2", Reason: upgradecheck.ReasonHealthCheckPending, Message: "cluster c2 waits for its health check: the Job runs", Pending: true},
				"c3": {Cluster: "c3", Reason: upgradecheck.ReasonClusterOperatorsUnhealthy, Message: "cluster c3 is held: dns is Degraded"},
			},
		},
		"an upgrade check comes before the health check": {
			upgrade: upgrade(withHealth(true, false)),
			in: Input{Verdicts: map[string]upgradecheck.Verdict{"c2": held},
				HealthBefore: map[string]upgradecheck.HealthRun{"c2": {Done: true, Healthy: true}, "c3": {Done: true, Healthy: true}, "c4": {Done: true, Healthy: true}}},
			want: map[string]rollout.Hold{"c2": {Cluster: "c2", Reason: upgradecheck.ReasonNotRecommended, Message: "cluster c2 is held: not recommended"}},
		},
		"a cluster without a health answer waits for it": {
			upgrade: upgrade(withHealth(true, false)),
			in:      Input{HealthBefore: map[string]upgradecheck.HealthRun{"c2": {Done: true, Healthy: true}, "c3": {Done: true, Healthy: true}}},
			want: map[string]rollout.Hold{"c4": {Cluster: "c4", Reason: upgradecheck.ReasonHealthCheckPending,
				Message: "cluster c4 waits for its health check", Pending: true}},
		},
		"pre-upgrade actions: not made, running, degraded, done": {
			upgrade: upgrade(func(s *ranv1alpha1.ClusterGroupUpgradeSpec) { s.PreUpgradeActions = []string{"drain"} }),
			in: Input{Works: true, Pre: map[string]manifestwork.Observation{
				"c2": {State: manifestwork.Progressing, Message: "not Available"},
				"c3": {State: manifestwork.Degraded, Message: "the Job failed"},
				"c4": {State: manifestwork.Done},
			}},
			want: map[string]rollout.Hold{
				"c2": {Cluster: "c2", Reason: manifestwork.ReasonPreUpgradeActionPending, Message: "cluster c2 waits for its pre-upgrade actions: not Available", Pending: true},
				"c3": {Cluster: "c3", Reason: manifestwork.ReasonPreUpgradeActionDegraded, Message: "cluster c3 is held: the Job failed"},
			},
		},
		"pre-upgrade actions on a hub without ManifestWorks hold nothing": {
			upgrade: upgrade(func(s *ranv1alpha1.ClusterGroupUpgradeSpec) { s.PreUpgradeActions = []string{"drain"} }),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := tc.in
			in.Upgrade, in.Plan, in.Progress, in.Now, in.Started = tc.upgrade, p, progress, t0, true
			if diff := cmp.Diff(tc.want, Build(in).Holds, cmp.Comparer(func(a, b map[string]rollout.Hold) bool {
				return len(a) == 0 && len(b) == 0 || cmp.Equal(a, b)
			})); diff != "" {
				t.Errorf("holds (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVerifications(t *testing.T) {
	unhealthy := upgradecheck.HealthRun{Done: true, Reason: upgradecheck.ReasonCriticalAlertsFiring, Message: "an alert fires"}
	healthy := upgradecheck.HealthRun{Done: true, Healthy: true}
	withPost := func(s *ranv1alpha1.ClusterGroupUpgradeSpec) { s.PostUpgradeActions = []string{"smoke"} }
	both := func(s *ranv1alpha1.ClusterGroupUpgradeSpec) { withHealth(false, true)(s); withPost(s) }
	cases := map[string]struct {
		upgrade    *ranv1alpha1.ClusterGroupUpgrade
		in         Input
		wantVerify bool
		want       map[string]rollout.Verification
	}{
		"nothing verifies": {upgrade: upgrade(withHealth(true, false))},
		"the health check after the upgrade": {
			upgrade:    upgrade(withHealth(false, true)),
			in:         Input{HealthAfter: map[string]upgradecheck.HealthRun{"a": healthy, "b": unhealthy, "c": {Reason: upgradecheck.ReasonHealthCheckPending}}},
			wantVerify: true,
			want: map[string]rollout.Verification{"a": {Done: true, Healthy: true},
				"b": {Done: true, Reason: upgradecheck.ReasonCriticalAlertsFiring, Message: "an alert fires"}},
		},
		"post-upgrade actions alone": {
			upgrade: upgrade(withPost),
			in: Input{Works: true, Post: map[string]manifestwork.Observation{"a": {State: manifestwork.Done},
				"b": {State: manifestwork.Degraded, Message: "smoke failed"}, "c": {State: manifestwork.Progressing}}},
			wantVerify: true,
			want: map[string]rollout.Verification{"a": {Done: true, Healthy: true},
				"b": {Done: true, Reason: manifestwork.ReasonPostUpgradeActionDegraded, Message: "smoke failed"}},
		},
		"post-upgrade actions on a hub without ManifestWorks do not verify": {upgrade: upgrade(withPost)},
		"both: done only when both are, failed by either at once": {
			upgrade: upgrade(both),
			in: Input{Works: true,
				HealthAfter: map[string]upgradecheck.HealthRun{"a": healthy, "b": unhealthy, "c": healthy, "d": healthy},
				Post: map[string]manifestwork.Observation{"a": {State: manifestwork.Done}, "b": {State: manifestwork.Progressing},
					"c": {State: manifestwork.Progressing}, "e": {State: manifestwork.Degraded, Message: "smoke failed"}}},
			wantVerify: true,
			want: map[string]rollout.Verification{
				"a": {Done: true, Healthy: true},
				"b": {Done: true, Reason: upgradecheck.ReasonCriticalAlertsFiring, Message: "an alert fires"},
				"e": {Done: true, Reason: manifestwork.ReasonPostUpgradeActionDegraded, Message: "smoke failed"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := tc.in
			in.Upgrade, in.Now = tc.upgrade, t0
			g := Build(in)
			if g.Verify != tc.wantVerify {
				t.Fatalf("verify %v, want %v", g.Verify, tc.wantVerify)
			}
			if diff := cmp.Diff(tc.want, g.Verifications, cmp.Comparer(func(a, b map[string]rollout.Verification) bool {
				return len(a) == 0 && len(b) == 0 || cmp.Equal(a, b)
			})); diff != "" {
				t.Errorf("verifications (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBatchGates(t *testing.T) {
	p, progress := twoBatches()
	opens := time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		upgrade  *ranv1alpha1.ClusterGroupUpgrade
		started  bool
		approved []ranv1alpha1.BatchApproval
		roots    []*policyv1.Policy
		want     rollout.Gates
	}{
		"nothing asked": {upgrade: upgrade(nil), want: rollout.Gates{}},
		"a pause counts only once started": {
			upgrade: func() *ranv1alpha1.ClusterGroupUpgrade {
				u := upgrade(func(s *ranv1alpha1.ClusterGroupUpgradeSpec) { s.Paused = true })
				u.Status.PausedAt = &metav1.Time{Time: t0.Add(-time.Hour)}
				u.Status.PausedFor = &metav1.Duration{Duration: time.Hour}
				return u
			}(),
			started: true,
			want:    rollout.Gates{Paused: true, PausedFor: 2 * time.Hour},
		},
		"approval after the canaries, batch 2 approved": {
			upgrade: upgrade(func(s *ranv1alpha1.ClusterGroupUpgradeSpec) {
				s.Approval = &ranv1alpha1.ApprovalGates{AfterCanaries: true}
			}),
			approved: []ranv1alpha1.BatchApproval{{Batch: 2}},
			want:     rollout.Gates{Approval: rollout.Approval{Batch: 1, Approved: []int{1}}},
		},
		"approval of every batch": {
			upgrade: upgrade(func(s *ranv1alpha1.ClusterGroupUpgradeSpec) {
				s.Approval = &ranv1alpha1.ApprovalGates{EveryBatch: true}
			}),
			want: rollout.Gates{Approval: rollout.Approval{EveryBatch: true}},
		},
		"a failure budget of half the plan, a soak and a cluster deadline": {
			upgrade: upgrade(func(s *ranv1alpha1.ClusterGroupUpgradeSpec) {
				s.MaxFailures = ptr.To(intstr.FromString("50%"))
				s.BatchSoak = &metav1.Duration{Duration: 10 * time.Minute}
				s.ClusterProgressDeadline = &metav1.Duration{Duration: time.Hour}
			}),
			want: rollout.Gates{MaxFailures: ptr.To(2), BatchSoak: 10 * time.Minute, ClusterDeadline: time.Hour},
		},
		"a closed maintenance window says when the next opens": {
			upgrade: upgrade(func(s *ranv1alpha1.ClusterGroupUpgradeSpec) {
				s.MaintenanceWindows = &ranv1alpha1.MaintenanceWindows{Windows: []ranv1alpha1.MaintenanceWindow{
					{Start: "01:00", Duration: metav1.Duration{Duration: 4 * time.Hour}, TimeZone: "UTC"}}}
			}),
			want: rollout.Gates{WindowClosed: true, WindowOpens: opens},
		},
		"a managed policy changed since it was accepted": {
			upgrade: func() *ranv1alpha1.ClusterGroupUpgrade {
				u := upgrade(nil)
				u.Status.ManagedPoliciesForUpgrade = []ranv1alpha1.PolicyReference{
					{Namespace: "p", Name: "gone", Generation: 1}, {Namespace: "p", Name: "upgrade", Generation: 2}}
				return u
			}(),
			started: true,
			roots:   []*policyv1.Policy{nil, {ObjectMeta: metav1.ObjectMeta{Namespace: "p", Name: "upgrade", Generation: 3}}},
			want:    rollout.Gates{PolicyChanged: "Managed policy p/upgrade changed since the rollout accepted it (generation 2, now 3)"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := Build(Input{Upgrade: tc.upgrade, Now: t0, Started: tc.started, Plan: p, Progress: progress, Approvals: tc.approved, Roots: tc.roots,
				Accepted: tc.upgrade.Status.ManagedPoliciesForUpgrade})
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("gates (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApprovals(t *testing.T) {
	u := upgrade(nil)
	u.Status.Approvals = []ranv1alpha1.BatchApproval{{Batch: 2, By: "alice"}}
	if got := Approvals(u, t0); len(got) != 1 {
		t.Fatalf("without an annotation: %v, want the recorded approval only", got)
	}
	u.Annotations = map[string]string{ranv1alpha1.AnnotationApproveBatch: "3", ranv1alpha1.AnnotationApprovedBy: "bob"}
	got := Approvals(u, t0.Add(1500*time.Millisecond))
	want := []ranv1alpha1.BatchApproval{{Batch: 2, By: "alice"}, {Batch: 3, By: "bob", At: metav1.NewTime(t0.Add(time.Second))}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("approvals (-want +got):\n%s", diff)
	}
	u.Status.Approvals = got
	if again := Approvals(u, t0.Add(time.Hour)); len(again) != 2 {
		t.Fatalf("the same annotation again: %v, want it recorded once", again)
	}
	u.Annotations[ranv1alpha1.AnnotationApproveBatch] = "soon"
	if bad := Approvals(u, t0); len(bad) != 2 {
		t.Fatalf("an annotation that is not a batch: %v, want nothing new", bad)
	}
}

func TestWindowProblem(t *testing.T) {
	bad := &ranv1alpha1.MaintenanceWindows{Windows: []ranv1alpha1.MaintenanceWindow{{Start: "01:00", Duration: metav1.Duration{Duration: time.Hour}},
		{Start: "01:00", Duration: metav1.Duration{Duration: time.Hour}, TimeZone: "Mars/Olympus_Mons"}}}
	p := WindowProblem(bad)
	if p == nil || p.Reason != ranv1alpha1.ReasonInvalidMaintenanceWindow || p.Message[:len("spec.maintenanceWindows.windows[1]")] != "spec.maintenanceWindows.windows[1]" {
		t.Fatalf("problem %+v, want InvalidMaintenanceWindow naming windows[1]", p)
	}
	if p := WindowProblem(nil); p != nil {
		t.Fatalf("no windows: %+v", p)
	}
}

func TestAcceptedAndFrozen(t *testing.T) {
	policy := func(name string, generation int64) *policyv1.Policy {
		return &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "p", Name: name, Generation: generation}}
	}
	recorded := []ranv1alpha1.PolicyReference{{Namespace: "p", Name: "a", Generation: 1}, {Namespace: "p", Name: "b", Generation: 4}}
	roots := []*policyv1.Policy{policy("a", 2), nil} // a changed, b deleted
	cases := map[string]struct {
		started, batchStarts bool
		want                 []ranv1alpha1.PolicyReference
		frozen               map[int]bool
	}{
		"before the start: what is read now": {
			want: []ranv1alpha1.PolicyReference{{Namespace: "p", Name: "a", Generation: 2}, recorded[1]}, frozen: map[int]bool{},
		},
		"inside a batch: what was recorded, the change frozen out": {
			started: true, want: recorded, frozen: map[int]bool{0: true},
		},
		"a batch starts: the change is accepted": {
			started: true, batchStarts: true,
			want: []ranv1alpha1.PolicyReference{{Namespace: "p", Name: "a", Generation: 2}, recorded[1]}, frozen: map[int]bool{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Accepted(recorded, roots, tc.started, tc.batchStarts)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("accepted (-want +got):\n%s", diff)
			}
			if frozen := Frozen(got, roots[:1]); !cmp.Equal(frozen, tc.frozen) {
				t.Fatalf("frozen %v, want %v", frozen, tc.frozen)
			}
		})
	}
}

// alerting is a FleetFreeze whose alert queries freeze the fleet, saying why.
func alerting(name, why string) ranv1alpha1.FleetFreeze {
	return ranv1alpha1.FleetFreeze{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: ranv1alpha1.FleetFreezeStatus{AlertsFrozen: true,
		Conditions: []metav1.Condition{{Type: ranv1alpha1.ConditionAlertsEvaluated, Status: metav1.ConditionTrue, Reason: ranv1alpha1.ReasonAlertsFiring, Message: why}}}}
}

func TestFleetFrozen(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC))
	freeze := func(name string, frozen bool, reason, by string, at *metav1.Time) ranv1alpha1.FleetFreeze {
		return ranv1alpha1.FleetFreeze{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: ranv1alpha1.FleetFreezeSpec{Frozen: frozen, Reason: reason, ChangedBy: by, ChangedAt: at}}
	}
	for name, tc := range map[string]struct {
		freezes []ranv1alpha1.FleetFreeze
		want    string
	}{
		"none":            {nil, ""},
		"lifted":          {[]ranv1alpha1.FleetFreeze{freeze("manual", false, "sales over", "alice", &at)}, ""},
		"manual":          {[]ranv1alpha1.FleetFreeze{freeze("manual", true, "sales", "alice", &at)}, "the fleet is frozen by FleetFreeze manual (alice, 2026-12-02T15:00:00Z): sales"},
		"written by hand": {[]ranv1alpha1.FleetFreeze{freeze("noc", true, "incident 12", "", nil)}, "the fleet is frozen by FleetFreeze noc: incident 12"},
		"by alerts, after a person's freeze": {[]ranv1alpha1.FleetFreeze{alerting("noc", "ALERTS fires"), freeze("manual", true, "sales", "bob", nil)},
			"the fleet is frozen by FleetFreeze manual (bob): sales (and 1 more freezes)"},
		"by alerts": {[]ranv1alpha1.FleetFreeze{alerting("noc", "ALERTS fires"), freeze("manual", false, "", "bob", nil)},
			"the fleet is frozen by the alert queries of FleetFreeze noc: ALERTS fires"},
		"two, the first by name": {[]ranv1alpha1.FleetFreeze{freeze("noc", true, "incident", "", nil), freeze("manual", true, "sales", "bob", nil),
			freeze("old", false, "", "", nil)}, "the fleet is frozen by FleetFreeze manual (bob): sales (and 1 more freezes)"},
	} {
		if got := FleetFrozen(tc.freezes); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}
