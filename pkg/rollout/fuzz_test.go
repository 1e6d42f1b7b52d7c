package rollout

import (
	"testing"
	"time"

	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

// FuzzDecide runs whole rollouts on hostile facts, in every mode: batch sizes, timeouts and
// gates at their extremes (negative, zero, huge), clusters whose compliance flips at every
// step, the clock jumping by any amount. Decide never panics, always answers a known state
// with a reason, counts no more clusters than the plan holds, and a finished rollout never
// runs a batch again.
func FuzzDecide(f *testing.F) {
	f.Add(uint8(5), 2, 240, int64(time.Minute), []byte{1, 0, 1, 1, 0, 1}, int64(0), -1, false, "Abort", uint8(0))
	f.Add(uint8(1), 0, 0, int64(0), []byte{}, int64(time.Hour), 0, true, "", uint8(1))
	f.Add(uint8(30), -7, 5256000, int64(1<<62), []byte{255, 3, 7}, int64(-time.Hour), 1<<40, false, "Continue", uint8(2))
	f.Add(uint8(3), 1<<62, -1, int64(-1), []byte{0}, int64(1<<62), -5, true, "Abort", uint8(3))
	f.Add(uint8(25), 8, 600, int64(10*time.Minute), []byte{1, 255, 0, 1, 1, 255}, int64(0), 2, false, "Continue", uint8(0x86))
	f.Fuzz(func(t *testing.T, clusters uint8, maxConcurrency, timeoutMinutes int, step int64, compliance []byte,
		soak int64, maxFailures int, paused bool, action string, mode uint8) {
		names := make([]string, int(clusters)%40)
		for i := range names {
			names[i] = string(rune('a'+i%26)) + string(rune('a'+i/26))
		}
		var canaries []string
		if len(names) > 2 {
			canaries = names[:1]
		}
		in := planInput(names, canaries, maxConcurrency, mode)
		p, err := plan.Build(in)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
		// The first policy is a managed one, whose soak the input sets; the second a step,
		// which may be degraded. Each round moves the compliance on.
		policies := func(round int) []PolicyFacts {
			out := []PolicyFacts{{Compliance: map[string]policyv1.ComplianceState{}},
				{Step: true, Done: map[string]bool{}, Failed: map[string]string{}}}
			if len(compliance) == 0 {
				return out
			}
			out[0].Soak = time.Duration(compliance[round%len(compliance)]>>4) * time.Second
			for _, c := range names {
				out[0].Compliance[c] = policyv1.NonCompliant
				if compliance[(round+len(c))%len(compliance)]&1 == 1 {
					out[0].Compliance[c] = policyv1.Compliant
				}
				b := compliance[(round+len(c)+1)%len(compliance)]
				out[1].Done[c] = b&1 == 1
				if b == 0xff {
					out[1].Done[c], out[1].Failed[c] = false, "Degraded"
				}
			}
			return out
		}
		budget := maxFailures
		facts := Facts{Enabled: true, Plan: p, TimeoutMinutes: timeoutMinutes, Abort: action == "Abort",
			Gates: Gates{Paused: paused, BatchSoak: time.Duration(soak), MaxFailures: &budget, ClusterDeadline: time.Duration(step)}}
		finished := false
		for round := range 60 {
			facts.Now, facts.Policies = now, policies(round)
			d := Decide(facts)
			checkDecision(t, round, d, p.Clusters())
			if finished && !d.Progress.Finished {
				t.Fatalf("round %d: a finished rollout runs again: %+v", round, d)
			}
			finished = d.Progress.Finished
			if d.State == ranv1alpha1.StateCompleted {
				return // the controller looks no further
			}
			facts.Progress = d.Progress
			if round == 10 {
				facts.Gates.Paused = false
			}
			// The clock jumps by step, saturating rather than wrapping.
			if next := now.Add(time.Duration(step)); next.After(now) {
				now = next
			} else {
				now = now.Add(time.Minute)
			}
		}
	})
}

// planInput is the plan of a fuzzed rollout: mode picks the batches, a window, or stages
// growing by a factor or through steps, sent back or stopped by an unhealthy stage.
func planInput(names, canaries []string, maxConcurrency int, mode uint8) plan.Input {
	in := plan.Input{Clusters: names, Canaries: canaries, MaxConcurrency: maxConcurrency}
	switch mode % 4 {
	case 1:
		in.Window = true
	case 2:
		in.Progressive = &plan.Growth{Factor: int(mode>>2) % 5, Stop: mode&0x80 != 0}
	case 3:
		in.Progressive = &plan.Growth{Steps: []plan.Step{{Count: int(mode>>2) % 9}, {Percent: 30}}, Stop: mode&0x80 != 0}
	}
	return in
}

// checkDecision checks that a decision has a known state, a reason, and counts no more
// clusters than the plan holds.
func checkDecision(t *testing.T, round int, d Decision, clusters int) {
	t.Helper()
	switch d.State {
	case ranv1alpha1.StateNotStarted, ranv1alpha1.StateCannotStart, ranv1alpha1.StateNotCompleted,
		ranv1alpha1.StateTimedOut, ranv1alpha1.StateCompleted:
	default:
		t.Fatalf("round %d: unknown state %+v", round, d)
	}
	if d.Reason == "" {
		t.Fatalf("round %d: no reason in %+v", round, d)
	}
	if n := d.Progress.Done; n.Completed+n.TimedOut+n.Failed+n.Held > clusters {
		t.Fatalf("round %d: counts %+v for %d clusters", round, n, clusters)
	}
}
