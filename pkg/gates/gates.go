// Package gates builds the gates of a rollout (rollout.Gates) from what one reconcile
// gathered: which batch waits and for what (a pause, an approval, a maintenance window, a
// managed policy that changed, pre-caching), which clusters may not start (another rollout
// has them, the hub-wide cap, the upgrade checks, the health check, the pre-upgrade actions),
// and how a cluster that completed its policies is verified (the health check after the
// upgrade, the post-upgrade actions). It owns these decisions and nothing else: plain values
// in, gates out, no client and no clock.
package gates

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/analysis"
	"github.com/cgu-operator/cgu-operator/pkg/freeze"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
	"github.com/cgu-operator/cgu-operator/pkg/window"
)

// Input is what the gates of one reconcile are built from.
type Input struct {
	// Upgrade is the ClusterGroupUpgrade as read: its spec's safety fields, and what its
	// status recorded of pauses.
	Upgrade *ranv1alpha1.ClusterGroupUpgrade
	Now     time.Time
	// Started is true when the rollout started before this reconcile.
	Started bool
	Plan    plan.Plan
	// Approvals are the approvals recorded, with a new one (Approvals).
	Approvals []ranv1alpha1.BatchApproval
	// Roots are the managed root policies as read now, in the order of
	// status.managedPoliciesForUpgrade; an entry is nil when its policy is gone.
	Roots []*policyv1.Policy
	// Accepted are the managed policies with the generations the rollout accepted, once
	// started: status.managedPoliciesForUpgrade, or the batch records' when the status lost it.
	Accepted []ranv1alpha1.PolicyReference
	// Busy maps each cluster another rollout has InProgress to that rollout.
	Busy map[string]string
	// Capacity is the room left under the hub-wide cap; nil without a cap.
	Capacity *int
	// Frozen says which FleetFreeze freezes the fleet and why ("" when none does).
	Frozen string
	// Precaching says how far pre-caching got while it has not ended ("" otherwise).
	Precaching string
	// Backup says how far the backup got while it has not ended ("" otherwise), and
	// BackupDeadline when the backups time out.
	Backup         string
	BackupDeadline time.Time
	// Progress is the progress recorded before this reconcile: the holds are for the
	// clusters that have not started (Unstarted).
	Progress rollout.Progress
	// Verdicts are the upgrade checks' verdicts on the clusters that have not started; nil
	// without spec.upgradeChecks.pathValidation.
	Verdicts map[string]upgradecheck.Verdict
	// HealthBefore are the answers of the health check before the upgrade, on the clusters
	// of the running batch about to start; HealthAfter on the clusters verifying. A cluster
	// without an answer waits for one.
	HealthBefore, HealthAfter map[string]upgradecheck.HealthRun
	// Works is true when the hub's ManifestWorks were read: only then do the pre- and
	// post-upgrade actions gate clusters. Pre and Post are what their ManifestWorks say on
	// the clusters about to start and on those verifying.
	Works     bool
	Pre, Post map[string]manifestwork.Observation
	// Measured are the analysis measurements taken for this decision, by gate name.
	Measured map[string]analysis.Measurement
}

// Build returns the gates of the rollout.
func Build(in Input) rollout.Gates {
	spec := in.Upgrade.Spec
	g := rollout.Gates{Paused: spec.Paused, Frozen: in.Frozen, Busy: in.Busy, Capacity: in.Capacity, Precaching: in.Precaching, Backup: in.Backup,
		BackupDeadline: in.BackupDeadline}
	if in.Started { // only pauses of a running rollout move its deadlines
		g.PausedFor = PausedFor(in.Upgrade.Status, in.Now)
	}
	if spec.BatchSoak != nil {
		g.BatchSoak = spec.BatchSoak.Duration
	}
	if spec.ClusterProgressDeadline != nil {
		g.ClusterDeadline = spec.ClusterProgressDeadline.Duration
	}
	g.MaxFailures = Budget(spec.MaxFailures, in.Plan.Clusters())
	g.Approval = approval(spec.Approval, in.Plan, in.Approvals)
	if in.Started {
		g.PolicyChanged = ChangedPolicy(in.Accepted, in.Roots)
	}
	if sched, err := Schedule(spec.MaintenanceWindows); err == nil && sched != nil && !sched.Open(in.Now) {
		g.WindowClosed = true
		g.WindowOpens, _, _ = sched.Next(in.Now)
	}
	g.Holds = holds(in)
	g.Verify, g.Verifications = verifications(in)
	g.Analysis = Analysis(spec.Analysis, in.Measured)
	return g
}

