package cgu

import (
	"maps"
	"slices"

	"github.com/cgu-operator/cgu-operator/pkg/spokecheck"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
)

// spoke decides the spoke-side objects the decision calls for, after the pre-start Jobs
// (decided with the plan): the views of ClusterVersions the upgrade checks read, the runs
// of the health check, the ManifestWorks, and InstallPlan approval. Their answers come back
// as watch events (views, actions, ManifestWorks), which queue the rollout again.
func (p *pass) spoke() {
	s := &p.in.Spoke
	s.Jobs = append(s.Jobs, p.healthJobs()...)
	s.Views = p.checkViews()
	s.Works = p.works()
	s.InstallPlans = p.installPlans()
}

// checks keeps the checks' verdicts on the clusters still planned, once the spec is valid
// and pre-caching did not fail everywhere.
func (p *pass) checks() {
	if p.in.Invalid != nil || p.precacheFailed != nil || (p.f.Checks == nil && p.f.Health.Preview == nil) {
		return
	}
	planned := allClusters(p.in.Plan)
	if c := p.f.Checks; c != nil {
		p.verdicts = only(c.Verdicts, planned)
		if p.verdicts == nil {
			p.verdicts = map[string]upgradecheck.Verdict{}
		}
	}
	p.healthPreview = only(p.f.Health.Preview, planned)
}

// checkViews are the clusters whose ClusterVersion view to make: those the checks could not
// read it for yet (an existing view costs nothing more).
func (p *pass) checkViews() []string {
	if p.f.Checks == nil || !p.f.Checks.ViewsNeeded {
		return nil
	}
	var out []string
	for c, v := range p.verdicts {
		if v.Reason == upgradecheck.ReasonClusterVersionUnknown {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// healthJobs are the runs of the health check to start: those read without an answer yet (a
// run already started costs nothing more), and those the decision calls for that were not
// read: the clusters of a batch it started, and those it put to verifying.
func (p *pass) healthJobs() []spokejob.Job {
	h := spokecheck.HealthChecks(p.cgu)
	if h == nil {
		return nil
	}
	var out []spokejob.Job
	add := func(cluster, run string, asked map[string]spokecheck.HealthVerdict) {
		if v, ok := asked[cluster]; !ok || !v.Done {
			out = append(out, spokecheck.HealthJob(p.cgu, cluster, run, p.cfg.SpokeImage))
		}
	}
	if !p.f.Started {
		for _, c := range slices.Sorted(maps.Keys(p.healthPreview)) {
			add(c, spokecheck.HealthRunBeforeEnable(p.cgu), p.healthPreview)
		}
		return out
	}
	d := p.in.Decision
	if h.BeforeUpgrade {
		// The clusters of the running batch that wait to start, for whatever reason.
		for _, hold := range d.Holds {
			add(hold.Cluster, spokecheck.BatchHealthRun(d.Progress.BatchStarted), p.f.Health.Before)
		}
	}
	if h.AfterUpgrade {
		for _, name := range slices.Sorted(maps.Keys(d.Progress.Clusters)) {
			if c := d.Progress.Clusters[name]; c.Verifying() {
				add(name, spokecheck.VerifyHealthRun(c.Since), p.f.Health.After)
			}
		}
	}
	return out
}
