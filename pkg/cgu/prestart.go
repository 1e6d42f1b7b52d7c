package cgu

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/backup"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/prestart"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
)

// The pre-start jobs: the spoke Jobs a rollout runs on every planned cluster before it
// starts, pre-caching then the backup (TALM's order). Each is one kind of the state machine
// of pkg/prestart: where each cluster's Job stands, the Jobs to start, what the start waits
// for, and the clusters whose Job failed, which leave the plan.

// jobRun is where one kind of pre-start job stands this pass.
type jobRun struct {
	kind prestart.Kind
	// order is the planned clusters in plan order, those that leave the plan included.
	order []string
	// states are each planned cluster's state; reasons say why one failed.
	states  map[string]prestart.State
	reasons map[string]string
	jobs    map[string]spokejob.Job
	// running counts the clusters whose job of this kind is Starting or Active, here and,
	// for a kind with a hub-wide cap, in the other rollouts.
	running int
}

func newJobRun(kind prestart.Kind, order []string) jobRun {
	return jobRun{kind: kind, order: order, states: map[string]prestart.State{}, reasons: map[string]string{},
		jobs: map[string]spokejob.Job{}}
}

// observe reads each planned cluster's Job as the hub sees it; a final state the status
// holds (kept, in TALM's words) is never left. past is true once the kind's jobs ran past
// its overall bound.
func (run *jobRun) observe(j Jobs, kept map[string]string, past bool) {
	for _, c := range run.order {
		if word, ok := kept[c]; ok {
			if prev := run.kind.StateOf(word); prev.Final() {
				run.states[c] = prev
				continue
			}
		}
		run.jobs[c] = j.Jobs[c]
		run.states[c], run.reasons[c] = run.kind.Of(j.Observed[c], past)
		if run.states[c] == prestart.Starting || run.states[c] == prestart.Active {
			run.running++
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

// start are the Jobs to start: the clusters that limit lets start now (prestart.ToStart;
// zero: every one), shown Starting, and those already starting (a Job already asked for
// costs nothing more).
func (run *jobRun) start(limit int) []spokejob.Job {
	for _, c := range prestart.ToStart(run.order, run.states, run.running, limit) {
		run.states[c] = prestart.Starting
	}
	var out []spokejob.Job
	for _, c := range run.order {
		if run.states[c] == prestart.Starting {
			out = append(out, run.jobs[c])
		}
	}
	return out
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
	st := &precacheRun{jobRun: newJobRun(precache.Kind, allClusters(p.in.Plan)), result: pf.Result, overrides: pf.Overrides}
	p.precache = st
	if !pf.Result.Valid {
		return
	}
	st.observe(pf.Jobs, nil, false)
	st.running += pf.Elsewhere
	p.precacheFailed = st.leave(p.in, func(n int) *rollout.Problem {
		return &rollout.Problem{Reason: ranv1alpha1.ReasonPrecachingFailedEverywhere,
			Message: fmt.Sprintf("Pre-caching failed or timed out on all %d clusters; none is left to upgrade", n)}
	})
	p.in.Spoke.Jobs = append(p.in.Spoke.Jobs, st.start(p.cfg.MaxConcurrentPrecaching)...)
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
	st := &backupRun{jobRun: newJobRun(backup.Kind, allClusters(p.in.Plan)), startedAt: metav1.NewTime(p.now).Rfc3339Copy()}
	if bf.StartedAt != nil {
		st.startedAt = *bf.StartedAt
	}
	p.backup = st
	st.observe(bf.Jobs, bf.Kept, !p.now.Before(st.startedAt.Add(backup.Overall)))
	p.backupFailed = st.leave(p.in, func(n int) *rollout.Problem {
		return &rollout.Problem{Reason: ranv1alpha1.ReasonBackupFailedEverywhere,
			Message: fmt.Sprintf("The backup failed or timed out on all %d clusters; none is left to upgrade", n)}
	})
	p.in.Spoke.Jobs = append(p.in.Spoke.Jobs, st.start(0)...)
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
