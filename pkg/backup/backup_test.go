package backup

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/backup/recovery"
)

func TestOf(t *testing.T) {
	done := &recovery.Summary{Phase: recovery.PhaseSucceeded}
	noRoom := &recovery.Summary{Phase: recovery.PhaseFailed, Error: "insufficient disk space in /var/recovery"}
	retrying := &recovery.Summary{Phase: recovery.PhaseFailed, Error: "etcdctl: timeout", Retryable: true}
	saving := &recovery.Summary{Phase: recovery.PhaseSaving}
	for name, tc := range map[string]struct {
		o      Observation
		past   bool
		state  State
		reason string
	}{
		"nothing asked":                     {state: PreparingToStart},
		"asked":                             {o: Observation{Requested: true}, state: Starting},
		"running":                           {o: Observation{Requested: true, Running: true}, state: Active},
		"saving":                            {o: Observation{Requested: true, Summary: saving}, state: Active},
		"a failure another attempt may fix": {o: Observation{Requested: true, Running: true, Summary: retrying}, state: Active},
		"done":                              {o: Observation{Summary: done}, state: Succeeded},
		"done, late":                        {o: Observation{Summary: done}, past: true, state: Succeeded},
		"no room":                           {o: Observation{Summary: noRoom}, state: Error, reason: "insufficient disk space"},
		"the Job failed":                    {o: Observation{Failed: "BackoffLimitExceeded"}, state: Error, reason: "BackoffLimitExceeded"},
		"past its deadline":                 {o: Observation{Failed: "DeadlineExceeded", DeadlineExceeded: true}, state: Timeout, reason: "deadline"},
		"past the overall timeout":          {o: Observation{Requested: true, Running: true}, past: true, state: Timeout, reason: "did not end within 20m0s"},
	} {
		state, reason := Of(tc.o, tc.past)
		if state != tc.state || !strings.Contains(reason, tc.reason) {
			t.Errorf("%s: %s %q, want %s with %q", name, state, reason, tc.state, tc.reason)
		}
	}
}

func TestCondition(t *testing.T) {
	for name, tc := range map[string]struct {
		states map[string]State
		status metav1.ConditionStatus
		reason string
	}{
		"all succeeded":   {states: map[string]State{"a": Succeeded, "b": Succeeded}, status: metav1.ConditionTrue, reason: ranv1alpha1.ReasonBackupCompleted},
		"some failed":     {states: map[string]State{"a": Succeeded, "b": Timeout, "c": Error}, status: metav1.ConditionTrue, reason: ranv1alpha1.ReasonPartiallyDone},
		"all failed":      {states: map[string]State{"a": Timeout, "b": Error}, status: metav1.ConditionFalse, reason: ranv1alpha1.ReasonBackupFailed},
		"one still going": {states: map[string]State{"a": Succeeded, "b": Active}, status: metav1.ConditionFalse, reason: ranv1alpha1.ReasonInProgress},
		"not started":     {states: map[string]State{"a": PreparingToStart}, status: metav1.ConditionFalse, reason: ranv1alpha1.ReasonInProgress},
	} {
		status, reason, message := Condition(tc.states)
		if status != tc.status || reason != tc.reason || message == "" {
			t.Errorf("%s: %s %s %q", name, status, reason, message)
		}
	}
	if _, _, m := Condition(map[string]State{"a": Succeeded, "b": Timeout, "c": Error}); m != "Backup completed on 1 of 3 clusters; the 2 others failed or timed out and leave the plan" {
		t.Errorf("message %q", m)
	}
}

func TestLeaving(t *testing.T) {
	states := map[string]State{"a": Succeeded, "b": Timeout, "c": Error, "d": Active}
	if got := Leaving([]string{"d", "c", "b", "a"}, states); !slices.Equal(got, []string{"c", "b"}) {
		t.Errorf("leaving %v", got)
	}
}
