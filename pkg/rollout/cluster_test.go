package rollout

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

var (
	t0       = time.Date(2026, 11, 21, 2, 0, 0, 0, time.UTC)
	deadline = t0.Add(time.Hour)
)

func at(d time.Duration) time.Time { return t0.Add(d) }

func ptrTime(t time.Time) *time.Time { return &t }

const (
	pending    = ranv1alpha1.ClusterPending
	inProgress = ranv1alpha1.ClusterInProgress
	completed  = ranv1alpha1.ClusterCompleted
	timedOut   = ranv1alpha1.ClusterTimedOut
	failed     = ranv1alpha1.ClusterFailed
)

func TestStep(t *testing.T) {
	compliant, notYet := Policy{Compliant: true}, Policy{}
	soaking := Policy{Compliant: true, Soak: 10 * time.Minute}
	bestEffort := Policy{SoftTimeout: 20 * time.Minute}
	cases := map[string]struct {
		from     Cluster
		policies []Policy
		now      time.Time
		want     Cluster
		wantWake time.Time
	}{
		"a cluster fails on a policy it cannot comply with": {
			from: Cluster{State: inProgress, Policy: 0, Since: t0}, policies: []Policy{compliant, {Failed: "ManifestWorkDegraded"}},
			now: at(time.Minute), want: Cluster{State: failed, Policy: 1, Since: at(time.Minute), Reason: "ManifestWorkDegraded"},
		},
		"a failing later policy does not fail a cluster before it gets there": {
			from: Cluster{State: inProgress, Policy: 0, Since: t0}, policies: []Policy{notYet, {Failed: "ManifestWorkDegraded"}},
			now: at(time.Minute), want: Cluster{State: inProgress, Policy: 0, Since: t0}, wantWake: deadline,
		},
		"a pending cluster starts at its first policy": {
			from: Cluster{State: pending}, policies: []Policy{notYet, notYet}, now: t0,
			want: Cluster{State: inProgress, Policy: 0, Since: t0}, wantWake: deadline,
		},
		"a pending cluster skips policies it already complies with": {
			from: Cluster{State: pending}, policies: []Policy{compliant, notYet}, now: t0,
			want: Cluster{State: inProgress, Policy: 1, Since: t0}, wantWake: deadline,
		},
		"a cluster compliant with everything completes at once": {
			from: Cluster{State: pending}, policies: []Policy{compliant, compliant}, now: t0,
			want: Cluster{State: completed, Policy: 2, Since: t0},
		},
		"a cluster waits while its policy is not compliant": {
			from:     Cluster{State: inProgress, Policy: 1, Since: at(5 * time.Minute)},
			policies: []Policy{compliant, notYet}, now: at(20 * time.Minute),
			want: Cluster{State: inProgress, Policy: 1, Since: at(5 * time.Minute)}, wantWake: deadline,
		},
		"a compliant policy moves the cluster to the next": {
			from:     Cluster{State: inProgress, Policy: 0, Since: t0},
			policies: []Policy{compliant, notYet}, now: at(20 * time.Minute),
			want: Cluster{State: inProgress, Policy: 1, Since: at(20 * time.Minute)}, wantWake: deadline,
		},
		"the last compliant policy completes the cluster": {
			from:     Cluster{State: inProgress, Policy: 1, Since: t0},
			policies: []Policy{compliant, compliant}, now: at(30 * time.Minute),
			want: Cluster{State: completed, Policy: 2, Since: at(30 * time.Minute)},
		},
		"a soaking policy holds the cluster until the soak ends": {
			from:     Cluster{State: inProgress, Policy: 0, Since: t0},
			policies: []Policy{soaking, notYet}, now: at(20 * time.Minute),
			want:     Cluster{State: inProgress, Policy: 0, Since: t0, CompliantSince: ptrTime(at(20 * time.Minute))},
			wantWake: at(30 * time.Minute),
		},
		"a soaked policy lets the cluster move on": {
			from:     Cluster{State: inProgress, Policy: 0, Since: t0, CompliantSince: ptrTime(at(20 * time.Minute))},
			policies: []Policy{soaking, notYet}, now: at(30 * time.Minute),
			want: Cluster{State: inProgress, Policy: 1, Since: at(30 * time.Minute)}, wantWake: deadline,
		},
		"a policy that turns non-compliant while soaking starts the soak over": {
			from:     Cluster{State: inProgress, Policy: 0, Since: t0, CompliantSince: ptrTime(at(20 * time.Minute))},
			policies: []Policy{{Soak: 10 * time.Minute}}, now: at(25 * time.Minute),
			want: Cluster{State: inProgress, Policy: 0, Since: t0}, wantWake: deadline,
		},
		"a soak ending after the deadline wakes at the deadline": {
			from:     Cluster{State: inProgress, Policy: 0, Since: t0},
			policies: []Policy{soaking}, now: at(55 * time.Minute),
			want:     Cluster{State: inProgress, Policy: 0, Since: t0, CompliantSince: ptrTime(at(55 * time.Minute))},
			wantWake: deadline,
		},
		"a cluster not done at the deadline times out": {
			from:     Cluster{State: inProgress, Policy: 1, Since: t0},
			policies: []Policy{compliant, notYet}, now: deadline,
			want: Cluster{State: timedOut, Policy: 1, Since: deadline},
		},
		"a cluster done at the deadline completes rather than times out": {
			from:     Cluster{State: inProgress, Policy: 1, Since: t0},
			policies: []Policy{compliant, compliant}, now: deadline,
			want: Cluster{State: completed, Policy: 2, Since: deadline},
		},
		"a timed-out cluster stays timed out even once compliant": {
			from:     Cluster{State: timedOut, Policy: 1, Since: deadline},
			policies: []Policy{compliant, compliant}, now: deadline.Add(time.Hour),
			want: Cluster{State: timedOut, Policy: 1, Since: deadline},
		},
		"a failed cluster stays failed": {
			from: Cluster{State: failed, Since: t0}, policies: []Policy{compliant}, now: at(time.Minute),
			want: Cluster{State: failed, Since: t0},
		},
		"a cluster with no policy completes": {
			from: Cluster{State: pending}, now: t0,
			want: Cluster{State: completed, Since: t0},
		},
		"a best-effort policy not compliant waits until its soft timeout": {
			from:     Cluster{State: inProgress, Policy: 0, Since: t0},
			policies: []Policy{bestEffort, notYet}, now: at(10 * time.Minute),
			want: Cluster{State: inProgress, Policy: 0, Since: t0}, wantWake: at(20 * time.Minute),
		},
		"a best-effort policy compliant in time moves the cluster on, noting nothing": {
			from:     Cluster{State: inProgress, Policy: 0, Since: t0},
			policies: []Policy{{Compliant: true, SoftTimeout: 20 * time.Minute}, notYet}, now: at(10 * time.Minute),
			want: Cluster{State: inProgress, Policy: 1, Since: at(10 * time.Minute)}, wantWake: deadline,
		},
		"a best-effort policy past its soft timeout is noted and the cluster moves on": {
			from:     Cluster{State: inProgress, Policy: 0, Since: t0},
			policies: []Policy{bestEffort, notYet}, now: at(20 * time.Minute),
			want: Cluster{State: inProgress, Policy: 1, Since: at(20 * time.Minute), SoftTimedOut: []int{0}}, wantWake: deadline,
		},
		"a cluster past a best-effort policy completes, keeping the note": {
			from:     Cluster{State: inProgress, Policy: 1, Since: t0, SoftTimedOut: []int{0}},
			policies: []Policy{bestEffort, compliant}, now: at(30 * time.Minute),
			want: Cluster{State: completed, Policy: 2, Since: at(30 * time.Minute), SoftTimedOut: []int{0}},
		},
		"a soft timeout after the deadline: the cluster times out at the deadline": {
			from:     Cluster{State: inProgress, Policy: 0, Since: at(50 * time.Minute)},
			policies: []Policy{bestEffort, notYet}, now: deadline,
			want: Cluster{State: timedOut, Policy: 0, Since: deadline},
		},
		"a soft timeout ending after the deadline wakes at the deadline": {
			from:     Cluster{State: inProgress, Policy: 0, Since: at(50 * time.Minute)},
			policies: []Policy{bestEffort, notYet}, now: at(55 * time.Minute),
			want: Cluster{State: inProgress, Policy: 0, Since: at(50 * time.Minute)}, wantWake: deadline,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, wake := Step(tc.from, tc.policies, tc.now, deadline)
			if !equalCluster(got, tc.want) || !wake.Equal(tc.wantWake) {
				t.Fatalf("got %s wake %v,\nwant %s wake %v", describe(got), wake, describe(tc.want), tc.wantWake)
			}
		})
	}
}

