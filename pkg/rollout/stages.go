package rollout

import (
	"fmt"
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

// A progressive batch (spec.remediationStrategy.mode Progressive) starts its clusters in
// stages, in plan order, each stage once every cluster of the previous one is done. A
// stage's size is batch.Stages[step]: the first stage takes the first size, and each healthy
// stage moves the next one a step up, to the last size, which repeats. A stage is healthy
// when its failed and timed-out clusters are within its share of the failure budget
// (maxFailures times its clusters over the plan's, rounded up), or have none without a
// budget. An unhealthy stage sends the next stage back to the first size, or,
// with StopUnhealthy, stops starting.
//
// Nothing but the clusters' records holds the stages: each cluster records the stage it
// started in and when, and the steps, resets and deadlines are read again from them in each
// decision, so that a restarted operator goes on where it was.
//
// Each stage's clusters share a deadline: the stage's share of the batch's time left when
// it started, as if every stage from there were healthy (the time left over the stages
// left), moved by the batch's pauses, or the spec's per-cluster deadline if earlier. A
// pause, a closed maintenance window, the spent failure budget and a timeout under
// batchTimeoutAction Abort keep a stage from starting, and from filling up, as in a window.

// Stage is where a progressive batch stands: its last stage.
type Stage struct {
	// Number is the stage's 1-based position in the batch.
	Number int
	// Size is how many clusters it takes, Step its 0-based step in the batch's sizes.
	Size, Step int
	// Started is when its first cluster started, Deadline when its clusters time out.
	Started, Deadline time.Time
	// Resets counts the unhealthy stages that sent the growth back to the first size.
	Resets int
	// Unhealthy says what made the last unhealthy stage so, empty when none was.
	Unhealthy string
	// Stopped is true once an unhealthy stage stopped a batch whose unhealthy stages stop.
	Stopped bool
}

// stageRun is one stage of a progressive batch, as the clusters' records show it.
type stageRun struct {
	size, step        int
	started, deadline time.Time
	members, failures int
	running           bool
	before            int // clusters that started in earlier stages
}

// stageHistory is what the clusters of a progressive batch say of its stages: each stage,
// whether the last one ended (none of its clusters runs, and it is full or nothing is left
// to start), the step of the stage after it, and the resets and the last unhealthy stage so
// far. Stages run one after the other, so every stage before the last one ended.
type stageHistory struct {
	runs      []stageRun // by stage number - 1
	lastEnded bool
	// next and nextSize are the step and size of the stage after the last one.
	next, nextSize int
	resets         int
	unhealthy      string
	stopped        bool
}

func readStages(f Facts, batch plan.Batch, clusters map[string]Cluster, done ranv1alpha1.ClusterCounts) stageHistory {
	var h stageHistory
	var waiting int
	h.runs, waiting = groupStages(batch, clusters)
	step, before := 0, 0
	failures, finished := done.Failed+done.TimedOut, done.Failed+done.TimedOut+done.Completed
	for i := range h.runs {
		r := &h.runs[i]
		r.step, r.size, r.before = step, stageSize(f, batch, step, failures, finished), before
		before += r.members
		failures, finished = failures+r.failures, finished+r.members
		if i == len(h.runs)-1 && (r.running || (r.members < r.size && waiting > 0)) {
			break // the last stage has not ended: nothing is known of its health yet
		}
		h.lastEnded = i == len(h.runs)-1
		switch {
		case healthy(f, *r):
			step = min(step+1, len(batch.Stages)-1)
		case h.lastEnded && waiting == 0:
			h.unhealthy = unhealthyMessage(f, i+1, *r, "was the last stage")
		case batch.StopUnhealthy:
			h.stopped, h.unhealthy = true, unhealthyMessage(f, i+1, *r, "stops the rollout")
		default:
			h.resets++
			h.unhealthy = unhealthyMessage(f, i+1, *r, fmt.Sprintf("sent the growth back to %d clusters", batch.Stages[0]))
			step = 0
		}
	}
	h.next, h.nextSize = step, stageSize(f, batch, step, failures, finished)
	return h
}

// stageSize is the size of a stage at step, after finished clusters of which failures
// failed or timed out: the step's size, narrowed as a window is (pacedWidth) so that, at the
// failure rate seen so far, the stage would not spend more than the budget left.
func stageSize(f Facts, batch plan.Batch, step, failures, finished int) int {
	return pacedWidth(batch.Stages[min(step, len(batch.Stages)-1)], f.Gates.MaxFailures, failures, finished)
}

// groupStages sorts the clusters of a progressive batch that started by their stage, and
// counts those that wait to start.
func groupStages(batch plan.Batch, clusters map[string]Cluster) ([]stageRun, int) {
	var runs []stageRun
	waiting := 0
	for _, name := range batch.Clusters {
		c := clusters[name]
		if c.Stage <= 0 {
			if !c.Terminal() {
				waiting++
			}
			continue
		}
		for len(runs) < c.Stage {
			runs = append(runs, stageRun{})
		}
		r := &runs[c.Stage-1]
		r.members++
		if r.started.IsZero() || (!c.Started.IsZero() && c.Started.Before(r.started)) {
			r.started = c.Started
		}
		switch c.State {
		case ranv1alpha1.ClusterFailed, ranv1alpha1.ClusterTimedOut:
			r.failures++
		case ranv1alpha1.ClusterInProgress:
			r.running = true
		}
	}
	return runs, waiting
}

// healthy reports whether an ended stage's failures are within its share of the failure
// budget.
func healthy(f Facts, r stageRun) bool {
	return r.failures <= budgetShare(f, r.members)
}

// budgetShare is the failures a stage of members clusters may have: its share of
// spec.maxFailures over the plan's clusters, rounded up (one failure in a small stage is
// within a budget of 1% when the stage is under 100 clusters); none without a budget.
func budgetShare(f Facts, members int) int {
	if f.Gates.MaxFailures == nil {
		return 0
	}
	total := max(f.Plan.Clusters(), 1)
	return (*f.Gates.MaxFailures*members + total - 1) / total
}

func unhealthyMessage(f Facts, number int, r stageRun, outcome string) string {
	share := "none without spec.maxFailures"
	if f.Gates.MaxFailures != nil {
		share = fmt.Sprintf("%d for %d clusters under spec.maxFailures %d", budgetShare(f, r.members), r.members, *f.Gates.MaxFailures)
	}
	return fmt.Sprintf("Stage %d had %d failed or timed-out of %d clusters, more than its share of the failure budget (%s), and %s",
		number, r.failures, r.members, share, outcome)
}

// stageDeadline is when the clusters of a stage that started at started, after before
// clusters, time out: its share of the batch's time left.
func stageDeadline(f Facts, p Progress, batch plan.Batch, r stageRun, batchDeadline time.Time) time.Time {
	_, paused := f.Gates.shift(p)
	left := plan.StagesFor(batch.Stages, r.step, len(batch.Clusters)-r.before)
	share := max(batchDeadline.Add(-paused).Sub(r.started), 0) / time.Duration(left)
	return windowDeadline(f, p, r.started, share, batchDeadline)
}

// stepStages steps a progressive batch; it returns what stepWindow returns, and the stage
// the batch stands at (nil before the first).
func stepStages(f Facts, p Progress, batch plan.Batch, deadline time.Time) (map[string]Cluster, map[int][]string, time.Time, []Hold, bool, *Stage) {
	h := readStages(f, batch, p.Clusters, p.Done)
	for i := range h.runs {
		h.runs[i].deadline = stageDeadline(f, p, batch, h.runs[i], deadline)
	}
	w := &windowStep{stepped: newStepped(len(batch.Clusters)), f: f, p: p, deadline: deadline}
	var waiting []string
	for _, name := range batch.Clusters {
		c := p.Clusters[name]
		if c.Stage <= 0 {
			waiting = append(waiting, name)
			continue
		}
		next, again, _ := stepCluster(f, name, c, h.runs[c.Stage-1].deadline, nil)
		next.Started, next.Stage = c.Started, c.Stage
		w.note(name, next, again, nil)
		if next.State == ranv1alpha1.ClusterFailed || next.State == ranv1alpha1.ClusterTimedOut {
			w.failures++
		}
	}
	w.failures += p.Done.Failed + p.Done.TimedOut
	// The stages again, with this decision's states: the last one may have ended.
	h = readStages(f, batch, w.clusters, p.Done)
	stopped := h.stopped || stopsStarting(f, w.clusters, w.failures)
	run := stageRun{started: f.Now, step: h.next, size: h.nextSize}
	number := len(h.runs)
	if number == 0 || h.lastEnded {
		if number > 0 {
			last := h.runs[number-1]
			run.before = last.before + last.members
		}
		number++
	} else {
		run = h.runs[number-1]
	}
	run.deadline = stageDeadline(f, p, batch, run, deadline)
	started := w.startStage(waiting, number, run.deadline, run.size-run.members, stopped)
	if run.members == 0 && started == 0 { // the next stage did not start: show the last one
		number--
		if number == 0 {
			return w.clusters, w.enforce, w.wake, w.holds, stopped, nil
		}
		run = h.runs[number-1]
		run.deadline = stageDeadline(f, p, batch, run, deadline)
	}
	stage := &Stage{Number: number, Size: run.size, Step: run.step, Started: run.started, Deadline: run.deadline,
		Resets: h.resets, Unhealthy: h.unhealthy, Stopped: h.stopped}
	return w.clusters, w.enforce, w.wake, w.holds, stopped, stage
}

// startStage starts, in plan order, up to room of the waiting clusters in the stage number,
// while nothing stops starts; the others wait. It returns how many started. A cluster that
// ended without starting (held by the upgrade checks, timed out waiting) stays as it is.
func (w *windowStep) startStage(waiting []string, number int, deadline time.Time, room int, stopped bool) int {
	capacity := roomUnderCap(w.f.Gates)
	started := 0
	for _, name := range waiting {
		c := w.p.Clusters[name]
		if c.Terminal() {
			w.note(name, c, time.Time{}, nil)
			continue
		}
		if stopped || w.f.Gates.WindowClosed || started >= room {
			next, again := waitPending("", w.f.Now, w.deadline)
			w.note(name, next, again, nil)
			continue
		}
		next, again, hold := stepCluster(w.f, name, c, deadline, capacity)
		if next.State != ranv1alpha1.ClusterPending && hold == nil {
			next.Started, next.Stage = w.f.Now, number
			started++
		}
		w.note(name, next, again, hold)
	}
	return started
}

// endedStage is the last stage of the current batch of p when it is progressive and no
// longer runs (the rollout finished, or waits after it): its deadline is left out.
func endedStage(f Facts, p Progress) *Stage {
	if p.Started.IsZero() || p.Batch >= len(f.Plan.Batches) || len(f.Plan.Batches[p.Batch].Stages) == 0 {
		return nil
	}
	batch := f.Plan.Batches[p.Batch]
	h := readStages(f, batch, p.Clusters, doneBefore(p, batch))
	if len(h.runs) == 0 {
		return nil
	}
	r := h.runs[len(h.runs)-1]
	return &Stage{Number: len(h.runs), Size: r.size, Step: r.step, Started: r.started,
		Resets: h.resets, Unhealthy: h.unhealthy, Stopped: h.stopped}
}
