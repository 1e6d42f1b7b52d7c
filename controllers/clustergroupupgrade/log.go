package clustergroupupgrade

import (
	"k8s.io/apimachinery/pkg/api/meta"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// The operator logs each decision it carried out once, at info, read (as the events are)
// from what a write changed: the rollout starting, waiting, pausing, ending, and each batch
// starting and ending, with the batch, the counts and the reason. A reconcile that changes
// nothing logs nothing at info; at debug (-v=1) each one says what it decided and why it
// waits.

// logTransitions logs the rollout's decisions the status write carried.
func (r *Reconciler) logTransitions(s *scope) {
	before, after, log := s.before, s.cgu.Status, s.log
	for _, kind := range []string{ranv1alpha1.ConditionClustersSelected, ranv1alpha1.ConditionValidated} {
		if c := turnedFalse(before.Conditions, after.Conditions, kind); c != nil {
			log.Info("Rollout cannot start", "condition", kind, "reason", c.Reason, "message", c.Message)
		}
	}
	if c := turnedTo(before.Conditions, after.Conditions, ranv1alpha1.ConditionProgressing, blockingReasons...); c != nil {
		log.Info("Rollout blocked", "reason", c.Reason, "message", c.Message)
	}
	if before.StartedAt == nil && after.StartedAt != nil {
		log.Info("Rollout started", "batches", len(s.in.Plan.Batches), "clusters", after.Counts.Total, "enforcement", after.Enforcement)
	}
	logWaits(s)
	if before.State == after.State {
		return
	}
	switch after.State {
	case ranv1alpha1.StateCompleted, ranv1alpha1.StateTimedOut, ranv1alpha1.StateCannotStart:
		c := after.Counts
		log.Info("Rollout ended", "state", after.State, "reason", s.in.Decision.Reason, "completed", c.Completed,
			"timedOut", c.TimedOut, "failed", c.Failed, "held", c.Held, "total", c.Total, "message", after.Message)
	}
}

// logWaits logs a pause beginning or ending, and a batch beginning to wait.
func logWaits(s *scope) {
	before, after := s.before, s.cgu.Status
	switch {
	case before.PausedAt == nil && after.PausedAt != nil:
		s.log.Info("Rollout paused")
	case before.PausedAt != nil && after.PausedAt == nil:
		s.log.Info("Rollout resumed", "pausedFor", after.PausedFor)
	}
	if w := after.Waiting; w != nil && (before.Waiting == nil || before.Waiting.Reason != w.Reason || before.Waiting.Batch != w.Batch) {
		s.log.Info("Batch waits", "batch", w.Batch, "reason", w.Reason, "until", w.Until, "message", after.Message)
	}
}

// logBatch logs a batch starting or ending in a write of its first record part, and the
// clusters of the record that began to wait for a check, another rollout or the hub's cap.
func logBatch(s *scope, b *ranv1alpha1.ClusterGroupUpgradeBatch, old ranv1alpha1.ClusterGroupUpgradeBatchStatus) {
	st, index := b.Status, b.Spec.Index
	batch := s.in.Plan.Batches[index-1]
	first := b.Spec.Part == 0
	if first && old.StartedAt == nil && st.StartedAt != nil {
		s.log.Info("Batch started", "batch", index, "of", len(s.in.Plan.Batches), "clusters", len(batch.Clusters), "canary", batch.Canary,
			"deadline", s.in.Decision.BatchDeadline)
	}
	if held := newlyHeld(st, old); len(held) > 0 {
		s.log.Info("Clusters wait to start", "batch", index, "byReason", held)
	}
	if !first || old.FinishedAt != nil || st.FinishedAt == nil {
		return
	}
	ended := s.in.BatchEnded(index)
	keys := []any{"batch", index, "of", len(s.in.Plan.Batches)}
	for _, state := range []ranv1alpha1.ClusterState{ranv1alpha1.ClusterCompleted, ranv1alpha1.ClusterTimedOut, ranv1alpha1.ClusterFailed, ranv1alpha1.ClusterHeld} {
		keys = append(keys, string(state), len(ended[state]))
	}
	if st.StartedAt != nil {
		keys = append(keys, "took", st.FinishedAt.Sub(st.StartedAt.Time))
	}
	s.log.Info("Batch ended", keys...)
}

// newlyHeld counts, by reason, the clusters a record shows Pending with a reason they did
// not have before.
func newlyHeld(st, old ranv1alpha1.ClusterGroupUpgradeBatchStatus) map[string]int {
	was := make(map[string]string, len(old.Clusters))
	for _, c := range old.Clusters {
		was[c.Name] = string(c.State) + "/" + c.Reason
	}
	var out map[string]int
	for _, c := range st.Clusters {
		if c.State != ranv1alpha1.ClusterPending || c.Reason == "" || was[c.Name] == string(c.State)+"/"+c.Reason {
			continue
		}
		if out == nil {
			out = map[string]int{}
		}
		out[c.Reason]++
	}
	return out
}

// logDecision traces, at debug, what one reconcile decided.
func logDecision(s *scope) {
	d := s.in.Decision
	if !s.log.V(1).Enabled() {
		return
	}
	for _, n := range s.in.Notes {
		s.log.V(1).Info(n.Message, n.Values...)
	}
	enforcing := 0
	for _, clusters := range d.Enforce {
		enforcing += len(clusters)
	}
	keys := []any{"state", d.State, "reason", d.Reason, "batch", d.Progress.Batch + 1, "enforcing", enforcing,
		"holds", len(d.Holds), "endedBatches", len(d.Ended), "wake", d.Wake}
	if c := meta.FindStatusCondition(s.before.Conditions, ranv1alpha1.ConditionProgressing); c != nil {
		keys = append(keys, "wasReason", c.Reason)
	}
	s.log.V(1).Info("Decided", keys...)
}
