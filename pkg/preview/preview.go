// Package preview reads a ClusterGroupUpgrade's remediation plan from the hub: before the
// rollout starts, the facts the start is decided from (Gather: the blocking rollouts, the
// selection, the managed policies and their checks, the plan the operator would freeze
// now), computed with the operator's own pure functions (pkg/selection, pkg/blocking,
// pkg/validate, pkg/plan); once it started, the frozen plan and each cluster's progress
// (ReadFrozen, from the ClusterGroupUpgradeBatch records). The operator gathers through it,
// and tools such as the kubectl-cgu plugin show what it would do. It only reads.
package preview

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/clusteractions"
	"github.com/cgu-operator/cgu-operator/pkg/hubapi"
	"github.com/cgu-operator/cgu-operator/pkg/hubtemplate"
	"github.com/cgu-operator/cgu-operator/pkg/installplan"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	pkgselection "github.com/cgu-operator/cgu-operator/pkg/selection"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
	"github.com/cgu-operator/cgu-operator/pkg/tenancy"
	"github.com/cgu-operator/cgu-operator/pkg/validate"
)

// Labels that tell a root policy from the other policies on the hub.
const (
	// LabelRootPolicy marks a policy the propagator replicated into a cluster namespace.
	LabelRootPolicy = "policy.open-cluster-management.io/root-policy"
	// LabelParentPolicy marks an enforce copy a rollout made of a managed policy.
	LabelParentPolicy = "ran.openshift.io/parent-policy-name"
)

// listedLimit bounds how many names a problem message lists, as the operator's do.
const listedLimit = 20

// Result is the plan of a ClusterGroupUpgrade that has not started, or the problem that
// keeps the operator from planning it (the reason and message of the ClustersSelected or
// Validated condition the operator would write).
type Result struct {
	Plan    plan.Plan
	Problem *rollout.Problem
}

// Build computes the plan of a ClusterGroupUpgrade that has not started, as the operator
// would freeze it now (see Gather). Errors are errors reading the hub; a spec that cannot
// be planned is a Problem.
func Build(ctx context.Context, r client.Reader, cgu *ranv1alpha1.ClusterGroupUpgrade) (Result, error) {
	f, err := Gather(ctx, r, cgu)
	if err != nil {
		return Result{}, err
	}
	if f.SelectionProblem != nil {
		return Result{Problem: f.SelectionProblem}, nil
	}
	if f.Invalid != nil {
		return Result{Problem: f.Invalid}, nil
	}
	return Result{Plan: f.Plan}, nil
}

// Facts are what the start of a rollout is decided from: the operator gathers them on each
// reconcile until the rollout starts, and tools read them to show what it would do.
type Facts struct {
	// Selected are the selected clusters, in plan order.
	Selected []string
	// SelectionProblem is why no clusters can be selected (ClustersSelected=False).
	SelectionProblem *rollout.Problem
	// Policies are the managed root policies for upgrade, resolved and in spec order: those
	// some selected cluster does not comply with yet (TALM's managedPoliciesForUpgrade).
	Policies []*policyv1.Policy
	// CompliantBefore are the managed root policies every selected cluster already complies
	// with, in spec order (TALM's managedPoliciesCompliantBeforeUpgrade): nothing enforces
	// them, pre-caching still reads them.
	CompliantBefore []*policyv1.Policy
	// Invalid is why the spec cannot be planned (Validated=False).
	Invalid *rollout.Problem
	// Blocked is why spec.blockingCRs keep the rollout from starting.
	Blocked *rollout.Problem
	// Plan is the plan the rollout would freeze now; empty with a problem.
	Plan plan.Plan
}

// Gather reads the facts of a ClusterGroupUpgrade that has not started: the blocking
// ClusterGroupUpgrades (with TALM's partial completion and cluster filtering), the selected
// clusters (spec.clusters, the selectors, then the decisions of spec.placementRef, less the
// clusters cluster filtering leaves out), the managed root policies resolved among those
// placed on them and checked, and the plan: canaries first, maxConcurrency clusters a batch,
// clusters already compliant with every managed policy left out. Errors are errors reading
// the hub.
func Gather(ctx context.Context, r client.Reader, cgu *ranv1alpha1.ClusterGroupUpgrade) (Facts, error) {
	return GatherIn(ctx, r, cgu, Scope{})
}

