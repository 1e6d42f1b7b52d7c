package precache

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/prestart"
)

// The reasons of the final states that are not Succeeded.
func TestReason(t *testing.T) {
	for _, tc := range []struct {
		state  prestart.State
		detail string
		want   string
	}{
		{prestart.Succeeded, "", ""},
		{prestart.Active, "a view failed", ""},
		{prestart.Failed, "", "the precache Job failed"},
		{prestart.Failed, "the view of the Job pre-cache: forbidden", "the view of the Job pre-cache: forbidden"},
		{prestart.Timeout, "", "the precache Job ran past its deadline"},
	} {
		if got := Kind.Reason(tc.state, tc.detail, false); got != tc.want {
			t.Errorf("%s %q: got %q, want %q", tc.state, tc.detail, got, tc.want)
		}
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
	words := map[prestart.State]string{prestart.NotStarted: "NotStarted", prestart.Preparing: "PreparingToStart", prestart.Starting: "Starting", prestart.Active: "Active",
		prestart.Succeeded: "Succeeded", prestart.Timeout: "PrecacheTimeout", prestart.Failed: "UnrecoverableError"}
	for s, w := range words {
		if Kind.Word(s) != w {
			t.Errorf("%s: TALM's word is %q, got %q", s, w, Kind.Word(s))
		}
	}
}
