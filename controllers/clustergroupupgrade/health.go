package clustergroupupgrade

import (
	"context"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/spokecheck"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
	"github.com/cgu-operator/cgu-operator/pkg/views"
)

// healthVerdict is what one run of the health check says of a cluster.
type healthVerdict = spokecheck.HealthVerdict

// gatherHealth reads the health checks the spec asks for: before the rollout starts, on
// every planned cluster (for status and kubectl cgu preflight only); before, on the clusters
// of the running batch that have not started; after, on the clusters verifying. The verdicts
// of the last two go to the gates. It starts nothing: healthJobs says which runs to start
// once the decision is known.
func (r *Reconciler) gatherHealth(ctx context.Context, s *scope) error {
	h := spokecheck.HealthChecks(s.cgu)
	switch {
	case h == nil || s.progress.Finished || s.progress.BatchEnded:
		return nil
	case !s.started:
		return r.gatherHealthPreview(ctx, s)
	}
	runner := spokejob.Reader{Client: r.Client}
	if h.BeforeUpgrade && len(s.plan.Batches) > s.progress.Batch {
		s.healthBefore = map[string]healthVerdict{}
		run := spokecheck.BatchHealthRun(s.progress.BatchStarted)
		for _, c := range s.plan.Batches[s.progress.Batch].Clusters {
			if st := s.progress.Clusters[c].State; st != "" && st != ranv1alpha1.ClusterPending {
				continue
			}
			v, err := r.health(ctx, s, runner, c, run)
			if err != nil {
				return err
			}
			s.healthBefore[c] = v
		}
	}
	if h.AfterUpgrade {
		s.healthAfter = map[string]healthVerdict{}
		for name, c := range s.progress.Clusters {
			if !c.Verifying() {
				continue
			}
			v, err := r.health(ctx, s, runner, name, spokecheck.VerifyHealthRun(c.Since))
			if err != nil {
				return err
			}
			s.healthAfter[name] = v
		}
	}
	return nil
}

// health reads the verdict of one run of the health check on a cluster; a run not started
// has not answered.
func (r *Reconciler) health(ctx context.Context, s *scope, runner spokejob.Reader, cluster, run string) (healthVerdict, error) {
	if r.Unserved.Views || r.Unserved.Actions {
		return healthVerdict{Done: true, Reason: spokecheck.ReasonHealthCheckFailed,
			Message: "The health check cannot run: the hub serves no ManagedClusterViews or ManagedClusterActions"}, nil
	}
	return spokecheck.ReadHealth(ctx, runner, spokecheck.HealthJob(s.cgu, cluster, run, ""), r.yStream(ctx, s, cluster))
}

// gatherHealthPreview runs, before the rollout starts, the health check on every planned
// cluster once per spec generation, so that status shows each cluster's health before
// enable. The gates never read it: the check that decides runs when the cluster's batch
// starts.
func (r *Reconciler) gatherHealthPreview(ctx context.Context, s *scope) error {
	if !spokecheck.HealthChecks(s.cgu).BeforeUpgrade || s.selectProblem != nil || s.invalid != nil || s.precacheFailed != nil {
		return nil
	}
	runner := spokejob.Reader{Client: r.Client}
	s.healthPreview = map[string]healthVerdict{}
	for _, b := range s.plan.Batches {
		for _, c := range b.Clusters {
			v, err := r.health(ctx, s, runner, c, spokecheck.HealthRunBeforeEnable(s.cgu))
			if err != nil {
				return err
			}
			s.healthPreview[c] = v
		}
	}
	return nil
}

// yStream reports whether the rollout takes the cluster to a new minor version, as far as
// the upgrade checks know: with pathValidation, from the targets gatherChecks read and the
// ClusterVersion the cluster's view shows; false otherwise.
func (r *Reconciler) yStream(ctx context.Context, s *scope, cluster string) bool {
	if !pathValidation(s.cgu) {
		return false
	}
	cv, _, err := views.ReadClusterVersion(ctx, r.Client, s.owner, cluster)
	if err != nil || cv == nil {
		return false
	}
	return upgradecheck.YStream(s.targets, cv)
}

// healthJobs are the runs of the health check to start after the decision: those gathered
// without an answer yet (a run already started costs nothing more), and those the decision
// calls for that were not gathered: the clusters of a batch it started, and those it put
// to verifying.
func healthJobs(s *scope, image string) []spokejob.Job {
	h := spokecheck.HealthChecks(s.cgu)
	if h == nil || !s.decided {
		return nil
	}
	var out []spokejob.Job
	add := func(cluster, run string, asked map[string]healthVerdict) {
		if v, ok := asked[cluster]; !ok || !v.Done {
			out = append(out, spokecheck.HealthJob(s.cgu, cluster, run, image))
		}
	}
	if !s.started {
		for c := range s.healthPreview {
			add(c, spokecheck.HealthRunBeforeEnable(s.cgu), s.healthPreview)
		}
		return out
	}
	d := s.decision
	if h.BeforeUpgrade {
		// The clusters of the running batch that wait to start, for whatever reason.
		for _, hold := range d.Holds {
			add(hold.Cluster, spokecheck.BatchHealthRun(d.Progress.BatchStarted), s.healthBefore)
		}
	}
	if h.AfterUpgrade {
		for name, c := range d.Progress.Clusters {
			if c.Verifying() {
				add(name, spokecheck.VerifyHealthRun(c.Since), s.healthAfter)
			}
		}
	}
	return out
}