// Scope is what the operator lets a rollout enforce.
type Scope struct {
	// PolicyNamespaces are the namespaces whose root policies a rollout may enforce (the
	// operator's --policy-namespaces); empty allows every namespace.
	PolicyNamespaces []string
	// Enforcement is how the rollout enforces its policies; empty is spec.enforcement,
	// else Copy. Copy mode cannot copy every hub template.
	Enforcement ranv1alpha1.EnforcementMode
	// Unserved are the optional APIs the hub does not serve: a spec asking for a feature
	// that needs one is invalid (hubapi.Features). The zero value assumes them all served.
	Unserved hubapi.Unserved
	// Tenancy are the operator's tenancy rules: where they apply, a rollout selects only
	// clusters of the cluster sets bound to its namespace, and enforces only its namespace's
	// policies.
	Tenancy tenancy.Rules
	// Replicas reads the policies the propagator replicated into cluster namespaces, which
	// the operator's cache leaves out; nil reads them with the gatherer's reader.
	Replicas client.Reader
	// Unresolved, when set, keeps which replicas of a policy hold an unresolved hub
	// template for a while, so that the replicas of a policy are read at most once a
	// HubTemplateRecheck however many rollouts and passes ask.
	Unresolved *UnresolvedCache
}

// UnresolvedCache remembers, for each root policy with a hub template, the clusters whose
// replica still holds one, as read at a generation of the root (a new spec is replicated
// again), for HubTemplateRecheck (a ConfigMap the template reads may change meanwhile). It
// is safe for concurrent use.
type UnresolvedCache struct {
	// Now is the clock the entries age by.
	Now func() time.Time

	mu      sync.Mutex
	entries map[string]unresolvedEntry
}

type unresolvedEntry struct {
	generation int64
	at         time.Time
	on         []string
}

// get returns the clusters remembered for the root policy, ok when the entry is of its
// generation and younger than HubTemplateRecheck.
func (c *UnresolvedCache) get(p *policyv1.Policy) ([]string, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[p.Namespace+"/"+p.Name]
	if !ok || e.generation != p.Generation || c.Now().Sub(e.at) >= HubTemplateRecheck {
		return nil, false
	}
	return e.on, true
}

func (c *UnresolvedCache) put(p *policyv1.Policy, on []string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]unresolvedEntry{}
	}
	// Entries of deleted policies are few and small; the map is cleared when it grows past
	// what a hub's policies with hub templates would hold.
	if len(c.entries) > 10000 {
		clear(c.entries)
	}
	c.entries[p.Namespace+"/"+p.Name] = unresolvedEntry{generation: p.Generation, at: c.Now(), on: on}
}

// GatherIn is Gather for an operator restricted to scope: a managed policy found only in
// a namespace scope does not allow makes the spec invalid (PolicyNamespaceNotAllowed).
func GatherIn(ctx context.Context, r client.Reader, cgu *ranv1alpha1.ClusterGroupUpgrade, scope Scope) (Facts, error) {
	g := gatherer{r: r, cgu: cgu, scope: scope}
	var f Facts
	blocked, excluded, err := g.blocking(ctx)
	if err != nil {
		return f, err
	}
	f.Blocked = blocked
	var known []pkgselection.Cluster
	f.Selected, known, f.SelectionProblem, err = g.selection(ctx, excluded)
	if err != nil || f.SelectionProblem != nil {
		return f, err
	}
	var resolved []validate.Policy
	resolved, f.Policies, f.Invalid, err = g.policies(ctx, f.Selected)
	if err != nil || f.Invalid != nil {
		return f, err
	}
	resolved, f.Policies, f.CompliantBefore = splitCompliant(resolved, f.Policies, f.Selected)
	if f.Invalid = g.hubAPIs(f.Policies); f.Invalid != nil {
		return f, nil
	}
	in := strategy(cgu)
	// A cluster compliant with every policy is left out, unless steps follow the policies:
	// no cluster is done with a ManifestWork before it is made.
	var compliant, unplaced map[string]bool
	if len(cgu.Spec.ManifestWorkTemplates) == 0 {
		compliant, unplaced = validate.CompliantWithAll(resolved, f.Selected)
	}
	in.Clusters, in.Compliant, in.Unplaced = f.Selected, compliant, unplaced
	if len(in.Spread) > 0 {
		in.Labels = selectedLabels(known, f.Selected)
	}
	f.Plan, err = plan.Build(in)
	switch {
	case errors.Is(err, plan.ErrCanaryNotSelected):
		f.Invalid = &rollout.Problem{Reason: ranv1alpha1.ReasonInvalidCanaries, Message: err.Error()}
	case err != nil:
		f.Invalid = &rollout.Problem{Reason: ranv1alpha1.ReasonInvalidSpread, Message: "spec.remediationStrategy: " + err.Error()}
	}
	return f, nil
}

