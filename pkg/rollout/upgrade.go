package rollout

import (
	"fmt"
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/pkg/timeout"
)

// Problem is why a ClusterGroupUpgrade cannot run: a condition reason and message.
type Problem struct {
	Reason, Message string
	// Names are the clusters or policies the problem is about, when it lists some (the
	// events' annotations name them).
	Names []string
	// Invalid is true when Names are managed policies that exist but cannot be enforced
	// (TALM's invalid policies) rather than missing ones.
	Invalid bool
	// Recheck, when set, is how long after which the problem is looked at again: its fix
	// changes nothing the operator watches.
	Recheck time.Duration
}

// Progress is what the rollout recorded so far (from status and the batch records).
type Progress struct {
	// Started is when the rollout started; zero before.
	Started time.Time
	// Batch is the index of the current batch; meaningful once started.
	Batch int
	// BatchStarted is when the current batch started.
	BatchStarted time.Time
	// Clusters are the clusters of the current batch, by name.
	Clusters map[string]Cluster
	// PausedBeforeBatch is how long the rollout had been paused when the current batch
	// started: only later pauses move the batch's deadline.
	PausedBeforeBatch time.Duration
	// BatchEnded is true once the current batch ended and the next has not started: the
	// rollout waits between two batches.
	BatchEnded bool
	// Finished is true once the rollout ran its last batch or ended early; it then only
	// waits for every cluster to become compliant (TimedOut) or is Completed.
	Finished bool
	// Done counts the clusters of the batches that ended, by their final state.
	Done ranv1alpha1.ClusterCounts
	// Settled are the clusters of the batches that ended that were held or failed, with
	// that state: they never complete.
	Settled map[string]ranv1alpha1.ClusterState
	// Analysis is the current batch's analysis, once started (spec.analysis).
	Analysis *AnalysisRun
}

// settle records a held or failed cluster of an ended batch.
func (p *Progress) settle(name string, state ranv1alpha1.ClusterState) {
	if state != ranv1alpha1.ClusterHeld && state != ranv1alpha1.ClusterFailed {
		return
	}
	if p.Settled == nil {
		p.Settled = map[string]ranv1alpha1.ClusterState{}
	}
	p.Settled[name] = state
}

// Facts are what a decision about a ClusterGroupUpgrade needs, gathered by the controller.
type Facts struct {
	Now     time.Time
	Enabled bool
	// Invalid is set when selection or validation failed; nothing may start.
	Invalid *Problem
	// Blocked is set while spec.blockingCRs keep the rollout from starting.
	Blocked *Problem
	// Plan is the remediation plan: computed from the spec before the rollout starts, frozen
	// once it has.
	Plan plan.Plan
	// TimeoutMinutes is spec.remediationStrategy.timeout.
	TimeoutMinutes int
	// Abort is true for batchTimeoutAction Abort.
	Abort bool
	// Policies are the facts of each managed policy in order, then of each step.
	Policies []PolicyFacts
	Progress Progress
	// Gates hold the rollout back between steps; the zero value holds nothing back.
	Gates Gates
}

// Decision is the outcome: the state, the progress to record, and when to look again.
type Decision struct {
	State ranv1alpha1.UpgradeState
	// Reason and Message explain the state, for the Progressing and Succeeded conditions.
	Reason, Message string
	Progress        Progress
	// BatchDeadline is when the current batch times out, while one runs.
	BatchDeadline time.Time
	// Enforce lists, for each managed policy by index, the clusters of the current batch
	// that are working on it: the clusters the policy must be enforced on now.
	Enforce map[int][]string
	// Wake is when to decide again without a new fact; zero when only new facts matter.
	Wake time.Time
	// Ended are the batches that ended in this decision, in order, with the final state
	// of their clusters; the last one may be the current batch when the rollout finished.
	Ended []EndedBatch
	// Waiting says what the rollout waits for between two batches, nil when it does not.
	Waiting *Wait
	// Holds are the clusters of the current batch that could start but wait.
	Holds []Hold
	// EndedEarly is true when the rollout finished before its last batch (a canary timed
	// out, Abort, the failure budget, the overall timeout).
	EndedEarly bool
	// Stage is where the current batch stands, when it is progressive and a stage started.
	Stage *Stage
}

