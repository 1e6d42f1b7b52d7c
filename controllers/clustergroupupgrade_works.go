package controllers

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	workv1 "open-cluster-management.io/api/work/v1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/metrics"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

// works is what a rollout's ManifestWorks say: those of its steps
// (spec.manifestWorkTemplates), and the actions before and after each cluster's upgrade.
type works struct {
	// templates are the ManifestWorkReplicaSets the spec names, by name; a missing one is
	// absent.
	templates map[string]*workv1alpha1.ManifestWorkReplicaSet
	// expected are their expected feedback values, by template name.
	expected map[string]map[string]string
	// made are the rollout's ManifestWorks, by namespace/name.
	made map[string]*workv1.ManifestWork
	// pre and post are the actions' observations on the clusters about to start and on
	// those verifying.
	pre, post map[string]manifestwork.Observation
}

// usesWorks reports whether the spec rolls out or runs ManifestWorks.
func usesWorks(cgu *ranv1alpha1.ClusterGroupUpgrade) bool {
	sp := cgu.Spec
	return len(sp.ManifestWorkTemplates)+len(sp.PreUpgradeActions)+len(sp.PostUpgradeActions) > 0
}

// gatherWorks reads the templates and, once started, the ManifestWorks of the rollout, and
// observes the actions. Before the start there is nothing to observe, but the gates must
// hold the first batch's clusters until their pre-upgrade actions are made.
func (r *ClusterGroupUpgradeReconciler) gatherWorks(ctx context.Context, s *scope) error {
	if !usesWorks(s.cgu) || !r.WorksServed {
		return nil
	}
	w := &works{templates: map[string]*workv1alpha1.ManifestWorkReplicaSet{}, expected: map[string]map[string]string{},
		made: map[string]*workv1.ManifestWork{}}
	sp := s.cgu.Spec
	for _, list := range [][]string{sp.ManifestWorkTemplates, sp.PreUpgradeActions, sp.PostUpgradeActions} {
		for _, name := range list {
			if err := w.readTemplate(ctx, r.Client, s.cgu.Namespace, name); err != nil {
				return err
			}
		}
	}
	s.works = w
	if !s.started {
		return nil
	}
	var list workv1.ManifestWorkList
	if err := r.Client.List(ctx, &list, client.MatchingLabels(s.owner.Labels())); err != nil {
		return fmt.Errorf("listing the rollout's ManifestWorks: %w", err)
	}
	for i := range list.Items {
		mw := &list.Items[i]
		w.made[mw.Namespace+"/"+mw.Name] = mw
	}
	return r.observeActions(ctx, s)
}

// observeActions makes and observes the pre-upgrade actions of the clusters of the running
// batch that have not started, and the post-upgrade actions of the clusters verifying.
func (r *ClusterGroupUpgradeReconciler) observeActions(ctx context.Context, s *scope) error {
	sp, w := s.cgu.Spec, s.works
	if s.progress.Finished || s.progress.BatchEnded || s.progress.Batch >= len(s.plan.Batches) {
		return nil
	}
	if len(sp.PreUpgradeActions) > 0 {
		w.pre = map[string]manifestwork.Observation{}
		for _, c := range s.plan.Batches[s.progress.Batch].Clusters {
			if st := s.progress.Clusters[c].State; st != "" && st != ranv1alpha1.ClusterPending {
				continue
			}
			o, err := r.runWorks(ctx, s, manifestwork.RolePre, sp.PreUpgradeActions, c)
			if err != nil {
				return err
			}
			w.pre[c] = o
		}
	}
	if len(sp.PostUpgradeActions) > 0 {
		w.post = map[string]manifestwork.Observation{}
		for name, c := range s.progress.Clusters {
			if !c.Verifying() {
				continue
			}
			o, err := r.runWorks(ctx, s, manifestwork.RolePost, sp.PostUpgradeActions, name)
			if err != nil {
				return err
			}
			w.post[name] = o
		}
	}
	return nil
}

