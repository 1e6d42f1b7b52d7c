package cgu

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/gates"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/prestart"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/spokecheck"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
	"github.com/cgu-operator/cgu-operator/pkg/validate"
)

// status is the status to write: the status read, with what this pass decided.
func (p *pass) status() {
	st := p.before.DeepCopy()
	observed(st, p.cgu.Generation)
	d := p.in.Decision
	rollout.Status(st, d, p.in.Plan)
	st.Waiting, st.Approvals = waitingStatus(d), p.in.Approvals
	gates.RecordPause(st, p.cgu.Spec.Paused || gates.FleetFrozen(p.f.Freezes) != "", !d.Progress.Started.IsZero(), p.now)
	if p.f.Started && p.before.Plan != nil { // the records hold the batches, not what was left out nor how they were spread
		st.Plan.SkippedCompliant = p.before.Plan.SkippedCompliant
		st.Plan.Spread, st.Plan.SpreadAddedBatches = p.before.Plan.Spread, p.before.Plan.SpreadAddedBatches
	}
	if st.CurrentBatch != nil {
		names := p.policyNames()
		for i, c := range st.CurrentBatch.Clusters {
			pr := d.Progress.Clusters[c.Name]
			if pr.State == ranv1alpha1.ClusterInProgress && pr.Policy < len(names) {
				st.CurrentBatch.Clusters[i].CurrentPolicy = names[pr.Policy]
			}
			st.CurrentBatch.Clusters[i].SoftTimedOut = rollout.SoftTimedOutNames(pr, names)
		}
	}
	switch {
	case d.State != ranv1alpha1.StateCompleted:
		st.CompletedAt = nil
	case p.before.CompletedAt == nil:
		now := metav1.NewTime(p.now).Rfc3339Copy()
		st.CompletedAt = &now
	}
	st.ManagedPoliciesForUpgrade = p.acceptedPolicies()
	st.Enforcement = p.in.Mode
	p.setConditions(st)
	if a := p.in.ActionsProblem; a != nil {
		setCondition(st, p.cgu.Generation, ranv1alpha1.ConditionReconciled, metav1.ConditionFalse, a.Reason,
			"the cluster actions do not run: "+a.Message)
	}
	p.setCheckStatus(st)
	if p.in.StatusPaced = p.paced(st); !p.in.StatusPaced {
		p.setTALMStatus(st)
	}
	p.in.Status = *st
}

// paced reports whether st, TALM's fields not made yet, changed only by clusters moving on
// while the status's pace runs: the pass does not write it, and leaves TALM's fields (their
// cost grows with the batch: talm.Shorten) to the pass that does. A pass that makes or
// expires silences, or clears their failure, changes the status after the decision
// (Intents.Silences): it is never paced.
func (p *pass) paced(st *ranv1alpha1.ClusterGroupUpgradeStatus) bool {
	if !p.f.ProgressPaced || !p.in.Silences.Empty() || (p.before.Silences != nil && p.before.Silences.Error != "") {
		return false
	}
	return rollout.StatusProgressOnly(p.before, st, p.cgu.Spec.BatchSoak != nil)
}

// waitingStatus shows what the decision waits for.
func waitingStatus(d rollout.Decision) *ranv1alpha1.WaitingStatus {
	if d.Waiting == nil {
		return nil
	}
	w := &ranv1alpha1.WaitingStatus{Reason: d.Waiting.Reason, Batch: d.Waiting.Batch}
	if !d.Wake.IsZero() {
		until := metav1.NewTime(d.Wake).Rfc3339Copy()
		w.Until = &until
	}
	return w
}

