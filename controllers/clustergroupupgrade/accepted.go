package clustergroupupgrade

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/gates"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

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

// frozenPolicies marks, by their index in roots, the managed policies whose enforce copies
// keep the content the rollout accepted (gates.Frozen).
func frozenPolicies(s *scope, roots []*policyv1.Policy) map[int]bool {
	return gates.Frozen(acceptedPolicies(s), roots)
}

// acceptedPolicies are the managed policies with the generations the rollout accepts after
// this decision (gates.Accepted): a batch starts when the decision moved to another one.
func acceptedPolicies(s *scope) []ranv1alpha1.PolicyReference {
	batchStarts := s.startedNow || (s.decision.Progress.Batch != s.progress.Batch && !s.decision.Progress.Finished)
	return gates.Accepted(s.before.ManagedPoliciesForUpgrade, s.roots, s.started, batchStarts)
}
