// Package backup decides the backup before an upgrade on the hub (TALM's spec.backup) as a
// pre-start job (pkg/prestart): TALM's words for its states, its BackupSuceeded condition,
// its Job's deadline and the overall timeout of a rollout's backups. The clusters whose
// backup failed leave the plan. It is pure; the spoke side is pkg/backup/recovery.
package backup

import (
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/prestart"
	"github.com/cgu-operator/cgu-operator/pkg/talmjob"
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
	Words:      map[prestart.State]string{prestart.Timeout: talmjob.Backup.Timeout, prestart.Failed: talmjob.Failed},
	Completed:  ranv1alpha1.ReasonBackupCompleted,
	Failed:     ranv1alpha1.ReasonBackupFailed,
	InProgress: "Backup in progress: %d of %d clusters done",
}
