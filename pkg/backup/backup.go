// Package backup decides the backup before an upgrade on the hub (TALM's spec.backup) as a
// pre-start job (pkg/prestart): TALM's words for its states, its BackupSuceeded condition,
// its Job's deadline and the overall timeout of a rollout's backups. The clusters whose
// backup failed leave the plan. It is pure; the spoke side is pkg/backup/recovery.
package backup

import (
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/backup/recovery"
	"github.com/cgu-operator/cgu-operator/pkg/prestart"
)

// Timeouts (TALM's).
const (
	// JobDeadline is the backup Job's activeDeadlineSeconds.
	JobDeadline = 8 * time.Minute
	// Overall bounds the backups of a rollout from their start: a cluster not done by then
	// timed out.
	Overall = 20 * time.Minute
)

// Kind is the backup as a pre-start job: status.backup.status holds TALM's words for its
// states.
var Kind = prestart.Kind{
	Noun: "Backup", Job: "backup", JobDeadline: JobDeadline, Overall: Overall,
	Words: map[prestart.State]string{prestart.NotStarted: "PreparingToStart", prestart.Timeout: "BackupTimeout",
		prestart.Failed: "UnrecoverableError"},
	Completed:  ranv1alpha1.ReasonBackupCompleted,
	Failed:     ranv1alpha1.ReasonBackupFailed,
	InProgress: "Backup in progress: %d of %d clusters done",
}

// Observed adds to what the hub sees of a cluster's backup Job what the program's summary of
// this run says (nil before it wrote one).
func Observed(o prestart.Observation, sum *recovery.Summary) prestart.Observation {
	if sum == nil {
		return o
	}
	o.Summarized = true
	if sum.Phase == recovery.PhaseSucceeded {
		o.Succeeded, o.Note = true, sum.Note
	}
	if sum.Phase == recovery.PhaseFailed && !sum.Retryable {
		o.Unrecoverable = sum.Error
	}
	return o
}
