package story

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

var now = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)

// ago is a time d before now, as the API stores it.
func ago(d time.Duration) *metav1.Time {
	t := metav1.NewTime(now.Add(-d))
	return &t
}

func progress(name string, state ranv1alpha1.ClusterState, since time.Duration) ranv1alpha1.ClusterProgress {
	return ranv1alpha1.ClusterProgress{Name: name, State: state, Since: ago(since)}
}

// working is sno-50 working on policy since 10m ago.
func working(policy string) ranv1alpha1.ClusterProgress {
	c := progress("sno-50", ranv1alpha1.ClusterInProgress, 10*time.Minute)
	c.CurrentPolicy = policy
	return c
}

// record is one started batch of the rollout "upgrade".
func record(index int, started time.Duration, clusters ...ranv1alpha1.ClusterProgress) ranv1alpha1.ClusterGroupUpgradeBatch {
	r := ranv1alpha1.ClusterGroupUpgradeBatch{
		Spec:   ranv1alpha1.ClusterGroupUpgradeBatchSpec{Upgrade: "upgrade", Index: index, Batches: 3, Canary: index == 1},
		Status: ranv1alpha1.ClusterGroupUpgradeBatchStatus{StartedAt: ago(started), Clusters: clusters},
	}
	for _, c := range clusters {
		r.Spec.Clusters = append(r.Spec.Clusters, c.Name)
	}
	return r
}

// waiting is a batch that has not started.
func waiting(index int, clusters ...string) ranv1alpha1.ClusterGroupUpgradeBatch {
	return ranv1alpha1.ClusterGroupUpgradeBatch{
		Spec: ranv1alpha1.ClusterGroupUpgradeBatchSpec{Upgrade: "upgrade", Index: index, Batches: 3, Clusters: clusters},
	}
}

func replica(name string, c policyv1.ComplianceState, action policyv1.RemediationAction) Replica {
	return Replica{Name: name, Found: true, Compliance: c, RemediationAction: action}
}

// rolloutFacts are the facts of sno-50 in a running rollout of two policies: batch 1 (the
// canary sno-1) completed in 20m, batch 2 started 30m ago, where sno-2 and sno-3 completed in
// 10m and 15m; batch 3 has not started.
func rolloutFacts(sno50 ranv1alpha1.ClusterProgress) Facts {
	cgu := &ranv1alpha1.ClusterGroupUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ztp", Name: "upgrade"},
		Spec: ranv1alpha1.ClusterGroupUpgradeSpec{ManagedPolicies: []string{"platform", "operators"},
			UpgradeChecks: &ranv1alpha1.UpgradeChecks{PathValidation: true}},
		Status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotCompleted, Enforcement: ranv1alpha1.EnforcementOverride,
			ManagedPoliciesNs: map[string]string{"platform": "policies", "operators": "policies"}},
	}
	first := record(1, time.Hour, progress("sno-1", ranv1alpha1.ClusterCompleted, 40*time.Minute))
	first.Status.FinishedAt = ago(40 * time.Minute)
	return Facts{
		Upgrade: cgu, Cluster: "sno-50", Now: now,
		Records: []ranv1alpha1.ClusterGroupUpgradeBatch{
			first,
			record(2, 30*time.Minute, progress("sno-2", ranv1alpha1.ClusterCompleted, 20*time.Minute),
				progress("sno-3", ranv1alpha1.ClusterCompleted, 15*time.Minute), sno50),
			waiting(3, "sno-4"),
		},
		Policies: map[string]PolicyFacts{
			"platform":  {Namespace: "policies", Replica: replica("policies.platform", policyv1.Compliant, policyv1.Inform)},
			"operators": {Namespace: "policies", Replica: replica("policies.operators", policyv1.NonCompliant, policyv1.Enforce)},
		},
		NoClusterVersion: "its agent has not answered the view of its ClusterVersion yet",
		Events: []corev1.Event{
			{Type: "Normal", Reason: "CguStarted", Message: "ClusterGroupUpgrade upgrade: cluster sno-5 upgrade started", LastTimestamp: *ago(30 * time.Minute)},
			{Type: "Normal", Reason: "CguStarted", Message: "ClusterGroupUpgrade upgrade: cluster sno-50 upgrade started", LastTimestamp: *ago(30 * time.Minute)},
			{Type: "Normal", Reason: "CguStarted", Message: "ClusterGroupUpgrade upgrade: cluster sno-500 upgrade started", LastTimestamp: *ago(29 * time.Minute)},
			{Type: "Warning", Reason: "CguFailed", Message: "cluster sno-50.", EventTime: metav1.NewMicroTime(now.Add(-time.Minute))},
		},
	}
}

