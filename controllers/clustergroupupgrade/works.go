package clustergroupupgrade

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	"github.com/cgu-operator/cgu-operator/pkg/spokeobjects"
)

// works is what a rollout's ManifestWorks say: those of its steps
// (spec.manifestWorkTemplates), and the actions before and after each cluster's upgrade.
type works struct {
	// templates are the ManifestWorkReplicaSets the spec names, by name; a missing one is
	// absent.
	templates map[string]*workv1alpha1.ManifestWorkReplicaSet
	// expected are their expected feedback values, by template name.
	expected map[string][]manifestwork.Feedback
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
// hold the first batch's clusters until their pre-upgrade actions are made. It makes
// nothing: workIntents says which ManifestWorks to make once the decision is known.
func (r *Reconciler) gatherWorks(ctx context.Context, s *scope) error {
	if !usesWorks(s.cgu) || r.Unserved.Works {
		return nil
	}
	w := &works{templates: map[string]*workv1alpha1.ManifestWorkReplicaSet{}, expected: map[string][]manifestwork.Feedback{},
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
	observeActions(s)
	return nil
}

// observeActions observes the pre-upgrade actions of the clusters of the running batch
// that have not started, and the post-upgrade actions of the clusters verifying.
func observeActions(s *scope) {
	sp, w := s.cgu.Spec, s.works
	if s.progress.Finished || s.progress.BatchEnded || s.progress.Batch >= len(s.plan.Batches) {
		return
	}
	if len(sp.PreUpgradeActions) > 0 {
		w.pre = map[string]manifestwork.Observation{}
		for _, c := range s.plan.Batches[s.progress.Batch].Clusters {
			if st := s.progress.Clusters[c].State; st != "" && st != ranv1alpha1.ClusterPending {
				continue
			}
			w.pre[c] = observeWorks(s, manifestwork.RolePre, sp.PreUpgradeActions, c)
		}
	}
	if len(sp.PostUpgradeActions) > 0 {
		w.post = map[string]manifestwork.Observation{}
		for name, c := range s.progress.Clusters {
			if !c.Verifying() {
				continue
			}
			w.post[name] = observeWorks(s, manifestwork.RolePost, sp.PostUpgradeActions, name)
		}
	}
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
		ctrl.LoggerFrom(ctx).Info("Ignoring a ManifestWorkReplicaSet", "template", name, "error", err)
		return nil
	}
	w.templates[name], w.expected[name] = t, expected
	return nil
}

// observeWorks says what the ManifestWorks of the templates for a cluster say together:
// degraded when one is, done when all are; a template or work missing is not done.
func observeWorks(s *scope, role manifestwork.Role, templates []string, cluster string) manifestwork.Observation {
	all := manifestwork.Observation{State: manifestwork.Done}
	for _, name := range templates {
		o := observeWork(s, role, name, cluster)
		switch {
		case o.State == manifestwork.Degraded:
			return o
		case o.State != manifestwork.Done && all.State == manifestwork.Done:
			all = o
		}
	}
	return all
}

// observeWork says what the ManifestWork of a template for a cluster says, or why there
// is none.
func observeWork(s *scope, role manifestwork.Role, template, cluster string) manifestwork.Observation {
	w := s.works
	name := manifestwork.Name(s.cgu.Namespace, s.cgu.Name, role, template)
	if mw, ok := w.made[cluster+"/"+name]; ok {
		return manifestwork.Observe(mw, w.expected[template])
	}
	if _, ok := w.templates[template]; !ok {
		return manifestwork.Observation{State: manifestwork.Missing,
			Message: fmt.Sprintf("ManifestWorkReplicaSet %s/%s not found", s.cgu.Namespace, template)}
	}
	return manifestwork.Observation{State: manifestwork.Missing, Message: fmt.Sprintf("ManifestWork %s/%s is not made yet", cluster, name)}
}

// workIntent is a ManifestWork to make, or to delete: a template's, for a cluster, in a
// role.
type workIntent struct {
	role              manifestwork.Role
	template, cluster string
	delete            bool
}

// workIntents are the ManifestWorks to make after the decision, those not made yet whose
// template exists: each step's for the clusters working on it, the pre-upgrade actions'
// for the clusters of the running batch waiting to start, the post-upgrade actions' for
// the clusters verifying; and those to delete (givingWay).
func workIntents(s *scope) []workIntent {
	if s.works == nil || !s.decided || s.decision.Progress.Finished {
		return nil
	}
	var out []workIntent
	add := func(role manifestwork.Role, templates []string, cluster string) {
		for _, t := range templates {
			name := manifestwork.Name(s.cgu.Namespace, s.cgu.Name, role, t)
			_, made := s.works.made[cluster+"/"+name]
			if _, exists := s.works.templates[t]; exists && !made {
				out = append(out, workIntent{role: role, template: t, cluster: cluster})
			}
		}
	}
	sp, d := s.cgu.Spec, s.decision
	gone, giving := givingWay(s)
	out = append(out, gone...)
	for j, t := range sp.ManifestWorkTemplates {
		for _, cluster := range d.Enforce[len(s.roots)+j] {
			if !giving[cluster] {
				add(manifestwork.RoleStep, []string{t}, cluster)
			}
		}
	}
	if len(sp.PreUpgradeActions) > 0 {
		for _, hold := range d.Holds {
			add(manifestwork.RolePre, sp.PreUpgradeActions, hold.Cluster)
		}
	}
	if len(sp.PostUpgradeActions) > 0 {
		for name, c := range d.Progress.Clusters {
			if c.Verifying() {
				add(manifestwork.RolePost, sp.PostUpgradeActions, name)
			}
		}
	}
	return out
}

// givingWay are the works to delete of the steps whose template says delete-when-done:
// those of the clusters past the step. giving are the clusters with such a work still
// there: their next work is made once it is gone.
func givingWay(s *scope) (out []workIntent, giving map[string]bool) {
	sp, d := s.cgu.Spec, s.decision
	n := len(s.roots) + len(sp.ManifestWorkTemplates)
	past := positions(n, d.Progress.Clusters)
	for _, e := range d.Ended {
		maps.Copy(past, positions(n, e.Clusters))
	}
	giving = map[string]bool{}
	for j, t := range sp.ManifestWorkTemplates {
		if !manifestwork.DeleteWhenDone(s.works.templates[t]) {
			continue
		}
		name := manifestwork.Name(s.cgu.Namespace, s.cgu.Name, manifestwork.RoleStep, t)
		for cluster, at := range past {
			if _, made := s.works.made[cluster+"/"+name]; made && at > len(s.roots)+j {
				out = append(out, workIntent{role: manifestwork.RoleStep, template: t, cluster: cluster, delete: true})
				giving[cluster] = true
			}
		}
	}
	return out, giving
}

// positions are how many of the n managed policies and steps each cluster is past: all of
// them once it completed or verifies, else the index of the one it is on.
func positions(n int, clusters map[string]rollout.Cluster) map[string]int {
	out := make(map[string]int, len(clusters))
	for name, c := range clusters {
		switch {
		case c.State == ranv1alpha1.ClusterCompleted, c.Verifying():
			out[name] = n
		case c.State != ranv1alpha1.ClusterPending:
			out[name] = c.Policy
		}
	}
	return out
}

// recordedPositions are positions as the batch records say them.
func recordedPositions(s *scope) map[string]int {
	names := s.policyNames()
	out := map[string]int{}
	for _, r := range s.records {
		for _, cp := range r.Status.Clusters {
			switch {
			case cp.State == ranv1alpha1.ClusterCompleted, cp.Reason == ranv1alpha1.ReasonVerifying:
				out[cp.Name] = len(names)
			case cp.State != ranv1alpha1.ClusterPending && cp.CurrentPolicy != "":
				if i := slices.Index(names, cp.CurrentPolicy); i >= 0 {
					out[cp.Name] = i
				}
			}
		}
	}
	maps.Copy(out, positions(len(names), s.progress.Clusters))
	return out
}

// makeWork makes, or deletes, the ManifestWork of an intent.
func (r *Reconciler) makeWork(ctx context.Context, s *scope, w workIntent) error {
	writer := spokeobjects.Writer{Client: r.Client}
	if w.delete {
		mw := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: w.cluster,
			Name: manifestwork.Name(s.cgu.Namespace, s.cgu.Name, w.role, w.template)}}
		if err := writer.Delete(ctx, mw); err != nil {
			r.Metrics.RemediationError(metrics.OperationPlacement)
			return err
		}
		return nil
	}
	mw := manifestwork.New(s.works.templates[w.template], w.role, w.cluster, s.owner)
	if err := writer.CreateWork(ctx, mw); err != nil {
		r.Metrics.RemediationError(metrics.OperationPlacement)
		return err
	}
	s.works.made[mw.Namespace+"/"+mw.Name] = mw
	return nil
}

