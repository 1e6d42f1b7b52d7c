package clustergroupupgrade

import (
	"context"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/gates"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/spokecheck"
	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
)

// Event reasons of the upgrade checks.
const (
	EventRisksAccepted = "UpgradeRisksAccepted"
	EventClusterHeld   = "ClusterHeld"
)

// pathValidation reports whether the spec asks for the upgrade checks.
func pathValidation(cgu *ranv1alpha1.ClusterGroupUpgrade) bool {
	return cgu.Spec.UpgradeChecks != nil && cgu.Spec.UpgradeChecks.PathValidation
}

// gatherChecks judges, with spec.upgradeChecks.pathValidation, the upgrade the managed
// policies ask of each planned cluster that has not started, from its ClusterVersion as its
// ManagedClusterView shows it (a missing view is made after the decision, checkViews) and,
// for a y-stream, the update graph (pkg/spokecheck, which kubectl cgu preflight shares).
func (r *Reconciler) gatherChecks(ctx context.Context, s *scope) error {
	if !pathValidation(s.cgu) || s.selectProblem != nil || s.invalid != nil || s.precacheFailed != nil || s.progress.Finished {
		return nil
	}
	checks := spokecheck.NewChecks(r.Client, s.cgu, s.roots)
	s.targets = checks.Targets
	checks.ViewsServed, checks.DefaultService = !r.Unserved.Views, r.UpdateService
	checks.Graphs = func(ctx context.Context, url, channel string) (*updategraph.Graph, error) {
		return r.Graphs.Graph(ctx, url, channel, "")
	}
	checks.OnGraphError = func(url, channel string, err error) {
		ctrl.LoggerFrom(ctx).Info("The update graph is not available; y-stream clusters are held",
			"updateService", url, "channel", channel, "error", err)
	}
	clusters := gates.Unstarted(s.plan, s.progress)
	s.verdicts = make(map[string]upgradecheck.Verdict, len(clusters))
	s.viewsNeeded = checks.NeedsViews() && !r.Unserved.Views
	for _, c := range clusters {
		verdict, err := checks.Judge(ctx, c)
		if err != nil {
			return err
		}
		s.verdicts[c] = verdict
	}
	return nil
}

// checkViews are the clusters whose ClusterVersion view to make after the decision: those
// the checks could not read it for yet (an existing view costs nothing more).
func checkViews(s *scope) []string {
	if !s.viewsNeeded {
		return nil
	}
	var out []string
	for c, v := range s.verdicts {
		if v.Reason == upgradecheck.ReasonClusterVersionUnknown {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// checkEvents marks, per cluster, a start with accepted risks and an end held.
func (r *Reconciler) checkEvents(s *scope, c ranv1alpha1.ClusterProgress, was ranv1alpha1.ClusterState) {
	switch {
	case c.State == ranv1alpha1.ClusterHeld:
		msg := c.Reason
		if v, ok := s.verdicts[c.Name]; ok && v.Holds() {
			msg = v.Message
		} else if h, ok := s.healthBefore[c.Name]; ok {
			msg = h.Message
		}
		r.relatedEvent(s, managedCluster(c.Name), corev1.EventTypeWarning, EventClusterHeld,
			"Cluster %s was held by the upgrade checks and not enforced: %s", c.Name, rollout.Truncate(msg, ranv1alpha1.MessageLimit))
	case c.State == ranv1alpha1.ClusterInProgress && (was == "" || was == ranv1alpha1.ClusterPending):
		if v, ok := s.verdicts[c.Name]; ok && len(v.Accepted) > 0 {
			r.relatedEvent(s, managedCluster(c.Name), corev1.EventTypeNormal, EventRisksAccepted,
				"Cluster %s started with accepted risks %s: %s", c.Name, strings.Join(v.Accepted, ", "),
				rollout.Truncate(v.Message, ranv1alpha1.MessageLimit))
		}
	}
}

// viewOwner maps a view or an action of a rollout to the rollout, through the labels it was
// made with.
func (r *Reconciler) viewOwner(ctx context.Context, obj client.Object) []reconcile.Request {
	ns, value, ok := ownership.Of(obj.GetLabels())
	if !ok {
		return nil
	}
	var list ranv1alpha1.ClusterGroupUpgradeList
	if err := r.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the ClusterGroupUpgrades of a view", "namespace", ns)
		return nil
	}
	var out []reconcile.Request
	for _, c := range list.Items {
		if names.LabelValue(c.Name) == value {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: c.Name}})
		}
	}
	return out
}