// EndedBatch is a batch that ended: every cluster completed or timed out, or the rollout
// ended during it.
type EndedBatch struct {
	// Index is the 0-based index of the batch in the plan.
	Index    int
	Started  time.Time
	Deadline time.Time
	Clusters map[string]Cluster
	// Analysis is the batch's analysis, when it ran one.
	Analysis *AnalysisRun
}

// Decide computes the state of a ClusterGroupUpgrade from its facts.
func Decide(f Facts) Decision {
	d := decide(f)
	if d.Stage == nil {
		d.Stage = endedStage(f, d.Progress)
	}
	handOff(f, &d)
	return d
}

// HandOffRecheck is how soon a decision that holds a cluster's enforcement back until the hub
// released it from an intermediate policy looks again: nothing the operator watches changes
// when the hub does (the replicated policy turns inform), and the propagator takes a moment.
const HandOffRecheck = 2 * time.Second

// handOff keeps each cluster past an intermediate policy out of the enforcement of its
// current policy until the hub shows the intermediate one released on it (PolicyFacts
// Released): a cluster that just complied with an intermediate update is first no longer
// enforced on it, then, a decision later, enforced on the next one, so that the spoke never
// sees both asking for different releases. The cluster's state and deadline are unchanged.
func handOff(f Facts, d *Decision) {
	held := false
	for i, clusters := range d.Enforce {
		kept := clusters[:0:0]
		for _, name := range clusters {
			if enforcedBefore(f.Policies, i, name) {
				held = true
				continue
			}
			kept = append(kept, name)
		}
		d.Enforce[i] = kept
	}
	if held {
		if again := f.Now.Add(HandOffRecheck); d.Wake.IsZero() || again.Before(d.Wake) {
			d.Wake = again
		}
	}
}

// enforcedBefore reports whether an intermediate policy before policy i may still be enforced
// on the cluster: the hub has not shown it released there.
func enforcedBefore(policies []PolicyFacts, i int, cluster string) bool {
	for j := 0; j < i && j < len(policies); j++ {
		if policies[j].Intermediate && !policies[j].Released[cluster] {
			return true
		}
	}
	return false
}

func decide(f Facts) Decision {
	p := f.Progress
	if p.Started.IsZero() {
		return decideStart(f)
	}
	if p.Finished {
		return decideFinished(f)
	}
	return decideBatch(f)
}

func decideStart(f Facts) Decision {
	switch {
	case f.Invalid != nil:
		state := ranv1alpha1.StateNotStarted
		if f.Enabled {
			state = ranv1alpha1.StateCannotStart
		}
		d := Decision{State: state, Reason: f.Invalid.Reason, Message: f.Invalid.Message}
		if f.Invalid.Recheck > 0 {
			d.Wake = f.Now.Add(f.Invalid.Recheck)
		}
		return d
	case !f.Enabled:
		return Decision{State: ranv1alpha1.StateNotStarted, Reason: ranv1alpha1.ReasonNotEnabled,
			Message: "Not enabled: set spec.enable to true to start"}
	}
	if f.Blocked != nil {
		return Decision{State: ranv1alpha1.StateCannotStart, Reason: f.Blocked.Reason, Message: f.Blocked.Message}
	}
	if w, wake := gate(f, 0); w != nil && len(f.Plan.Batches) > 0 {
		return Decision{State: ranv1alpha1.StateNotStarted, Reason: w.Reason, Message: w.Message, Waiting: w, Wake: wake}
	}
	f.Progress = Progress{Started: f.Now, Batch: 0, BatchStarted: f.Now, Clusters: map[string]Cluster{}, PausedBeforeBatch: f.Gates.PausedFor}
	if len(f.Plan.Batches) == 0 {
		f.Progress.Finished = true
		return decideFinished(f)
	}
	return decideBatch(f)
}