func duration(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

func TestTell(t *testing.T) {
	cases := map[string]struct {
		facts Facts
		check func(t *testing.T, s Story)
	}{
		"in progress on its second policy": {
			facts: rolloutFacts(working("operators")),
			check: func(t *testing.T, s Story) {
				equal(t, "batch", s.Batch, Batch{Index: 2, Of: 3, Current: 2, StartedAt: ago(30 * time.Minute)})
				equal(t, "state", s.State, ranv1alpha1.ClusterInProgress)
				equal(t, "since", s.Since, ago(10*time.Minute))
				equal(t, "policies", s.Policies, []Policy{
					{Name: "platform", Namespace: "policies", Placed: true, Compliance: "Compliant"},
					{Name: "operators", Namespace: "policies", Placed: true, Compliance: "NonCompliant", Enforced: true, Current: true},
				})
				equal(t, "waits for", s.WaitsFor, "operators to become Compliant (NonCompliant, enforced)")
				equal(t, "timing", s.Timing, Timing{InState: duration(10 * time.Minute), Started: ago(30 * time.Minute),
					Took: duration(30 * time.Minute), Running: true, Median: duration(15 * time.Minute), Completed: 3,
					Text: "working for 30m, from the start of batch 2; the 3 other clusters that completed took 15m at the median (this one: 2.0 times that)"})
				var messages []string
				for _, e := range s.Events {
					messages = append(messages, e.Message)
				}
				equal(t, "events", messages, []string{"cluster sno-50.", "ClusterGroupUpgrade upgrade: cluster sno-50 upgrade started"})
			},
		},
		"in progress, the rollout paused": {
			facts: func() Facts {
				f := rolloutFacts(working("platform"))
				f.Policies["platform"] = PolicyFacts{Namespace: "policies", Replica: replica("policies.platform", policyv1.NonCompliant, policyv1.Inform)}
				f.Upgrade.Status.Conditions = []metav1.Condition{{Type: ranv1alpha1.ConditionProgressing, Status: metav1.ConditionTrue,
					Reason: ranv1alpha1.ReasonPaused, Message: "Paused: clusters already working on a policy go on"}}
				return f
			}(),
			check: func(t *testing.T, s Story) {
				equal(t, "waits for", s.WaitsFor, "platform to become Compliant (NonCompliant, not enforced on the cluster yet); "+
					"then the rollout to be resumed (spec.paused) (Paused: clusters already working on a policy go on) before its next policy")
			},
		},
		"timed out on its first policy": {
			facts: func() Facts {
				c := progress("sno-50", ranv1alpha1.ClusterTimedOut, 5*time.Minute)
				c.CurrentPolicy = "platform"
				return rolloutFacts(c)
			}(),
			check: func(t *testing.T, s Story) {
				equal(t, "waits for", s.WaitsFor, "nothing: it timed out working on platform")
				equal(t, "current", []bool{s.Policies[0].Current, s.Policies[1].Current}, []bool{true, false})
				equal(t, "took", s.Timing.Took, duration(25*time.Minute))
				equal(t, "text", s.Timing.Text, "took 25m, from the start of batch 2 to its time-out; "+
					"the 3 other clusters that completed took 15m at the median (this one: 1.7 times that)")
			},
		},
		"held by another rollout": {
			facts: func() Facts {
				c := ranv1alpha1.ClusterProgress{Name: "sno-50", State: ranv1alpha1.ClusterPending, Reason: ranv1alpha1.ReasonWaitingForOtherUpgrade}
				f := rolloutFacts(c)
				f.Upgrade.Status.Conditions = []metav1.Condition{{Type: ranv1alpha1.ConditionProgressing, Status: metav1.ConditionTrue,
					Reason: ranv1alpha1.ReasonWaitingForOtherUpgrade, Message: "Cluster sno-50 is being remediated by ztp/platform-first"}}
				return f
			}(),
			check: func(t *testing.T, s Story) {
				want := "another ClusterGroupUpgrade is remediating this cluster: it starts once that one is done with it: " +
					"Cluster sno-50 is being remediated by ztp/platform-first"
				equal(t, "explanation", s.Explanation, want)
				equal(t, "waits for", s.WaitsFor, want)
				equal(t, "since", s.Since, (*metav1.Time)(nil))
				equal(t, "text", s.Timing.Text, "not started; the 3 other clusters that completed took 15m at the median")
			},
		},
		"held by the upgrade checks": {
			facts: func() Facts {
				c := progress("sno-50", ranv1alpha1.ClusterHeld, 5*time.Minute)
				c.Reason = "NotRecommended"
				f := rolloutFacts(c)
				f.Upgrade.Status.UpgradeChecks = &ranv1alpha1.UpgradeChecksStatus{Clusters: []ranv1alpha1.ClusterCheck{
					{Name: "sno-50", Outcome: "Hold", Reason: "NotRecommended", Message: "4.16.12 is exposed to SRIOVFirmware"}}}
				return f
			}(),
			check: func(t *testing.T, s Story) {
				equal(t, "explanation", s.Explanation, "the update service does not recommend the target for it "+
					"(a conditional-update risk applies): 4.16.12 is exposed to SRIOVFirmware")
				equal(t, "waits for", s.WaitsFor, "nothing: the upgrade checks held it, and it was never enforced")
				equal(t, "took", s.Timing.Took, (*metav1.Duration)(nil))
			},
		},
		"timed out before it started": {
			facts: func() Facts {
				c := progress("sno-50", ranv1alpha1.ClusterTimedOut, 5*time.Minute)
				c.CurrentPolicy, c.Reason = "platform", ranv1alpha1.ReasonHubCapacityReached
				return rolloutFacts(c)
			}(),
			check: func(t *testing.T, s Story) {
				equal(t, "waits for", s.WaitsFor, "nothing: it timed out before it started")
				equal(t, "current", []bool{s.Policies[0].Current, s.Policies[1].Current}, []bool{false, false})
				equal(t, "took", s.Timing.Took, (*metav1.Duration)(nil))
			},
		},
		"waiting for the hub's capacity": {
			facts: rolloutFacts(ranv1alpha1.ClusterProgress{Name: "sno-50", State: ranv1alpha1.ClusterPending, Reason: ranv1alpha1.ReasonHubCapacityReached}),
			check: func(t *testing.T, s Story) {
				equal(t, "waits for", s.WaitsFor, reasonWords[ranv1alpha1.ReasonHubCapacityReached])
			},
		},
		"completed faster than the median": {
			facts: rolloutFacts(progress("sno-50", ranv1alpha1.ClusterCompleted, 25*time.Minute)),
			check: func(t *testing.T, s Story) {
				equal(t, "waits for", s.WaitsFor, "nothing: it completed")
				equal(t, "current", []bool{s.Policies[0].Current, s.Policies[1].Current}, []bool{false, false})
				equal(t, "timing", s.Timing, Timing{InState: duration(25 * time.Minute), Started: ago(30 * time.Minute),
					Took: duration(5 * time.Minute), Median: duration(15 * time.Minute), Completed: 3,
					Text: "took 5m, from the start of batch 2 to its completion; the 3 other clusters that completed took 15m at the median (this one: 0.3 times that)"})
			},
		},
		"a stage's cluster counts from its own start": {
			facts: func() Facts {
				c := progress("sno-50", ranv1alpha1.ClusterCompleted, 5*time.Minute)
				c.StartedAt, c.Stage = ago(12*time.Minute), 2
				return rolloutFacts(c)
			}(),
			check: func(t *testing.T, s Story) {
				equal(t, "took", s.Timing.Took, duration(7*time.Minute))
				equal(t, "stage", s.Batch.Stage, 2)
				if !strings.HasPrefix(s.Timing.Text, "took 7m, from its own start to its completion;") {
					t.Errorf("text: %s", s.Timing.Text)
				}
			},
		},
		"in a batch not started": {
			facts: func() Facts {
				f := rolloutFacts(working("operators"))
				f.Cluster = "sno-4"
				f.Upgrade.Status.Waiting = &ranv1alpha1.WaitingStatus{Reason: ranv1alpha1.ReasonWaitingForApproval, Batch: 3}
				return f
			}(),
			check: func(t *testing.T, s Story) {
				equal(t, "state", s.State, ranv1alpha1.ClusterPending)
				equal(t, "waits for", s.WaitsFor, "batch 3 to start (the rollout is on batch 2); the rollout waits for an approval of the next batch (kubectl cgu approve)")
			},
		},
		"no view answer": {
			facts: rolloutFacts(working("operators")),
			check: func(t *testing.T, s Story) {
				equal(t, "spoke", s.Spoke, Spoke{Problem: "its agent has not answered the view of its ClusterVersion yet"})
			},
		},
		"no view kept without path validation": {
			facts: func() Facts {
				f := rolloutFacts(working("operators"))
				f.Upgrade.Spec.UpgradeChecks = nil
				return f
			}(),
			check: func(t *testing.T, s Story) {
				equal(t, "problem", s.Spoke.Problem, "the rollout keeps no view of its ClusterVersion (it makes one for spec.upgradeChecks.pathValidation only)")
			},
		},
		"the spoke's update": {
			facts: func() Facts {
				f := rolloutFacts(working("operators"))
				f.ClusterVersion = &configv1.ClusterVersion{Status: configv1.ClusterVersionStatus{
					Desired: configv1.Release{Version: "4.16.12"},
					History: []configv1.UpdateHistory{
						{State: configv1.PartialUpdate, Version: "4.16.12", StartedTime: *ago(9 * time.Minute)},
						{State: configv1.CompletedUpdate, Version: "4.16.10", StartedTime: *ago(100 * time.Hour), CompletionTime: ago(99 * time.Hour)},
					},
					Conditions: []configv1.ClusterOperatorStatusCondition{
						{Type: configv1.OperatorProgressing, Status: configv1.ConditionTrue, Message: "Working towards 4.16.12: 106 of 863 done (12% complete)"},
						{Type: "Failing", Status: configv1.ConditionFalse, Message: "ignored"},
					},
				}}
				return f
			}(),
			check: func(t *testing.T, s Story) {
				equal(t, "spoke", s.Spoke, Spoke{Answered: true, Desired: "4.16.12",
					Latest:      &Update{Version: "4.16.12", State: "Partial", StartedAt: *ago(9 * time.Minute)},
					Progressing: "Working towards 4.16.12: 106 of 863 done (12% complete)"})
			},
		},
		"pre-caching and backup states": {
			facts: func() Facts {
				f := rolloutFacts(working("operators"))
				f.Upgrade.Status.Precaching = &ranv1alpha1.PrecachingStatus{Status: map[string]string{"sno-50": "Succeeded"}}
				f.Upgrade.Status.Backup = &ranv1alpha1.BackupStatus{Status: map[string]string{"sno-1": "Succeeded"}}
				f.Upgrade.Status.Shortened = &ranv1alpha1.ShortenedStatus{BackupClustersNotShown: 40}
				return f
			}(),
			check: func(t *testing.T, s Story) {
				equal(t, "precache", s.Precache, "Succeeded")
				equal(t, "backup", s.Backup, "not listed: the status leaves out 40 clusters, those that succeeded first")
			},
		},
		"enforced through a copy": {
			facts: func() Facts {
				f := rolloutFacts(working("operators"))
				f.Upgrade.Status.Enforcement = ranv1alpha1.EnforcementCopy
				f.Policies["operators"] = PolicyFacts{Namespace: "policies", Replica: replica("policies.operators", policyv1.NonCompliant, policyv1.Inform),
					Bound: &Replica{Name: "ztp.upgrade-operators"}}
				return f
			}(),
			check: func(t *testing.T, s Story) {
				equal(t, "waits for", s.WaitsFor, "operators to become Compliant (NonCompliant, not enforced on the cluster yet)")
			},
		},
		"before the start": {
			facts: Facts{Cluster: "sno-2", Now: now, Upgrade: &ranv1alpha1.ClusterGroupUpgrade{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ztp", Name: "upgrade"},
				Status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotStarted,
					RemediationPlan: [][]string{{"sno-1"}, {"sno-2", "sno-3"}}, Plan: &ranv1alpha1.PlanSummary{Batches: 2, CanaryBatches: 1, Clusters: 3},
					Conditions: []metav1.Condition{{Type: ranv1alpha1.ConditionProgressing, Status: metav1.ConditionFalse,
						Reason: ranv1alpha1.ReasonNotEnabled, Message: "Not enabled: set spec.enable to true to start"}}},
			}},
			check: func(t *testing.T, s Story) {
				equal(t, "batch", s.Batch, Batch{Index: 2, Of: 2})
				equal(t, "state", s.State, ranv1alpha1.ClusterPending)
				equal(t, "waits for", s.WaitsFor, "spec.enable to be true (Not enabled: set spec.enable to true to start)")
				equal(t, "text", s.Timing.Text, "not started; no other cluster of the rollout has completed yet")
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := Tell(tc.facts)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, s)
		})
	}
}

