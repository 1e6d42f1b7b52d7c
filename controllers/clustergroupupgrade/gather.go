package clustergroupupgrade

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/analysis"
	"github.com/cgu-operator/cgu-operator/pkg/cgu"
	"github.com/cgu-operator/cgu-operator/pkg/gates"
	"github.com/cgu-operator/cgu-operator/pkg/hubapi"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/pkg/policies"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/prestart"
	"github.com/cgu-operator/cgu-operator/pkg/preview"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/spokecheck"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
	"github.com/cgu-operator/cgu-operator/pkg/talmjob"
	"github.com/cgu-operator/cgu-operator/pkg/tenancy"
	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
	"github.com/cgu-operator/cgu-operator/pkg/updateservice"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
	"github.com/cgu-operator/cgu-operator/pkg/views"
)

// The gather step: each concern reads what it contributes to cgu.Facts, from the cache (and
// ConfigMaps and update graphs, which the cache does not hold, and the batch records again
// from the API server when the cache shows some missing). A gatherer holds readers
// only; it decides nothing, so a concern reads whatever its decision might need (the
// pre-start Jobs of every planned cluster, the checks of clusters a failed Job may take out
// of the plan) and cgu.Decide keeps what applies.

// gatherer reads the facts of a reconcile.
type gatherer struct {
	// cache reads the kinds the manager caches; api reads ConfigMaps, and the batch records
	// when those the cache shows do not make the plan (damaged).
	cache, api client.Reader
	expect     *expectations
	// lagNow is the real time the wait for the cache is measured in.
	lagNow             func() time.Time
	unserved           hubapi.Unserved
	policyNamespaces   []string
	tenancy            tenancy.Rules
	defaultEnforcement ranv1alpha1.EnforcementMode
	graphs             *updateservice.Client
	updateService      string
	spokeImage         string
	precacheTimeout    time.Duration
	// precacheCap is true when pre-caching has a hub-wide cap: the other rollouts' count.
	precacheCap bool
	unresolved  *preview.UnresolvedCache
	releases    *policies.Releases
	compliance  *preview.ComplianceCache
}

func (r *Reconciler) gatherer() gatherer {
	return gatherer{cache: r.Client, api: r.Reader, expect: &r.expect, lagNow: r.lagNow, unserved: r.Unserved,
		policyNamespaces: r.PolicyNamespaces, tenancy: r.Tenancy, defaultEnforcement: r.DefaultEnforcement, graphs: r.Graphs,
		updateService: r.UpdateService, spokeImage: r.SpokeImage, precacheTimeout: r.PrecacheTimeout,
		precacheCap: r.MaxConcurrentPrecaching > 0, unresolved: r.Unresolved, releases: r.Releases, compliance: r.Compliance}
}

// steps are the gather steps in order: each reads what the ones before found (the records
// tell whether the rollout started; the plan tells whose Jobs and checks to read).
func (g gatherer) steps() []func(context.Context, *scope) error {
	return []func(context.Context, *scope) error{g.records, g.start, g.frozen, g.released, g.others, g.freezes, g.precache, g.backup,
		g.checks, g.health, g.works, g.installPlans, g.analysis}
}

