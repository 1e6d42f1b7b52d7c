package clustergroupupgrade

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
)

// setTALMStatus writes the fields of the status that TALM writes, with TALM's meaning
// (pkg/talm), from what this reconcile gathered and decided, then keeps the whole status
// within ranv1alpha1.TALMStatusBudget.
func setTALMStatus(st *ranv1alpha1.ClusterGroupUpgradeStatus, s *scope) {
	d := s.decision
	refs := st.ManagedPoliciesForUpgrade
	steps := talm.Steps{Policies: make([]string, len(refs)), Templates: s.cgu.Spec.ManifestWorkTemplates}
	for i, ref := range refs {
		steps.Policies[i] = ref.Name
	}
	if !s.started {
		// Frozen at the start, like the policies they describe.
		st.ManagedPoliciesCompliantBeforeUpgrade = namesOf(s.compliantBefore)
		st.ManagedPoliciesContent = talm.Content(s.roots)
		st.ComputedMaxConcurrency = 0
		if rs := s.cgu.Spec.RemediationStrategy; rs != nil && len(s.selected) > 0 {
			st.ComputedMaxConcurrency = talm.ComputedMaxConcurrency(rs.MaxConcurrency, len(s.selected))
		}
	}
	st.ManagedPoliciesNs = talm.Namespaces(refs)
	st.RemediationPlan = talm.RemediationPlan(s.plan)
	objects := talm.ObjectsOf(s.cgu.Namespace, s.cgu.Name, s.mode, refs, s.cgu.Spec.ManifestWorkTemplates)
	if d.State == ranv1alpha1.StateCompleted && deleteObjects(s.cgu) {
		objects = talm.Objects{} // deleted with the rollout's other objects
	}
	st.Placements, st.PlacementBindings = objects.Placements, objects.PlacementBindings
	st.CopiedPolicies, st.SafeResourceNames = objects.CopiedPolicies, objects.SafeResourceNames
	st.Status = talm.Progress(d, s.plan, steps, endedAt(st, s).Time)
	st.Clusters = talm.Clusters(compliantAtStart(s), s.plan, talm.FinishedFrom(recordedFinal(s), d, steps), steps)
	talm.Shorten(st, shownBatch(st))
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
func endedAt(st *ranv1alpha1.ClusterGroupUpgradeStatus, s *scope) metav1.Time {
	switch {
	case st.CompletedAt != nil:
		return *st.CompletedAt
	case s.before.Status.CompletedAt != nil:
		return *s.before.Status.CompletedAt
	}
	return metav1.NewTime(s.now)
}

// compliantAtStart are the selected clusters the rollout left out of its plan, when it
// started, as already compliant with every managed policy: TALM lists them complete.
func compliantAtStart(s *scope) []string {
	switch {
	case s.startedNow:
		return s.plan.SkippedCompliant
	case s.started:
		return talm.CompliantAtStart(s.before.Clusters, s.plan)
	}
	return nil
}

// recordedFinal are the clusters of the batches the records show ended, with their final
// progress.
func recordedFinal(s *scope) map[string]ranv1alpha1.ClusterProgress {
	out := map[string]ranv1alpha1.ClusterProgress{}
	for _, r := range s.records {
		if r.Status.FinishedAt == nil {
			continue
		}
		for _, c := range r.Status.Clusters {
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