func equal[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if g, w := jsonOf(t, got), jsonOf(t, want); g != w {
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

func TestTellAClusterNotSelected(t *testing.T) {
	cases := map[string]struct {
		facts Facts
		want  string
	}{
		"started": {
			facts: func() Facts {
				f := rolloutFacts(working("operators"))
				f.Cluster = "sno-51"
				return f
			}(),
			want: "ClusterGroupUpgrade ztp/upgrade does not select cluster sno-51: its plan has 5 clusters",
		},
		"not started": {
			facts: Facts{Cluster: "sno-9", Upgrade: &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "ztp", Name: "upgrade"},
				Status: ranv1alpha1.ClusterGroupUpgradeStatus{RemediationPlan: [][]string{{"sno-1"}}, Plan: &ranv1alpha1.PlanSummary{Clusters: 1}}}},
			want: "ClusterGroupUpgrade ztp/upgrade does not select cluster sno-9: its plan has 1 cluster",
		},
		"not started, the plan shortened": {
			facts: Facts{Cluster: "sno-900", Upgrade: &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "ztp", Name: "upgrade"},
				Status: ranv1alpha1.ClusterGroupUpgradeStatus{RemediationPlan: [][]string{{"sno-1"}, {"sno-2"}}, Plan: &ranv1alpha1.PlanSummary{Clusters: 3500},
					Shortened: &ranv1alpha1.ShortenedStatus{RemediationPlanClustersNotShown: 3498}}}},
			want: "cluster sno-900 is not among the 2 clusters the status of ClusterGroupUpgrade ztp/upgrade lists before its start " +
				"(its plan has 3500: kubectl cgu plan shows them all)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Tell(tc.facts)
			var notSelected *NotSelectedError
			if !errors.As(err, &notSelected) {
				t.Fatalf("Tell = %v, want a *NotSelectedError", err)
			}
			if err.Error() != tc.want {
				t.Errorf("error:\n got %s\nwant %s", err, tc.want)
			}
		})
	}
}