// setConditions writes the conditions in the order TALM writes them (setCondition).
func (p *pass) setConditions(st *ranv1alpha1.ClusterGroupUpgradeStatus) {
	meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionPrecachingSucceededOld)
	if !p.f.Started {
		p.setSelectionConditions(st)
		if p.in.Invalid != nil {
			st.Plan = nil
		}
	}
	p.setPrecacheStatus(st)
	p.setBackupStatus(st)
	setRolloutConditions(st, p.in.Decision)
	if !p.f.Started && (p.in.Invalid != nil || p.precacheHolds()) {
		// TALM writes no Progressing condition before the spec is valid and pre-caching
		// ended on some cluster; status.state and status.message say what the rollout
		// waits for.
		meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionProgressing)
	}
}

// precacheHolds reports whether pre-caching keeps the rollout from starting: its spec is
// not valid, or it runs, or it failed on every cluster.
func (p *pass) precacheHolds() bool {
	if !p.cgu.Spec.PreCaching || p.precache == nil {
		return false
	}
	if !p.precache.result.Valid {
		return true
	}
	status, _, _ := p.precache.kind.Condition(p.precache.states)
	return status == metav1.ConditionFalse
}

func (p *pass) setSelectionConditions(st *ranv1alpha1.ClusterGroupUpgradeStatus) {
	gen := p.cgu.Generation
	if sp := p.f.Start.SelectProblem; sp != nil {
		setCondition(st, gen, ranv1alpha1.ConditionClustersSelected, metav1.ConditionFalse, sp.Reason, sp.Message)
		meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionValidated)
		return
	}
	setCondition(st, gen, ranv1alpha1.ConditionClustersSelected, metav1.ConditionTrue, ranv1alpha1.ReasonClusterSelectionCompleted,
		fmt.Sprintf("%d clusters selected", len(p.f.Start.Selected)))
	if invalid := p.in.Invalid; invalid != nil {
		setCondition(st, gen, ranv1alpha1.ConditionValidated, metav1.ConditionFalse, invalid.Reason, invalid.Message)
		return
	}
	message := fmt.Sprintf("%s resolved; %s in %s", count(len(p.f.Roots), "managed policy", "managed policies"),
		count(p.in.Plan.Clusters(), "cluster", "clusters"), count(len(p.in.Plan.Batches), "batch", "batches"))
	if dup := validate.Duplicates(p.cgu.Spec); dup != "" {
		message += "; " + dup
	}
	setCondition(st, gen, ranv1alpha1.ConditionValidated, metav1.ConditionTrue, ranv1alpha1.ReasonValidationCompleted,
		rollout.Truncate(message, ranv1alpha1.MessageLimit))
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

// count writes n and the noun in the number n takes.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// setPrecacheStatus writes status.precaching and the PrecacheSpecValid and
// PrecachingSucceeded conditions; once the rollout started they keep what they showed.
func (p *pass) setPrecacheStatus(st *ranv1alpha1.ClusterGroupUpgradeStatus) {
	if !p.cgu.Spec.PreCaching {
		st.Precaching = nil
		meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionPrecacheSpecValid)
		meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionPrecachingSucceeded)
		return
	}
	pc := p.precache
	if pc == nil {
		if p.nothingToPrepare() {
			st.Precaching = nil
			meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionPrecacheSpecValid)
			meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionPrecachingSucceeded)
		}
		return
	}
	gen := p.cgu.Generation
	spec := pc.result.Spec
	st.Precaching = &ranv1alpha1.PrecachingStatus{Spec: &spec}
	if !pc.result.Valid {
		setCondition(st, gen, ranv1alpha1.ConditionPrecacheSpecValid, metav1.ConditionFalse, pc.result.Reason, pc.result.Message)
		meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionPrecachingSucceeded)
		return
	}
	setCondition(st, gen, ranv1alpha1.ConditionPrecacheSpecValid, metav1.ConditionTrue, pc.result.Reason, pc.result.Message)
	st.Precaching.Counts = prestart.Counts(pc.states)
	st.Precaching.Status, st.Precaching.Clusters = talm.JobStates(pc.kind, pc.order, pc.states)
	st.Precaching.Plan = pc.plan
	status, reason, message := pc.kind.Condition(pc.states)
	if reason == ranv1alpha1.ReasonInProgress {
		message += planMessage(pc.plan)
	}
	setCondition(st, gen, ranv1alpha1.ConditionPrecachingSucceeded, status, reason, message)
}