// selectedLabels are the labels of the selected clusters, which a spread reads.
func selectedLabels(known []pkgselection.Cluster, selected []string) map[string]map[string]string {
	want := make(map[string]bool, len(selected))
	for _, c := range selected {
		want[c] = true
	}
	labels := make(map[string]map[string]string, len(selected))
	for _, c := range known {
		if want[c.Name] {
			labels[c.Name] = c.Labels
		}
	}
	return labels
}

// strategy is the plan's input as spec.remediationStrategy states it, without clusters.
func strategy(cgu *ranv1alpha1.ClusterGroupUpgrade) plan.Input {
	var in plan.Input
	if rs := cgu.Spec.RemediationStrategy; rs != nil {
		in.Canaries, in.MaxConcurrency, in.Window = rs.Canaries, rs.MaxConcurrency, rs.Mode == ranv1alpha1.ModeWindow
		if rs.Mode == ranv1alpha1.ModeProgressive {
			in.Progressive = GrowthOf(rs.Progressive)
		}
		in.Spread = SpreadOf(rs)
		if len(in.Spread) > 0 && rs.Timeout > 0 {
			in.MaxBatches = rs.Timeout
		}
	}
	return in
}

// SpreadOf is the spread spec.remediationStrategy states: each spread entry, then each
// anti-affinity key as a spread of one per batch.
func SpreadOf(rs *ranv1alpha1.RemediationStrategySpec) []plan.Spread {
	var out []plan.Spread
	for _, s := range rs.Spread {
		out = append(out, plan.Spread{Key: s.LabelKey, MaxPerBatch: max(int(s.MaxPerBatch), 1)})
	}
	for _, k := range rs.AntiAffinity {
		out = append(out, plan.Spread{Key: k, MaxPerBatch: 1})
	}
	return out
}

// Shape gives the clusters of a batch that is not a canary the form spec.remediationStrategy
// asks for: a sliding window or progressive stages in those modes, a plain batch otherwise.
func Shape(cgu *ranv1alpha1.ClusterGroupUpgrade) func(clusters []string) plan.Batch {
	in := strategy(cgu)
	in.Spread = nil // the batch's clusters are given: a spread chose them already
	return func(clusters []string) plan.Batch {
		in.Clusters, in.Canaries = clusters, nil
		if p, err := plan.Build(in); err == nil && len(p.Batches) == 1 {
			return p.Batches[0]
		}
		return plan.Batch{Clusters: clusters}
	}
}

// CompliantWithEvery tells whether a cluster is compliant with every policy of roots that is
// still there (an entry is nil for a deleted one), and with one at least.
func CompliantWithEvery(roots []*policyv1.Policy) func(cluster string) bool {
	var each []map[string]policyv1.ComplianceState
	for _, p := range roots {
		if p != nil {
			each = append(each, Compliance(p))
		}
	}
	return func(cluster string) bool {
		for _, c := range each {
			if c[cluster] != policyv1.Compliant {
				return false
			}
		}
		return len(each) > 0
	}
}

