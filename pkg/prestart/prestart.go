// Package prestart is the one state machine of the spoke jobs a rollout runs on every planned
// cluster before it starts: pre-caching and the backup, and whatever step of that kind comes
// next. Each cluster's job goes NotStarted, Preparing (what an earlier job left is
// cleared), Starting (asked for), Active (running), then one of the final states Succeeded,
// Timeout and Failed, which are never left. pkg/talmjob moves a cluster from state to state
// as TALM does; the state lives in the rollout's status, as TALM's does. What differs between the kinds is data (Kind): TALM's words for
// the states, the condition's reasons and messages, the timeouts. It is pure.
package prestart

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// State is where one cluster's job stands.
type State string

// The states of a cluster's job. Succeeded, Timeout and Failed are final.
const (
	// NotStarted: no job was asked of the cluster yet.
	NotStarted State = "NotStarted"
	// Preparing: what an earlier job left on the cluster is being cleared (TALM's
	// PreparingToStart).
	Preparing State = "PreparingToStart"
	// Starting: the job's dependencies, then the job, are asked for; it has not been seen
	// running.
	Starting State = "Starting"
	// Active: the job runs.
	Active State = "Active"
	// Succeeded: the job succeeded.
	Succeeded State = "Succeeded"
	// Timeout: the job ran past its deadline, or the jobs past the kind's overall bound.
	Timeout State = "Timeout"
	// Failed: the job failed, could not be deployed, or its program failed for good.
	Failed State = "Failed"
)

// States lists the states in order.
var States = []State{NotStarted, Preparing, Starting, Active, Succeeded, Timeout, Failed}

// Final reports whether a state is never left.
func (s State) Final() bool { return s == Succeeded || s == Timeout || s == Failed }

// Running reports whether a cluster's job is under way: Preparing, Starting or Active.
func (s State) Running() bool { return s == Preparing || s == Starting || s == Active }

// Kind is what one kind of pre-start job says in its own words.
type Kind struct {
	// Noun starts the condition's messages: "Pre-caching", "Backup".
	Noun string
	// Job names the job in the reasons of its timeouts: "precache", "backup".
	Job string
	// JobDeadline, when set, is named in the reason of a job that ran past its deadline.
	JobDeadline time.Duration
	// Overall bounds a rollout's jobs from their start: a cluster not done by then timed out.
	// Zero: no bound.
	Overall time.Duration
	// Words are TALM's words for the states, where they differ from the state's name.
	Words map[State]string
	// Completed and Failed are the condition's reasons when every cluster succeeded and when
	// every cluster failed or timed out.
	Completed, Failed string
	// InProgress is the condition's message while some cluster is not done, with the
	// clusters done and the total.
	InProgress string
}

// Word is TALM's word for a state.
func (k Kind) Word(s State) string {
	if w, ok := k.Words[s]; ok {
		return w
	}
	return string(s)
}

// StateOf is the state TALM's word stands for, NotStarted for a word it does not know.
func (k Kind) StateOf(word string) State {
	for _, s := range States {
		if k.Word(s) == word {
			return s
		}
	}
	return NotStarted
}

// Reason is why a cluster's job ended in a final state other than Succeeded: detail, what
// the job's protocol says, or the kind's words for a timeout; past is true when the kind's
// overall bound ended it.
func (k Kind) Reason(s State, detail string, past bool) string {
	switch {
	case s != Timeout && s != Failed:
		return ""
	case detail != "":
		return detail
	case past && k.Overall > 0:
		return fmt.Sprintf("the %s Jobs did not end within %s", k.Job, k.Overall)
	case s == Timeout && k.JobDeadline > 0:
		return fmt.Sprintf("the %s Job ran past its deadline (%s)", k.Job, k.JobDeadline)
	case s == Timeout:
		return fmt.Sprintf("the %s Job ran past its deadline", k.Job)
	}
	return fmt.Sprintf("the %s Job failed", k.Job)
}

// Condition is the kind's condition of the states: True with Completed when every cluster
// succeeded, True PartiallyDone when every cluster is final and some but not all succeeded
// (the others leave the plan), False with Failed when every cluster is final and none
// succeeded, False InProgress otherwise.
func (k Kind) Condition(states map[string]State) (metav1.ConditionStatus, string, string) {
	final, succeeded := 0, 0
	for _, s := range states {
		if s.Final() {
			final++
		}
		if s == Succeeded {
			succeeded++
		}
	}
	total := len(states)
	switch {
	case total > 0 && succeeded == total:
		return metav1.ConditionTrue, k.Completed, fmt.Sprintf("%s completed on all %d clusters", k.Noun, total)
	case total > 0 && final == total && succeeded > 0:
		return metav1.ConditionTrue, ranv1alpha1.ReasonPartiallyDone,
			fmt.Sprintf("%s completed on %d of %d clusters; the %d others failed or timed out and leave the plan", k.Noun, succeeded, total, total-succeeded)
	case total > 0 && final == total:
		return metav1.ConditionFalse, k.Failed, fmt.Sprintf("%s failed or timed out on all %d clusters", k.Noun, total)
	}
	return metav1.ConditionFalse, ranv1alpha1.ReasonInProgress, fmt.Sprintf(k.InProgress, final, total)
}

// Ended reports whether every cluster's job is final (the condition is no longer
// InProgress).
func (k Kind) Ended(states map[string]State) bool {
	_, reason, _ := k.Condition(states)
	return reason != ranv1alpha1.ReasonInProgress
}

// Leaving are the clusters, in order, whose job failed or timed out: they leave the plan
// when the rollout starts.
func Leaving(order []string, states map[string]State) []string {
	var out []string
	for _, c := range order {
		if s := states[c]; s == Failed || s == Timeout {
			out = append(out, c)
		}
	}
	return out
}

// ToStart returns the clusters, in order, whose job starts now: those NotStarted, as long as
// fewer than limit clusters of the hub are Preparing, Starting or Active (running counts them across
// every rollout; limit zero means no cap).
func ToStart(order []string, states map[string]State, running, limit int) []string {
	var out []string
	for _, c := range order {
		if states[c] != NotStarted {
			continue
		}
		if limit > 0 && running >= limit {
			break
		}
		out = append(out, c)
		running++
	}
	return out
}

// Counts counts clusters per state, with every state present.
func Counts(states map[string]State) map[string]int {
	out := make(map[string]int, len(States))
	for _, s := range States {
		out[string(s)] = 0
	}
	for _, s := range states {
		out[string(s)]++
	}
	return out
}