// records reads the batch records, and waits while the cache does not show the operator's
// last write of them or of the ClusterGroupUpgrade.
func (g gatherer) records(ctx context.Context, s *scope) error {
	var list ranv1alpha1.ClusterGroupUpgradeBatchList
	if err := g.cache.List(ctx, &list, client.InNamespace(s.cgu.Namespace),
		client.MatchingLabels{ranv1alpha1.LabelUpgradeName: names.LabelValue(s.cgu.Name)}); err != nil {
		return fmt.Errorf("listing batch records: %w", err)
	}
	f := &s.facts
	for _, b := range list.Items {
		switch {
		case b.Spec.Upgrade != s.cgu.Name:
		case !metav1.IsControlledBy(&b, s.cgu):
			// A record of an earlier ClusterGroupUpgrade of the same name, which the
			// garbage collector has not deleted yet: never this rollout's progress.
			s.foreign = append(s.foreign, b)
		default:
			f.Records = append(f.Records, b)
		}
	}
	slices.SortFunc(f.Records, func(a, b ranv1alpha1.ClusterGroupUpgradeBatch) int {
		return a.Spec.Index*10000 + a.Spec.Part - b.Spec.Index*10000 - b.Spec.Part
	})
	read := []client.Object{s.cgu}
	for i := range f.Records {
		read = append(read, &f.Records[i])
	}
	if lag := g.expect.behind(g.lagNow(), read...); lag > 0 {
		// The update event that shows the last write queues the ClusterGroupUpgrade again
		// (expectationsMet); the timer is the fallback.
		s.waitFor(lag, "the cache to show the operator's last write")
		return nil
	}
	// The records are written only when the rollout starts, before anything is enforced: a
	// pass cut after all of them (its status not written) may have enforced the first batch
	// already, so the plan they froze whole is the plan, never made again from what the
	// clusters say now. A plan recorded in part is made again, its records kept.
	f.Started = s.before.StartedAt != nil || plan.Whole(f.Records, s.cgu.Name)
	for _, b := range f.Records {
		f.Started = f.Started || b.Status.StartedAt != nil
	}
	g.startsPaced(s)
	s.progressDue = g.expect.progressDue(s.cgu)
	f.ProgressPaced = g.lagNow().Before(s.progressDue)
	return nil
}

// startsPaced says whether the operator wrote starting clusters of the rollout less than
// its pace ago (expectations.started); if so, the pass is run again when the pace is over,
// for the slots freed meanwhile.
func (g gatherer) startsPaced(s *scope) {
	due := g.expect.startsDue(s.cgu)
	if now := g.lagNow(); now.Before(due) {
		s.facts.StartsPaced = true
		s.lookAgain(due.Sub(now))
	}
}

// previewScope is what the operator lets the rollout do, for pkg/preview: the mode is the
// one cgu.Decide keeps (rollout.Enforcement).
func (g gatherer) previewScope(s *scope) preview.Scope {
	mode := rollout.Enforcement(s.cgu.Spec.Enforcement, s.before.Enforcement, s.facts.Started, g.defaultEnforcement)
	return preview.Scope{PolicyNamespaces: g.policyNamespaces, Enforcement: mode, Unserved: g.unserved, Tenancy: g.tenancy,
		Replicas: g.api, Unresolved: g.unresolved}
}

// start reads, before the start, what the start is decided from: the blocking CGUs, the
// selection, the managed policies and the plan (pkg/preview, which tools read too).
func (g gatherer) start(ctx context.Context, s *scope) error {
	if s.facts.Started {
		return nil
	}
	f, err := preview.GatherIn(ctx, g.cache, s.cgu, g.previewScope(s))
	if err != nil {
		return err
	}
	s.facts.Start = cgu.Start{Blocked: f.Blocked, Selected: f.Selected, SelectProblem: f.SelectionProblem, Invalid: f.Invalid,
		CompliantBefore: f.CompliantBefore}
	s.facts.Roots, s.facts.Plan = f.Policies, f.Plan
	return nil
}

// frozen reads, once started, the frozen managed policies (status managedPoliciesForUpgrade;
// an entry is nil when its policy was deleted), the frozen plan and the progress from the
// batch records.
func (g gatherer) frozen(ctx context.Context, s *scope) error {
	f := &s.facts
	if !f.Started {
		return nil
	}
	var err error
	accepted := s.before.ManagedPoliciesForUpgrade
	if len(accepted) == 0 { // status lost its policies: the records froze them at the start
		accepted = rollout.FrozenPolicies(f.Records)
	}
	if len(accepted) == 0 { // records of an earlier version: resolve them again
		var pf preview.Facts
		pf, err = preview.GatherIn(ctx, g.cache, s.cgu, g.previewScope(s))
		f.Roots = pf.Policies
	} else {
		f.Roots, err = preview.AcceptedPolicies(ctx, g.cache, accepted)
	}
	if err != nil {
		return err
	}
	f.Compliance = make([]map[string]policyv1.ComplianceState, len(f.Roots))
	for i, root := range f.Roots {
		if root != nil {
			f.Compliance[i] = g.compliance.Of(root)
		}
	}
	p, err := plan.FromRecords(f.Records, s.cgu.Name)
	if err != nil || s.before.Plan != nil && s.before.Plan.Batches != len(p.Batches) || rollout.Unfinished(f.Records) {
		return g.damaged(ctx, s)
	}
	f.Plan = p
	g.progress(s)
	return nil
}

