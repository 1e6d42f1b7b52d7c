package clustergroupupgrade

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/controllers/internal/reconciled"
	"github.com/cgu-operator/cgu-operator/pkg/gates"
	"github.com/cgu-operator/cgu-operator/pkg/prestart"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/spokecheck"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
)

// EventRemediationError is the reason of the event of a write to the hub that failed. The
// events of a rollout's transitions have TALM's reasons (pkg/talm, emitted in
// events.go).
const EventRemediationError = "RemediationFailed"

// eventAction is the action of every event: what the operator was doing.
const eventAction = "Rollout"

// patchStatus computes the status once and writes it when it changed.
func (r *Reconciler) patchStatus(ctx context.Context, s *scope) error {
	st := s.cgu.Status.DeepCopy()
	computeStatus(st, s)
	if equality.Semantic.DeepEqual(*st, s.before) {
		return nil
	}
	if rollout.StatusProgressOnly(&s.before, st, s.cgu.Spec.BatchSoak != nil) && s.deferWrite(r.expect.progressDue(s.cgu), r.lagNow()) {
		return nil
	}
	// A whole-status update, checked against the resourceVersion read: the status is
	// computed from everything read since, and is written whole or not at all.
	s.cgu.Status = *st
	if err := r.Client.Status().Update(ctx, s.cgu); err != nil {
		return fmt.Errorf("patching status: %w", err)
	}
	r.expect.wrote(s.cgu, r.lagNow())
	return nil
}

func computeStatus(st *ranv1alpha1.ClusterGroupUpgradeStatus, s *scope) {
	st.ObservedGeneration = s.cgu.Generation
	meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionReconciled) // this pass succeeded
	if !s.decided {
		return
	}
	d := s.decision
	rollout.Status(st, d, s.plan)
	st.Waiting, st.Approvals = waitingStatus(d), s.approvals
	gates.RecordPause(st, s.cgu.Spec.Paused, !d.Progress.Started.IsZero(), s.now)
	if s.started && s.before.Plan != nil { // the records hold the batches, not what was left out
		st.Plan.SkippedCompliant = s.before.Plan.SkippedCompliant
	}
	if st.CurrentBatch != nil {
		names := s.policyNames()
		for i, c := range st.CurrentBatch.Clusters {
			if p := d.Progress.Clusters[c.Name]; p.State == ranv1alpha1.ClusterInProgress && p.Policy < len(names) {
				st.CurrentBatch.Clusters[i].CurrentPolicy = names[p.Policy]
			}
		}
	}
	switch {
	case d.State != ranv1alpha1.StateCompleted:
		st.CompletedAt = nil
	case s.before.CompletedAt == nil:
		now := metav1.NewTime(s.now).Rfc3339Copy()
		st.CompletedAt = &now
	}
	st.ManagedPoliciesForUpgrade = acceptedPolicies(s)
	st.Enforcement = s.mode
	setConditions(st, s)
	setCheckStatus(st, s)
	setTALMStatus(st, s)
}

// setConditions writes the conditions in the order TALM writes them (setCondition).
func setConditions(st *ranv1alpha1.ClusterGroupUpgradeStatus, s *scope) {
	meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionPrecachingSucceededOld)
	if !s.started {
		setSelectionConditions(st, s)
		if s.selectProblem != nil || s.invalid != nil {
			st.Plan = nil
		}
	}
	setPrecacheStatus(st, s)
	setBackupStatus(st, s)
	setRolloutConditions(st, s.decision)
	if !s.started && (s.selectProblem != nil || s.invalid != nil || precacheHolds(s)) {
		// TALM writes no Progressing condition before the spec is valid and pre-caching
		// ended on some cluster; status.state and status.message say what the rollout
		// waits for.
		meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionProgressing)
	}
}

// precacheHolds reports whether pre-caching keeps the rollout from starting: its spec is
// not valid, or it runs, or it failed on every cluster.
func precacheHolds(s *scope) bool {
	if !s.cgu.Spec.PreCaching || s.precache == nil {
		return false
	}
	if !s.precache.result.Valid {
		return true
	}
	status, _, _ := s.precache.kind.Condition(s.precache.states)
	return status == metav1.ConditionFalse
}