// decideBatch steps the clusters of the current batch and moves to the next batch, or ends
// the rollout, when the batch is done and the gates let it.
func decideBatch(f Facts) Decision {
	p := f.Progress
	shiftOverall, shiftBatch := f.Gates.shift(p)
	overall := timeout.Overall(p.Started, f.TimeoutMinutes).Add(shiftOverall)
	var ended []EndedBatch
	for {
		batch := f.Plan.Batches[p.Batch]
		deadline := timeout.Batch(p.BatchStarted, overall.Add(-shiftBatch), len(f.Plan.Batches)-p.Batch).Add(shiftBatch)
		if !p.BatchEnded {
			d, done := runBatch(f, &p, batch, deadline)
			if !done {
				d.Ended = ended
				return d
			}
			ended = append(ended, EndedBatch{Index: p.Batch, Started: p.BatchStarted, Deadline: deadline, Clusters: p.Clusters, Analysis: p.Analysis})
			if d, finished := finishIfOver(f, p, batch, overall); finished {
				d.Ended = ended
				return d
			}
		}
		if w, wake := gate(f, p.Batch+1); w != nil {
			return Decision{State: ranv1alpha1.StateNotCompleted, Reason: w.Reason, Message: w.Message,
				Progress: p, Waiting: w, Wake: wake, Ended: ended}
		}
		p = Progress{Started: p.Started, Batch: p.Batch + 1, BatchStarted: f.Now, Clusters: map[string]Cluster{}, Done: p.Done,
			Settled: p.Settled, PausedBeforeBatch: f.Gates.PausedFor}
		shiftBatch = 0 // the new batch starts with the pauses so far behind it
	}
}

// runBatch steps the current batch. It returns done once every cluster is terminal and the
// batch soaked, having counted the batch into the progress; otherwise the decision to
// return.
func runBatch(f Facts, p *Progress, batch plan.Batch, deadline time.Time) (Decision, bool) {
	var clusters map[string]Cluster
	var enforce map[int][]string
	var wake time.Time
	var holds []Hold
	done := false
	var stage *Stage
	switch {
	case len(batch.Stages) > 0:
		var stopped bool
		clusters, enforce, wake, holds, stopped, stage = stepStages(f, *p, batch, deadline)
		done = windowDone(clusters, batch, stopped)
	case batch.Window > 0:
		var stopped bool
		clusters, enforce, wake, holds, stopped = stepWindow(f, *p, batch, deadline)
		done = windowDone(clusters, batch, stopped)
	default:
		clusters, enforce, wake, holds = stepBatch(f, batch, p.Clusters, clusterDeadline(f, *p, deadline))
		done = allTerminal(clusters, batch)
	}
	p.Clusters = clusters
	if !done && !endHeld(clusters, batch, holds, f.Now) {
		reason, message := ranv1alpha1.ReasonInProgress, batchMessage(p.Batch, len(f.Plan.Batches), clusters, batch, stage)
		switch {
		case f.Gates.Paused:
			reason = ranv1alpha1.ReasonPaused
		case f.Gates.Frozen != "":
			reason, message = ranv1alpha1.ReasonFleetFrozen,
				fmt.Sprintf("%s; %s: clusters already working finish, no cluster or batch starts", message, f.Gates.Frozen)
		case len(holds) > 0:
			reason, message = holds[0].Reason, fmt.Sprintf("%s; %s", message, holds[0].Message)
			if holds[0].Checked {
				reason = ranv1alpha1.ReasonClustersHeld
			}
			if len(holds) > 1 {
				message += fmt.Sprintf(" (and %d more clusters wait)", len(holds)-1)
			}
		}
		return Decision{State: ranv1alpha1.StateNotCompleted, Reason: reason, Message: message, Progress: *p,
			BatchDeadline: deadline, Enforce: enforce, Wake: wake, Holds: holds, Stage: stage}, false
	}
	return endBatch(f, p, batch, deadline, stage)
}