// GrowthOf is the growth of a Progressive rollout's stages as its spec states it, the
// default sizes when it states none. Admission checked the steps (positive counts,
// percentages up to 100%).
func GrowthOf(p *ranv1alpha1.ProgressiveSpec) *plan.Growth {
	g := plan.DefaultGrowth
	if p == nil {
		return &g
	}
	g.Stop = p.OnUnhealthy == ranv1alpha1.UnhealthyStop
	if len(p.Steps) == 0 && p.Factor == nil {
		return &g
	}
	g.Steps = nil
	if p.Factor != nil {
		g.Factor = int(*p.Factor)
	}
	for _, s := range p.Steps {
		if s.Type == intstr.Int {
			g.Steps = append(g.Steps, plan.Step{Count: s.IntValue()})
			continue
		}
		pct, err := strconv.ParseFloat(strings.TrimSuffix(s.StrVal, "%"), 64)
		if err != nil || pct <= 0 {
			pct = 0 // refused by admission; the smallest stage, one cluster, if it got through
		}
		g.Steps = append(g.Steps, plan.Step{Percent: pct})
	}
	return &g
}

// gatherer reads what the plan of one ClusterGroupUpgrade depends on.
type gatherer struct {
	r     client.Reader
	cgu   *ranv1alpha1.ClusterGroupUpgrade
	scope Scope
}

// selection returns the selected clusters in plan order, or the ClustersSelected problem.
func (g gatherer) selection(ctx context.Context, excluded map[string]bool) ([]string, []pkgselection.Cluster, *rollout.Problem, error) {
	known, err := g.clusters(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	spec := g.cgu.Spec
	selectors := make([]metav1.LabelSelector, len(spec.ClusterLabelSelectors))
	for i, ls := range spec.ClusterLabelSelectors {
		selectors[i] = ls.LabelSelector()
	}
	reachable, err := g.reachable(ctx, known)
	if err != nil {
		return nil, nil, nil, err
	}
	res, err := pkgselection.Select(pkgselection.Input{Clusters: spec.Clusters, LabelSelectors: selectors,
		ClusterSelector: spec.ClusterSelector, Known: known, Reachable: reachable})
	if err != nil {
		return nil, nil, &rollout.Problem{Reason: ranv1alpha1.ReasonInvalidClusterSelector, Message: "Invalid selector: " + err.Error()}, nil
	}
	selected := res.Selected
	if ref := spec.PlacementRef; ref != nil {
		decided, found, err := g.placement(ctx, ref.Name)
		if err != nil {
			return nil, nil, nil, err
		}
		if !found {
			return nil, nil, &rollout.Problem{Reason: ranv1alpha1.ReasonPlacementNotFound,
				Message: fmt.Sprintf("spec.placementRef: Placement %s/%s does not exist", g.cgu.Namespace, ref.Name)}, nil
		}
		for _, c := range decided {
			// A Placement decides among the namespace's bound sets already; a decision
			// outside them (a binding removed since) is not followed.
			if reachable != nil && !reachable[c] {
				continue
			}
			if !slices.Contains(selected, c) {
				selected = append(selected, c)
			}
		}
	}
	selected = slices.DeleteFunc(selected, func(c string) bool { return excluded[c] })
	if p := selectionProblem(res, selected, reachable != nil, g.cgu.Namespace); p != nil {
		return nil, nil, p, nil
	}
	return selected, known, nil, nil
}

// selectionProblem is the ClustersSelected problem of a selection, nil when there is none;
// tenant tells whether tenancy restricted it to the sets bound to namespace.
func selectionProblem(res pkgselection.Result, selected []string, tenant bool, namespace string) *rollout.Problem {
	switch {
	case len(res.Unknown) > 0:
		return &rollout.Problem{Reason: ranv1alpha1.ReasonClusterNotFound,
			Message: "Clusters not found on the hub: " + listed(res.Unknown), Names: res.Unknown}
	case len(res.Unreachable) > 0:
		return &rollout.Problem{Reason: ranv1alpha1.ReasonClusterOutsideBoundSets,
			Message: fmt.Sprintf("Clusters in no ManagedClusterSet bound to namespace %s (tenancy mode): %s",
				namespace, listed(res.Unreachable)), Names: res.Unreachable}
	case len(selected) == 0 && tenant:
		return &rollout.Problem{Reason: ranv1alpha1.ReasonNoClustersSelected, Message: fmt.Sprintf(
			"The spec selects no cluster among those of the ManagedClusterSets bound to namespace %s (tenancy mode)", namespace)}
	case len(selected) == 0:
		return &rollout.Problem{Reason: ranv1alpha1.ReasonNoClustersSelected, Message: "The spec selects no cluster"}
	}
	return nil
}

// reachable returns, where tenancy applies to the CGU's namespace, the clusters of the
// cluster sets bound to it; nil (every cluster) elsewhere.
func (g gatherer) reachable(ctx context.Context, known []pkgselection.Cluster) (map[string]bool, error) {
	ns := g.cgu.Namespace
	if !g.scope.Tenancy.Applies(ns) {
		return nil, nil
	}
	var bindings clusterv1beta2.ManagedClusterSetBindingList
	if err := g.r.List(ctx, &bindings, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing cluster set bindings in %s: %w", ns, err)
	}
	var sets clusterv1beta2.ManagedClusterSetList
	if err := g.r.List(ctx, &sets); err != nil {
		return nil, fmt.Errorf("listing managed cluster sets: %w", err)
	}
	bound := make([]string, 0, len(bindings.Items))
	for _, b := range bindings.Items {
		bound = append(bound, b.Name)
	}
	clusters := make([]tenancy.Cluster, len(known))
	for i, c := range known {
		clusters[i] = tenancy.Cluster{Name: c.Name, Labels: c.Labels}
	}
	return tenancy.Reachable(bound, sets.Items, clusters)
}

// clusters lists the hub's ManagedClusters, as metadata.
func (g gatherer) clusters(ctx context.Context) ([]pkgselection.Cluster, error) {
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(clusteractions.ManagedClusterGVK.GroupVersion().WithKind("ManagedClusterList"))
	if err := g.r.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing managed clusters: %w", err)
	}
	known := make([]pkgselection.Cluster, 0, len(list.Items))
	for _, mc := range list.Items {
		known = append(known, pkgselection.Cluster{Name: mc.Name, Labels: mc.Labels})
	}
	return known, nil
}