func (w *works) readTemplate(ctx context.Context, c client.Reader, namespace, name string) error {
	if _, ok := w.templates[name]; ok {
		return nil
	}
	t := &workv1alpha1.ManifestWorkReplicaSet{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, t); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading ManifestWorkReplicaSet %s/%s: %w", namespace, name, err)
	}
	expected, err := manifestwork.Expected(t)
	if err != nil {
		// Validation refuses the rollout before it starts; a template spoiled since is
		// used as if missing, its clusters waiting until it is fixed or they time out.
		ctrl.LoggerFrom(ctx).Info("Ignoring a ManifestWorkReplicaSet", "reason", err.Error())
		return nil
	}
	w.templates[name], w.expected[name] = t, expected
	return nil
}

// runWorks makes the ManifestWorks of the templates for a cluster, those not made yet, and
// returns what they say together: degraded when one is, done when all are.
func (r *ClusterGroupUpgradeReconciler) runWorks(ctx context.Context, s *scope, role manifestwork.Role, templates []string, cluster string) (manifestwork.Observation, error) {
	all := manifestwork.Observation{State: manifestwork.Done}
	for _, name := range templates {
		o, err := r.ensureWork(ctx, s, role, name, cluster)
		if err != nil {
			return all, err
		}
		switch {
		case o.State == manifestwork.Degraded:
			return o, nil
		case o.State != manifestwork.Done && all.State == manifestwork.Done:
			all = o
		}
	}
	return all, nil
}

// ensureWork makes the ManifestWork of a template for a cluster when it is not made, and
// observes it.
func (r *ClusterGroupUpgradeReconciler) ensureWork(ctx context.Context, s *scope, role manifestwork.Role, template, cluster string) (manifestwork.Observation, error) {
	w := s.works
	name := manifestwork.Name(s.cgu.Namespace, s.cgu.Name, role, template)
	if mw, ok := w.made[cluster+"/"+name]; ok {
		return manifestwork.Observe(mw, w.expected[template]), nil
	}
	t, ok := w.templates[template]
	if !ok {
		return manifestwork.Observation{State: manifestwork.Missing,
			Message: fmt.Sprintf("ManifestWorkReplicaSet %s/%s not found", s.cgu.Namespace, template)}, nil
	}
	mw := manifestwork.New(t, role, cluster, s.owner)
	if err := r.Client.Create(ctx, mw); err != nil && !apierrors.IsAlreadyExists(err) {
		r.Metrics.RemediationError(metrics.OperationPlacement)
		return manifestwork.Observation{}, fmt.Errorf("creating ManifestWork %s/%s: %w", cluster, name, err)
	}
	w.made[cluster+"/"+name] = mw
	return manifestwork.Observation{State: manifestwork.Missing, Message: fmt.Sprintf("ManifestWork %s/%s was just made", cluster, name)}, nil
}

// stepFacts adds to the managed policies' facts those of the steps: a cluster complies with
// a step once its ManifestWork is done, and cannot once it is degraded.
func stepFacts(s *scope, policies func(string) []rollout.Policy) func(string) []rollout.Policy {
	steps := s.cgu.Spec.ManifestWorkTemplates
	if len(steps) == 0 || s.works == nil {
		return policies
	}
	return func(cluster string) []rollout.Policy {
		out := policies(cluster)
		for _, t := range steps {
			name := manifestwork.Name(s.cgu.Namespace, s.cgu.Name, manifestwork.RoleStep, t)
			o := manifestwork.Observe(s.works.made[cluster+"/"+name], s.works.expected[t])
			p := rollout.Policy{Compliant: o.State == manifestwork.Done}
			if o.State == manifestwork.Degraded {
				p.Failed = manifestwork.ReasonManifestWorkDegraded
			}
			out = append(out, p)
		}
		return out
	}
}

// applySteps makes the ManifestWork of each step for the clusters working on it.
func (r *ClusterGroupUpgradeReconciler) applySteps(ctx context.Context, s *scope) error {
	if s.works == nil || s.decision.Progress.Finished {
		return nil
	}
	for j, t := range s.cgu.Spec.ManifestWorkTemplates {
		for _, cluster := range s.decision.Enforce[len(s.roots)+j] {
			if _, err := r.ensureWork(ctx, s, manifestwork.RoleStep, t, cluster); err != nil {
				return err
			}
		}
	}
	return nil
}