// released reads, for the clusters of the current batch past an intermediate managed
// policy (a path's intermediate update), whether the hub still enforces that policy on
// them: their replica of it, from the API server, until it shows released (policies
// Releases remembers those). Rollouts without intermediate policies read nothing.
func (g gatherer) released(ctx context.Context, s *scope) error {
	f := &s.facts
	if !f.Started || !slices.ContainsFunc(f.Roots, cgu.Intermediate) {
		return nil
	}
	mode := rollout.Enforcement(s.cgu.Spec.Enforcement, s.before.Enforcement, f.Started, g.defaultEnforcement)
	var asked []policies.Enforced
	index := map[policies.Enforced]int{}
	for name, c := range f.Progress.Clusters {
		if c.State != ranv1alpha1.ClusterInProgress {
			continue
		}
		for j := 0; j < c.Policy && j < len(f.Roots); j++ {
			if root := f.Roots[j]; cgu.Intermediate(root) {
				e := policies.EnforcedOn(s.owner, mode, root.Namespace, root.Name, name)
				asked, index[e] = append(asked, e), j
			}
		}
	}
	released, err := g.releases.Released(ctx, g.api, s.owner, asked)
	if err != nil {
		return err
	}
	f.Released = map[int]map[string]bool{}
	for e := range released {
		j := index[e]
		if f.Released[j] == nil {
			f.Released[j] = map[string]bool{}
		}
		f.Released[j][e.Cluster] = true
	}
	return nil
}

// progress reads the rollout's progress from its records.
func (g gatherer) progress(s *scope) {
	f := &s.facts
	var started time.Time
	if s.before.StartedAt != nil {
		started = s.before.StartedAt.Time
	}
	f.Progress = rollout.Recorded(f.Records, cgu.PolicyNames(s.cgu, f.Roots), started)
	if len(f.Plan.Batches) == 0 {
		f.Progress.Finished = true
	}
}

// damaged reads the records again from the API server when those the cache shows do not make
// the plan the status describes. When the API server has them all, the cache has not caught
// up (with the records written at the start): the pass waits. Otherwise records were lost
// (deleted by hand, or written in part): rollout.Rebuild rebuilds them, which the pass
// writes again (cgu.Facts.Rebuilt), or says what is missing (cgu.Facts.Lost).
func (g gatherer) damaged(ctx context.Context, s *scope) error {
	var list ranv1alpha1.ClusterGroupUpgradeBatchList
	if err := g.api.List(ctx, &list, client.InNamespace(s.cgu.Namespace),
		client.MatchingLabels{ranv1alpha1.LabelUpgradeName: names.LabelValue(s.cgu.Name)}); err != nil {
		return fmt.Errorf("listing batch records from the API server: %w", err)
	}
	var live []ranv1alpha1.ClusterGroupUpgradeBatch
	for _, b := range list.Items {
		if b.Spec.Upgrade == s.cgu.Name && metav1.IsControlledBy(&b, s.cgu) {
			live = append(live, b)
		}
	}
	f := &s.facts
	if p, err := plan.FromRecords(live, s.cgu.Name); err == nil && (s.before.Plan == nil || s.before.Plan.Batches == len(p.Batches)) &&
		!rollout.Unfinished(live) {
		s.waitFor(cacheLag, "the cache to show the plan's records (%d of %d seen)", len(f.Records), len(live))
		return nil
	}
	all, rebuilt, lost := rollout.Rebuild(rollout.Damaged{Namespace: s.cgu.Namespace, Name: s.cgu.Name, Records: live,
		Status: &s.before, Shape: preview.Shape(s.cgu), Compliant: preview.CompliantWithEvery(f.Roots), Now: s.now})
	if lost != nil {
		f.Lost, f.Records = lost, live
		return nil
	}
	f.Records, f.Rebuilt = all, rebuilt
	f.Plan, _ = plan.FromRecords(all, s.cgu.Name)
	g.progress(s)
	return nil
}

// others reads, from the batch records that show clusters InProgress, which clusters other
// rollouts are remediating and how many clusters are InProgress on the hub. Once the
// rollout finished nothing starts: nothing is read.
// analysisTimeout bounds one query of an analysis gate: a pass waits for it.
const analysisTimeout = 10 * time.Second