// Budget is spec.maxFailures as a count of the planned clusters (a percentage rounded
// down), nil without a budget.
func Budget(maxFailures *intstr.IntOrString, clusters int) *int {
	if maxFailures == nil {
		return nil
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(maxFailures, clusters, false)
	if err != nil {
		return nil
	}
	return &n
}

// approval turns spec.approval and the approvals recorded into the rollout's approval gate.
func approval(a *ranv1alpha1.ApprovalGates, p plan.Plan, approvals []ranv1alpha1.BatchApproval) rollout.Approval {
	var out rollout.Approval
	for _, x := range approvals {
		out.Approved = append(out.Approved, x.Batch-1)
	}
	if a == nil {
		return out
	}
	out.EveryBatch = a.EveryBatch
	if canaries := p.CanaryBatches(); a.AfterCanaries && canaries > 0 {
		out.Batch = canaries
	}
	return out
}

// Approvals returns the recorded approvals with the one the annotations carry, if new:
// kubectl cgu approve sets the batch (1-based) and who approved it.
func Approvals(cgu *ranv1alpha1.ClusterGroupUpgrade, now time.Time) []ranv1alpha1.BatchApproval {
	out := slices.Clone(cgu.Status.Approvals)
	batch, err := strconv.Atoi(cgu.Annotations[ranv1alpha1.AnnotationApproveBatch])
	if err != nil || batch < 1 {
		return out
	}
	if slices.ContainsFunc(out, func(a ranv1alpha1.BatchApproval) bool { return a.Batch == batch }) {
		return out
	}
	by := cgu.Annotations[ranv1alpha1.AnnotationApprovedBy]
	out = append(out, ranv1alpha1.BatchApproval{Batch: batch, By: rollout.Truncate(by, 253), At: metav1.NewTime(now).Rfc3339Copy()})
	if len(out) > ranv1alpha1.ApprovalLimit {
		out = out[len(out)-ranv1alpha1.ApprovalLimit:]
	}
	return out
}

// PausedFor is the time paused so far: the pauses status recorded as ended, and the one it
// recorded as begun (still on, or ending with this reconcile). Status keeps whole seconds, so
// the current pause counts from its recorded start to now cut to the second as well: a pause
// of two hours is two hours, whatever fraction of a second the clock showed when it began.
func PausedFor(st ranv1alpha1.ClusterGroupUpgradeStatus, now time.Time) time.Duration {
	var d time.Duration
	if st.PausedFor != nil {
		d = st.PausedFor.Duration
	}
	if st.PausedAt != nil {
		d += max(now.Truncate(time.Second).Sub(st.PausedAt.Time), 0)
	}
	return d
}

// RecordPause records in status when a pause of a running rollout began and, when it ends,
// adds it to the time paused. Before the start there are no deadlines to move: nothing is
// recorded.
func RecordPause(st *ranv1alpha1.ClusterGroupUpgradeStatus, paused, started bool, now time.Time) {
	switch {
	case !started:
		st.PausedAt, st.PausedFor = nil, nil
	case paused && st.PausedAt == nil:
		at := metav1.NewTime(now).Rfc3339Copy()
		st.PausedAt = &at
	case !paused && st.PausedAt != nil:
		st.PausedFor = &metav1.Duration{Duration: PausedFor(*st, now)}
		st.PausedAt = nil
	}
}

// Schedule reads the maintenance windows; nil when the spec sets none.
func Schedule(mw *ranv1alpha1.MaintenanceWindows) (*window.Schedule, error) {
	if mw == nil {
		return nil, nil
	}
	s := &window.Schedule{}
	if mw.StartAt != nil {
		s.StartAt = mw.StartAt.Time
	}
	for i, w := range mw.Windows {
		parsed, err := window.Parse(w.Days, w.Start, w.Duration.Duration.String(), w.TimeZone)
		if err != nil {
			return nil, fmt.Errorf("spec.maintenanceWindows.windows[%d]: %w", i, err)
		}
		s.Windows = append(s.Windows, parsed)
	}
	return s, nil
}

// WindowProblem says why the maintenance windows cannot be used (Validated=False), nil when
// they can.
func WindowProblem(mw *ranv1alpha1.MaintenanceWindows) *rollout.Problem {
	if _, err := Schedule(mw); err != nil {
		return &rollout.Problem{Reason: ranv1alpha1.ReasonInvalidMaintenanceWindow, Message: err.Error()}
	}
	return nil
}

// ChangedPolicy names the first managed policy whose generation moved since the rollout
// accepted it (accepted, status.managedPoliciesForUpgrade; roots in the same order, nil
// when gone), "" when none did.
func ChangedPolicy(accepted []ranv1alpha1.PolicyReference, roots []*policyv1.Policy) string {
	for i, ref := range accepted {
		if i >= len(roots) || roots[i] == nil || ref.Generation == 0 {
			continue
		}
		if g := roots[i].Generation; g != ref.Generation {
			return fmt.Sprintf("Managed policy %s/%s changed since the rollout accepted it (generation %d, now %d)",
				ref.Namespace, ref.Name, ref.Generation, g)
		}
	}
	return ""
}

// Accepted returns the managed policies with the generations the rollout accepts after this
// reconcile (status.managedPoliciesForUpgrade): those read now (roots, nil when gone) when the
// rollout or a batch starts (a changed policy lets a batch start only once approved), those
// recorded before otherwise. A policy gone keeps its recorded entry.
func Accepted(recorded []ranv1alpha1.PolicyReference, roots []*policyv1.Policy, started, batchStarts bool) []ranv1alpha1.PolicyReference {
	if started && !batchStarts {
		return recorded
	}
	out := make([]ranv1alpha1.PolicyReference, 0, len(roots))
	for i, p := range roots {
		if p == nil {
			if i < len(recorded) {
				out = append(out, recorded[i])
			}
			continue
		}
		out = append(out, ranv1alpha1.PolicyReference{Name: p.Name, Namespace: p.Namespace, Generation: p.Generation})
	}
	return out
}

// Frozen marks, by their index in roots, the managed policies whose generation differs from
// the one the rollout accepts: their enforce copies keep the accepted content until a batch
// starts with the change approved.
func Frozen(accepted []ranv1alpha1.PolicyReference, roots []*policyv1.Policy) map[int]bool {
	generations := make(map[string]int64, len(accepted))
	for _, ref := range accepted {
		generations[ref.Namespace+"/"+ref.Name] = ref.Generation
	}
	out := map[int]bool{}
	for i, p := range roots {
		if g, ok := generations[p.Namespace+"/"+p.Name]; ok && g != 0 && g != p.Generation {
			out[i] = true
		}
	}
	return out
}

// FleetFrozen says which FleetFreezes freeze the fleet and why, for the rollouts' status:
// "the fleet is frozen by FleetFreeze manual (alice, 2026-12-02T15:00:00Z): holiday sales",
// or "the fleet is frozen by the alert queries of FleetFreeze noc: ...", and how many more
// freeze it; "" when none does. A person's freeze (spec.frozen) is named before alerts.
func FleetFrozen(freezes []ranv1alpha1.FleetFreeze) string {
	var frozen []string
	for _, f := range sortedByName(freezes) {
		if f.Spec.Frozen {
			frozen = append(frozen, manualFreeze(f))
		}
	}
	for _, f := range sortedByName(freezes) {
		if why := freeze.Reason(&f); why != "" {
			frozen = append(frozen, "the fleet is frozen by the alert queries of FleetFreeze "+f.Name+": "+why)
		}
	}
	if len(frozen) == 0 {
		return ""
	}
	msg := frozen[0]
	if len(frozen) > 1 {
		msg += fmt.Sprintf(" (and %d more freezes)", len(frozen)-1)
	}
	return msg
}

func sortedByName(freezes []ranv1alpha1.FleetFreeze) []ranv1alpha1.FleetFreeze {
	return slices.SortedFunc(slices.Values(freezes), func(a, b ranv1alpha1.FleetFreeze) int { return cmp.Compare(a.Name, b.Name) })
}

// manualFreeze says who froze the fleet with f, when and why.
func manualFreeze(f ranv1alpha1.FleetFreeze) string {
	var who []string
	if f.Spec.ChangedBy != "" {
		who = append(who, f.Spec.ChangedBy)
	}
	if f.Spec.ChangedAt != nil {
		who = append(who, f.Spec.ChangedAt.UTC().Format(time.RFC3339))
	}
	msg := "the fleet is frozen by FleetFreeze " + f.Name
	if len(who) > 0 {
		msg += " (" + strings.Join(who, ", ") + ")"
	}
	return msg + ": " + f.Spec.Reason
}
