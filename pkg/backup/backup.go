// Package backup decides the backup before an upgrade on the hub (TALM's spec.backup): each
// planned cluster's state from what the hub sees of its backup Job, TALM's BackupSuceeded
// condition, the overall timeout, and the clusters whose backup failed, which leave the plan.
// It is pure; the spoke side is pkg/backup/recovery.
package backup

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/backup/recovery"
)

// State is where one cluster's backup stands (TALM's states and values).
type State string

// The states of a cluster's backup. Succeeded, Timeout and Error are final.
const (
	// PreparingToStart: no backup Job was asked of the cluster yet.
	PreparingToStart State = "PreparingToStart"
	// Starting: the Job was asked for and has not been seen running.
	Starting State = "Starting"
	// Active: the Job runs.
	Active State = "Active"
	// Succeeded: the backup is on the cluster.
	Succeeded State = "Succeeded"
	// Timeout: the Job ran past its deadline, or the backups past Overall.
	Timeout State = "BackupTimeout"
	// Error: the Job failed, or could not be deployed.
	Error State = "UnrecoverableError"
)

// States lists the states in order.
var States = []State{PreparingToStart, Starting, Active, Succeeded, Timeout, Error}

// Final reports whether a state is never left.
func (s State) Final() bool { return s == Succeeded || s == Timeout || s == Error }

// Timeouts (TALM's).
const (
	// JobDeadline is the backup Job's activeDeadlineSeconds.
	JobDeadline = 8 * time.Minute
	// Overall bounds the backups of a rollout from their start: a cluster not done by then
	// timed out.
	Overall = 20 * time.Minute
)

// Observation is what the hub sees of a cluster's backup Job (pkg/spokejob).
type Observation struct {
	// Requested is true once the Job of this run was asked for.
	Requested bool
	// Running is true while the Job view shows the Job of this run active.
	Running bool
	// Summary is the program's latest summary of this run, nil before it wrote one.
	Summary *recovery.Summary
	// Failed is why the Job failed, or its actions did, "" otherwise.
	Failed string
	// DeadlineExceeded is true when the Job failed by running past its deadline.
	DeadlineExceeded bool
}

// Of is the state of a cluster from what the hub sees, with a reason for the failed states;
// past is true once the backups ran past Overall.
func Of(o Observation, past bool) (State, string) {
	switch {
	case o.Summary != nil && o.Summary.Phase == recovery.PhaseSucceeded:
		return Succeeded, o.Summary.Note
	case o.DeadlineExceeded:
		return Timeout, fmt.Sprintf("the backup Job ran past its deadline (%s)", JobDeadline)
	case o.Summary != nil && o.Summary.Phase == recovery.PhaseFailed && !o.Summary.Retryable:
		return Error, o.Summary.Error
	case o.Failed != "":
		return Error, o.Failed
	case past:
		return Timeout, fmt.Sprintf("the backups did not end within %s", Overall)
	case o.Running || o.Summary != nil:
		return Active, ""
	case o.Requested:
		return Starting, ""
	}
	return PreparingToStart, ""
}

// Condition is the BackupSuceeded condition of the states (TALM's): True BackupCompleted when
// every cluster succeeded, True PartiallyDone when every cluster is final and some failed
// (they leave the plan), False Failed when every one failed, False InProgress otherwise.
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
		return metav1.ConditionTrue, ranv1alpha1.ReasonBackupCompleted, fmt.Sprintf("Backup completed on all %d clusters", total)
	case total > 0 && final == total && succeeded > 0:
		return metav1.ConditionTrue, ranv1alpha1.ReasonPartiallyDone,
			fmt.Sprintf("Backup completed on %d of %d clusters; the %d others failed or timed out and leave the plan", succeeded, total, total-succeeded)
	case total > 0 && final == total:
		return metav1.ConditionFalse, ranv1alpha1.ReasonBackupFailed, fmt.Sprintf("Backup failed or timed out on all %d clusters", total)
	}
	return metav1.ConditionFalse, ranv1alpha1.ReasonInProgress, fmt.Sprintf("Backup in progress: %d of %d clusters done", final, total)
}

// Leaving are the clusters, in order, whose backup failed or timed out: they are not
// upgraded.
func Leaving(order []string, states map[string]State) []string {
	var out []string
	for _, c := range order {
		if s := states[c]; s == Timeout || s == Error {
			out = append(out, c)
		}
	}
	return out
}
