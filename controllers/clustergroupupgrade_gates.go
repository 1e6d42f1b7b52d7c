package controllers

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/window"
)

// gates turns the safety fields of the spec, and what status recorded of pauses and
// approvals, into the rollout's gates.
func gates(s *scope) rollout.Gates {
	spec := s.cgu.Spec
	g := rollout.Gates{Paused: spec.Paused}
	if s.started { // only pauses of a running rollout move its deadlines
		g.PausedFor = pausedFor(s.cgu.Status, s.now)
	}
	if spec.BatchSoak != nil {
		g.BatchSoak = spec.BatchSoak.Duration
	}
	if spec.ClusterProgressDeadline != nil {
		g.ClusterDeadline = spec.ClusterProgressDeadline.Duration
	}
	g.MaxFailures = budget(spec.MaxFailures, s.plan.Clusters())
	g.Approved = func(b int) bool {
		return slices.ContainsFunc(s.approvals, func(x ranv1alpha1.BatchApproval) bool { return x.Batch == b+1 })
	}
	if a := spec.Approval; a != nil {
		canaries := s.plan.CanaryBatches()
		g.NeedsApproval = func(b int) bool {
			return b > 0 && (a.EveryBatch || (a.AfterCanaries && canaries > 0 && b == canaries))
		}
	}
	g.PolicyChanged = changedPolicy(s)
	if sched, err := schedule(spec.MaintenanceWindows); err == nil && sched != nil && !sched.Open(s.now) {
		g.WindowClosed = true
		g.WindowOpens, _, _ = sched.Next(s.now)
	}
	return g
}

// budget is spec.maxFailures as a count of the planned clusters (a percentage rounded
// down), nil without a budget.
func budget(maxFailures *intstr.IntOrString, clusters int) *int {
	if maxFailures == nil {
		return nil
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(maxFailures, clusters, false)
	if err != nil {
		return nil
	}
	return &n
}

// pausedFor is the time paused so far: the pauses status recorded as ended, and the one
// it recorded as begun (still on, or ending with this reconcile).
func pausedFor(st ranv1alpha1.ClusterGroupUpgradeStatus, now time.Time) time.Duration {
	var d time.Duration
	if st.PausedFor != nil {
		d = st.PausedFor.Duration
	}
	if st.PausedAt != nil {
		d += now.Sub(st.PausedAt.Time)
	}
	return d
}

// schedule reads the maintenance windows; nil when the spec sets none.
func schedule(mw *ranv1alpha1.MaintenanceWindows) (*window.Schedule, error) {
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

// windowProblem says why the maintenance windows cannot be used, nil when they can.
func windowProblem(cgu *ranv1alpha1.ClusterGroupUpgrade) *rollout.Problem {
	if _, err := schedule(cgu.Spec.MaintenanceWindows); err != nil {
		return &rollout.Problem{Reason: ranv1alpha1.ReasonInvalidMaintenanceWindow, Message: err.Error()}
	}
	return nil
}

// approvals returns the recorded approvals with the one the annotations carry, if new.
func approvals(cgu *ranv1alpha1.ClusterGroupUpgrade, now time.Time) []ranv1alpha1.BatchApproval {
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

// pauseStatus records when a pause of a running rollout began and, when it ends, adds it to
// the time paused. Before the start there are no deadlines to move: nothing is recorded.
func pauseStatus(st *ranv1alpha1.ClusterGroupUpgradeStatus, paused, started bool, now time.Time) {
	switch {
	case !started:
		st.PausedAt, st.PausedFor = nil, nil
	case paused && st.PausedAt == nil:
		at := metav1.NewTime(now).Rfc3339Copy()
		st.PausedAt = &at
	case !paused && st.PausedAt != nil:
		st.PausedFor = &metav1.Duration{Duration: pausedFor(*st, now).Round(time.Second)}
		st.PausedAt = nil
	}
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

// changedPolicy names the first managed policy whose generation moved since the rollout
// accepted it, "" when none did or the rollout has not started.
func changedPolicy(s *scope) string {
	if !s.started {
		return ""
	}
	for i, ref := range s.before.ManagedPoliciesForUpgrade {
		if i >= len(s.roots) || s.roots[i] == nil || ref.Generation == 0 {
			continue
		}
		if g := s.roots[i].Generation; g != ref.Generation {
			return fmt.Sprintf("Managed policy %s/%s changed since the rollout accepted it (generation %d, now %d)",
				ref.Namespace, ref.Name, ref.Generation, g)
		}
	}
	return ""
}

// frozenPolicies marks, by their index in roots, the managed policies whose generation
// differs from the one the rollout now accepts: their enforce copies keep the accepted
// content until a batch starts with the change approved.
func frozenPolicies(s *scope, roots []*policyv1.Policy) map[int]bool {
	accepted := map[string]int64{}
	for _, ref := range acceptedPolicies(s) {
		accepted[ref.Namespace+"/"+ref.Name] = ref.Generation
	}
	out := map[int]bool{}
	for i, p := range roots {
		if g, ok := accepted[p.Namespace+"/"+p.Name]; ok && g != 0 && g != p.Generation {
			out[i] = true
		}
	}
	return out
}

// acceptedPolicies are the managed policies with the generations the rollout accepts: those
// read now when the rollout starts or a batch starts (a changed policy only lets a batch start
// once approved), those recorded before otherwise.
func acceptedPolicies(s *scope) []ranv1alpha1.PolicyReference {
	batchStarted := s.startedNow || (s.decision.Progress.Batch != s.progress.Batch && !s.decision.Progress.Finished)
	if s.started && !batchStarted {
		return s.before.ManagedPoliciesForUpgrade
	}
	out := make([]ranv1alpha1.PolicyReference, 0, len(s.roots))
	for i, p := range s.roots {
		if p == nil {
			if i < len(s.before.ManagedPoliciesForUpgrade) {
				out = append(out, s.before.ManagedPoliciesForUpgrade[i])
			}
			continue
		}
		out = append(out, ranv1alpha1.PolicyReference{Name: p.Name, Namespace: p.Namespace, Generation: p.Generation})
	}
	return out
}