// placement returns the clusters a Placement of the CGU's namespace decided, sorted by
// name, and whether the Placement exists.
func (g gatherer) placement(ctx context.Context, name string) ([]string, bool, error) {
	ns := g.cgu.Namespace
	if err := g.r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &clusterv1beta1.Placement{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("reading placement %s/%s: %w", ns, name, err)
	}
	var decisions clusterv1beta1.PlacementDecisionList
	if err := g.r.List(ctx, &decisions, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: name}); err != nil {
		return nil, true, fmt.Errorf("listing decisions of placement %s/%s: %w", ns, name, err)
	}
	var out []string
	for _, d := range decisions.Items {
		for _, c := range d.Status.Decisions {
			out = append(out, c.ClusterName)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), true, nil
}

// policies resolves the managed policies among the root policies placed on the selected
// clusters and checks them as the operator does; it returns them in spec order.
func (g gatherer) policies(ctx context.Context, selected []string) ([]validate.Policy, []*policyv1.Policy, *rollout.Problem, error) {
	roots, err := g.rootPolicies(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	candidates := make([]validate.Policy, 0, len(roots))
	byKey := make(map[string]*policyv1.Policy, len(roots))
	for i := range roots {
		v := ValidatePolicy(&roots[i])
		if err := g.addReplicas(ctx, v, selected); err != nil {
			return nil, nil, nil, err
		}
		candidates = append(candidates, v)
		byKey[roots[i].Namespace+"/"+roots[i].Name] = &roots[i]
	}
	spec := g.cgu.Spec
	var canaries []string
	if spec.RemediationStrategy != nil {
		canaries = spec.RemediationStrategy.Canaries
	}
	res := validate.Validate(validate.Input{ManagedPolicies: spec.ManagedPolicies, Selected: selected,
		Canaries: canaries, Policies: candidates, AllowedNamespaces: g.scope.PolicyNamespaces, Tenant: g.tenant()})
	if res.Problem != nil {
		return nil, nil, res.Problem, nil
	}
	resolved := make([]*policyv1.Policy, len(res.Resolved))
	for i, p := range res.Resolved {
		resolved[i] = byKey[p.Namespace+"/"+p.Name]
	}
	// What Copy mode cannot copy is a fact of the policies alone: it is said first, whatever
	// the propagator made of their replicas so far.
	mode := g.scope.Enforcement
	if mode == "" {
		mode = spec.Enforcement
	}
	if mode != ranv1alpha1.EnforcementOverride {
		for _, p := range resolved {
			if problem := hubTemplateProblem(p); problem != nil {
				return nil, nil, problem, nil
			}
		}
	}
	if problem, err := g.unresolvedHubTemplates(ctx, resolved, selected); problem != nil || err != nil {
		return nil, nil, problem, err
	}
	if problem := validate.DependencyOrder(res.Resolved); problem != nil {
		return nil, nil, problem, nil
	}
	problem, err := g.manifestWorkTemplates(ctx)
	return res.Resolved, resolved, problem, err
}

// addReplicas finds, as TALM does, a policy placed on selected clusters whose root status
// lists none of them yet (the propagator replicated it, the status has not caught up): a
// replicated policy in a cluster's namespace counts, with no compliance state yet (not
// compliant). It reads the replicas, as metadata, only then: a policy some selected cluster
// reports on is found without them, and on a large hub most policies are placed on some
// of a rollout's clusters only.
func (g gatherer) addReplicas(ctx context.Context, p validate.Policy, selected []string) error {
	missing := map[string]bool{}
	for _, c := range selected {
		if _, ok := p.Compliance[c]; ok {
			return nil
		}
		missing[c] = true
	}
	if len(missing) == 0 {
		return nil
	}
	r := g.replicas()
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(policyv1.GroupVersion.WithKind("PolicyList"))
	if err := r.List(ctx, &list, client.MatchingLabels{LabelRootPolicy: p.Namespace + "." + p.Name}); err != nil {
		return fmt.Errorf("listing the replicas of policy %s/%s: %w", p.Namespace, p.Name, err)
	}
	for _, replica := range list.Items {
		if missing[replica.Namespace] {
			p.Compliance[replica.Namespace] = ""
		}
	}
	return nil
}

// HubTemplateRecheck is how often a ClusterGroupUpgrade refused for a replica's unresolved
// hub template is looked at again: the fix (the ConfigMap the template reads) reaches the
// replica through the propagator and changes nothing the operator watches (it does not cache
// replicas, tens of thousands on a large hub).
const HubTemplateRecheck = time.Minute

// hubTemplateMark starts every hub template: the propagator resolves them when it replicates
// a policy, and leaves one it cannot resolve as it is.
const hubTemplateMark = "{{hub"

// unresolvedHubTemplates refuses, as TALM does (its invalid managed policies), the managed
// policies whose replica on a selected cluster still holds a hub template: the propagator
// could not resolve it there (a ConfigMap or key missing), and enforcing it would apply the
// template's text. Only the replicas of a policy with a hub template are read.
func (g gatherer) unresolvedHubTemplates(ctx context.Context, resolved []*policyv1.Policy, selected []string) (*rollout.Problem, error) {
	chosen := make(map[string]bool, len(selected))
	for _, c := range selected {
		chosen[c] = true
	}
	var invalid, detail []string
	for _, p := range resolved {
		if !holdsHubTemplate(p) {
			continue
		}
		all, err := g.unresolvedOn(ctx, p)
		if err != nil {
			return nil, err
		}
		on := slices.DeleteFunc(slices.Clone(all), func(c string) bool { return !chosen[c] })
		if len(on) == 0 {
			continue
		}
		invalid = append(invalid, p.Name)
		detail = append(detail, fmt.Sprintf("%s (its replica on %s holds a hub template the propagator could not resolve)", p.Name, listed(on)))
	}
	if len(invalid) == 0 {
		return nil, nil
	}
	return &rollout.Problem{Reason: ranv1alpha1.ReasonNotAllManagedPoliciesExist, Names: invalid, Invalid: true, Recheck: HubTemplateRecheck,
		Message: "Invalid managed policies: " + strings.Join(detail, ", ")}, nil
}

// unresolvedOn returns, sorted, the clusters whose replica of the root policy p still holds a
// hub template: remembered (Scope.Unresolved), else read.
func (g gatherer) unresolvedOn(ctx context.Context, p *policyv1.Policy) ([]string, error) {
	if on, ok := g.scope.Unresolved.get(p); ok {
		return on, nil
	}
	r := g.replicas()
	var replicas policyv1.PolicyList
	if err := r.List(ctx, &replicas, client.MatchingLabels{LabelRootPolicy: p.Namespace + "." + p.Name}); err != nil {
		return nil, fmt.Errorf("listing the replicas of policy %s/%s: %w", p.Namespace, p.Name, err)
	}
	var on []string
	for i := range replicas.Items {
		if holdsHubTemplate(&replicas.Items[i]) {
			on = append(on, replicas.Items[i].Namespace)
		}
	}
	slices.Sort(on)
	g.scope.Unresolved.put(p, on)
	return on, nil
}

// replicas reads the policies replicated into cluster namespaces (Scope.Replicas).
func (g gatherer) replicas() client.Reader {
	if g.scope.Replicas != nil {
		return g.scope.Replicas
	}
	return g.r
}

// holdsHubTemplate tells whether one of a policy's templates holds a hub template.
func holdsHubTemplate(p *policyv1.Policy) bool {
	for _, t := range p.Spec.PolicyTemplates {
		if t != nil && strings.Contains(string(t.ObjectDefinition.Raw), hubTemplateMark) {
			return true
		}
	}
	return false
}

// tenant is the CGU's namespace where tenancy applies to it, else empty.
func (g gatherer) tenant() string {
	if g.scope.Tenancy.Applies(g.cgu.Namespace) {
		return g.cgu.Namespace
	}
	return ""
}

// splitCompliant leaves out of the rollout, as TALM does, the managed policies every
// selected cluster already complies with (validate.CompliantBefore); resolved and roots are
// in the same order.
func splitCompliant(resolved []validate.Policy, roots []*policyv1.Policy, selected []string) ([]validate.Policy, []*policyv1.Policy, []*policyv1.Policy) {
	var keep []validate.Policy
	var forUpgrade, compliant []*policyv1.Policy
	for i, p := range resolved {
		if validate.CompliantBefore(p, selected, talm.AsksForStatus(roots[i])) {
			compliant = append(compliant, roots[i])
			continue
		}
		keep = append(keep, p)
		forUpgrade = append(forUpgrade, roots[i])
	}
	return keep, forUpgrade, compliant
}

// rootPolicies lists the root policies named in spec.managedPolicies, in every namespace:
// neither the replicas in cluster namespaces nor the enforce copies rollouts make.
func (g gatherer) rootPolicies(ctx context.Context) ([]policyv1.Policy, error) {
	roots := labels.NewSelector()
	for _, key := range []string{LabelRootPolicy, LabelParentPolicy} {
		req, err := labels.NewRequirement(key, selection.DoesNotExist, nil)
		if err != nil {
			return nil, fmt.Errorf("selecting root policies: %w", err)
		}
		roots = roots.Add(*req)
	}
	var list policyv1.PolicyList
	if err := g.r.List(ctx, &list, client.MatchingLabelsSelector{Selector: roots}); err != nil {
		return nil, fmt.Errorf("listing root policies: %w", err)
	}
	wanted := make(map[string]bool, len(g.cgu.Spec.ManagedPolicies))
	for _, name := range g.cgu.Spec.ManagedPolicies {
		wanted[name] = true
	}
	return slices.DeleteFunc(list.Items, func(p policyv1.Policy) bool { return !wanted[p.Name] }), nil
}

// ValidatePolicy is what validation needs of a root policy: its compliance per cluster and
// the policies it depends on.
func ValidatePolicy(p *policyv1.Policy) validate.Policy {
	v := validate.Policy{Name: p.Name, Namespace: p.Namespace, Compliance: Compliance(p)}
	for _, d := range p.Spec.Dependencies {
		if d.Kind != policyv1.Kind {
			continue
		}
		ns := d.Namespace
		if ns == "" {
			ns = p.Namespace
		}
		v.DependsOn = append(v.DependsOn, ns+"/"+d.Name)
	}
	return v
}

// Compliance is each cluster's compliance with a root policy, as its status shows it.
func Compliance(p *policyv1.Policy) map[string]policyv1.ComplianceState {
	out := make(map[string]policyv1.ComplianceState, len(p.Status.Status))
	for _, st := range p.Status.Status {
		if st != nil {
			out[st.ClusterName] = st.ComplianceState
		}
	}
	return out
}

// hubTemplateProblem says why Copy mode cannot copy a policy, nil when it can.
func hubTemplateProblem(p *policyv1.Policy) *rollout.Problem {
	if p == nil {
		return nil
	}
	if o := p.Spec.HubTemplateOptions; o != nil && o.ServiceAccountName != "" {
		return &rollout.Problem{Reason: ranv1alpha1.ReasonUnsupportedHubTemplate,
			Message: fmt.Sprintf("Policy %s/%s cannot be copied: its hub templates run as service account %s of its own namespace (use enforcement: Override)",
				p.Namespace, p.Name, o.ServiceAccountName)}
	}
	templates := make([][]byte, 0, len(p.Spec.PolicyTemplates))
	for _, t := range p.Spec.PolicyTemplates {
		if t != nil {
			templates = append(templates, t.ObjectDefinition.Raw)
		}
	}
	if a := hubtemplate.Analyze(p.Namespace, templates); a.Unsupported != "" {
		return &rollout.Problem{Reason: ranv1alpha1.ReasonUnsupportedHubTemplate,
			Message: fmt.Sprintf("Policy %s/%s cannot be copied: %s", p.Namespace, p.Name, a.Unsupported)}
	}
	return nil
}

// manifestWorkTemplates checks that the ManifestWorkReplicaSets of
// spec.manifestWorkTemplates, preUpgradeActions and postUpgradeActions exist, with a valid
// expected feedback annotation. On a hub known not to serve them, hubAPIs answers.
func (g gatherer) manifestWorkTemplates(ctx context.Context) (*rollout.Problem, error) {
	if g.scope.Unserved.Works {
		return nil, nil
	}
	var missing []string
	spec := g.cgu.Spec
	for _, name := range slices.Concat(spec.ManifestWorkTemplates, spec.PreUpgradeActions, spec.PostUpgradeActions) {
		if slices.Contains(missing, name) {
			continue
		}
		key := client.ObjectKey{Namespace: g.cgu.Namespace, Name: name}
		t := &workv1alpha1.ManifestWorkReplicaSet{}
		err := g.r.Get(ctx, key, t)
		switch {
		case meta.IsNoMatchError(err):
			return &rollout.Problem{Reason: ranv1alpha1.ReasonNotAllManifestTemplatesExist,
				Message: "The hub serves no ManifestWorkReplicaSets (work.open-cluster-management.io), which the spec names"}, nil
		case apierrors.IsNotFound(err):
			missing = append(missing, name)
		case err != nil:
			return nil, fmt.Errorf("reading ManifestWorkReplicaSet %s: %w", key, err)
		default:
			if _, err := manifestwork.Expected(t); err != nil {
				return &rollout.Problem{Reason: ranv1alpha1.ReasonInvalidManifestTemplate, Message: err.Error()}, nil
			}
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	return &rollout.Problem{Reason: ranv1alpha1.ReasonNotAllManifestTemplatesExist,
		Message: fmt.Sprintf("ManifestWorkReplicaSets not found in %s: %s", g.cgu.Namespace, listed(missing))}, nil
}

// hubAPIs is the problem of a spec asking for a feature whose APIs the hub does not serve
// (Validated=False): HubAPINotServed, or TALM's NotAllManifestTemplatesExist for the
// ManifestWork features. policies are the managed policies the rollout would enforce, whose
// Manual Subscriptions ask for InstallPlan approval.
func (g gatherer) hubAPIs(policies []*policyv1.Policy) *rollout.Problem {
	u := g.scope.Unserved
	if u == (hubapi.Unserved{}) {
		return nil
	}
	approves := false
	if u.Views || u.Actions {
		for _, p := range policies {
			if subs, err := installplan.Chosen(p, g.cgu.Spec.OperatorUpgrades); err == nil && len(subs) > 0 {
				approves = true
				break
			}
		}
	}
	f, message, refused := u.Refusal(hubapi.Features(g.cgu.Spec, approves))
	if !refused {
		return nil
	}
	reason := ranv1alpha1.ReasonHubAPINotServed
	if slices.Contains(f.Needs, hubapi.WorkTemplates) {
		reason = ranv1alpha1.ReasonNotAllManifestTemplatesExist
	}
	return &rollout.Problem{Reason: reason, Message: message}
}

// listed joins names for a message, at most listedLimit of them.
func listed(items []string) string {
	if len(items) <= listedLimit {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:listedLimit], ", "), len(items)-listedLimit)
}
