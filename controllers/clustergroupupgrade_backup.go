package controllers

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/backup"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/spokecheck"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
)

// backupState is what the backup before the upgrade found this reconcile.
type backupState struct {
	// startedAt is when the backups started (status.backup.startedAt).
	startedAt metav1.Time
	// states are each planned cluster's backup state; reasons say why one failed.
	states  map[string]backup.State
	reasons map[string]string
	// order is the planned clusters in plan order, those that leave it included.
	order []string
	jobs  map[string]spokejob.Job
}

// gatherBackup reads, once the rollout is enabled, not blocked and done pre-caching (TALM's
// order), where the backup of every planned cluster stands. A state that was final stays
// so; a cluster not done Overall after the start timed out.
func (r *ClusterGroupUpgradeReconciler) gatherBackup(ctx context.Context, s *scope) error {
	if !needsBackup(s) || s.started || s.selectProblem != nil || s.invalid != nil || s.blocked != nil ||
		s.precacheFailed != nil || precacheGate(s) != "" || (s.cgu.Spec.Enable != nil && !*s.cgu.Spec.Enable) {
		return nil
	}
	st := &backupState{states: map[string]backup.State{}, reasons: map[string]string{}, jobs: map[string]spokejob.Job{},
		startedAt: metav1.NewTime(s.now).Rfc3339Copy()}
	var before map[string]string
	if b := s.before.Backup; b != nil {
		before = b.Status
		if b.StartedAt != nil {
			st.startedAt = *b.StartedAt
		}
	}
	s.backup = st
	past := !s.now.Before(st.startedAt.Add(backup.Overall))
	runner := spokejob.Runner{Client: r.Client}
	st.order = allClusters(s.plan)
	for _, c := range st.order {
		if prev := backup.State(before[c]); prev.Final() {
			st.states[c] = prev
			continue
		}
		st.jobs[c] = spokecheck.BackupJob(s.cgu, c, r.SpokeImage)
		obs, err := spokecheck.BackupObservation(ctx, runner, st.jobs[c])
		if err != nil {
			return err
		}
		st.states[c], st.reasons[c] = backup.Of(obs, past)
	}
	leaveBackupPlan(s, st)
	return nil
}

// leaveBackupPlan takes the clusters whose backup failed out of the plan once every backup
// ended, as TALM: they are not upgraded; when none is left, the rollout cannot start.
func leaveBackupPlan(s *scope, st *backupState) {
	if _, reason, _ := backup.Condition(st.states); reason == ranv1alpha1.ReasonInProgress {
		return
	}
	leaving := backup.Leaving(st.order, st.states)
	if len(leaving) == 0 {
		return
	}
	if len(leaving) == len(st.order) {
		s.backupFailed = &rollout.Problem{Reason: ranv1alpha1.ReasonBackupFailedEverywhere,
			Message: fmt.Sprintf("The backup failed or timed out on all %d clusters; none is left to upgrade", len(st.order))}
		return
	}
	drop := make(map[string]bool, len(leaving))
	for _, c := range leaving {
		drop[c] = true
	}
	s.plan = s.plan.Without(drop)
}

// backupJobs are the backup Jobs to start: every cluster not started yet (shown Starting),
// and those starting.
func backupJobs(s *scope) []spokejob.Job {
	st := s.backup
	if st == nil {
		return nil
	}
	var out []spokejob.Job
	for _, c := range st.order {
		if st.states[c] == backup.PreparingToStart {
			st.states[c] = backup.Starting
		}
		if st.states[c] == backup.Starting {
			out = append(out, st.jobs[c])
		}
	}
	return out
}

// backupGate is what the start waits for while the backup has not ended, "" otherwise.
func backupGate(s *scope) string {
	if needsBackup(s) && !s.started && s.backup == nil {
		return "the backup has not started" // never reached: the start waits for what the backup waits for
	}
	if s.backup == nil {
		return ""
	}
	if _, reason, message := backup.Condition(s.backup.states); reason == ranv1alpha1.ReasonInProgress {
		return message
	}
	return ""
}

// setBackupStatus writes TALM's status.backup and BackupSuceeded condition; once the
// rollout started they keep what they showed.
func setBackupStatus(st *ranv1alpha1.ClusterGroupUpgradeStatus, s *scope) {
	if !s.cgu.Spec.Backup {
		st.Backup = nil
		meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionBackupSucceeded)
		return
	}
	b := s.backup
	if b == nil {
		if !s.started && s.selectProblem == nil && s.invalid == nil && len(allClusters(s.plan)) == 0 {
			st.Backup = nil // nothing to back up: every planned cluster complies
			meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionBackupSucceeded)
		}
		return
	}
	startedAt := b.startedAt
	st.Backup = &ranv1alpha1.BackupStatus{StartedAt: &startedAt, Status: talm.BackupStates(b.order, b.states)}
	status, reason, message := backup.Condition(b.states)
	setCondition(st, s.cgu.Generation, ranv1alpha1.ConditionBackupSucceeded, status, reason, message)
}

// needsBackup reports whether a rollout that has not started backs its clusters up: one is
// asked for and some planned cluster needs the upgrade. As in TALM, a rollout whose clusters
// all comply already backs nothing up.
func needsBackup(s *scope) bool {
	return s.cgu.Spec.Backup && len(allClusters(s.plan)) > 0
}
