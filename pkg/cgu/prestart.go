package cgu

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/backup"
	"github.com/cgu-operator/cgu-operator/pkg/gates"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/prestart"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/talmjob"
)

// The pre-start jobs: the spoke Jobs a rollout runs on every planned cluster before it
// starts, pre-caching then the backup (TALM's order), each as TALM runs it (pkg/talmjob),
// in the states of pkg/prestart: where each cluster's Job stands, what to write for it,
// what the start waits for, and the clusters whose Job failed, which leave the plan.

// jobRun is where one kind of pre-start job stands this pass.
type jobRun struct {
	kind  prestart.Kind
	proto talmjob.Protocol
	// order is the planned clusters in plan order, those that leave the plan included.
	order []string
	// states are each planned cluster's state; reasons say why one failed.
	states  map[string]prestart.State
	reasons map[string]string
	// running counts the clusters whose job of this kind is under way (prestart.Running),
	// here and, for a kind with a hub-wide cap, in the other rollouts.
	running int
}

// capped starts clusters in plan order while fewer than limit of the hub's are under way
// (zero: no cap).
func capped(limit int) func(run *jobRun) []string {
	return func(run *jobRun) []string { return prestart.ToStart(run.order, run.states, run.running, limit) }
}

func newJobRun(kind prestart.Kind, proto talmjob.Protocol, order []string) jobRun {
	return jobRun{kind: kind, proto: proto, order: order, states: map[string]prestart.State{}, reasons: map[string]string{}}
}

// step moves each planned cluster's job on by one pass of TALM's state machine
// (talmjob.Step) from the state the status holds. The clusters not started that start are
// those toStart picks (capped: a fixed number under way). past is true once the kind's
// jobs ran past its overall bound: a cluster not done then timed out. failOnError makes
// what TALM counts as an error fail the cluster. The writes go to in.
func (run *jobRun) step(j Jobs, toStart func(run *jobRun) []string, past, failOnError bool, in *Intents) {
	for _, c := range run.order {
		run.states[c] = run.kind.StateOf(j.Kept[c])
		if run.states[c].Running() {
			run.running++
		}
	}
	starting := map[string]bool{}
	for _, c := range toStart(run) {
		starting[c] = true
		run.running++
	}
	for _, c := range run.order {
		if run.states[c].Final() || run.states[c] == prestart.NotStarted && !starting[c] {
			continue
		}
		r := talmjob.Step(run.proto, talmjob.Facts{State: j.Kept[c], Views: j.Views[c], Available: j.Available[c],
			FailOnError: failOnError}, j.Work[c])
		state := run.kind.StateOf(r.State)
		if past && !state.Final() {
			// Timed out: nothing more is asked of the cluster; the cleanup removes its Job.
			run.states[c], run.reasons[c] = prestart.Timeout, run.kind.Reason(prestart.Timeout, "", true)
			continue
		}
		run.states[c] = state
		run.reasons[c] = run.kind.Reason(state, r.Problem, false)
		switch {
		case r.Intents.Empty():
		case state == prestart.Succeeded:
			in.Spoke.Settled = append(in.Spoke.Settled, r.Intents)
		default:
			in.Spoke.Prestart = append(in.Spoke.Prestart, r.Intents)
		}
	}
}

// leave takes the clusters whose job failed or timed out out of the plan once every
// cluster's job ended; when none is left, the rollout cannot start, with the problem
// failedEverywhere makes of the count.
func (run *jobRun) leave(in *Intents, failedEverywhere func(clusters int) *rollout.Problem) *rollout.Problem {
	if !run.kind.Ended(run.states) {
		return nil
	}
	leaving := prestart.Leaving(run.order, run.states)
	if len(leaving) == 0 {
		return nil
	}
	if len(leaving) == len(run.order) {
		return failedEverywhere(len(run.order))
	}
	drop := make(map[string]bool, len(leaving))
	for _, c := range leaving {
		drop[c] = true
	}
	in.Plan = in.Plan.Without(drop)
	return nil
}

// wait is what the start waits for while some cluster's job has not ended, "" otherwise.
func (run *jobRun) wait() string {
	if _, reason, message := run.kind.Condition(run.states); reason == ranv1alpha1.ReasonInProgress {
		return message
	}
	return ""
}

// precacheRun is where pre-caching stands this pass.
type precacheRun struct {
	jobRun
	result    precache.Result
	overrides []string
	// plan is the bandwidth plan of the pulls left; nil without a budget.
	plan *ranv1alpha1.PrecachePlan
}

// precacheDeadline is when pre-caching should have ended: when the maintenance windows next
// let the rollout start at or after now (spec.maintenanceWindows.startAt, the next window's
// opening, or now while one is open); zero when the spec sets neither.
func precacheDeadline(cgu *ranv1alpha1.ClusterGroupUpgrade, now time.Time) time.Time {
	mw := cgu.Spec.MaintenanceWindows
	if mw == nil || mw.StartAt == nil && len(mw.Windows) == 0 {
		return time.Time{}
	}
	sched, err := gates.Schedule(mw)
	if err != nil || sched == nil {
		return time.Time{}
	}
	if opens, _, ok := sched.Next(now); ok {
		return opens
	}
	return time.Time{}
}

