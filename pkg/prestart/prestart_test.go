package prestart

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// kind is a pre-start job with every field set, for the tests.
var kind = Kind{Noun: "Warming", Job: "warm", JobDeadline: 8 * time.Minute, Overall: 20 * time.Minute,
	Words: map[State]string{NotStarted: "Waiting", Failed: "Broken"}, Completed: "WarmingCompleted", Failed: "WarmingFailed",
	InProgress: "Warming: %d of %d clusters done"}

func TestReason(t *testing.T) {
	for name, tc := range map[string]struct {
		state  State
		detail string
		past   bool
		want   string
	}{
		"succeeded":                {state: Succeeded},
		"under way":                {state: Starting, detail: "a view failed"},
		"the job failed":           {state: Failed, want: "the warm Job failed"},
		"the detail is told first": {state: Failed, detail: "no room", past: true, want: "no room"},
		"past its deadline":        {state: Timeout, want: "the warm Job ran past its deadline (8m0s)"},
		"past the overall timeout": {state: Timeout, past: true, want: "the warm Jobs did not end within 20m0s"},
	} {
		if got := kind.Reason(tc.state, tc.detail, tc.past); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
	if got := (Kind{Job: "warm"}).Reason(Timeout, "", true); got != "the warm Job ran past its deadline" {
		t.Errorf("a kind without a stated deadline or overall bound: %q", got)
	}
}

func TestRunning(t *testing.T) {
	for _, s := range States {
		if want := s == Preparing || s == Starting || s == Active; s.Running() != want {
			t.Errorf("%s: running %v", s, s.Running())
		}
	}
}

func TestCondition(t *testing.T) {
	for name, tc := range map[string]struct {
		states          map[string]State
		status          metav1.ConditionStatus
		reason, message string
	}{
		"all succeeded": {states: map[string]State{"a": Succeeded, "b": Succeeded}, status: metav1.ConditionTrue, reason: "WarmingCompleted",
			message: "Warming completed on all 2 clusters"},
		"some failed": {states: map[string]State{"a": Succeeded, "b": Timeout, "c": Failed}, status: metav1.ConditionTrue, reason: ranv1alpha1.ReasonPartiallyDone,
			message: "Warming completed on 1 of 3 clusters; the 2 others failed or timed out and leave the plan"},
		"all failed": {states: map[string]State{"a": Timeout, "b": Failed}, status: metav1.ConditionFalse, reason: "WarmingFailed",
			message: "Warming failed or timed out on all 2 clusters"},
		"one still going": {states: map[string]State{"a": Succeeded, "b": Active}, status: metav1.ConditionFalse, reason: ranv1alpha1.ReasonInProgress,
			message: "Warming: 1 of 2 clusters done"},
		"none": {states: map[string]State{}, status: metav1.ConditionFalse, reason: ranv1alpha1.ReasonInProgress, message: "Warming: 0 of 0 clusters done"},
	} {
		status, reason, message := kind.Condition(tc.states)
		if status != tc.status || reason != tc.reason || message != tc.message {
			t.Errorf("%s: %s %s %q", name, status, reason, message)
		}
		if ended := kind.Ended(tc.states); ended != (reason != ranv1alpha1.ReasonInProgress) {
			t.Errorf("%s: ended %v with reason %s", name, ended, reason)
		}
	}
}

func TestWords(t *testing.T) {
	for _, s := range States {
		if got := kind.StateOf(kind.Word(s)); got != s {
			t.Errorf("%s: its word %q reads back as %s", s, kind.Word(s), got)
		}
	}
	if kind.Word(Failed) != "Broken" || kind.Word(Active) != "Active" {
		t.Errorf("words: %s, %s", kind.Word(Failed), kind.Word(Active))
	}
	if got := kind.StateOf("Sideways"); got != NotStarted {
		t.Errorf("an unknown word: %s", got)
	}
}

func TestToStartHonoursTheCap(t *testing.T) {
	order := []string{"a", "b", "c", "d"}
	states := map[string]State{"a": Active, "b": NotStarted, "c": Succeeded, "d": NotStarted}
	for _, tc := range []struct {
		running, limit int
		want           string
	}{
		{1, 0, "[b d]"}, {1, 2, "[b]"}, {2, 2, "[]"}, {0, 5, "[b d]"},
	} {
		if got := fmt.Sprint(ToStart(order, states, tc.running, tc.limit)); got != tc.want {
			t.Errorf("running %d limit %d: got %s, want %s", tc.running, tc.limit, got, tc.want)
		}
	}
}

func TestCountsAndLeaving(t *testing.T) {
	counts := Counts(map[string]State{"a": Succeeded, "b": Succeeded, "c": Failed})
	if len(counts) != len(States) || counts["Succeeded"] != 2 || counts["Failed"] != 1 || counts["NotStarted"] != 0 {
		t.Errorf("counts %v", counts)
	}
	states := map[string]State{"a": Succeeded, "b": Timeout, "c": Failed, "d": Active}
	if got := strings.Join(Leaving([]string{"d", "c", "b", "a"}, states), " "); got != "c b" {
		t.Errorf("leaving %q, want the failed and the timed out, in order", got)
	}
}
