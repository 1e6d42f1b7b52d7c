package controllers

import (
	"context"
	"fmt"
	"strconv"

	rbacv1 "k8s.io/api/rbac/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/preview"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/spokehealth"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
	"github.com/cgu-operator/cgu-operator/pkg/views"
)

// Reasons of the health checks, on a held cluster, a failed one, or one waiting.
const (
	// ReasonHealthCheckPending: the health check of the cluster has not answered yet.
	ReasonHealthCheckPending = "HealthCheckPending"
	// ReasonHealthCheckFailed: the health check Job itself failed on the cluster.
	ReasonHealthCheckFailed = "HealthCheckFailed"
)

// healthRules are what the spoke program reads to check a cluster's health; the alerts it
// reads through the cluster-monitoring-view role.
var healthRules = []rbacv1.PolicyRule{{
	APIGroups: []string{"config.openshift.io"}, Resources: []string{"clusteroperators", "clusterversions"},
	Verbs: []string{"get", "list"},
}}

// healthChecks returns the spec's health checks, nil without.
func healthChecks(cgu *ranv1alpha1.ClusterGroupUpgrade) *ranv1alpha1.HealthChecks {
	if cgu.Spec.UpgradeChecks == nil {
		return nil
	}
	return cgu.Spec.UpgradeChecks.Health
}

// healthJob is the spoke job of the rollout's health check on a cluster, for one run.
func (r *ClusterGroupUpgradeReconciler) healthJob(s *scope, cluster, run string) spokejob.Job {
	name := names.Safe(52, "cgu-health", s.cgu.Namespace, s.cgu.Name)
	return spokejob.Job{
		Cluster: cluster, Owner: s.owner, Name: name, Run: run, Image: r.SpokeImage,
		Args:             []string{"health", "--namespace", spokejob.Namespace, "--configmap", name, "--run", run},
		ClusterRules:     healthRules,
		BindClusterRoles: []string{"cluster-monitoring-view"},
	}
}

// beforeRun and afterRun name the runs of a cluster's health checks: before its batch
// started, and after it began verifying; both are read from the batch records, so that a
// reconcile finds the run again.
func beforeRun(progress rollout.Progress) string {
	return "before-" + strconv.FormatInt(progress.BatchStarted.Unix(), 10)
}

func afterRun(c rollout.Cluster) string {
	return "after-" + strconv.FormatInt(c.Since.Unix(), 10)
}

// healthVerdict is what one run of the health check says of a cluster.
type healthVerdict struct {
	// done is false while the check runs.
	done            bool
	healthy         bool
	reason, message string
}

// gatherHealth runs the health checks the spec asks for: before, on the clusters of the
// running batch that have not started; after, on the clusters verifying. The verdicts go
// to the gates.
func (r *ClusterGroupUpgradeReconciler) gatherHealth(ctx context.Context, s *scope) error {
	h := healthChecks(s.cgu)
	if h == nil || !s.started || s.progress.Finished || s.progress.BatchEnded {
		return nil
	}
	runner := spokejob.Runner{Client: r.Client}
	if h.BeforeUpgrade {
		s.healthBefore = map[string]healthVerdict{}
		run := beforeRun(s.progress)
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
			v, err := r.health(ctx, s, runner, name, afterRun(c))
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
		return healthVerdict{done: true, reason: ReasonHealthCheckFailed,
			message: "The health check cannot run: the hub serves no ManagedClusterViews or ManagedClusterActions"}, nil
	}
	job := r.healthJob(s, cluster, run)
	if err := runner.Start(ctx, job); err != nil {
		return healthVerdict{}, fmt.Errorf("starting the health check on %s: %w", cluster, err)
	}
	st, err := runner.Read(ctx, job)
	switch {
	case err != nil:
		return healthVerdict{}, fmt.Errorf("reading the health check of %s: %w", cluster, err)
	case st.Failed != "":
		return healthVerdict{done: true, reason: ReasonHealthCheckFailed,
			message: "The health check could not run on the cluster: " + st.Failed}, nil
	case st.Report == nil:
		return healthVerdict{reason: ReasonHealthCheckPending, message: "The health check has not answered yet: " + st.Waiting}, nil
	}
	report, err := spokehealth.FromConfigMap(st.Report)
	if err != nil || report.Run != run {
		why := "its report is from another run"
		if err != nil {
			why = err.Error()
		}
		return healthVerdict{reason: ReasonHealthCheckPending, message: "The health check has not answered yet: " + why}, nil
	}
	v := upgradecheck.Health(report.Input(r.yStream(ctx, s, cluster)))
	return healthVerdict{done: true, healthy: v.Healthy, reason: v.Reason, message: v.Message}, nil
}

// yStream reports whether the rollout takes the cluster to a new minor version, as far as
// the upgrade checks know: with pathValidation, from its targets and the ClusterVersion its
// view shows; false otherwise.
func (r *ClusterGroupUpgradeReconciler) yStream(ctx context.Context, s *scope, cluster string) bool {
	if !pathValidation(s.cgu) {
		return false
	}
	cv, _, err := views.ReadClusterVersion(ctx, r.Client, s.owner, cluster)
	if err != nil || cv == nil {
		return false
	}
	return upgradecheck.YStream(preview.NewChecks(r.Client, s.cgu, s.roots).Targets, cv)
}

// healthGate holds, before they start, the clusters whose health check before the upgrade
// is pending or failed; it wraps the upgrade checks' gate.
func healthGate(s *scope, next func(string) *rollout.Hold) func(string) *rollout.Hold {
	h := healthChecks(s.cgu)
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
			return &rollout.Hold{Cluster: cluster, Reason: ReasonHealthCheckPending, Pending: true,
				Message: fmt.Sprintf("cluster %s waits for its health check", cluster)}
		case !v.done:
			return &rollout.Hold{Cluster: cluster, Reason: v.reason, Pending: true,
				Message: fmt.Sprintf("cluster %s waits for its health check: %s", cluster, v.message)}
		case !v.healthy:
			return &rollout.Hold{Cluster: cluster, Reason: v.reason,
				Message: fmt.Sprintf("cluster %s is held: %s", cluster, v.message)}
		}
		return nil
	}
}

// verifyGate answers the health check after the upgrade of a verifying cluster.
func verifyGate(s *scope) func(string) *rollout.Verification {
	h := healthChecks(s.cgu)
	if h == nil || !h.AfterUpgrade {
		return nil
	}
	return func(cluster string) *rollout.Verification {
		v, ok := s.healthAfter[cluster]
		if !ok || !v.done {
			return &rollout.Verification{}
		}
		return &rollout.Verification{Done: true, Healthy: v.healthy, Reason: v.reason, Message: v.message}
	}
}

// needsHealthRound reports whether the decision put clusters in a state whose health check
// has not started yet (a batch that just started, a cluster that just began verifying): one
// more reconcile starts them, since those writes wake nothing.
func needsHealthRound(s *scope) bool {
	h := healthChecks(s.cgu)
	if h == nil || !s.decided {
		return false
	}
	for _, hold := range s.decision.Holds {
		if _, asked := s.healthBefore[hold.Cluster]; h.BeforeUpgrade && hold.Reason == ReasonHealthCheckPending && !asked {
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