// endBatch ends the current batch, whose clusters are terminal, once its analysis passed and
// it soaked (an analysis that failed ends it at once); otherwise it returns the decision to
// wait with.
func endBatch(f Facts, p *Progress, batch plan.Batch, deadline time.Time, stage *Stage) (Decision, bool) {
	if d, wait := analyse(f, p, batch, deadline); wait {
		d.Stage = stage
		return d, false
	}
	clusters := p.Clusters // an analysis that failed failed clusters
	if until, settled := soakUntil(f, batch, clusters); p.Analysis.Failed() == nil && (!settled || f.Now.Before(until)) {
		w := &Wait{Reason: ranv1alpha1.ReasonBatchSoaking, Batch: p.Batch + 1,
			Message: fmt.Sprintf("Batch %d soaks: its clusters must stay compliant until %s", p.Batch+1, until.UTC().Format(time.RFC3339))}
		if !settled {
			w.Message = fmt.Sprintf("Batch %d soaks: a completed cluster is no longer compliant", p.Batch+1)
		}
		return Decision{State: ranv1alpha1.StateNotCompleted, Reason: w.Reason, Message: w.Message, Progress: *p,
			BatchDeadline: deadline, Waiting: w, Wake: until, Stage: stage}, false
	}
	countStates(&p.Done, batch, clusters) // every cluster of the batch is terminal here
	for _, name := range batch.Clusters {
		p.settle(name, clusters[name].State)
	}
	p.BatchEnded = true
	return Decision{}, true
}

// clusterDeadline is when the clusters of the current batch time out: the batch's deadline,
// or earlier the spec's per-cluster progress deadline, both moved by the pauses since the
// batch started.
func clusterDeadline(f Facts, p Progress, batchDeadline time.Time) time.Time {
	if f.Gates.ClusterDeadline <= 0 {
		return batchDeadline
	}
	_, paused := f.Gates.shift(p)
	own := p.BatchStarted.Add(f.Gates.ClusterDeadline + paused)
	if own.Before(batchDeadline) {
		return own
	}
	return batchDeadline
}

// finishIfOver ends the rollout after a batch ended: its last batch, a canary or Abort
// timeout, the failure budget spent, or the overall deadline passed.
func finishIfOver(f Facts, p Progress, batch plan.Batch, overall time.Time) (Decision, bool) {
	stop, _ := batchEnds(f, p, batch)
	last := p.Batch+1 >= len(f.Plan.Batches)
	budget := overBudget(f.Gates, p.Done)
	late := !f.Now.Before(overall)
	if !stop && !last && !budget && !late {
		return Decision{}, false
	}
	p.Finished = true
	f.Progress = p
	d := decideFinished(f)
	d.EndedEarly = !last
	return d, true
}

func stepBatch(f Facts, batch plan.Batch, previous map[string]Cluster, deadline time.Time) (map[string]Cluster, map[int][]string, time.Time, []Hold) {
	st := newStepped(len(batch.Clusters))
	capacity := roomUnderCap(f.Gates)
	for _, name := range batch.Clusters {
		c, again, hold := stepCluster(f, name, previous[name], deadline, capacity)
		st.note(name, c, again, hold)
	}
	return st.clusters, st.enforce, st.wake, st.holds
}

// stepped gathers what one decision on a batch made of its clusters: their new positions,
// the clusters to enforce each policy on, the earliest time to look again, the holds.
type stepped struct {
	clusters map[string]Cluster
	enforce  map[int][]string
	wake     time.Time
	holds    []Hold
}

func newStepped(n int) *stepped {
	return &stepped{clusters: make(map[string]Cluster, n), enforce: map[int][]string{}}
}

// note records the new position of a cluster, when it wants to be looked at again, and its
// hold, if any.
func (s *stepped) note(name string, c Cluster, again time.Time, hold *Hold) {
	if hold != nil {
		s.holds = append(s.holds, *hold)
	}
	s.clusters[name] = c
	if c.State == ranv1alpha1.ClusterInProgress && !c.Verifying() {
		s.enforce[c.Policy] = append(s.enforce[c.Policy], name)
	}
	if !again.IsZero() && (s.wake.IsZero() || again.Before(s.wake)) {
		s.wake = again
	}
}

// roomUnderCap is a copy of the room left under the hub-wide cap, which a decision uses up as
// its clusters start; nil without a cap.
func roomUnderCap(g Gates) *int {
	if g.Capacity == nil {
		return nil
	}
	room := *g.Capacity
	return &room
}

