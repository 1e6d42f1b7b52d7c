package backup

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/prestart"
)

// The reasons of a backup that failed or timed out.
func TestReason(t *testing.T) {
	for name, tc := range map[string]struct {
		state  prestart.State
		detail string
		past   bool
		reason string
	}{
		"the Job failed":           {state: prestart.Failed, reason: "the backup Job failed"},
		"a view failed":            {state: prestart.Failed, detail: "the view of the Job backup-agent: forbidden", reason: "forbidden"},
		"past its deadline":        {state: prestart.Timeout, reason: "deadline (8m0s)"},
		"past the overall timeout": {state: prestart.Timeout, past: true, reason: "did not end within 20m0s"},
		"succeeded":                {state: prestart.Succeeded},
	} {
		reason := Kind.Reason(tc.state, tc.detail, tc.past)
		if !strings.Contains(reason, tc.reason) || (tc.reason == "") != (reason == "") {
			t.Errorf("%s: %q, want %q", name, reason, tc.reason)
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
	words := map[prestart.State]string{prestart.NotStarted: "NotStarted", prestart.Preparing: "PreparingToStart", prestart.Starting: "Starting", prestart.Active: "Active",
		prestart.Succeeded: "Succeeded", prestart.Timeout: "BackupTimeout", prestart.Failed: "UnrecoverableError"}
	for s, w := range words {
		if Kind.Word(s) != w || Kind.StateOf(w) != s {
			t.Errorf("%s: TALM's word is %q, got %q", s, w, Kind.Word(s))
		}
	}
}