func equalCluster(a, b Cluster) bool {
	sameSoak := (a.CompliantSince == nil) == (b.CompliantSince == nil) &&
		(a.CompliantSince == nil || a.CompliantSince.Equal(*b.CompliantSince))
	return a.State == b.State && a.Policy == b.Policy && a.Since.Equal(b.Since) && sameSoak && slices.Equal(a.SoftTimedOut, b.SoftTimedOut)
}

func describe(c Cluster) string {
	s := string(c.State) + " policy " + string(rune('0'+c.Policy)) + " since " + c.Since.Format("15:04")
	if c.CompliantSince != nil {
		s += " compliant since " + c.CompliantSince.Format("15:04")
	}
	if len(c.SoftTimedOut) > 0 {
		s += fmt.Sprintf(" soft timed out %v", c.SoftTimedOut)
	}
	return s
}

func TestDone(t *testing.T) {
	p := map[string]policyv1.ComplianceState{"sno-1": policyv1.Compliant, "sno-2": policyv1.NonCompliant}
	cases := map[string]struct {
		compliance map[string]policyv1.ComplianceState
		cluster    string
		elsewhere  bool
		want       bool
	}{
		"compliant":     {p, "sno-1", true, true},
		"non-compliant": {p, "sno-2", true, false},
		"not placed here, placed on another policy": {p, "sno-3", true, true},
		"listed nowhere: deleted or unreachable":    {p, "sno-3", false, false},
		"a policy not evaluated yet":                {nil, "sno-1", true, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Done(tc.compliance, tc.cluster, tc.elsewhere); got != tc.want {
				t.Fatalf("Done = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFactsPolicies(t *testing.T) {
	f := Facts{Policies: []PolicyFacts{
		{Compliance: map[string]policyv1.ComplianceState{"a": policyv1.Compliant, "b": policyv1.NonCompliant}, Soak: time.Minute},
		{Compliance: map[string]policyv1.ComplianceState{"b": policyv1.Compliant}, Soak: time.Hour, SoftTimeout: time.Minute},
		{Step: true, Done: map[string]bool{"a": true}, Failed: map[string]string{"b": "ManifestWorkDegraded"}},
		{}, // a managed policy deleted since the start
	}}
	cases := map[string][]Policy{
		// a is not placed on the second policy: done with it at once, without its soak.
		"a": {{Compliant: true, Soak: time.Minute}, {Compliant: true}, {Compliant: true}, {}},
		"b": {{Soak: time.Minute}, {Compliant: true, Soak: time.Hour, SoftTimeout: time.Minute}, {Failed: "ManifestWorkDegraded"}, {}},
		// c is in no policy's status (deleted, unreachable): never done.
		"c": {{}, {}, {}, {}},
	}
	for cluster, want := range cases {
		if got := f.policies(cluster); !slices.Equal(got, want) {
			t.Errorf("%s: %+v, want %+v", cluster, got, want)
		}
	}
}

// policies reads each policy's compliance once per cluster; what it says of compliance must
// be Done's rule, with "listed elsewhere" meaning some managed policy's status lists the
// cluster.
func TestFactsPoliciesFollowDone(t *testing.T) {
	states := []policyv1.ComplianceState{policyv1.Compliant, policyv1.NonCompliant, policyv1.Pending, ""}
	clusters := []string{"a", "b", "c"}
	rng := rand.New(rand.NewPCG(36, 1))
	for range 2000 {
		f := Facts{Policies: make([]PolicyFacts, 1+rng.IntN(4))}
		for i := range f.Policies {
			if rng.IntN(4) == 0 {
				continue // not evaluated yet, or deleted
			}
			f.Policies[i].Compliance = map[string]policyv1.ComplianceState{}
			for _, c := range clusters {
				if rng.IntN(3) > 0 {
					f.Policies[i].Compliance[c] = states[rng.IntN(len(states))]
				}
			}
		}
		for _, c := range clusters {
			listed := slices.ContainsFunc(f.Policies, func(p PolicyFacts) bool { _, ok := p.Compliance[c]; return ok })
			got := f.policies(c)
			for i, p := range f.Policies {
				if want := Done(p.Compliance, c, listed); got[i].Compliant != want {
					t.Fatalf("cluster %s, policy %d of %+v: Compliant %v, Done says %v", c, i, f.Policies, got[i].Compliant, want)
				}
			}
		}
	}
}
