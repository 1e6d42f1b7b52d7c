package rollout

import (
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

// A window batch (spec.remediationStrategy.mode Window) keeps at most batch.Window of its
// clusters in progress: the clusters that run are stepped first, then the clusters that
// have not started take the free slots in plan order. Each cluster's deadline counts from its
// own start: the batch's time divided by its waves (its clusters over the window, rounded
// up), as a batch of TALM's gets the rollout's time divided by the batches. Whatever keeps
// a batch from starting keeps a window's next cluster from starting: a pause, a closed
// maintenance window, the failure budget spent, a timed-out cluster under
// batchTimeoutAction Abort. The clusters in progress go on; the batch ends once none is, its
// clusters that never started left Pending, as the batches after an early end are.
//
// The free slots are filled together: once clusters of the window started, no more start
// while Gates.StartsPaced says the operator wrote starts less than its pace ago (Pace),
// and the slots freed meanwhile start at once after it. Each start is written to the hub
// at once (a deadline counts from it), so filling each slot as it frees would write the
// rollout's status, its batch record and the Placements with every cluster done; together,
// they are written once for the slots freed in the interval, as a batch of TALM's starts
// its clusters.

// stepWindow steps a window batch; it returns what stepBatch returns, and whether starting
// is stopped for good (the failure budget or Abort), which ends the batch once no cluster
// runs.
func stepWindow(f Facts, p Progress, batch plan.Batch, deadline time.Time) (map[string]Cluster, map[int][]string, time.Time, []Hold, bool) {
	w := &windowStep{stepped: newStepped(len(batch.Clusters)), f: f, p: p, deadline: deadline,
		share: waveShare(p.BatchStarted, deadline, len(batch.Clusters), batch.Window)}
	waiting := w.stepStarted(batch)
	stopped := stopsStarting(f, w.clusters, w.failures)
	w.startWaiting(waiting, pacedWidth(batch.Window, f.Gates.MaxFailures, w.failures, w.finished), stopped, f.Gates.StartsPaced && w.anyStarted(batch))
	return w.clusters, w.enforce, w.wake, w.holds, stopped
}

// windowStep is one decision on a window batch.
type windowStep struct {
	*stepped
	f        Facts
	p        Progress
	deadline time.Time
	share    time.Duration
	// running, failures and finished count the clusters in progress, failed or timed out,
	// and done, the batches before included for the last two.
	running, failures, finished int
}

// stepStarted steps the clusters that started, each to its own deadline, and returns those
// that did not, in plan order.
func (w *windowStep) stepStarted(batch plan.Batch) []string {
	w.failures = w.p.Done.Failed + w.p.Done.TimedOut
	w.finished = w.failures + w.p.Done.Completed
	var waiting []string
	for _, name := range batch.Clusters {
		c := w.p.Clusters[name]
		if c.State != ranv1alpha1.ClusterInProgress && !c.Terminal() {
			waiting = append(waiting, name)
			continue
		}
		next, again, _ := stepCluster(w.f, name, c, windowDeadline(w.f, w.p, c.Started, w.share, w.deadline), nil)
		next.Started = c.Started
		w.note(name, next, again, nil)
		switch next.State {
		case ranv1alpha1.ClusterInProgress:
			w.running++
		case ranv1alpha1.ClusterFailed, ranv1alpha1.ClusterTimedOut:
			w.failures++
			w.finished++
		case ranv1alpha1.ClusterCompleted:
			w.finished++
		}
	}
	return waiting
}

// anyStarted reports whether a cluster of the window started.
func (w *windowStep) anyStarted(batch plan.Batch) bool {
	for _, name := range batch.Clusters {
		if !w.p.Clusters[name].Started.IsZero() {
			return true
		}
	}
	return false
}

// startWaiting starts the clusters that wait, in plan order, while fewer than width run,
// nothing stops starts and starts are not paced; the others wait for a slot until the
// batch's deadline.
func (w *windowStep) startWaiting(waiting []string, width int, stopped, paced bool) {
	capacity := roomUnderCap(w.f.Gates)
	for _, name := range waiting {
		if stopped || paced || w.f.Gates.WindowClosed || w.running >= width {
			next, again := waitPending("", w.f.Now, w.deadline)
			w.note(name, next, again, nil)
			continue
		}
		next, again, hold := stepCluster(w.f, name, w.p.Clusters[name], windowDeadline(w.f, w.p, w.f.Now, w.share, w.deadline), capacity)
		if next.State != ranv1alpha1.ClusterPending && hold == nil {
			next.Started = w.f.Now
		}
		w.note(name, next, again, hold)
		if next.State == ranv1alpha1.ClusterInProgress {
			w.running++
		}
	}
}

// stopsStarting reports whether no cluster of the window may start again: the failure
// budget is spent, or a cluster timed out under batchTimeoutAction Abort.
func stopsStarting(f Facts, clusters map[string]Cluster, failures int) bool {
	if f.Gates.MaxFailures != nil && failures > *f.Gates.MaxFailures {
		return true
	}
	if !f.Abort {
		return false
	}
	for _, c := range clusters {
		if c.State == ranv1alpha1.ClusterTimedOut {
			return true
		}
	}
	return false
}

// pacedWidth is how many clusters of a window may be in progress: its size, narrowed once
// clusters failed under a failure budget, so that the clusters in progress would not, at the
// failure rate seen so far, spend more than the budget left. A batch of TALM's checks its
// budget when it ends, a window with every start: without this, the window would keep its
// size in progress until the budget is spent, and let through more failures past it than a
// batch does.
func pacedWidth(window int, budget *int, failures, finished int) int {
	if budget == nil || failures == 0 || finished == 0 {
		return window
	}
	left := *budget - failures
	if left < 0 {
		return 0
	}
	// left / (failures / finished), rounded down, at least one cluster: with the budget
	// spent to the last failure, one cluster at a time.
	return max(min(window, left*finished/failures), 1)
}

// waveShare is the time each cluster of a window batch gets: the batch's time divided by
// its waves.
func waveShare(started, deadline time.Time, clusters, window int) time.Duration {
	waves := 1
	if window > 0 {
		waves = (clusters + window - 1) / window
	}
	return max(deadline.Sub(started), 0) / time.Duration(max(waves, 1))
}

// windowDeadline is when a cluster of a window batch that started at started times out: its
// share of the batch's time after its start, moved by the pauses of the batch, or the
// spec's per-cluster deadline if earlier, and never after the batch's deadline.
func windowDeadline(f Facts, p Progress, started time.Time, share time.Duration, batchDeadline time.Time) time.Time {
	if started.IsZero() {
		started = f.Now
	}
	_, paused := f.Gates.shift(p)
	own := started.Add(share + paused)
	if f.Gates.ClusterDeadline > 0 {
		if limit := started.Add(f.Gates.ClusterDeadline + paused); limit.Before(own) {
			own = limit
		}
	}
	if own.After(batchDeadline) {
		return batchDeadline
	}
	return own
}

// windowDone reports whether a window batch is over: every cluster is terminal, or starting
// stopped for good and no cluster runs.
func windowDone(clusters map[string]Cluster, batch plan.Batch, stopped bool) bool {
	for _, name := range batch.Clusters {
		c := clusters[name]
		if c.Terminal() {
			continue
		}
		if !stopped || c.State == ranv1alpha1.ClusterInProgress {
			return false
		}
	}
	return true
}