// stepFacts adds to the managed policies' facts those of the steps: a cluster complies with
// a step once its ManifestWork is done, and cannot once it is degraded.
func stepFacts(s *scope, policies []rollout.PolicyFacts) []rollout.PolicyFacts {
	steps := s.cgu.Spec.ManifestWorkTemplates
	if len(steps) == 0 || s.works == nil {
		return policies
	}
	var past map[string]int
	for j, t := range steps {
		f := rollout.PolicyFacts{Step: true, Done: map[string]bool{}, Failed: map[string]string{}}
		if manifestwork.DeleteWhenDone(s.works.templates[t]) {
			// Its work is deleted once done: the clusters past it stay done with it.
			if past == nil {
				past = recordedPositions(s)
			}
			for cluster, at := range past {
				if at > len(s.roots)+j {
					f.Done[cluster] = true
				}
			}
		}
		name := manifestwork.Name(s.cgu.Namespace, s.cgu.Name, manifestwork.RoleStep, t)
		for _, mw := range s.works.made {
			if mw.Name != name {
				continue
			}
			switch manifestwork.Observe(mw, s.works.expected[t]).State {
			case manifestwork.Done:
				f.Done[mw.Namespace] = true
			case manifestwork.Degraded:
				f.Failed[mw.Namespace] = manifestwork.ReasonManifestWorkDegraded
			}
		}
		policies = append(policies, f)
	}
	return policies
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