// analysis reads what spec.analysis needs: before the start, whether its Secret can be read
// (validation); once started, the measurements due now (rollout.MeasureNow), which are
// reads of the query API. A query API that cannot be reached, or a Secret gone, makes the
// measurement inconclusive, never an error of the pass.
func (g gatherer) analysis(ctx context.Context, s *scope) error {
	a := s.cgu.Spec.Analysis
	if a == nil || s.facts.Progress.Finished {
		return nil
	}
	endpoint := func() (analysis.Endpoint, error) {
		secret := ""
		if a.Prometheus.SecretRef != nil {
			secret = a.Prometheus.SecretRef.Name
		}
		e, err := analysis.EndpointOf(ctx, g.api, a.Prometheus.URL, s.cgu.Namespace, secret, "spec.analysis.prometheus.secretRef")
		e.Timeout = analysisTimeout
		return e, err
	}
	if !s.facts.Started {
		if _, err := endpoint(); err != nil {
			s.facts.Analysis.Endpoint = err.Error()
		}
		return nil
	}
	due, upgraded, baseline := rollout.MeasureNow(gates.Analysis(a, nil), s.facts.Progress, s.facts.Plan, s.now)
	if len(due) == 0 {
		return nil
	}
	e, err := endpoint()
	label := cmp.Or(a.ClusterLabel, analysis.DefaultClusterLabel)
	measured := make(map[string]analysis.Measurement, len(due))
	for _, gate := range due {
		if err != nil {
			measured[gate.Name] = analysis.Measurement{At: s.now, Err: err.Error()}
			continue
		}
		measured[gate.Name] = e.Measure(ctx, gate.Gate, gate.Query, label, upgraded, baseline, s.now)
	}
	s.facts.Analysis.Measured = measured
	return nil
}

// freezes reads the hub's FleetFreezes, for a rollout that has not finished.
func (g gatherer) freezes(ctx context.Context, s *scope) error {
	if s.facts.Progress.Finished {
		return nil
	}
	var list ranv1alpha1.FleetFreezeList
	if err := g.cache.List(ctx, &list); err != nil {
		return fmt.Errorf("listing the fleet freezes: %w", err)
	}
	s.facts.Freezes = list.Items
	return nil
}

func (g gatherer) others(ctx context.Context, s *scope) error {
	if s.facts.Progress.Finished {
		return nil
	}
	var list ranv1alpha1.ClusterGroupUpgradeBatchList
	// Read only: the records are not copied out of the cache.
	if err := g.cache.List(ctx, &list, client.MatchingFields{inProgressIndex: anyInProgress}, client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("listing the batch records with clusters in progress: %w", err)
	}
	o := &s.facts.Others
	for _, b := range list.Items {
		mine := b.Namespace == s.cgu.Namespace && b.Spec.Upgrade == s.cgu.Name
		for _, c := range b.Status.Clusters {
			if c.State != ranv1alpha1.ClusterInProgress {
				continue
			}
			o.InProgress++
			if mine {
				continue
			}
			if o.Busy == nil {
				o.Busy = map[string]string{}
			}
			o.Busy[c.Name] = b.Namespace + "/" + b.Spec.Upgrade
		}
	}
	return nil
}

// prepares reports whether a rollout that has not started may run pre-start Jobs: its
// selection and policies are valid, and some planned cluster needs the upgrade.
func prepares(s *scope) bool {
	f := &s.facts
	return !f.Started && f.Start.SelectProblem == nil && f.Start.Invalid == nil && f.Plan.Clusters() > 0
}

