package clustergroupupgrade

import (
	"context"
	"fmt"

	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
	"github.com/cgu-operator/cgu-operator/pkg/views"
)

// spokeIntents are the spoke-side objects a reconcile decided to make, each kind read by
// its gather phase and decided from what was read and the rollout's decision: the views of
// ClusterVersions the upgrade checks read (checkViews), the runs of the health check and
// pre-caching Jobs (healthJobs, precacheJobs), and the ManifestWorks of the steps and the
// pre- and post-upgrade actions (workIntents). Made ones cost nothing more: each is made
// only when missing. Their answers come back as watch events (views, actions,
// ManifestWorks), which queue the rollout again.
type spokeIntents struct {
	views []string
	jobs  []spokejob.Job
	works []workIntent
	// installPlans are the views, approvals and stale views of InstallPlan approval
	// (decideInstallPlans), made by applyInstallPlans.
	installPlans installPlanIntents
}

// applySpoke makes the spoke-side objects the decision called for.
func (r *Reconciler) applySpoke(ctx context.Context, s *scope) error {
	v := views.Views{Client: r.Client, Owner: s.owner}
	for _, c := range s.spoke.views {
		if err := v.EnsureClusterVersion(ctx, c); err != nil {
			return err
		}
	}
	runner := spokejob.Runner{Client: r.Client}
	for _, j := range s.spoke.jobs {
		if err := runner.Start(ctx, j); err != nil {
			return fmt.Errorf("starting spoke Job %s on %s: %w", j.Name, j.Cluster, err)
		}
	}
	for _, w := range s.spoke.works {
		if err := r.makeWork(ctx, s, w); err != nil {
			return err
		}
	}
	if n := len(s.spoke.views) + len(s.spoke.jobs) + len(s.spoke.works); n > 0 {
		s.log.V(1).Info("Spoke-side objects ensured", "views", len(s.spoke.views), "jobs", len(s.spoke.jobs), "manifestWorks", len(s.spoke.works))
	}
	return nil
}