// preActionGate holds the clusters about to start until their pre-upgrade actions are done;
// a degraded one holds the cluster for good.
func preActionGate(s *scope, next func(string) *rollout.Hold) func(string) *rollout.Hold {
	if len(s.cgu.Spec.PreUpgradeActions) == 0 || s.works == nil {
		return next
	}
	return func(cluster string) *rollout.Hold {
		if next != nil {
			if hold := next(cluster); hold != nil {
				return hold
			}
		}
		o, ok := s.works.pre[cluster]
		switch {
		case !ok:
			return &rollout.Hold{Cluster: cluster, Reason: manifestwork.ReasonPreUpgradeActionPending, Pending: true,
				Message: fmt.Sprintf("cluster %s waits for its pre-upgrade actions to be made", cluster)}
		case o.State == manifestwork.Degraded:
			return &rollout.Hold{Cluster: cluster, Reason: manifestwork.ReasonPreUpgradeActionDegraded,
				Message: fmt.Sprintf("cluster %s is held: %s", cluster, o.Message)}
		case o.State != manifestwork.Done:
			return &rollout.Hold{Cluster: cluster, Reason: manifestwork.ReasonPreUpgradeActionPending, Pending: true,
				Message: fmt.Sprintf("cluster %s waits for its pre-upgrade actions: %s", cluster, o.Message)}
		}
		return nil
	}
}

// postActionGate adds the post-upgrade actions to the verification of a cluster that
// completed its policies: it completes once they are done and healthy, and fails when one
// is degraded.
func postActionGate(s *scope, health func(string) *rollout.Verification) func(string) *rollout.Verification {
	if len(s.cgu.Spec.PostUpgradeActions) == 0 || s.works == nil {
		return health
	}
	return func(cluster string) *rollout.Verification {
		o, ok := s.works.post[cluster]
		if ok && o.State == manifestwork.Degraded {
			return &rollout.Verification{Done: true, Reason: manifestwork.ReasonPostUpgradeActionDegraded, Message: o.Message}
		}
		v := &rollout.Verification{Done: true, Healthy: true}
		if health != nil {
			v = health(cluster)
		}
		if !ok || o.State != manifestwork.Done {
			if v.Done && !v.Healthy {
				return v
			}
			return &rollout.Verification{}
		}
		return v
	}
}

// needsWorksRound reports whether the decision put clusters where their actions are not
// made yet (a batch that just started, a cluster that just began verifying): one more
// reconcile makes them, since those writes wake nothing.
func needsWorksRound(s *scope) bool {
	if s.works == nil || !s.decided {
		return false
	}
	for _, hold := range s.decision.Holds {
		if _, seen := s.works.pre[hold.Cluster]; hold.Reason == manifestwork.ReasonPreUpgradeActionPending && !seen {
			return true
		}
	}
	if len(s.cgu.Spec.PostUpgradeActions) > 0 {
		for name, c := range s.decision.Progress.Clusters {
			if _, seen := s.works.post[name]; c.Verifying() && !seen {
				return true
			}
		}
	}
	return false
}

// workChanged passes the events of a ManifestWork that may move its rollout: made, gone, or
// a new status from the work agent.
type workChanged struct{ predicate.Funcs }

func (workChanged) Create(event.CreateEvent) bool   { return true }
func (workChanged) Delete(event.DeleteEvent) bool   { return true }
func (workChanged) Generic(event.GenericEvent) bool { return false }
func (workChanged) Update(e event.UpdateEvent) bool {
	o, okOld := e.ObjectOld.(*workv1.ManifestWork)
	n, okNew := e.ObjectNew.(*workv1.ManifestWork)
	return !okOld || !okNew || !equality.Semantic.DeepEqual(o.Status, n.Status) || !o.DeletionTimestamp.Equal(n.DeletionTimestamp)
}