// precache reads, before the rollout starts and whatever spec.enable says, what the
// pre-caching of the planned clusters needs and where it stands: it derives the spec and
// reads each planned cluster's precache Job.
func (g gatherer) precache(ctx context.Context, s *scope) error {
	if !s.cgu.Spec.PreCaching || !prepares(s) {
		return nil
	}
	cfg, err := g.precachingConfig(ctx, s.cgu)
	if err != nil {
		return err
	}
	pf := &cgu.Precache{Overrides: cfg.overrides}
	s.facts.Precache = pf
	if cfg.missing != "" {
		pf.Result = precache.Result{Reason: ranv1alpha1.ReasonPrecacheSpecIncomplete, Message: cfg.missing}
		return nil
	}
	pf.Result = precache.Derive(precache.Input{Policies: slices.Concat(s.facts.Roots, s.facts.Start.CompliantBefore),
		Config: cfg.spec, Graph: g.precacheGraph(ctx, s)})
	if !pf.Result.Valid {
		return nil
	}
	interval := talmjob.UpdateInterval(s.facts.Plan.Clusters())
	work := func(c string) talmjob.Work {
		return spokecheck.PrecacheWork(s.cgu, c, pf.Result.Spec, g.spokeImage, g.precacheTimeout, interval)
	}
	var kept map[string]string
	if s.before.Precaching != nil {
		kept = s.before.Precaching.Status
	}
	if pf.Jobs, err = g.jobs(ctx, s.facts.Plan, talmjob.Precache, work, kept); err != nil {
		return err
	}
	if cfg.spec != nil && cfg.spec.Bandwidth != nil {
		bw := cfg.spec.Bandwidth
		pf.Bandwidth = &cgu.Bandwidth{Spec: *bw, Labels: pf.Jobs.Labels, Within: g.precacheTimeout}
		return nil // the budget takes the place of the hub-wide cap
	}
	pf.Elsewhere, err = g.precachingElsewhere(ctx, s.cgu)
	return err
}

// jobs reads, for each planned cluster, the views of its pre-start Job by the protocol's
// names and whether it is available, with the state the status kept.
func (g gatherer) jobs(ctx context.Context, p plan.Plan, proto talmjob.Protocol, work func(cluster string) talmjob.Work,
	kept map[string]string) (cgu.Jobs, error) {
	out := cgu.Jobs{Work: map[string]talmjob.Work{}, Views: map[string]map[string]talmjob.View{}, Available: map[string]bool{},
		Labels: map[string]map[string]string{}, Kept: kept}
	for _, b := range p.Batches {
		for _, c := range b.Clusters {
			out.Order = append(out.Order, c)
			out.Work[c] = work(c)
			views := map[string]talmjob.View{}
			for _, name := range proto.Views() {
				var v viewv1beta1.ManagedClusterView
				err := g.cache.Get(ctx, client.ObjectKey{Namespace: c, Name: name}, &v)
				switch {
				case apierrors.IsNotFound(err):
					continue
				case err != nil:
					return out, fmt.Errorf("reading the view %s of %s: %w", name, c, err)
				}
				views[name] = talmjob.ReadView(&v, name == proto.JobView)
			}
			out.Views[c] = views
			var mc clusterv1.ManagedCluster
			if err := g.cache.Get(ctx, client.ObjectKey{Name: c}, &mc); client.IgnoreNotFound(err) != nil {
				return out, fmt.Errorf("reading the managed cluster %s: %w", c, err)
			}
			out.Available[c] = meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
			out.Labels[c] = mc.Labels
		}
	}
	return out, nil
}

// precachingElsewhere counts the clusters other rollouts of the hub are pre-caching, as
// their status shows, for the hub-wide cap.
func (g gatherer) precachingElsewhere(ctx context.Context, upgrade *ranv1alpha1.ClusterGroupUpgrade) (int, error) {
	if !g.precacheCap {
		return 0, nil
	}
	var list ranv1alpha1.ClusterGroupUpgradeList
	if err := g.cache.List(ctx, &list); err != nil {
		return 0, fmt.Errorf("listing rollouts for the precache cap: %w", err)
	}
	n := 0
	for _, other := range list.Items {
		if other.UID == upgrade.UID || other.Status.Precaching == nil {
			continue
		}
		for state, count := range other.Status.Precaching.Counts {
			if prestart.State(state).Running() {
				n += count
			}
		}
	}
	return n, nil
}

// precacheConfig is the referenced PreCachingConfig's spec, or why it is missing (or, in
// tenancy mode, out of reach).
type precacheConfig struct {
	spec    *ranv1alpha1.PreCachingConfigSpec
	missing string
	// overrides are the keys of TALM's deprecated overrides ConfigMap that were used.
	overrides []string
}