// stepCluster steps one cluster of the current batch: a cluster about to start waits while
// the upgrade checks, another rollout or the hub-wide cap hold it (the hold is returned);
// one that starts takes room under the cap.
func stepCluster(f Facts, name string, c Cluster, deadline time.Time, capacity *int) (Cluster, time.Time, *Hold) {
	starting := !c.Terminal() && c.State != ranv1alpha1.ClusterInProgress && !f.Gates.Paused
	if !starting {
		var policies []Policy
		if !c.Terminal() { // step leaves a terminal cluster as it is, whatever the policies say
			policies = f.policies(name)
		}
		next, again := step(c, policies, f.Now, deadline, f.Gates.Paused)
		next, again = verify(f, name, c, next, again, deadline)
		return next, again, nil
	}
	if h := checked(f.Gates, name); h != nil {
		c, again := waitChecked(*h, f.Now, deadline)
		if c.Terminal() {
			return c, again, nil
		}
		return c, again, h
	}
	if h := held(f.Gates, name, capacity); h != nil {
		c, again := waitPending(h.Reason, f.Now, deadline)
		if c.State == ranv1alpha1.ClusterTimedOut {
			return c, again, nil
		}
		return c, again, h
	}
	next, again := step(c, f.policies(name), f.Now, deadline, false)
	next, again = verify(f, name, c, next, again, deadline)
	if capacity != nil {
		*capacity--
	}
	return next, again, nil
}

// verify passes a cluster that step completed through the health check after the upgrade,
// when there is one: it stays InProgress with reason Verifying (since it first completed)
// until the check answers, completes when healthy, fails when not, and times out at its
// deadline.
func verify(f Facts, name string, before, after Cluster, again, deadline time.Time) (Cluster, time.Time) {
	if !f.Gates.Verify || after.State != ranv1alpha1.ClusterCompleted {
		return after, again
	}
	v := f.Gates.Verifications[name]
	switch {
	case v.Done && v.Healthy:
		return after, time.Time{}
	case v.Done:
		return Cluster{State: ranv1alpha1.ClusterFailed, Policy: after.Policy, Since: f.Now, Reason: v.Reason, SoftTimedOut: after.SoftTimedOut}, time.Time{}
	}
	c := Cluster{State: ranv1alpha1.ClusterInProgress, Policy: after.Policy, Since: f.Now, Reason: ranv1alpha1.ReasonVerifying,
		SoftTimedOut: after.SoftTimedOut}
	if before.Verifying() {
		c.Since = before.Since
	}
	return timeOut(c, f.Now, deadline, time.Time{})
}

// checked returns the hold of the checks on a cluster, if any.
func checked(g Gates, cluster string) *Hold {
	h, ok := g.Holds[cluster]
	if !ok {
		return nil
	}
	h.Cluster, h.Checked = cluster, true
	return &h
}

// waitChecked keeps a cluster the upgrade checks hold Pending, with the check's reason, until
// the batch's deadline, where it ends Held; endHeld ends it earlier, with the batch.
func waitChecked(h Hold, now, deadline time.Time) (Cluster, time.Time) {
	if !now.Before(deadline) {
		return Cluster{State: ranv1alpha1.ClusterHeld, Since: now, Reason: h.Reason}, time.Time{}
	}
	return Cluster{State: ranv1alpha1.ClusterPending, Reason: h.Reason}, deadline
}

// endHeld ends, as Held, the clusters of a batch that the upgrade checks still hold once
// every other cluster of the batch is terminal; it reports whether the batch is then done.
func endHeld(clusters map[string]Cluster, batch plan.Batch, holds []Hold, now time.Time) bool {
	checkedHold := map[string]Hold{}
	for _, h := range holds {
		if h.Checked && h.Pending {
			return false // a check still to answer keeps the batch waiting
		}
		if h.Checked {
			checkedHold[h.Cluster] = h
		}
	}
	for _, name := range batch.Clusters {
		if _, ok := checkedHold[name]; !ok && !clusters[name].Terminal() {
			return false
		}
	}
	for name, h := range checkedHold {
		clusters[name] = Cluster{State: ranv1alpha1.ClusterHeld, Since: now, Reason: h.Reason}
	}
	return true
}