// precaching decides, before the rollout starts and whatever spec.enable says, where the
// pre-caching of every planned cluster stands, which Jobs start under the hub-wide cap, and
// which clusters leave the plan. As in TALM, nothing is pre-cached for a plan whose clusters
// all comply.
func (p *pass) precaching() {
	pf := p.f.Precache
	if pf == nil || !p.cgu.Spec.PreCaching || p.f.Started || p.in.Invalid != nil || len(allClusters(p.in.Plan)) == 0 {
		return
	}
	st := &precacheRun{jobRun: newJobRun(precache.Kind, talmjob.Precache, allClusters(p.in.Plan)), result: pf.Result, overrides: pf.Overrides}
	p.precache = st
	if !pf.Result.Valid {
		return
	}
	st.running = pf.Elsewhere
	if pf.Bandwidth == nil {
		st.step(pf.Jobs, capped(p.cfg.MaxConcurrentPrecaching), false, enabled(p.cgu), p.in)
	} else {
		// The budget takes the place of the hub-wide cap.
		pl := pf.Bandwidth.read(st.order, pf.Jobs)
		st.step(pf.Jobs, func(run *jobRun) []string { return pl.starts(run.order, run.states) }, false, enabled(p.cgu), p.in)
		st.plan = pl.plan(st.order, st.states, p.now, precacheDeadline(p.cgu, p.now))
		if slow := pl.slow(st.order, st.states, pf.Jobs, p.now); st.plan != nil && len(slow) > 0 {
			st.plan.Slow, st.plan.SlowCount = slow[:min(len(slow), maxSlowListed)], len(slow)
		}
	}
	p.precacheFailed = st.leave(p.in, func(n int) *rollout.Problem {
		return &rollout.Problem{Reason: ranv1alpha1.ReasonPrecachingFailedEverywhere,
			Message: fmt.Sprintf("Pre-caching failed or timed out on all %d clusters; none is left to upgrade", n)}
	})
}

// precacheGate is what the start waits for while pre-caching has not ended, "" otherwise.
func (p *pass) precacheGate() string {
	st := p.precache
	switch {
	case st == nil:
		return ""
	case !st.result.Valid:
		return "the precache spec is not valid: " + st.result.Message
	}
	return st.wait()
}

// nothingToPrepare reports whether a rollout that has not started has no pre-start job to
// run: every planned cluster complies already.
func (p *pass) nothingToPrepare() bool {
	return !p.f.Started && p.in.Invalid == nil && len(allClusters(p.in.Plan)) == 0
}

// backupRun is where the backup before the upgrade stands this pass.
type backupRun struct {
	jobRun
	// startedAt is when the backups started (status.backup.startedAt).
	startedAt metav1.Time
}

// backingUp decides, once the rollout is enabled, not blocked and done pre-caching (TALM's
// order), where the backup of every planned cluster stands: every Job starts at once, a
// state that was final stays so, and a cluster not done backup.Overall after the start
// timed out.
func (p *pass) backingUp() {
	bf := p.f.Backup
	if bf == nil || !p.needsBackup() || p.f.Started || p.in.Invalid != nil || p.f.Start.Blocked != nil ||
		p.precacheFailed != nil || p.precacheGate() != "" || !enabled(p.cgu) {
		return
	}
	st := &backupRun{jobRun: newJobRun(backup.Kind, talmjob.Backup, allClusters(p.in.Plan)), startedAt: metav1.NewTime(p.now).Rfc3339Copy()}
	if bf.StartedAt != nil {
		st.startedAt = *bf.StartedAt
	}
	p.backup = st
	// As TALM's, every backup starts at once and an error leaves the cluster where it is.
	st.step(bf.Jobs, capped(0), !p.now.Before(st.startedAt.Add(backup.Overall)), false, p.in)
	p.backupFailed = st.leave(p.in, func(n int) *rollout.Problem {
		return &rollout.Problem{Reason: ranv1alpha1.ReasonBackupFailedEverywhere,
			Message: fmt.Sprintf("The backup failed or timed out on all %d clusters; none is left to upgrade", n)}
	})
}

// backupGate is what the start waits for while the backup has not ended, "" otherwise.
func (p *pass) backupGate() string {
	switch {
	case p.needsBackup() && !p.f.Started && p.backup == nil:
		return "the backup has not started" // never reached: the start waits for what the backup waits for
	case p.backup == nil:
		return ""
	}
	return p.backup.wait()
}

// needsBackup reports whether a rollout backs its clusters up: one is asked for and some
// planned cluster needs the upgrade. As in TALM, a rollout whose clusters all comply
// already backs nothing up.
func (p *pass) needsBackup() bool {
	return p.cgu.Spec.Backup && len(allClusters(p.in.Plan)) > 0
}