// precachingConfig reads the PreCachingConfig the spec names, merged with TALM's deprecated
// overrides ConfigMap of the ClusterGroupUpgrade's namespace (precache.WithOverrides).
func (g gatherer) precachingConfig(ctx context.Context, upgrade *ranv1alpha1.ClusterGroupUpgrade) (precacheConfig, error) {
	cfg, err := g.preCachingConfigRef(ctx, upgrade)
	if err != nil || cfg.missing != "" {
		return cfg, err
	}
	cm := &corev1.ConfigMap{}
	err = g.api.Get(ctx, client.ObjectKey{Namespace: upgrade.Namespace, Name: precache.OverridesConfigMap}, cm)
	switch {
	case apierrors.IsNotFound(err):
		return cfg, nil
	case err != nil:
		return cfg, fmt.Errorf("reading ConfigMap %s/%s: %w", upgrade.Namespace, precache.OverridesConfigMap, err)
	}
	cfg.spec, cfg.overrides = precache.WithOverrides(cfg.spec, cm.Data)
	return cfg, nil
}

func (g gatherer) preCachingConfigRef(ctx context.Context, upgrade *ranv1alpha1.ClusterGroupUpgrade) (precacheConfig, error) {
	ref := upgrade.Spec.PreCachingConfigRef
	if ref.Name == "" {
		return precacheConfig{}, nil
	}
	namespace := ref.Namespace
	if namespace == "" {
		namespace = upgrade.Namespace
	}
	if namespace != upgrade.Namespace && g.tenancy.Applies(upgrade.Namespace) {
		return precacheConfig{missing: fmt.Sprintf("spec.preCachingConfigRef names PreCachingConfig %s/%s: tenancy mode allows only one of the ClusterGroupUpgrade's namespace %s",
			namespace, ref.Name, upgrade.Namespace)}, nil
	}
	pc := &ranv1alpha1.PreCachingConfig{}
	err := g.cache.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, pc)
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
func (g gatherer) precacheGraph(ctx context.Context, s *scope) func(string) *updategraph.Graph {
	url := g.serviceOf(s.cgu)
	return func(channel string) *updategraph.Graph {
		graph, err := g.graphs.Graph(ctx, url, channel, "")
		if err != nil {
			return nil
		}
		return graph
	}
}

// serviceOf is the update service a rollout reads graphs from.
func (g gatherer) serviceOf(upgrade *ranv1alpha1.ClusterGroupUpgrade) string {
	if uc := upgrade.Spec.UpgradeChecks; uc != nil && uc.UpdateService != "" {
		return uc.UpdateService
	}
	return g.updateService
}

// backup reads, before the rollout starts, where the backup of every planned cluster
// stands, with what status.backup kept. Whether it runs (once enabled, not blocked and done
// pre-caching, TALM's order) is cgu.Decide's.
func (g gatherer) backup(ctx context.Context, s *scope) error {
	if !s.cgu.Spec.Backup || !prepares(s) {
		return nil
	}
	bf := &cgu.Backup{}
	var kept map[string]string
	if b := s.before.Backup; b != nil {
		bf.StartedAt, kept = b.StartedAt, b.Status
	}
	work := func(c string) talmjob.Work { return spokecheck.BackupWork(s.cgu, c, g.spokeImage) }
	var err error
	bf.Jobs, err = g.jobs(ctx, s.facts.Plan, talmjob.Backup, work, kept)
	s.facts.Backup = bf
	return err
}

// pathValidation reports whether the spec asks for the upgrade checks.
func pathValidation(upgrade *ranv1alpha1.ClusterGroupUpgrade) bool {
	return upgrade.Spec.UpgradeChecks != nil && upgrade.Spec.UpgradeChecks.PathValidation
}

