package precache

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

func TestOf(t *testing.T) {
	cases := []struct {
		name string
		o    Observation
		want State
	}{
		{"nothing asked", Observation{}, NotStarted},
		{"asked, not running yet", Observation{Requested: true}, Starting},
		{"running", Observation{Requested: true, Running: true}, Active},
		{"a progress summary", Observation{Requested: true, Summary: &Summary{Phase: PhasePulling}}, Active},
		{"succeeded", Observation{Requested: true, Summary: &Summary{Phase: PhaseSucceeded}}, Succeeded},
		{"the Job failed", Observation{Requested: true, Failed: "BackoffLimitExceeded"}, Failed},
		{"past its deadline", Observation{Requested: true, Failed: "DeadlineExceeded", DeadlineExceeded: true}, Timeout},
		{"an unrecoverable summary", Observation{Requested: true, Summary: &Summary{Phase: PhaseFailed, Error: "no such image"}}, Failed},
		{"a retryable summary: the Job retries", Observation{Requested: true, Summary: &Summary{Phase: PhaseFailed, Retryable: true}}, Active},
		{"a success outranks a stale failure", Observation{Failed: "x", Summary: &Summary{Phase: PhaseSucceeded}}, Succeeded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, reason := Of(tc.o)
			if got != tc.want {
				t.Fatalf("Of = %s (%q), want %s", got, reason, tc.want)
			}
			if (got == Failed || got == Timeout) && reason == "" {
				t.Fatalf("a %s state without a reason", got)
			}
		})
	}
}

func TestToStartHonoursTheCap(t *testing.T) {
	order := []string{"a", "b", "c", "d"}
	states := map[string]State{"a": Active, "b": NotStarted, "c": Succeeded, "d": NotStarted}
	cases := []struct {
		running, limit int
		want           string
	}{
		{1, 0, "[b d]"},
		{1, 2, "[b]"},
		{2, 2, "[]"},
		{0, 5, "[b d]"},
	}
	for _, tc := range cases {
		got := ToStart(order, states, tc.running, tc.limit)
		if s := fmt.Sprint(got); s != tc.want {
			t.Fatalf("running %d limit %d: got %v, want %s", tc.running, tc.limit, got, tc.want)
		}
	}
}

func TestCondition(t *testing.T) {
	cases := []struct {
		states map[string]State
		status metav1.ConditionStatus
		reason string
	}{
		{map[string]State{"a": Succeeded, "b": Succeeded}, metav1.ConditionTrue, ranv1alpha1.ReasonPrecachingCompleted},
		{map[string]State{"a": Succeeded, "b": Timeout}, metav1.ConditionTrue, ranv1alpha1.ReasonPartiallyDone},
		{map[string]State{"a": Failed, "b": Timeout}, metav1.ConditionFalse, ranv1alpha1.ReasonPrecachingFailed},
		{map[string]State{"a": Succeeded, "b": Active}, metav1.ConditionFalse, ranv1alpha1.ReasonInProgress},
		{map[string]State{}, metav1.ConditionFalse, ranv1alpha1.ReasonInProgress},
	}
	for _, tc := range cases {
		status, reason, msg := Condition(tc.states)
		if status != tc.status || reason != tc.reason || msg == "" {
			t.Fatalf("%v: got %s/%s %q, want %s/%s", tc.states, status, reason, msg, tc.status, tc.reason)
		}
	}
	counts := Counts(map[string]State{"a": Succeeded, "b": Succeeded, "c": Failed})
	if len(counts) != len(States) || counts["Succeeded"] != 2 || counts["Failed"] != 1 || counts["NotStarted"] != 0 {
		t.Fatalf("counts %v", counts)
	}
	if got := Leaving([]string{"a", "b", "c"}, map[string]State{"a": Failed, "b": Succeeded, "c": Timeout}); fmt.Sprint(got) != "[a c]" {
		t.Fatalf("leaving %v, want [a c]", got)
	}
}