func TestNamesWord(t *testing.T) {
	cases := map[string]bool{
		"cluster sno-5 upgrade started":      true,
		"cluster sno-5.":                     true,
		"clusters (sno-5, sno-6)":            true,
		"sno-5":                              true,
		"cluster sno-50 upgrade started":     false,
		"cluster sno-5-b upgrade started":    false,
		"cluster sno-5.example.com":          false,
		"policy ztp.sno-5":                   false,
		"cluster xsno-5 and then sno-5 too":  true,
		"cluster my_sno-5":                   false,
		"cluster sno-5_b":                    false,
		"nothing about it":                   false,
		"cluster sno-5: compliant; sno-5000": true,
	}
	for text, want := range cases {
		if got := namesWord(text, "sno-5"); got != want {
			t.Errorf("namesWord(%q, sno-5) = %v, want %v", text, got, want)
		}
	}
}

func TestEventsAreBounded(t *testing.T) {
	var events []corev1.Event
	for i := range 30 {
		events = append(events, corev1.Event{Message: "cluster sno-1 did something", LastTimestamp: *ago(time.Duration(i) * time.Minute)})
	}
	got := eventsOf(events, "sno-1")
	if len(got) != EventLimit || !got[0].Time.Equal(now) || !got[EventLimit-1].Time.Equal(now.Add(-19*time.Minute)) {
		t.Errorf("eventsOf kept %d events, from %v to %v; want the %d newest", len(got), got[0].Time, got[len(got)-1].Time, EventLimit)
	}
	if got := eventsOf(nil, "sno-1"); got == nil || len(got) != 0 {
		t.Errorf("eventsOf(nil) = %#v, want an empty list (JSON [])", got)
	}
}

func TestMedianOf(t *testing.T) {
	cases := map[string]struct {
		in   []time.Duration
		want time.Duration
	}{
		"one":  {[]time.Duration{time.Minute}, time.Minute},
		"odd":  {[]time.Duration{3 * time.Minute, time.Minute, 2 * time.Minute}, 2 * time.Minute},
		"even": {[]time.Duration{4 * time.Minute, time.Minute, 2 * time.Minute, 3 * time.Minute}, 150 * time.Second},
	}
	for name, tc := range cases {
		if got := medianOf(tc.in); got != tc.want {
			t.Errorf("%s: medianOf = %v, want %v", name, got, tc.want)
		}
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