// checks judges, with spec.upgradeChecks.pathValidation, the upgrade the managed policies
// ask of each planned cluster that has not started, from its ClusterVersion as its
// ManagedClusterView shows it (a missing view is made after the decision) and, for a
// y-stream, the update graph (pkg/spokecheck, which kubectl cgu preflight shares).
func (g gatherer) checks(ctx context.Context, s *scope) error {
	f := &s.facts
	if !pathValidation(s.cgu) || f.Start.SelectProblem != nil || f.Start.Invalid != nil || f.Progress.Finished {
		return nil
	}
	checks := spokecheck.NewChecks(g.cache, s.cgu, f.Roots)
	checks.ViewsServed, checks.DefaultService = !g.unserved.Views, g.updateService
	checks.Graphs = func(ctx context.Context, url, channel string) (*updategraph.Graph, error) {
		return g.graphs.Graph(ctx, url, channel, "")
	}
	checks.OnGraphError = func(url, channel string, err error) {
		ctrl.LoggerFrom(ctx).Info("The update graph is not available; y-stream clusters are held",
			"updateService", url, "channel", channel, "error", err)
	}
	clusters := gates.Unstarted(f.Plan, f.Progress)
	f.Checks = &cgu.Checks{Verdicts: make(map[string]upgradecheck.Verdict, len(clusters)),
		ViewsNeeded: checks.NeedsViews() && !g.unserved.Views}
	for _, c := range clusters {
		verdict, err := checks.Judge(ctx, c)
		if err != nil {
			return err
		}
		f.Checks.Verdicts[c] = verdict
	}
	return nil
}

// health reads the health checks the spec asks for: before the rollout starts, on every
// planned cluster (for status and kubectl cgu preflight only); before, on the clusters of
// the running batch that have not started; after, on the clusters verifying.
func (g gatherer) health(ctx context.Context, s *scope) error {
	h, f := spokecheck.HealthChecks(s.cgu), &s.facts
	if h == nil || f.Progress.Finished || f.Progress.BatchEnded {
		return nil
	}
	var targets []upgradecheck.Target
	if pathValidation(s.cgu) {
		targets = spokecheck.NewChecks(g.cache, s.cgu, f.Roots).Targets
	}
	if !f.Started {
		return g.healthPreview(ctx, s, targets)
	}
	return g.healthRunning(ctx, s, h, targets)
}

// healthRunning reads, once started, the health check before the upgrade on the clusters of
// the running batch that have not started, and after it on the clusters verifying.
func (g gatherer) healthRunning(ctx context.Context, s *scope, h *ranv1alpha1.HealthChecks, targets []upgradecheck.Target) error {
	f := &s.facts
	if h.BeforeUpgrade && len(f.Plan.Batches) > f.Progress.Batch {
		f.Health.Before = map[string]spokecheck.HealthVerdict{}
		run := spokecheck.BatchHealthRun(f.Progress.BatchStarted)
		for _, c := range f.Plan.Batches[f.Progress.Batch].Clusters {
			if st := f.Progress.Clusters[c].State; st != "" && st != ranv1alpha1.ClusterPending {
				continue
			}
			v, err := g.healthOf(ctx, s, c, run, targets)
			if err != nil {
				return err
			}
			f.Health.Before[c] = v
		}
	}
	if h.AfterUpgrade {
		f.Health.After = map[string]spokecheck.HealthVerdict{}
		for name, c := range f.Progress.Clusters {
			if !c.Verifying() {
				continue
			}
			v, err := g.healthOf(ctx, s, name, spokecheck.VerifyHealthRun(c.Since), targets)
			if err != nil {
				return err
			}
			f.Health.After[name] = v
		}
	}
	return nil
}

// healthOf reads the verdict of one run of the health check on a cluster; a run not started
// has not answered. targets are the managed policies' upgrade targets, read with
// pathValidation only.
func (g gatherer) healthOf(ctx context.Context, s *scope, cluster, run string, targets []upgradecheck.Target) (spokecheck.HealthVerdict, error) {
	if g.unserved.Views || g.unserved.Actions {
		return spokecheck.HealthVerdict{Done: true, Reason: spokecheck.ReasonHealthCheckFailed,
			Message: "The health check cannot run: the hub serves no ManagedClusterViews or ManagedClusterActions"}, nil
	}
	return spokecheck.ReadHealth(ctx, spokejob.Reader{Client: g.cache}, spokecheck.HealthJob(s.cgu, cluster, run, ""), g.yStream(ctx, s, cluster, targets))
}

