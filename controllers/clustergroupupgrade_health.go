package controllers

import (
	"context"
	"fmt"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/preview"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
	"github.com/cgu-operator/cgu-operator/pkg/views"
)

// healthVerdict is what one run of the health check says of a cluster.
type healthVerdict = preview.HealthVerdict

// gatherHealth runs the health checks the spec asks for: before the rollout starts, on
// every planned cluster (for status and kubectl cgu preflight only); before, on the clusters
// of the running batch that have not started; after, on the clusters verifying. The verdicts
// of the last two go to the gates.
func (r *ClusterGroupUpgradeReconciler) gatherHealth(ctx context.Context, s *scope) error {
	h := preview.HealthChecks(s.cgu)
	switch {
	case h == nil || s.progress.Finished || s.progress.BatchEnded:
		return nil
	case !s.started:
		return r.gatherHealthPreview(ctx, s)
	}
	runner := spokejob.Runner{Client: r.Client}
	if h.BeforeUpgrade {
		s.healthBefore = map[string]healthVerdict{}
		run := preview.BatchHealthRun(s.progress.BatchStarted)
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
			v, err := r.health(ctx, s, runner, name, preview.VerifyHealthRun(c.Since))
			if err != nil {
				return err
			}
			s.healthAfter[name] = v
		}
	}
	return nil
}

// health starts one run of the health check on a cluster, when not started, and reads its
// verdict.
func (r *ClusterGroupUpgradeReconciler) health(ctx context.Context, s *scope, runner spokejob.Runner, cluster, run string) (healthVerdict, error) {
	if !r.ViewsServed || !r.ActionsServed {
		return healthVerdict{Done: true, Reason: preview.ReasonHealthCheckFailed,
			Message: "The health check cannot run: the hub serves no ManagedClusterViews or ManagedClusterActions"}, nil
	}
	job := preview.HealthJob(s.cgu, cluster, run, r.SpokeImage)
	if err := runner.Start(ctx, job); err != nil {
		return healthVerdict{}, fmt.Errorf("starting the health check on %s: %w", cluster, err)
	}
	return preview.ReadHealth(ctx, runner, job, r.yStream(ctx, s, cluster))
}

// gatherHealthPreview runs, before the rollout starts, the health check on every planned
// cluster once per spec generation, so that status shows each cluster's health before
// enable. The gates never read it: the check that decides runs when the cluster's batch
// starts.
func (r *ClusterGroupUpgradeReconciler) gatherHealthPreview(ctx context.Context, s *scope) error {
	if !preview.HealthChecks(s.cgu).BeforeUpgrade || s.selectProblem != nil || s.invalid != nil || s.precacheFailed != nil {
		return nil
	}
	runner := spokejob.Runner{Client: r.Client}
	s.healthPreview = map[string]healthVerdict{}
	for _, b := range s.plan.Batches {
		for _, c := range b.Clusters {
			v, err := r.health(ctx, s, runner, c, preview.HealthRunBeforeEnable(s.cgu))
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
func (r *ClusterGroupUpgradeReconciler) yStream(ctx context.Context, s *scope, cluster string) bool {
	if !pathValidation(s.cgu) {
		return false
	}
	cv, _, err := views.ReadClusterVersion(ctx, r.Client, s.owner, cluster)
	if err != nil || cv == nil {
		return false
	}
	return upgradecheck.YStream(s.targets, cv)
}

// healthGate holds, before they start, the clusters whose health check before the upgrade
// is pending or failed; it wraps the upgrade checks' gate.
func healthGate(s *scope, next func(string) *rollout.Hold) func(string) *rollout.Hold {
	h := preview.HealthChecks(s.cgu)
	if h == nil || !h.BeforeUpgrade {
		return next
	}
	return func(cluster string) *rollout.Hold {
		if next != nil {
			if hold := next(cluster); hold != nil {
				return hold
			}
		}
		v, ok := s.healthBefore[cluster]
		switch {
		case !ok:
			return &rollout.Hold{Cluster: cluster, Reason: preview.ReasonHealthCheckPending, Pending: true,
				Message: fmt.Sprintf("cluster %s waits for its health check", cluster)}
		case !v.Done:
			return &rollout.Hold{Cluster: cluster, Reason: v.Reason, Pending: true,
				Message: fmt.Sprintf("cluster %s waits for its health check: %s", cluster, v.Message)}
		case !v.Healthy:
			return &rollout.Hold{Cluster: cluster, Reason: v.Reason,
				Message: fmt.Sprintf("cluster %s is held: %s", cluster, v.Message)}
		}
		return nil
	}
}

// verifyGate answers the health check after the upgrade of a verifying cluster.
func verifyGate(s *scope) func(string) *rollout.Verification {
	h := preview.HealthChecks(s.cgu)
	if h == nil || !h.AfterUpgrade {
		return nil
	}
	return func(cluster string) *rollout.Verification {
		v, ok := s.healthAfter[cluster]
		if !ok || !v.Done {
			return &rollout.Verification{}
		}
		return &rollout.Verification{Done: true, Healthy: v.Healthy, Reason: v.Reason, Message: v.Message}
	}
}

// needsHealthRound reports whether the decision put clusters in a state whose health check
// has not started yet (a batch that just started, a cluster that just began verifying): one
// more reconcile starts them, since those writes wake nothing.
func needsHealthRound(s *scope) bool {
	h := preview.HealthChecks(s.cgu)
	if h == nil || !s.decided {
		return false
	}
	for _, hold := range s.decision.Holds {
		if _, asked := s.healthBefore[hold.Cluster]; h.BeforeUpgrade && hold.Reason == preview.ReasonHealthCheckPending && !asked {
			return true
		}
	}
	for name, c := range s.decision.Progress.Clusters {
		if _, asked := s.healthAfter[name]; h.AfterUpgrade && c.Verifying() && !asked {
			return true
		}
	}
	return false
}