// setBackupStatus writes TALM's status.backup and BackupSuceeded condition; once the
// rollout started they keep what they showed.
func (p *pass) setBackupStatus(st *ranv1alpha1.ClusterGroupUpgradeStatus) {
	if !p.cgu.Spec.Backup {
		st.Backup = nil
		meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionBackupSucceeded)
		return
	}
	b := p.backup
	if b == nil {
		if p.nothingToPrepare() {
			st.Backup = nil
			meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionBackupSucceeded)
		}
		return
	}
	startedAt := b.startedAt
	words, _ := talm.JobStates(b.kind, b.order, b.states)
	st.Backup = &ranv1alpha1.BackupStatus{StartedAt: &startedAt, Status: words}
	status, reason, message := b.kind.Condition(b.states)
	setCondition(st, p.cgu.Generation, ranv1alpha1.ConditionBackupSucceeded, status, reason, message)
}

// setCheckStatus writes status.upgradeChecks and the UpgradeChecked condition.
func (p *pass) setCheckStatus(st *ranv1alpha1.ClusterGroupUpgradeStatus) {
	clusters := gates.Unstarted(p.in.Plan, p.in.Decision.Progress)
	verdicts := p.shownVerdicts()
	if verdicts == nil || len(clusters) == 0 || p.in.Decision.Progress.Finished {
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
	gen := p.cgu.Generation
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
func (p *pass) shownVerdicts() map[string]upgradecheck.Verdict {
	if p.healthPreview == nil {
		return p.verdicts
	}
	out := make(map[string]upgradecheck.Verdict, len(p.healthPreview))
	for c, h := range p.healthPreview {
		v, ok := p.verdicts[c]
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

// setTALMStatus writes the fields of the status that TALM writes, with TALM's meaning
// (pkg/talm), then keeps the whole status within ranv1alpha1.TALMStatusBudget.
func (p *pass) setTALMStatus(st *ranv1alpha1.ClusterGroupUpgradeStatus) {
	d, cgu := p.in.Decision, p.cgu
	refs := st.ManagedPoliciesForUpgrade
	steps := talm.Steps{Policies: make([]string, len(refs)), Templates: cgu.Spec.ManifestWorkTemplates}
	for i, ref := range refs {
		steps.Policies[i] = ref.Name
	}
	if !p.f.Started {
		// Frozen at the start, like the policies they describe.
		st.ManagedPoliciesCompliantBeforeUpgrade = namesOf(p.f.Start.CompliantBefore)
		st.ManagedPoliciesContent = talm.Content(p.f.Roots)
		st.ComputedMaxConcurrency = 0
		if rs := cgu.Spec.RemediationStrategy; rs != nil && len(p.f.Start.Selected) > 0 {
			st.ComputedMaxConcurrency = talm.ComputedMaxConcurrency(rs.MaxConcurrency, len(p.f.Start.Selected))
		}
	}
	st.ManagedPoliciesNs = talm.Namespaces(refs)
	st.RemediationPlan = talm.RemediationPlan(p.in.Plan)
	owner := ownership.OwnerOf(cgu)
	st.NameSuffix = ""
	if !d.Progress.Started.IsZero() {
		st.NameSuffix = owner.NameSuffix // frozen from the start on (ownership.OwnerOf)
	}
	objects := talm.ObjectsOf(owner, p.in.Mode, refs, cgu.Spec.ManifestWorkTemplates)
	if d.State == ranv1alpha1.StateCompleted && DeleteObjects(cgu) {
		objects = talm.Objects{} // deleted with the rollout's other objects
	}
	st.Placements, st.PlacementBindings = objects.Placements, objects.PlacementBindings
	st.CopiedPolicies, st.SafeResourceNames = objects.CopiedPolicies, objects.SafeResourceNames
	st.Status = talm.Progress(d, p.in.Plan, steps, p.endedAt(st).Time)
	st.Clusters = talm.Clusters(p.compliantAtStart(), p.in.Plan, talm.FinishedFrom(p.recordedFinal(), d, steps), steps)
	p.setWorkStatus(st.Clusters, owner)
	talm.Shorten(st, shownBatch(st))
}

// setWorkStatus copies, as TALM does, the status of the ManifestWork each cluster that did
// not complete stopped on: from the ManifestWork while it exists, else as the status showed
// it before (the rollout's cleanup deleted it since). The first
// ranv1alpha1.ManifestWorkStatusLimit such clusters get one, each bounded by talm.WorkStatus.
func (p *pass) setWorkStatus(clusters []ranv1alpha1.ClusterFinalState, owner ownership.Owner) {
	before := map[string]*workv1.ManifestResourceStatus{}
	for _, c := range p.before.Clusters {
		if c.CurrentManifestWork != nil && c.CurrentManifestWork.Status != nil {
			before[c.Name+"/"+c.CurrentManifestWork.Name] = c.CurrentManifestWork.Status
		}
	}
	copied := 0
	for i := range clusters {
		cmw := clusters[i].CurrentManifestWork
		if cmw == nil || copied == ranv1alpha1.ManifestWorkStatusLimit {
			continue
		}
		copied++
		if p.f.Works != nil {
			if mw, ok := p.f.Works.Made[clusters[i].Name+"/"+manifestwork.Name(owner, manifestwork.RoleStep, cmw.Name)]; ok {
				cmw.Status = talm.WorkStatus(mw.Status.ResourceStatus)
				continue
			}
		}
		cmw.Status = before[clusters[i].Name+"/"+cmw.Name]
	}
}

func namesOf(policies []*policyv1.Policy) []string {
	var out []string
	for _, p := range policies {
		out = append(out, p.Name)
	}
	return out
}

// endedAt is when the rollout ended, for TALM's status.status.completedAt: the time it
// completed, or the time it was first seen timed out.
func (p *pass) endedAt(st *ranv1alpha1.ClusterGroupUpgradeStatus) metav1.Time {
	switch {
	case st.CompletedAt != nil:
		return *st.CompletedAt
	case p.before.Status.CompletedAt != nil:
		return *p.before.Status.CompletedAt
	}
	return metav1.NewTime(p.now)
}

// compliantAtStart are the selected clusters the rollout left out of its plan, when it
// started, as already compliant with every managed policy: TALM lists them complete.
func (p *pass) compliantAtStart() []string {
	switch {
	case p.in.StartedNow:
		return p.in.Plan.SkippedCompliant
	case p.f.Started:
		return talm.CompliantAtStart(p.before.Clusters, p.in.Plan)
	}
	return nil
}

// recordedFinal are the clusters of the batches the records show ended once this pass's
// progress is written, with their final progress.
func (p *pass) recordedFinal() map[string]ranv1alpha1.ClusterProgress {
	out := map[string]ranv1alpha1.ClusterProgress{}
	for _, r := range p.in.Records {
		st := r.Status
		if written, ok := p.in.RecordStatus[r.Name]; ok {
			st = written
		}
		if st.FinishedAt == nil {
			continue
		}
		for _, c := range st.Clusters {
			out[c.Name] = c
		}
	}
	return out
}

// shownBatch is the 0-based batch the shortened remediation plan shows first.
func shownBatch(st *ranv1alpha1.ClusterGroupUpgradeStatus) int {
	if st.Status.CurrentBatch > 0 {
		return st.Status.CurrentBatch - 1
	}
	if st.Status.StartedAt != nil {
		return len(st.RemediationPlan) // ended: the last ones
	}
	return 0
}