// healthPreview reads, before the rollout starts, the health check of every planned cluster,
// run once per spec generation, so that status shows each cluster's health before enable.
// The gates never read it: the check that decides runs when the cluster's batch starts.
func (g gatherer) healthPreview(ctx context.Context, s *scope, targets []upgradecheck.Target) error {
	f := &s.facts
	if !spokecheck.HealthChecks(s.cgu).BeforeUpgrade || f.Start.SelectProblem != nil || f.Start.Invalid != nil {
		return nil
	}
	f.Health.Preview = map[string]spokecheck.HealthVerdict{}
	for _, b := range f.Plan.Batches {
		for _, c := range b.Clusters {
			v, err := g.healthOf(ctx, s, c, spokecheck.HealthRunBeforeEnable(s.cgu), targets)
			if err != nil {
				return err
			}
			f.Health.Preview[c] = v
		}
	}
	return nil
}

// yStream reports whether the rollout takes the cluster to a new minor version, as far as
// the upgrade checks know: from the managed policies' targets (with pathValidation) and the
// ClusterVersion the cluster's view shows; false without targets.
func (g gatherer) yStream(ctx context.Context, s *scope, cluster string, targets []upgradecheck.Target) bool {
	if len(targets) == 0 {
		return false
	}
	cv, _, err := views.ReadClusterVersion(ctx, g.cache, s.owner, cluster)
	if err != nil || cv == nil {
		return false
	}
	return upgradecheck.YStream(targets, cv)
}

// works reads the templates and, once started, the ManifestWorks of the rollout.
func (g gatherer) works(ctx context.Context, s *scope) error {
	if !cgu.UsesWorks(s.cgu) || g.unserved.Works {
		return nil
	}
	w := &cgu.Works{Templates: map[string]*workv1alpha1.ManifestWorkReplicaSet{}, Expected: map[string][]manifestwork.Feedback{},
		Made: map[string]*workv1.ManifestWork{}}
	sp := s.cgu.Spec
	for _, list := range [][]string{sp.ManifestWorkTemplates, sp.PreUpgradeActions, sp.PostUpgradeActions} {
		for _, name := range list {
			if err := g.template(ctx, w, s.cgu.Namespace, name); err != nil {
				return err
			}
		}
	}
	s.facts.Works = w
	if !s.facts.Started {
		return nil
	}
	var list workv1.ManifestWorkList
	if err := g.cache.List(ctx, &list, client.MatchingLabels(s.owner.Labels())); err != nil {
		return fmt.Errorf("listing the rollout's ManifestWorks: %w", err)
	}
	for i := range list.Items {
		mw := &list.Items[i]
		w.Made[mw.Namespace+"/"+mw.Name] = mw
	}
	return nil
}

func (g gatherer) template(ctx context.Context, w *cgu.Works, namespace, name string) error {
	if _, ok := w.Templates[name]; ok {
		return nil
	}
	t := &workv1alpha1.ManifestWorkReplicaSet{}
	if err := g.cache.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, t); err != nil {
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
	w.Templates[name], w.Expected[name] = t, expected
	return nil
}

// installPlans reads the rollout's views of Subscriptions and InstallPlans and its approval
// actions, on a hub that serves them.
func (g gatherer) installPlans(ctx context.Context, s *scope) error {
	if g.unserved.Views || g.unserved.Actions {
		return nil
	}
	selector := []client.ListOption{client.MatchingLabels(s.owner.Labels()), client.HasLabels{cgu.LabelOperatorUpgrade}}
	var viewList viewv1beta1.ManagedClusterViewList
	if err := g.cache.List(ctx, &viewList, selector...); err != nil {
		return fmt.Errorf("listing the views of Subscriptions and InstallPlans: %w", err)
	}
	var actions actionv1beta1.ManagedClusterActionList
	if err := g.cache.List(ctx, &actions, selector...); err != nil {
		return fmt.Errorf("listing the actions approving InstallPlans: %w", err)
	}
	ou := &cgu.OperatorUpgrades{Views: make(map[client.ObjectKey]*viewv1beta1.ManagedClusterView, len(viewList.Items)),
		Actions: make(map[client.ObjectKey]bool, len(actions.Items))}
	for i := range viewList.Items {
		ou.Views[client.ObjectKeyFromObject(&viewList.Items[i])] = &viewList.Items[i]
	}
	for i := range actions.Items {
		ou.Actions[client.ObjectKeyFromObject(&actions.Items[i])] = true
	}
	s.facts.OperatorUpgrades = ou
	return nil
}