func setSelectionConditions(st *ranv1alpha1.ClusterGroupUpgradeStatus, s *scope) {
	gen := s.cgu.Generation
	if p := s.selectProblem; p != nil {
		setCondition(st, gen, ranv1alpha1.ConditionClustersSelected, metav1.ConditionFalse, p.Reason, p.Message)
		meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionValidated)
		return
	}
	setCondition(st, gen, ranv1alpha1.ConditionClustersSelected, metav1.ConditionTrue, ranv1alpha1.ReasonClusterSelectionCompleted,
		fmt.Sprintf("%d clusters selected", len(s.selected)))
	if p := s.invalid; p != nil {
		setCondition(st, gen, ranv1alpha1.ConditionValidated, metav1.ConditionFalse, p.Reason, p.Message)
		return
	}
	setCondition(st, gen, ranv1alpha1.ConditionValidated, metav1.ConditionTrue, ranv1alpha1.ReasonValidationCompleted,
		fmt.Sprintf("%s resolved; %s in %s", count(len(s.roots), "managed policy", "managed policies"),
			count(s.plan.Clusters(), "cluster", "clusters"), count(len(s.plan.Batches), "batch", "batches")))
}

func setRolloutConditions(st *ranv1alpha1.ClusterGroupUpgradeStatus, d rollout.Decision) {
	gen := st.ObservedGeneration
	message := rollout.Truncate(d.Message, ranv1alpha1.MessageLimit)
	switch d.State {
	case ranv1alpha1.StateNotCompleted:
		setCondition(st, gen, ranv1alpha1.ConditionProgressing, metav1.ConditionTrue, d.Reason, message)
		// As TALM: Succeeded is written once the rollout ended.
		meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionSucceeded)
	case ranv1alpha1.StateCompleted:
		succeeded := metav1.ConditionTrue
		if d.Reason == ranv1alpha1.ReasonClustersHeld {
			succeeded = metav1.ConditionFalse
		}
		setCondition(st, gen, ranv1alpha1.ConditionProgressing, metav1.ConditionFalse, d.Reason, message)
		setCondition(st, gen, ranv1alpha1.ConditionSucceeded, succeeded, d.Reason, message)
	case ranv1alpha1.StateTimedOut:
		setCondition(st, gen, ranv1alpha1.ConditionProgressing, metav1.ConditionFalse, d.Reason, message)
		setCondition(st, gen, ranv1alpha1.ConditionSucceeded, metav1.ConditionFalse, d.Reason, message)
	default: // NotStarted, CannotStart
		setCondition(st, gen, ranv1alpha1.ConditionProgressing, metav1.ConditionFalse, d.Reason, message)
		meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionSucceeded)
	}
}

// setCondition sets a condition in TALM's order (talm.SetCondition): `oc get cgu` shows the
// last one.
func setCondition(st *ranv1alpha1.ClusterGroupUpgradeStatus, gen int64, kind string, status metav1.ConditionStatus, reason, message string) {
	talm.SetCondition(&st.Conditions, metav1.Condition{Type: kind, Status: status, Reason: reason,
		Message: rollout.Truncate(message, ranv1alpha1.MessageLimit), ObservedGeneration: gen})
}

// batchEnded names the clusters of an ended batch (1-based index) by their final state, in
// order.
func (s *scope) batchEnded(index int) map[ranv1alpha1.ClusterState][]string {
	n := map[ranv1alpha1.ClusterState][]string{}
	for _, e := range s.decision.Ended {
		if e.Index+1 != index {
			continue
		}
		for _, name := range s.plan.Batches[e.Index].Clusters {
			if c, ok := e.Clusters[name]; ok {
				n[c.State] = append(n[c.State], name)
			}
		}
	}
	return n
}

// patchFailure writes, after a phase failed, the status as read with the Reconciled
// condition False naming the failure: the status never goes on saying what was true before
// without saying that the operator could not do its work. Conflicts (retried at once) and a
// cache behind the operator's own writes (a wait) are not failures.
func (r *Reconciler) patchFailure(ctx context.Context, s *scope, err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	st := s.before.DeepCopy()
	talm.SetCondition(&st.Conditions, reconciled.Failed(err, s.cgu.Generation))
	if equality.Semantic.DeepEqual(*st, s.before) {
		return nil
	}
	updated := s.cgu.DeepCopy()
	updated.Status = *st
	if werr := r.Client.Status().Update(ctx, updated); werr != nil {
		return fmt.Errorf("writing the failure to status: %w", werr)
	}
	r.expect.wrote(updated, r.lagNow())
	return nil
}

// failed reports an error of a phase that writes to the hub; a conflict with a newer
// version of an object is only retried.
func (r *Reconciler) failed(s *scope, err error) {
	if s.decided && !apierrors.IsConflict(err) {
		r.event(s, corev1.EventTypeWarning, EventRemediationError, "%s", rollout.Truncate(err.Error(), ranv1alpha1.MessageLimit))
	}
}