// waitPending keeps a cluster that may not start yet Pending, with the reason, until the
// batch's deadline, where it times out.
func waitPending(reason string, now, deadline time.Time) (Cluster, time.Time) {
	if !now.Before(deadline) {
		return Cluster{State: ranv1alpha1.ClusterTimedOut, Since: now, Reason: reason}, time.Time{}
	}
	return Cluster{State: ranv1alpha1.ClusterPending, Reason: reason}, deadline
}

// countStates adds the clusters of a batch to c by their state (pending ones are left out).
func countStates(c *ranv1alpha1.ClusterCounts, batch plan.Batch, clusters map[string]Cluster) {
	for _, name := range batch.Clusters {
		tally(c, clusters[name].State)
	}
}

// tally adds one cluster in state s to c; Pending and unknown states are not counted (the
// callers derive Pending from the plan).
func tally(c *ranv1alpha1.ClusterCounts, s ranv1alpha1.ClusterState) {
	if s != ranv1alpha1.ClusterPending {
		c.Add(s)
	}
}

func allTerminal(clusters map[string]Cluster, batch plan.Batch) bool {
	for _, name := range batch.Clusters {
		if !clusters[name].Terminal() {
			return false
		}
	}
	return true
}

// batchEnds reports whether a finished batch (the current one of p) ends the rollout: with
// timed-out clusters, a canary batch always does, another batch with batchTimeoutAction
// Abort, and any batch past the overall deadline; a progressive batch does after an
// unhealthy stage when its unhealthy stages stop it.
func batchEnds(f Facts, p Progress, batch plan.Batch) (bool, string) {
	if len(batch.Stages) > 0 && batch.StopUnhealthy {
		if h := readStages(f, batch, p.Clusters, doneBefore(p, batch)); h.stopped {
			return true, h.unhealthy
		}
	}
	if why := analysisEnds(f, p); why != "" {
		return true, why
	}
	late := 0
	for _, name := range batch.Clusters {
		if p.Clusters[name].State == ranv1alpha1.ClusterTimedOut {
			late++
		}
	}
	overall := timeout.Overall(p.Started, f.TimeoutMinutes)
	switch {
	case late == 0:
		return false, ""
	case batch.Canary:
		return true, fmt.Sprintf("Canary batch %d timed out", p.Batch+1)
	case f.Abort:
		return true, fmt.Sprintf("Batch %d timed out and batchTimeoutAction is Abort", p.Batch+1)
	case !f.Now.Before(overall):
		return true, "The rollout ran out of time"
	}
	return false, ""
}

// doneBefore counts the clusters of the batches before the current one of p, by their final
// state: p.Done, less the current batch once it ended.
func doneBefore(p Progress, batch plan.Batch) ranv1alpha1.ClusterCounts {
	done := p.Done
	if !p.BatchEnded {
		return done
	}
	var own ranv1alpha1.ClusterCounts
	countStates(&own, batch, p.Clusters)
	done.Completed -= own.Completed
	done.Failed -= own.Failed
	done.TimedOut -= own.TimedOut
	done.Held -= own.Held
	return done
}

// decideFinished judges a rollout that ran its batches: Completed once every planned cluster
// complies with every managed policy, TimedOut (still watching) otherwise.
func decideFinished(f Facts) Decision {
	p := f.Progress
	held := 0
	for _, b := range f.Plan.Batches {
		for _, name := range b.Clusters {
			settled, ok := p.Settled[name]
			if !ok {
				settled = p.Clusters[name].State
			}
			switch {
			case settled == ranv1alpha1.ClusterHeld:
				held++
			case settled == ranv1alpha1.ClusterFailed:
				return notDone(f, ranv1alpha1.ReasonClustersFailed,
					fmt.Sprintf("%d clusters failed, cluster %s among them (see its batch record for the reason)", p.Done.Failed, name))
			case !compliesWithAll(f.policies(name)):
				if d, wait := watchLate(f, name); wait {
					return d
				}
				return notDone(f, ranv1alpha1.ReasonTimedOut, fmt.Sprintf("cluster %s is not compliant yet, still watching", name))
			}
		}
	}
	if held > 0 {
		return Decision{State: ranv1alpha1.StateCompleted, Reason: ranv1alpha1.ReasonClustersHeld, Progress: p,
			Message: fmt.Sprintf("%d of %d clusters are compliant with every managed policy; the upgrade checks held %d, which were not enforced",
				f.Plan.Clusters()-held, f.Plan.Clusters(), held)}
	}
	return Decision{State: ranv1alpha1.StateCompleted, Reason: ranv1alpha1.ReasonCompleted,
		Message: fmt.Sprintf("All %d clusters are compliant with every managed policy", f.Plan.Clusters()), Progress: p}
}

