package precache

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// State is where one cluster's pre-caching stands.
type State string

// The states of a cluster's pre-caching. Succeeded, Timeout and Failed are final.
const (
	// NotStarted: no precache Job was asked of the cluster yet.
	NotStarted State = "NotStarted"
	// Starting: the Job was asked for (its actions sent) and has not been seen running.
	Starting State = "Starting"
	// Active: the Job runs; its summary, once written, says how far it got.
	Active State = "Active"
	// Succeeded: every image is on the cluster.
	Succeeded State = "Succeeded"
	// Timeout: the Job ran past its deadline.
	Timeout State = "Timeout"
	// Failed: the Job failed, or could not be deployed.
	Failed State = "Failed"
)

// States lists the states in order, as status.precaching.counts keys them.
var States = []State{NotStarted, Starting, Active, Succeeded, Timeout, Failed}

// Final reports whether a state is never left.
func (s State) Final() bool {
	return s == Succeeded || s == Timeout || s == Failed
}

// Observation is what the hub sees of a cluster's precache Job, through the views and
// actions of pkg/spokejob.
type Observation struct {
	// Requested is true once the Job of this run was asked for.
	Requested bool
	// Running is true while the Job view shows the Job of this run active.
	Running bool
	// Summary is the program's latest summary of this run, nil before it wrote one.
	Summary *Summary
	// Failed is why the Job failed, or its actions did, "" otherwise.
	Failed string
	// DeadlineExceeded is true when the Job failed by running past its deadline.
	DeadlineExceeded bool
}

// Of is the state of a cluster from what the hub sees, with a reason for the final states
// other than Succeeded: the state lives on the hub's views, nowhere else, so that every
// reconcile finds it again.
func Of(o Observation) (State, string) {
	switch {
	case o.Summary != nil && o.Summary.Phase == PhaseSucceeded:
		return Succeeded, ""
	case o.DeadlineExceeded:
		return Timeout, "the precache Job ran past its deadline"
	case o.Failed != "":
		return Failed, o.Failed
	case o.Summary != nil && o.Summary.Phase == PhaseFailed && !o.Summary.Retryable:
		return Failed, o.Summary.Error
	case o.Running || o.Summary != nil:
		return Active, ""
	case o.Requested:
		return Starting, ""
	}
	return NotStarted, ""
}

// ToStart returns the clusters, in order, whose pre-caching starts now: those NotStarted,
// as long as fewer than limit clusters of the hub are Starting or Active (running counts
// them across every rollout; limit zero means no cap).
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

// Counts counts clusters per state, with every state present, as status.precaching.counts
// shows them.
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

// Condition is the PrecachingSucceeded condition of the states: True Completed when every
// cluster succeeded, True PartiallyDone when every cluster is final and some but not all
// succeeded (the others leave the plan), False Failed when every cluster is final and none
// succeeded, False InProgress otherwise.
func Condition(states map[string]State) (metav1.ConditionStatus, string, string) {
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
		return metav1.ConditionTrue, ranv1alpha1.ReasonPrecachingCompleted,
			fmt.Sprintf("Pre-caching completed on all %d clusters", total)
	case total > 0 && final == total && succeeded > 0:
		return metav1.ConditionTrue, ranv1alpha1.ReasonPartiallyDone,
			fmt.Sprintf("Pre-caching completed on %d of %d clusters; the %d others failed or timed out and leave the plan",
				succeeded, total, total-succeeded)
	case total > 0 && final == total:
		return metav1.ConditionFalse, ranv1alpha1.ReasonPrecachingFailed,
			fmt.Sprintf("Pre-caching failed or timed out on all %d clusters", total)
	}
	return metav1.ConditionFalse, ranv1alpha1.ReasonInProgress,
		fmt.Sprintf("Pre-caching: %d of %d clusters done", final, total)
}

// Leaving are the clusters, in order, whose pre-caching failed or timed out: they leave the
// plan when the rollout starts.
func Leaving(order []string, states map[string]State) []string {
	var out []string
	for _, c := range order {
		if s := states[c]; s == Failed || s == Timeout {
			out = append(out, c)
		}
	}
	return out
}
