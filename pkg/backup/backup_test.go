package backup

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/backup/recovery"
	"github.com/cgu-operator/cgu-operator/pkg/prestart"
)

// A cluster's backup as the hub sees its Job and the program's summary.
func TestObserved(t *testing.T) {
	done := &recovery.Summary{Phase: recovery.PhaseSucceeded}
	noRoom := &recovery.Summary{Phase: recovery.PhaseFailed, Error: "insufficient disk space in /var/recovery"}
	retrying := &recovery.Summary{Phase: recovery.PhaseFailed, Error: "etcdctl: timeout", Retryable: true}
	saving := &recovery.Summary{Phase: recovery.PhaseSaving}
	asked, running := prestart.Observation{Requested: true}, prestart.Observation{Requested: true, Running: true}
	for name, tc := range map[string]struct {
		o      prestart.Observation
		sum    *recovery.Summary
		past   bool
		state  prestart.State
		reason string
	}{
		"nothing asked":                     {state: prestart.NotStarted},
		"asked":                             {o: asked, state: prestart.Starting},
		"running":                           {o: running, state: prestart.Active},
		"saving":                            {o: asked, sum: saving, state: prestart.Active},
		"a failure another attempt may fix": {o: running, sum: retrying, state: prestart.Active},
		"done":                              {sum: done, state: prestart.Succeeded},
		"done, late":                        {sum: done, past: true, state: prestart.Succeeded},
		"done, with a note":                 {sum: &recovery.Summary{Phase: recovery.PhaseSucceeded, Note: "a restore runs"}, state: prestart.Succeeded, reason: "a restore runs"},
		"no room":                           {sum: noRoom, state: prestart.Failed, reason: "insufficient disk space"},
		"the Job failed":                    {o: prestart.Observation{Failed: "BackoffLimitExceeded"}, state: prestart.Failed, reason: "BackoffLimitExceeded"},
		"past its deadline":                 {o: prestart.Observation{Failed: "DeadlineExceeded", DeadlineExceeded: true}, state: prestart.Timeout, reason: "deadline (8m0s)"},
		"past the overall timeout":          {o: running, past: true, state: prestart.Timeout, reason: "did not end within 20m0s"},
	} {
		state, reason := Kind.Of(Observed(tc.o, tc.sum), tc.past)
		if state != tc.state || !strings.Contains(reason, tc.reason) {
			t.Errorf("%s: %s %q, want %s with %q", name, state, reason, tc.state, tc.reason)
		}
	}
}

// The backup in TALM's words and reasons.
func TestKind(t *testing.T) {
	for name, tc := range map[string]struct {
		states map[string]prestart.State
		status metav1.ConditionStatus
		reason string
	}{
		"all succeeded":   {states: map[string]prestart.State{"a": prestart.Succeeded}, status: metav1.ConditionTrue, reason: ranv1alpha1.ReasonBackupCompleted},
		"all failed":      {states: map[string]prestart.State{"a": prestart.Timeout, "b": prestart.Failed}, status: metav1.ConditionFalse, reason: ranv1alpha1.ReasonBackupFailed},
		"one still going": {states: map[string]prestart.State{"a": prestart.Succeeded, "b": prestart.Active}, status: metav1.ConditionFalse, reason: ranv1alpha1.ReasonInProgress},
	} {
		status, reason, message := Kind.Condition(tc.states)
		if status != tc.status || reason != tc.reason || message == "" {
			t.Errorf("%s: %s %s %q", name, status, reason, message)
		}
	}
	if _, _, m := Kind.Condition(map[string]prestart.State{"a": prestart.Succeeded, "b": prestart.Timeout, "c": prestart.Failed}); m != "Backup completed on 1 of 3 clusters; the 2 others failed or timed out and leave the plan" {
		t.Errorf("message %q", m)
	}
	if _, _, m := Kind.Condition(map[string]prestart.State{"a": prestart.Active}); m != "Backup in progress: 0 of 1 clusters done" {
		t.Errorf("message %q", m)
	}
	words := map[prestart.State]string{prestart.NotStarted: "PreparingToStart", prestart.Starting: "Starting", prestart.Active: "Active",
		prestart.Succeeded: "Succeeded", prestart.Timeout: "BackupTimeout", prestart.Failed: "UnrecoverableError"}
	for s, w := range words {
		if Kind.Word(s) != w || Kind.StateOf(w) != s {
			t.Errorf("%s: TALM's word is %q, got %q", s, w, Kind.Word(s))
		}
	}
}
