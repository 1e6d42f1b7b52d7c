package clustergroupupgrade

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/backup"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/prestart"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/spokecheck"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
)

// The pre-start jobs: the spoke jobs a rollout runs on every planned cluster before it starts,
// pre-caching then the backup (TALM's order). Each is one kind of the state machine of
// pkg/prestart; this file reads where each cluster's job stands (gather), decides which jobs
// to start and what the start waits for, takes the clusters whose job failed out of the plan,
// and writes each kind's status and condition.

// jobRun is where one kind of pre-start job stands this reconcile.
type jobRun struct {
	kind prestart.Kind
	// order is the planned clusters in plan order, those that leave the plan included.
	order []string
	// states are each planned cluster's state; reasons say why one failed.
	states  map[string]prestart.State
	reasons map[string]string
	// jobs are each planned cluster's Job.
	jobs map[string]spokejob.Job
	// running counts the clusters whose job of this kind is Starting or Active, here and,
	// for a kind with a hub-wide cap, in the other rollouts.
	running int
}

func newJobRun(kind prestart.Kind, order []string) jobRun {
	return jobRun{kind: kind, order: order, states: map[string]prestart.State{}, reasons: map[string]string{},
		jobs: map[string]spokejob.Job{}}
}

// observer reads what the hub sees of a cluster's job.
type observer func(context.Context, spokejob.Reader, spokejob.Job) (prestart.Observation, error)

// observe reads each planned cluster's job; a final state the status holds (kept, in TALM's
// words) is never left. past is true once the kind's jobs ran past its overall bound.
func (r *Reconciler) observe(ctx context.Context, run *jobRun, job func(cluster string) spokejob.Job, read observer,
	kept map[string]string, past bool) error {
	reader := spokejob.Reader{Client: r.Client}
	for _, c := range run.order {
		if word, ok := kept[c]; ok {
			if prev := run.kind.StateOf(word); prev.Final() {
				run.states[c] = prev
				continue
			}
		}
		run.jobs[c] = job(c)
		obs, err := read(ctx, reader, run.jobs[c])
		if err != nil {
			return err
		}
		run.states[c], run.reasons[c] = run.kind.Of(obs, past)
		if run.states[c] == prestart.Starting || run.states[c] == prestart.Active {
			run.running++
		}
	}
	return nil
}

