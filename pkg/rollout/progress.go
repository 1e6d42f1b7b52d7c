package rollout

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// The operator writes a change of status that is only clusters moving on at most once a
// pace, a few seconds that grow with the status (Pace); every other change at once. A change is
// "only clusters moving on" when a restarted operator would derive it again from the
// same compliance, and no later decision reads a time it sets: an InProgress cluster
// starting a later policy, or completing when no batch soak reads its completion time.
// A cluster starting to soak on a policy (compliantSince), starting, timing out, failing
// or being held, a batch starting or ending, a new state, reason or condition are never
// deferred: they carry deadlines, soak times, events and the fleet-wide counts of
// clusters in progress. Until a deferred change is written, each reconcile derives it
// again, with its own time.

// RecordProgressOnly reports whether a batch record's status changed from old to cur
// only by InProgress clusters moving on; batchSoak says a batch soak reads the clusters'
// completion times.
func RecordProgressOnly(old, cur ranv1alpha1.ClusterGroupUpgradeBatchStatus, batchSoak bool) bool {
	if !clustersMovedOn(old.Clusters, cur.Clusters, batchSoak, false) {
		return false
	}
	rest := cur
	rest.Clusters = old.Clusters
	return equality.Semantic.DeepEqual(old, rest)
}

// clustersMovedOn reports whether old and cur list as many clusters, each the same or moved
// on. With shown, cur may list clusters old did not, which must be InProgress or Completed:
// a list that shows only some of a batch's clusters, not done first, shows others as
// clusters complete.
func clustersMovedOn(old, cur []ranv1alpha1.ClusterProgress, batchSoak, shown bool) bool {
	if len(old) != len(cur) {
		return false
	}
	// Both lists are in the batch's order, but for clusters shown as others complete: old's
	// clusters by name only from the first one out of place.
	var was map[string]int
	for i, c := range cur {
		o, ok := old[i], old[i].Name == c.Name
		if !ok {
			if was == nil {
				was = make(map[string]int, len(old))
				for j := range old {
					was[old[j].Name] = j
				}
			}
			var j int
			if j, ok = was[c.Name]; ok {
				o = old[j]
			}
		}
		switch {
		case !ok && !shown:
			return false
		case !ok:
			o = ranv1alpha1.ClusterProgress{Name: c.Name, State: ranv1alpha1.ClusterInProgress}
		}
		if !movedOn(o, c, batchSoak) {
			return false
		}
	}
	return true
}

// movedOn reports whether a cluster's progress is the same, or that of an InProgress
// cluster that started a later policy, or completed (unless batchSoak). A completion not
// written yet to the cluster's batch record is derived again by each reconcile, with its
// own time: a status that already shows it completed differs only by that time, which is
// the same progress.
func movedOn(old, cur ranv1alpha1.ClusterProgress, batchSoak bool) bool {
	switch {
	case sameProgress(old, cur):
		return true
	case old.State == ranv1alpha1.ClusterCompleted && cur.State == ranv1alpha1.ClusterCompleted && !batchSoak:
		old.Since = cur.Since
		return sameProgress(old, cur)
	case old.State != ranv1alpha1.ClusterInProgress || old.Reason != "" || cur.CompliantSince != nil:
		return false
	case cur.State == ranv1alpha1.ClusterCompleted:
		return !batchSoak
	}
	return cur.State == ranv1alpha1.ClusterInProgress && cur.Reason == ""
}

// StatusProgressOnly reports whether a ClusterGroupUpgrade's status changed from old to cur
// only by the clusters of the current batch moving on (as RecordProgressOnly): the same
// state, reason, batch and conditions (but for their messages), more clusters completed
// (shown in TALM's fields too) and nothing else.
func StatusProgressOnly(old, cur *ranv1alpha1.ClusterGroupUpgradeStatus, batchSoak bool) bool {
	if !sameBatch(old, cur) || !countsMovedOn(old.Counts, cur.Counts) || !sameConditions(old.Conditions, cur.Conditions) ||
		!clustersMovedOn(old.CurrentBatch.Clusters, cur.CurrentBatch.Clusters, batchSoak, true) {
		return false
	}
	// Everything else must be unchanged: compare with the moving parts taken from old (a
	// copy of cur's fields, none of what they point to changed).
	rest, batch := *cur, *cur.CurrentBatch
	rest.Message, rest.Progress, rest.Counts = old.Message, old.Progress, old.Counts
	batch.Clusters, rest.CurrentBatch = old.CurrentBatch.Clusters, &batch
	rest.Conditions = old.Conditions
	// TALM's view of the same progress (pkg/talm) moves with it.
	rest.Clusters, rest.Status.CurrentBatchRemediationProgress = old.Clusters, old.Status.CurrentBatchRemediationProgress
	rest.Shortened = old.Shortened
	return equality.Semantic.DeepEqual(*old, rest)
}

// sameBatch reports whether both statuses are in the same state with the same current batch.
func sameBatch(old, cur *ranv1alpha1.ClusterGroupUpgradeStatus) bool {
	return old.State == cur.State && old.CurrentBatch != nil && cur.CurrentBatch != nil && old.CurrentBatch.Index == cur.CurrentBatch.Index
}

// countsMovedOn reports whether only clusters of the current batch completed.
func countsMovedOn(a, b ranv1alpha1.ClusterCounts) bool {
	return a.Total == b.Total && a.TimedOut == b.TimedOut && a.Failed == b.Failed && a.Held == b.Held && a.Pending == b.Pending &&
		b.Completed >= a.Completed && a.InProgress+a.Completed == b.InProgress+b.Completed
}

// sameConditions reports whether the same conditions have the same status, reason and
// generation; their messages may differ.
func sameConditions(old, cur []metav1.Condition) bool {
	if len(old) != len(cur) {
		return false
	}
	for _, c := range cur {
		was := meta.FindStatusCondition(old, c.Type)
		if was == nil || was.Status != c.Status || was.Reason != c.Reason || was.ObservedGeneration != c.ObservedGeneration {
			return false
		}
	}
	return true
}
