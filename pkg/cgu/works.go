package cgu

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

// The rollout's ManifestWorks: those of its steps (spec.manifestWorkTemplates), and the
// actions before and after each cluster's upgrade.

// UsesWorks reports whether the spec rolls out or runs ManifestWorks.
func UsesWorks(cgu *ranv1alpha1.ClusterGroupUpgrade) bool {
	sp := cgu.Spec
	return len(sp.ManifestWorkTemplates)+len(sp.PreUpgradeActions)+len(sp.PostUpgradeActions) > 0
}

// observeActions observes, once started, the pre-upgrade actions of the clusters of the
// running batch that have not started, and the post-upgrade actions of the clusters
// verifying. Before the start there is nothing to observe, but the gates hold the first
// batch's clusters until their pre-upgrade actions are made.
func (p *pass) observeActions() {
	sp, pr := p.cgu.Spec, p.f.Progress
	if p.f.Works == nil || !p.f.Started || pr.Finished || pr.BatchEnded || pr.Batch >= len(p.in.Plan.Batches) {
		return
	}
	if len(sp.PreUpgradeActions) > 0 {
		p.pre = map[string]manifestwork.Observation{}
		for _, c := range p.in.Plan.Batches[pr.Batch].Clusters {
			if st := pr.Clusters[c].State; st != "" && st != ranv1alpha1.ClusterPending {
				continue
			}
			p.pre[c] = p.observeWorks(manifestwork.RolePre, sp.PreUpgradeActions, c)
		}
	}
	if len(sp.PostUpgradeActions) > 0 {
		p.post = map[string]manifestwork.Observation{}
		for name, c := range pr.Clusters {
			if !c.Verifying() {
				continue
			}
			p.post[name] = p.observeWorks(manifestwork.RolePost, sp.PostUpgradeActions, name)
		}
	}
}

// observeWorks says what the ManifestWorks of the templates for a cluster say together:
// degraded when one is, done when all are; a template or work missing is not done.
func (p *pass) observeWorks(role manifestwork.Role, templates []string, cluster string) manifestwork.Observation {
	all := manifestwork.Observation{State: manifestwork.Done}
	for _, name := range templates {
		o := p.observeWork(role, name, cluster)
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
func (p *pass) observeWork(role manifestwork.Role, template, cluster string) manifestwork.Observation {
	w := p.f.Works
	name := manifestwork.Name(ownership.OwnerOf(p.cgu), role, template)
	if mw, ok := w.Made[cluster+"/"+name]; ok {
		return manifestwork.Observe(mw, w.Expected[template])
	}
	if _, ok := w.Templates[template]; !ok {
		return manifestwork.Observation{State: manifestwork.Missing,
			Message: fmt.Sprintf("ManifestWorkReplicaSet %s/%s not found", p.cgu.Namespace, template)}
	}
	return manifestwork.Observation{State: manifestwork.Missing, Message: fmt.Sprintf("ManifestWork %s/%s is not made yet", cluster, name)}
}

// works are the ManifestWorks to make after the decision, those not made yet whose template
// exists: each step's for the clusters working on it, the pre-upgrade actions' for the
// clusters of the running batch waiting to start, the post-upgrade actions' for the clusters
// verifying; and those to delete (givingWay).
func (p *pass) works() []Work {
	w := p.f.Works
	if w == nil || p.in.Decision.Progress.Finished {
		return nil
	}
	var out []Work
	add := func(role manifestwork.Role, templates []string, cluster string) {
		for _, t := range templates {
			name := manifestwork.Name(ownership.OwnerOf(p.cgu), role, t)
			_, made := w.Made[cluster+"/"+name]
			if _, exists := w.Templates[t]; exists && !made {
				out = append(out, Work{Role: role, Template: t, Cluster: cluster})
			}
		}
	}
	sp, d := p.cgu.Spec, p.in.Decision
	gone, giving := p.givingWay()
	out = append(out, gone...)
	for j, t := range sp.ManifestWorkTemplates {
		for _, cluster := range d.Enforce[len(p.f.Roots)+j] {
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
	slices.SortFunc(out, compareWork)
	return out
}

// givingWay are the works to delete of the steps whose template says delete-when-done:
// those of the clusters past the step. giving are the clusters with such a work still
// there: their next work is made once it is gone.
func (p *pass) givingWay() (out []Work, giving map[string]bool) {
	sp, d, w := p.cgu.Spec, p.in.Decision, p.f.Works
	n := len(p.f.Roots) + len(sp.ManifestWorkTemplates)
	past := positions(n, d.Progress.Clusters)
	for _, e := range d.Ended {
		maps.Copy(past, positions(n, e.Clusters))
	}
	giving = map[string]bool{}
	for j, t := range sp.ManifestWorkTemplates {
		if !manifestwork.DeleteWhenDone(w.Templates[t]) {
			continue
		}
		name := manifestwork.Name(ownership.OwnerOf(p.cgu), manifestwork.RoleStep, t)
		for cluster, at := range past {
			if _, made := w.Made[cluster+"/"+name]; made && at > len(p.f.Roots)+j {
				out = append(out, Work{Role: manifestwork.RoleStep, Template: t, Cluster: cluster, Delete: true})
				giving[cluster] = true
			}
		}
	}
	return out, giving
}

// compareWork orders works by cluster, role and template, deletions first.
func compareWork(a, b Work) int {
	return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Role, b.Role), cmp.Compare(a.Template, b.Template),
		-cmp.Compare(boolInt(a.Delete), boolInt(b.Delete)))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
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
func (p *pass) recordedPositions() map[string]int {
	names := p.policyNames()
	out := map[string]int{}
	for _, r := range p.f.Records {
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
	maps.Copy(out, positions(len(names), p.f.Progress.Clusters))
	return out
}

// stepFacts adds to the managed policies' facts those of the steps: a cluster complies with
// a step once its ManifestWork is done, and cannot once it is degraded.
func (p *pass) stepFacts(policies []rollout.PolicyFacts) []rollout.PolicyFacts {
	steps, w := p.cgu.Spec.ManifestWorkTemplates, p.f.Works
	if len(steps) == 0 || w == nil {
		return policies
	}
	var past map[string]int
	for j, t := range steps {
		f := rollout.PolicyFacts{Step: true, Done: map[string]bool{}, Failed: map[string]string{}}
		if manifestwork.DeleteWhenDone(w.Templates[t]) {
			// Its work is deleted once done: the clusters past it stay done with it.
			if past == nil {
				past = p.recordedPositions()
			}
			for cluster, at := range past {
				if at > len(p.f.Roots)+j {
					f.Done[cluster] = true
				}
			}
		}
		name := manifestwork.Name(ownership.OwnerOf(p.cgu), manifestwork.RoleStep, t)
		for _, mw := range w.Made {
			if mw.Name != name {
				continue
			}
			switch manifestwork.Observe(mw, w.Expected[t]).State {
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
