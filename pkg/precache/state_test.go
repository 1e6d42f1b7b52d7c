package precache

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/prestart"
)

// A cluster's pre-caching as the hub sees its Job and the program's summary.
func TestObserved(t *testing.T) {
	requested := prestart.Observation{Requested: true}
	cases := []struct {
		name string
		o    prestart.Observation
		sum  *Summary
		want prestart.State
	}{
		{"nothing asked", prestart.Observation{}, nil, prestart.NotStarted},
		{"asked, not running yet", requested, nil, prestart.Starting},
		{"running", prestart.Observation{Requested: true, Running: true}, nil, prestart.Active},
		{"a progress summary", requested, &Summary{Phase: PhasePulling}, prestart.Active},
		{"succeeded", requested, &Summary{Phase: PhaseSucceeded}, prestart.Succeeded},
		{"the Job failed", prestart.Observation{Requested: true, Failed: "BackoffLimitExceeded"}, nil, prestart.Failed},
		{"past its deadline", prestart.Observation{Requested: true, Failed: "DeadlineExceeded", DeadlineExceeded: true}, nil, prestart.Timeout},
		{"an unrecoverable summary", requested, &Summary{Phase: PhaseFailed, Error: "no such image"}, prestart.Failed},
		{"a retryable summary: the Job retries", requested, &Summary{Phase: PhaseFailed, Retryable: true}, prestart.Active},
		{"a success outranks a stale failure", prestart.Observation{Failed: "x"}, &Summary{Phase: PhaseSucceeded}, prestart.Succeeded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, reason := Kind.Of(Observed(tc.o, tc.sum), false)
			if got != tc.want {
				t.Fatalf("got %s (%q), want %s", got, reason, tc.want)
			}
			if (got == prestart.Failed || got == prestart.Timeout) && reason == "" {
				t.Fatalf("a %s state without a reason", got)
			}
		})
	}
}

// Pre-caching in TALM's words and reasons.
func TestKind(t *testing.T) {
	for _, tc := range []struct {
		states          map[string]prestart.State
		status          metav1.ConditionStatus
		reason, message string
	}{
		{map[string]prestart.State{"a": prestart.Succeeded, "b": prestart.Succeeded}, metav1.ConditionTrue, ranv1alpha1.ReasonPrecachingCompleted,
			"Pre-caching completed on all 2 clusters"},
		{map[string]prestart.State{"a": prestart.Failed, "b": prestart.Timeout}, metav1.ConditionFalse, ranv1alpha1.ReasonPrecachingFailed,
			"Pre-caching failed or timed out on all 2 clusters"},
		{map[string]prestart.State{"a": prestart.Succeeded, "b": prestart.Active}, metav1.ConditionFalse, ranv1alpha1.ReasonInProgress,
			"Pre-caching: 1 of 2 clusters done"},
	} {
		status, reason, message := Kind.Condition(tc.states)
		if status != tc.status || reason != tc.reason || message != tc.message {
			t.Errorf("%v: got %s/%s %q", tc.states, status, reason, message)
		}
	}
	words := map[prestart.State]string{prestart.NotStarted: "NotStarted", prestart.Starting: "Starting", prestart.Active: "Active",
		prestart.Succeeded: "Succeeded", prestart.Timeout: "PrecacheTimeout", prestart.Failed: "UnrecoverableError"}
	for s, w := range words {
		if Kind.Word(s) != w {
			t.Errorf("%s: TALM's word is %q, got %q", s, w, Kind.Word(s))
		}
	}
}