// count writes n and the noun in the number n takes.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// setPrecacheStatus writes status.precaching and the PrecacheSpecValid and
// PrecachingSucceeded conditions; once the rollout started they keep what they showed.
func setPrecacheStatus(st *ranv1alpha1.ClusterGroupUpgradeStatus, s *scope) {
	if !s.cgu.Spec.PreCaching {
		st.Precaching = nil
		meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionPrecacheSpecValid)
		meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionPrecachingSucceeded)
		return
	}
	p := s.precache
	if p == nil {
		if nothingToPrepare(s) {
			st.Precaching = nil
			meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionPrecacheSpecValid)
			meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionPrecachingSucceeded)
		}
		return
	}
	gen := s.cgu.Generation
	spec := p.result.Spec
	st.Precaching = &ranv1alpha1.PrecachingStatus{Spec: &spec}
	if !p.result.Valid {
		setCondition(st, gen, ranv1alpha1.ConditionPrecacheSpecValid, metav1.ConditionFalse, p.result.Reason, p.result.Message)
		meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionPrecachingSucceeded)
		return
	}
	setCondition(st, gen, ranv1alpha1.ConditionPrecacheSpecValid, metav1.ConditionTrue, p.result.Reason, p.result.Message)
	st.Precaching.Counts = prestart.Counts(p.states)
	st.Precaching.Status, st.Precaching.Clusters = talm.JobStates(p.kind, p.order, p.states)
	status, reason, message := p.kind.Condition(p.states)
	setCondition(st, gen, ranv1alpha1.ConditionPrecachingSucceeded, status, reason, message)
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
		if nothingToPrepare(s) {
			st.Backup = nil
			meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionBackupSucceeded)
		}
		return
	}
	startedAt := b.startedAt
	words, _ := talm.JobStates(b.kind, b.order, b.states)
	st.Backup = &ranv1alpha1.BackupStatus{StartedAt: &startedAt, Status: words}
	status, reason, message := b.kind.Condition(b.states)
	setCondition(st, s.cgu.Generation, ranv1alpha1.ConditionBackupSucceeded, status, reason, message)
}

// setCheckStatus writes status.upgradeChecks and the UpgradeChecked condition.
func setCheckStatus(st *ranv1alpha1.ClusterGroupUpgradeStatus, s *scope) {
	clusters := gates.Unstarted(s.plan, s.decision.Progress)
	verdicts := shownVerdicts(s)
	if verdicts == nil || len(clusters) == 0 || s.decision.Progress.Finished {
		// Nothing is left to check: the checks are off, every cluster started, or the
		// rollout is over.
		st.UpgradeChecks = nil
		meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionUpgradeChecked)
		return
	}
	st.UpgradeChecks = upgradecheck.Summary(clusters, verdicts)
	held, pending := 0, 0
	for _, v := range verdicts {
		switch {
		case v.Reason == upgradecheck.ReasonClusterVersionUnknown, v.Reason == spokecheck.ReasonHealthCheckPending:
			pending++
		case v.Holds():
			held++
		}
	}
	gen := s.cgu.Generation
	switch {
	case held > 0:
		setCondition(st, gen, ranv1alpha1.ConditionUpgradeChecked, metav1.ConditionFalse, ranv1alpha1.ReasonClustersHeld,
			fmt.Sprintf("The upgrade checks hold %d of %d clusters that have not started (%s); see status.upgradeChecks or kubectl cgu preflight",
				held+pending, len(clusters), upgradecheck.CountsText(st.UpgradeChecks.Counts)))
	case pending > 0:
		setCondition(st, gen, ranv1alpha1.ConditionUpgradeChecked, metav1.ConditionUnknown, ranv1alpha1.ReasonUpgradeChecksPending,
			fmt.Sprintf("The checks of %d of %d clusters have not answered yet", pending, len(clusters)))
	default:
		setCondition(st, gen, ranv1alpha1.ConditionUpgradeChecked, metav1.ConditionTrue, ranv1alpha1.ReasonUpgradeChecksPassed,
			fmt.Sprintf("The upgrade checks let all %d clusters that have not started proceed (%s)", len(clusters), upgradecheck.CountsText(st.UpgradeChecks.Counts)))
	}
}

// shownVerdicts are the verdicts status shows: the upgrade checks', and before the start
// the health check's where it holds a cluster the upgrade checks let go (pending, or not
// healthy); nil when there are none.
func shownVerdicts(s *scope) map[string]upgradecheck.Verdict {
	if s.healthPreview == nil {
		return s.verdicts
	}
	out := make(map[string]upgradecheck.Verdict, len(s.healthPreview))
	for c, h := range s.healthPreview {
		v, ok := s.verdicts[c]
		switch {
		case ok && v.Holds():
		case !h.Done || !h.Healthy:
			v = upgradecheck.Verdict{Outcome: upgradecheck.Hold, Reason: h.Reason, Message: h.Message}
		case !ok:
			v = upgradecheck.Verdict{Outcome: upgradecheck.Proceed, Reason: h.Reason, Message: h.Message}
		}
		out[c] = v
	}
	return out
}