// watchLate keeps, as TALM does, a rollout that ran its last batch with a cluster not
// compliant yet (one that timed out in an earlier batch) in progress until the overall
// deadline: the late cluster may still comply, and the rollout then completes. Nothing is
// enforced on it meanwhile. A rollout that ended early (a canary or Abort timeout, the
// failure budget spent) or ran out of time is not held.
func watchLate(f Facts, late string) (Decision, bool) {
	p := f.Progress
	if p.Batch+1 < len(f.Plan.Batches) || overBudget(f.Gates, p.Done) {
		return Decision{}, false
	}
	if stop, _ := batchEnds(f, p, f.Plan.Batches[p.Batch]); stop {
		return Decision{}, false
	}
	shiftOverall, _ := f.Gates.shift(p)
	overall := timeout.Overall(p.Started, f.TimeoutMinutes).Add(shiftOverall)
	if !f.Now.Before(overall) {
		return Decision{}, false
	}
	return Decision{State: ranv1alpha1.StateNotCompleted, Reason: ranv1alpha1.ReasonInProgress, Progress: p, Wake: overall,
		Message: fmt.Sprintf("Every batch ran; cluster %s timed out and is not compliant yet: the rollout waits for it until the timeout at %s",
			late, overall.UTC().Format(time.RFC3339))}, true
}

// notDone is the TimedOut decision of a finished rollout with a cluster that did not
// complete: the spent failure budget, else the end of a canary or Abort batch, else reason,
// explains it; detail names the cluster.
func notDone(f Facts, reason, detail string) Decision {
	p := f.Progress
	why := "Timed out"
	if reason == ranv1alpha1.ReasonClustersFailed {
		why = "Clusters failed"
	}
	if overBudget(f.Gates, p.Done) {
		reason, why = ranv1alpha1.ReasonFailureBudgetExceeded, fmt.Sprintf(
			"%d clusters failed or timed out, more than spec.maxFailures (%d) allows; no new batch starts",
			p.Done.Failed+p.Done.TimedOut, *f.Gates.MaxFailures)
	} else if _, ended := batchEnds(f, p, f.Plan.Batches[p.Batch]); ended != "" {
		why = ended
	}
	return Decision{State: ranv1alpha1.StateTimedOut, Reason: reason, Message: fmt.Sprintf("%s; %s", why, detail), Progress: p}
}

// compliesWithAll tells whether a cluster that went through the managed policies still
// complies with them: every one but the intermediate ones, which later ones supersede, and
// the best-effort ones.
func compliesWithAll(policies []Policy) bool {
	for _, p := range policies {
		if !p.Compliant && !p.Intermediate && p.SoftTimeout <= 0 {
			return false
		}
	}
	return true
}

func batchMessage(batch, batches int, clusters map[string]Cluster, b plan.Batch, stage *Stage) string {
	done := 0
	for _, name := range b.Clusters {
		if clusters[name].Terminal() {
			done++
		}
	}
	kind := "Batch"
	if b.Canary {
		kind = "Canary batch"
	}
	if stage != nil {
		size := "1 cluster"
		if stage.Size != 1 {
			size = fmt.Sprintf("%d clusters", stage.Size)
		}
		return fmt.Sprintf("%s %d of %d, stage %d (%s): %d of %d clusters done", kind, batch+1, batches,
			stage.Number, size, done, len(b.Clusters))
	}
	return fmt.Sprintf("%s %d of %d: %d of %d clusters done", kind, batch+1, batches, done, len(b.Clusters))
}