// leave takes the clusters whose job failed or timed out out of the plan once every
// cluster's job ended; when none is left, the rollout cannot start, with the problem
// failedEverywhere makes of the count.
func (run *jobRun) leave(s *scope, failedEverywhere func(clusters int) *rollout.Problem) *rollout.Problem {
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
	s.plan = s.plan.Without(drop)
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

// precacheState is what the pre-caching of a rollout found this reconcile.
type precacheState struct {
	jobRun
	// result is the derived spec and its validity.
	result precache.Result
	// overrides are the keys of TALM's deprecated overrides ConfigMap the spec took.
	overrides []string
}

// gatherPrecache reads, before the rollout starts and whatever spec.enable says, where the
// pre-caching of what the upgrade needs stands on every planned cluster: it derives the
// spec and reads each cluster's precache Job.
func (r *Reconciler) gatherPrecache(ctx context.Context, s *scope) error {
	if !s.cgu.Spec.PreCaching || s.started || s.selectProblem != nil || s.invalid != nil || len(allClusters(s.plan)) == 0 {
		return nil // as in TALM, nothing is pre-cached for a plan whose clusters all comply
	}
	cfg, err := r.precachingConfig(ctx, s.cgu)
	if err != nil {
		return err
	}
	order := allClusters(s.plan)
	st := &precacheState{jobRun: newJobRun(precache.Kind, order), overrides: cfg.overrides}
	s.precache = st
	if cfg.missing != "" {
		st.result = precache.Result{Reason: ranv1alpha1.ReasonPrecacheSpecIncomplete, Message: cfg.missing}
		return nil
	}
	st.result = precache.Derive(precache.Input{Policies: slices.Concat(s.roots, s.compliantBefore), Config: cfg.spec, Graph: r.precacheGraph(ctx, s)})
	if !st.result.Valid {
		return nil
	}
	job := func(c string) spokejob.Job {
		return spokecheck.PrecacheJob(s.cgu, c, st.result.Spec, r.SpokeImage, r.PrecacheTimeout)
	}
	if err := r.observe(ctx, &st.jobRun, job, spokecheck.PrecacheObservation, nil, false); err != nil {
		return err
	}
	elsewhere, err := r.precachingElsewhere(ctx, s.cgu)
	if err != nil {
		return err
	}
	st.running += elsewhere
	s.precacheFailed = st.leave(s, func(n int) *rollout.Problem {
		return &rollout.Problem{Reason: ranv1alpha1.ReasonPrecachingFailedEverywhere,
			Message: fmt.Sprintf("Pre-caching failed or timed out on all %d clusters; none is left to upgrade", n)}
	})
	return nil
}

// precachingElsewhere counts the clusters other rollouts of the hub are pre-caching, as
// their status shows, for the fleet-wide cap.
func (r *Reconciler) precachingElsewhere(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) (int, error) {
	if r.MaxConcurrentPrecaching <= 0 {
		return 0, nil
	}
	var list ranv1alpha1.ClusterGroupUpgradeList
	if err := r.Client.List(ctx, &list); err != nil {
		return 0, fmt.Errorf("listing rollouts for the precache cap: %w", err)
	}
	n := 0
	for _, other := range list.Items {
		if other.UID == cgu.UID || other.Status.Precaching == nil {
			continue
		}
		n += other.Status.Precaching.Counts[string(prestart.Starting)] + other.Status.Precaching.Counts[string(prestart.Active)]
	}
	return n, nil
}

// precacheConfig is the referenced PreCachingConfig's spec, or why it is missing.
type precacheConfig struct {
	spec    *ranv1alpha1.PreCachingConfigSpec
	missing string
	// overrides are the keys of TALM's deprecated overrides ConfigMap that were used.
	overrides []string
}

// precachingConfig reads the PreCachingConfig the spec names, merged with TALM's deprecated
// overrides ConfigMap of the ClusterGroupUpgrade's namespace (precache.WithOverrides).
func (r *Reconciler) precachingConfig(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) (precacheConfig, error) {
	cfg, err := r.preCachingConfigRef(ctx, cgu)
	if err != nil || cfg.missing != "" {
		return cfg, err
	}
	cm := &corev1.ConfigMap{}
	err = r.Reader.Get(ctx, client.ObjectKey{Namespace: cgu.Namespace, Name: precache.OverridesConfigMap}, cm)
	switch {
	case apierrors.IsNotFound(err):
		return cfg, nil
	case err != nil:
		return cfg, fmt.Errorf("reading ConfigMap %s/%s: %w", cgu.Namespace, precache.OverridesConfigMap, err)
	}
	cfg.spec, cfg.overrides = precache.WithOverrides(cfg.spec, cm.Data)
	return cfg, nil
}

func (r *Reconciler) preCachingConfigRef(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) (precacheConfig, error) {
	ref := cgu.Spec.PreCachingConfigRef
	if ref.Name == "" {
		return precacheConfig{}, nil
	}
	namespace := ref.Namespace
	if namespace == "" {
		namespace = cgu.Namespace
	}
	pc := &ranv1alpha1.PreCachingConfig{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, pc)
	switch {
	case apierrors.IsNotFound(err):
		return precacheConfig{missing: fmt.Sprintf("PreCachingConfig %s/%s named by spec.preCachingConfigRef does not exist", namespace, ref.Name)}, nil
	case err != nil:
		return precacheConfig{}, fmt.Errorf("reading PreCachingConfig %s/%s: %w", namespace, ref.Name, err)
	}
	return precacheConfig{spec: &pc.Spec}, nil
}

// precacheGraph resolves a release version to its image through the update service the
// upgrade checks use.
func (r *Reconciler) precacheGraph(ctx context.Context, s *scope) func(string) *updategraph.Graph {
	url := r.UpdateService
	if uc := s.cgu.Spec.UpgradeChecks; uc != nil && uc.UpdateService != "" {
		url = uc.UpdateService
	}
	return func(channel string) *updategraph.Graph {
		g, err := r.Graphs.Graph(ctx, url, channel, "")
		if err != nil {
			return nil
		}
		return g
	}
}

// precacheJobs are the precache Jobs to start, under the fleet-wide cap.
func precacheJobs(s *scope, maxConcurrent int) []spokejob.Job {
	if s.precache == nil || !s.precache.result.Valid {
		return nil
	}
	return s.precache.start(maxConcurrent)
}

// precacheGate is what the start waits for while pre-caching has not ended, "" otherwise.
func precacheGate(s *scope) string {
	st := s.precache
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
func nothingToPrepare(s *scope) bool {
	return !s.started && s.selectProblem == nil && s.invalid == nil && len(allClusters(s.plan)) == 0
}

// backupState is what the backup before the upgrade found this reconcile.
type backupState struct {
	jobRun
	// startedAt is when the backups started (status.backup.startedAt).
	startedAt metav1.Time
}

// gatherBackup reads, once the rollout is enabled, not blocked and done pre-caching (TALM's
// order), where the backup of every planned cluster stands. A state that was final stays
// so; a cluster not done backup.Overall after the start timed out.
func (r *Reconciler) gatherBackup(ctx context.Context, s *scope) error {
	if !needsBackup(s) || s.started || s.selectProblem != nil || s.invalid != nil || s.blocked != nil ||
		s.precacheFailed != nil || precacheGate(s) != "" || (s.cgu.Spec.Enable != nil && !*s.cgu.Spec.Enable) {
		return nil
	}
	st := &backupState{jobRun: newJobRun(backup.Kind, allClusters(s.plan)), startedAt: metav1.NewTime(s.now).Rfc3339Copy()}
	var kept map[string]string
	if b := s.before.Backup; b != nil {
		kept = b.Status
		if b.StartedAt != nil {
			st.startedAt = *b.StartedAt
		}
	}
	s.backup = st
	past := !s.now.Before(st.startedAt.Add(backup.Overall))
	job := func(c string) spokejob.Job { return spokecheck.BackupJob(s.cgu, c, r.SpokeImage) }
	if err := r.observe(ctx, &st.jobRun, job, spokecheck.BackupObservation, kept, past); err != nil {
		return err
	}
	s.backupFailed = st.leave(s, func(n int) *rollout.Problem {
		return &rollout.Problem{Reason: ranv1alpha1.ReasonBackupFailedEverywhere,
			Message: fmt.Sprintf("The backup failed or timed out on all %d clusters; none is left to upgrade", n)}
	})
	return nil
}

// backupJobs are the backup Jobs to start: every cluster's, at once.
func backupJobs(s *scope) []spokejob.Job {
	if s.backup == nil {
		return nil
	}
	return s.backup.start(0)
}

// backupGate is what the start waits for while the backup has not ended, "" otherwise.
func backupGate(s *scope) string {
	switch {
	case needsBackup(s) && !s.started && s.backup == nil:
		return "the backup has not started" // never reached: the start waits for what the backup waits for
	case s.backup == nil:
		return ""
	}
	return s.backup.wait()
}

// needsBackup reports whether a rollout that has not started backs its clusters up: one is
// asked for and some planned cluster needs the upgrade. As in TALM, a rollout whose clusters
// all comply already backs nothing up.
func needsBackup(s *scope) bool {
	return s.cgu.Spec.Backup && len(allClusters(s.plan)) > 0
}
