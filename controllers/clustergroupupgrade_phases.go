package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/blocking"
	"github.com/cgu-operator/cgu-operator/pkg/clusteractions"
	"github.com/cgu-operator/cgu-operator/pkg/hubtemplate"
	"github.com/cgu-operator/cgu-operator/pkg/metrics"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/pkg/policies"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/selection"
	"github.com/cgu-operator/cgu-operator/pkg/validate"
)

// SoakAnnotation on a managed policy is how many seconds a cluster must stay compliant with
// it before moving on (TALM's name).
const SoakAnnotation = "ran.openshift.io/soak-seconds"

// errNotSynced is returned when the cache lags behind what the operator wrote; the
// reconcile is retried.
var errNotSynced = errors.New("the cache is behind the operator's own writes")

// listedLimit bounds how many names a condition message lists.
const listedLimit = 20

// scope is what one reconcile of a ClusterGroupUpgrade gathers and decides.
type scope struct {
	cgu    *ranv1alpha1.ClusterGroupUpgrade
	before ranv1alpha1.ClusterGroupUpgradeStatus
	owner  policies.Owner
	now    time.Time
	// done is set by a phase that finished the reconcile (a Completed rollout).
	done bool

	records []ranv1alpha1.ClusterGroupUpgradeBatch
	// started is true once the rollout started: the plan and policies are frozen.
	started bool

	blocked  *rollout.Problem
	excluded []string

	selected      []string
	selectProblem *rollout.Problem

	// roots are the managed root policies in order; after the start an entry is nil when
	// its policy was deleted.
	roots   []*policyv1.Policy
	invalid *rollout.Problem

	plan       plan.Plan
	progress   rollout.Progress
	decision   rollout.Decision
	decided    bool
	startedNow bool
}

func newScope(cgu *ranv1alpha1.ClusterGroupUpgrade, now time.Time) *scope {
	return &scope{cgu: cgu, before: *cgu.Status.DeepCopy(), owner: policies.Owner{Namespace: cgu.Namespace, Name: cgu.Name}, now: now}
}

// policyNames are the managed policies' names, in order.
func (s *scope) policyNames() []string {
	out := make([]string, len(s.roots))
	for i, p := range s.roots {
		if p != nil {
			out[i] = p.Name
		} else if i < len(s.cgu.Status.ManagedPoliciesForUpgrade) {
			out[i] = s.cgu.Status.ManagedPoliciesForUpgrade[i].Name
		}
	}
	return out
}

// gatherRecords reads the batch records; a Completed rollout only needs its cleanup.
func (r *ClusterGroupUpgradeReconciler) gatherRecords(ctx context.Context, s *scope) error {
	if s.before.State == ranv1alpha1.StateCompleted && s.before.StartedAt != nil {
		s.done = true
		return r.cleanupCompleted(ctx, s)
	}
	var list ranv1alpha1.ClusterGroupUpgradeBatchList
	if err := r.Client.List(ctx, &list, client.InNamespace(s.cgu.Namespace),
		client.MatchingLabels{ranv1alpha1.LabelUpgradeName: names.LabelValue(s.cgu.Name)}); err != nil {
		return fmt.Errorf("listing batch records: %w", err)
	}
	for _, b := range list.Items {
		if b.Spec.Upgrade == s.cgu.Name {
			s.records = append(s.records, b)
		}
	}
	slices.SortFunc(s.records, func(a, b ranv1alpha1.ClusterGroupUpgradeBatch) int {
		return a.Spec.Index*10000 + a.Spec.Part - b.Spec.Index*10000 - b.Spec.Part
	})
	s.started = s.before.StartedAt != nil
	for _, b := range s.records {
		s.started = s.started || b.Status.StartedAt != nil
	}
	return nil
}

func (r *ClusterGroupUpgradeReconciler) cleanupCompleted(ctx context.Context, s *scope) error {
	if !deleteObjects(s.cgu) {
		return nil
	}
	if _, err := r.writer().Cleanup(ctx, s.owner); err != nil {
		r.Metrics.RemediationError(metrics.OperationCleanup)
		return fmt.Errorf("deleting the objects of the completed rollout: %w", err)
	}
	return nil
}

func deleteObjects(cgu *ranv1alpha1.ClusterGroupUpgrade) bool {
	ac := cgu.Spec.Actions.AfterCompletion
	return ac == nil || ac.DeleteObjects == nil || *ac.DeleteObjects
}

// gatherBlockers evaluates spec.blockingCRs before the start.
func (r *ClusterGroupUpgradeReconciler) gatherBlockers(ctx context.Context, s *scope) error {
	if s.started || len(s.cgu.Spec.BlockingCRs) == 0 {
		return nil
	}
	var lookupErr error
	lookup := func(ref blocking.Ref) (blocking.Upgrade, bool) {
		other := &ranv1alpha1.ClusterGroupUpgrade{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, other); err != nil {
			if !apierrors.IsNotFound(err) {
				lookupErr = errors.Join(lookupErr, err)
			}
			return blocking.Upgrade{}, false
		}
		u := blocking.Upgrade{Ref: ref, State: other.Status.State, BlockingCRs: blockingRefs(other)}
		if s.cgu.Annotations[blocking.AnnotationClusterFiltering] == "true" {
			notCompleted, err := r.notCompleted(ctx, other)
			lookupErr = errors.Join(lookupErr, err)
			u.NotCompleted = notCompleted
		}
		return u, true
	}
	res := blocking.Evaluate(blocking.Input{
		Self:        blocking.Ref{Namespace: s.cgu.Namespace, Name: s.cgu.Name},
		BlockingCRs: blockingRefs(s.cgu), Annotations: s.cgu.Annotations, Lookup: lookup,
	})
	if lookupErr != nil {
		return fmt.Errorf("reading blocking ClusterGroupUpgrades: %w", lookupErr)
	}
	s.blocked, s.excluded = res.Problem, res.Excluded
	return nil
}

func blockingRefs(cgu *ranv1alpha1.ClusterGroupUpgrade) []blocking.Ref {
	out := make([]blocking.Ref, 0, len(cgu.Spec.BlockingCRs))
	for _, b := range cgu.Spec.BlockingCRs {
		ns := b.Namespace
		if ns == "" {
			ns = cgu.Namespace
		}
		out = append(out, blocking.Ref{Namespace: ns, Name: b.Name})
	}
	return out
}

// notCompleted returns the clusters of another rollout's plan that did not complete.
func (r *ClusterGroupUpgradeReconciler) notCompleted(ctx context.Context, other *ranv1alpha1.ClusterGroupUpgrade) ([]string, error) {
	var list ranv1alpha1.ClusterGroupUpgradeBatchList
	if err := r.Client.List(ctx, &list, client.InNamespace(other.Namespace),
		client.MatchingLabels{ranv1alpha1.LabelUpgradeName: names.LabelValue(other.Name)}); err != nil {
		return nil, err
	}
	var out []string
	for _, b := range list.Items {
		if b.Spec.Upgrade != other.Name {
			continue
		}
		states := map[string]ranv1alpha1.ClusterState{}
		for _, c := range b.Status.Clusters {
			states[c.Name] = c.State
		}
		for _, c := range b.Spec.Clusters {
			if states[c] != ranv1alpha1.ClusterCompleted {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// gatherSelection selects the clusters before the start; afterwards the plan is frozen.
func (r *ClusterGroupUpgradeReconciler) gatherSelection(ctx context.Context, s *scope) error {
	if s.started {
		return nil
	}
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(clusteractions.ManagedClusterGVK.GroupVersion().WithKind("ManagedClusterList"))
	if err := r.Client.List(ctx, &list); err != nil {
		return fmt.Errorf("listing managed clusters: %w", err)
	}
	known := make([]selection.Cluster, 0, len(list.Items))
	for _, mc := range list.Items {
		known = append(known, selection.Cluster{Name: mc.Name, Labels: mc.Labels})
	}
	spec := s.cgu.Spec
	res, err := selection.Select(selection.Input{Clusters: spec.Clusters, LabelSelectors: spec.ClusterLabelSelectors,
		ClusterSelector: spec.ClusterSelector, Known: known})
	if err != nil {
		s.selectProblem = &rollout.Problem{Reason: ranv1alpha1.ReasonInvalidClusterSelector, Message: "Invalid selector: " + err.Error()}
		return nil
	}
	selected := res.Selected
	if ref := spec.PlacementRef; ref != nil {
		decided, found, err := r.placementClusters(ctx, s.cgu.Namespace, ref.Name)
		if err != nil {
			return err
		}
		if !found {
			s.selectProblem = &rollout.Problem{Reason: ranv1alpha1.ReasonPlacementNotFound,
				Message: fmt.Sprintf("spec.placementRef: Placement %s/%s does not exist", s.cgu.Namespace, ref.Name)}
			return nil
		}
		for _, c := range decided {
			if !slices.Contains(selected, c) {
				selected = append(selected, c)
			}
		}
	}
	selected = slices.DeleteFunc(selected, func(c string) bool { _, found := slices.BinarySearch(s.excluded, c); return found })
	switch {
	case len(res.Unknown) > 0:
		s.selectProblem = &rollout.Problem{Reason: ranv1alpha1.ReasonClusterNotFound,
			Message: "Clusters not found on the hub: " + listed(res.Unknown)}
	case len(selected) == 0:
		s.selectProblem = &rollout.Problem{Reason: ranv1alpha1.ReasonNoClustersSelected, Message: "The spec selects no cluster"}
	}
	s.selected = selected
	return nil
}

// placementClusters returns the clusters a Placement decided, sorted by name.
func (r *ClusterGroupUpgradeReconciler) placementClusters(ctx context.Context, namespace, name string) ([]string, bool, error) {
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &clusterv1beta1.Placement{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("reading placement %s/%s: %w", namespace, name, err)
	}
	var decisions clusterv1beta1.PlacementDecisionList
	if err := r.Client.List(ctx, &decisions, client.InNamespace(namespace),
		client.MatchingLabels{clusterv1beta1.PlacementLabel: name}); err != nil {
		return nil, true, fmt.Errorf("listing decisions of placement %s/%s: %w", namespace, name, err)
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

// listed joins names for a message, at most listedLimit of them.
func listed(items []string) string {
	if len(items) <= listedLimit {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:listedLimit], ", "), len(items)-listedLimit)
}

// gatherPolicies resolves the managed policies: by name before the start, from the refs
// frozen in status afterwards.
func (r *ClusterGroupUpgradeReconciler) gatherPolicies(ctx context.Context, s *scope) error {
	if s.started && len(s.before.ManagedPoliciesForUpgrade) > 0 {
		for _, ref := range s.before.ManagedPoliciesForUpgrade {
			p := &policyv1.Policy{}
			err := r.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, p)
			switch {
			case apierrors.IsNotFound(err):
				p = nil
			case err != nil:
				return fmt.Errorf("reading policy %s/%s: %w", ref.Namespace, ref.Name, err)
			}
			s.roots = append(s.roots, p)
		}
		return nil
	}
	if s.selectProblem != nil && !s.started {
		return nil
	}
	selected := s.selected
	if s.started { // status lost its policies: resolve them again on the plan's clusters
		for _, b := range s.records {
			selected = append(selected, b.Spec.Clusters...)
		}
	}
	return r.resolvePolicies(ctx, s, selected)
}

func (r *ClusterGroupUpgradeReconciler) resolvePolicies(ctx context.Context, s *scope, selected []string) error {
	byKey := map[string]*policyv1.Policy{}
	var candidates []validate.Policy
	for _, name := range slices.Compact(slices.Sorted(slices.Values(s.cgu.Spec.ManagedPolicies))) {
		var list policyv1.PolicyList
		if err := r.Client.List(ctx, &list, client.MatchingFields{policyNameIndex: name}); err != nil {
			return fmt.Errorf("listing policies named %s: %w", name, err)
		}
		for i := range list.Items {
			p := &list.Items[i]
			if p.Labels[policies.LabelParentPolicy] != "" {
				continue // an enforce copy of another rollout, never a managed policy
			}
			byKey[p.Namespace+"/"+p.Name] = p
			candidates = append(candidates, validatePolicy(p))
		}
	}
	res := validate.Validate(validate.Input{ManagedPolicies: s.cgu.Spec.ManagedPolicies, Selected: selected,
		Canaries: canaries(s.cgu), Backup: s.cgu.Spec.Backup, Policies: candidates})
	if res.Problem != nil {
		s.invalid = res.Problem
		return nil
	}
	for _, p := range res.Resolved {
		s.roots = append(s.roots, byKey[p.Namespace+"/"+p.Name])
	}
	if problem := validate.DependencyOrder(res.Resolved); problem != nil {
		s.invalid = problem
		return nil
	}
	if mode(s.cgu) == ranv1alpha1.EnforcementCopy {
		if problem := hubTemplateProblem(s.roots); problem != nil {
			s.invalid = problem
			return nil
		}
	}
	return r.checkManifestWorkTemplates(ctx, s)
}

func validatePolicy(p *policyv1.Policy) validate.Policy {
	v := validate.Policy{Name: p.Name, Namespace: p.Namespace, Compliance: compliance(p)}
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

func compliance(p *policyv1.Policy) map[string]policyv1.ComplianceState {
	out := make(map[string]policyv1.ComplianceState, len(p.Status.Status))
	for _, st := range p.Status.Status {
		out[st.ClusterName] = st.ComplianceState
	}
	return out
}

func hubTemplateProblem(roots []*policyv1.Policy) *rollout.Problem {
	for _, p := range roots {
		if o := p.Spec.HubTemplateOptions; o != nil && o.ServiceAccountName != "" {
			return &rollout.Problem{Reason: ranv1alpha1.ReasonUnsupportedHubTemplate,
				Message: fmt.Sprintf("Policy %s/%s cannot be copied: its hub templates run as service account %s of its own namespace (use enforcement: Override)",
					p.Namespace, p.Name, o.ServiceAccountName)}
		}
		templates := make([][]byte, len(p.Spec.PolicyTemplates))
		for i, t := range p.Spec.PolicyTemplates {
			templates[i] = t.ObjectDefinition.Raw
		}
		if a := hubtemplate.Analyze(p.Namespace, templates); a.Unsupported != "" {
			return &rollout.Problem{Reason: ranv1alpha1.ReasonUnsupportedHubTemplate,
				Message: fmt.Sprintf("Policy %s/%s cannot be copied: %s", p.Namespace, p.Name, a.Unsupported)}
		}
	}
	return nil
}

func (r *ClusterGroupUpgradeReconciler) checkManifestWorkTemplates(ctx context.Context, s *scope) error {
	var missing []string
	for _, name := range s.cgu.Spec.ManifestWorkTemplates {
		err := r.Reader.Get(ctx, client.ObjectKey{Namespace: s.cgu.Namespace, Name: name}, &workv1alpha1.ManifestWorkReplicaSet{})
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, name)
		case err != nil:
			return fmt.Errorf("reading ManifestWorkReplicaSet %s/%s: %w", s.cgu.Namespace, name, err)
		}
	}
	if len(missing) > 0 {
		s.invalid = &rollout.Problem{Reason: ranv1alpha1.ReasonNotAllManifestTemplatesExist,
			Message: fmt.Sprintf("ManifestWorkReplicaSets not found in %s: %s", s.cgu.Namespace, listed(missing))}
	}
	return nil
}

func canaries(cgu *ranv1alpha1.ClusterGroupUpgrade) []string {
	if cgu.Spec.RemediationStrategy == nil {
		return nil
	}
	return cgu.Spec.RemediationStrategy.Canaries
}

func mode(cgu *ranv1alpha1.ClusterGroupUpgrade) ranv1alpha1.EnforcementMode {
	if cgu.Spec.Enforcement == ranv1alpha1.EnforcementOverride {
		return ranv1alpha1.EnforcementOverride
	}
	return ranv1alpha1.EnforcementCopy
}

// gatherPlan reads the frozen plan and progress from the records once started, and builds
// the plan from the selection before.
func (r *ClusterGroupUpgradeReconciler) gatherPlan(_ context.Context, s *scope) error {
	if s.started {
		p, err := plan.FromRecords(s.records, s.cgu.Name)
		if err != nil {
			return err
		}
		if want := s.before.Plan; want != nil && want.Batches != len(p.Batches) {
			// The cache has not caught up with the records written at the start.
			return fmt.Errorf("%w: %d of the %d batches of the plan are recorded", errNotSynced, len(p.Batches), want.Batches)
		}
		s.plan = p
		var started time.Time
		if s.before.StartedAt != nil {
			started = s.before.StartedAt.Time
		}
		s.progress = rollout.Recorded(s.records, s.policyNames(), started)
		if len(p.Batches) == 0 {
			s.progress.Finished = true
		}
		return nil
	}
	if s.selectProblem != nil || s.invalid != nil {
		return nil
	}
	validated := make([]validate.Policy, len(s.roots))
	for i, p := range s.roots {
		validated[i] = validatePolicy(p)
	}
	maxConcurrency := 0
	if rs := s.cgu.Spec.RemediationStrategy; rs != nil {
		maxConcurrency = rs.MaxConcurrency
	}
	p, err := plan.Build(plan.Input{Clusters: s.selected, Canaries: canaries(s.cgu), MaxConcurrency: maxConcurrency,
		Compliant: validate.CompliantWithAll(validated, s.selected)})
	if err != nil {
		s.invalid = &rollout.Problem{Reason: ranv1alpha1.ReasonInvalidCanaries, Message: err.Error()}
		return nil
	}
	s.plan = p
	return nil
}

// decide lets pkg/rollout decide from the gathered facts.
func (r *ClusterGroupUpgradeReconciler) decide(_ context.Context, s *scope) error {
	f := rollout.Facts{
		Now: s.now, Enabled: s.cgu.Spec.Enable == nil || *s.cgu.Spec.Enable, Blocked: s.blocked,
		Plan: s.plan, Abort: s.cgu.Spec.BatchTimeoutAction == ranv1alpha1.BatchTimeoutAbort,
		Policies: policyFacts(s.roots), Progress: s.progress,
	}
	if rs := s.cgu.Spec.RemediationStrategy; rs != nil {
		f.TimeoutMinutes = rs.Timeout
	}
	if !s.started {
		f.Invalid = s.selectProblem
		if f.Invalid == nil {
			f.Invalid = s.invalid
		}
	}
	s.decision = rollout.Decide(f)
	s.decided = true
	s.startedNow = !s.started && !s.decision.Progress.Started.IsZero()
	return nil
}

// policyFacts returns, for a cluster, what each managed policy says of it: compliance on
// the root policy's status, and the soak it asks for.
func policyFacts(roots []*policyv1.Policy) func(string) []rollout.Policy {
	compliant := make([]map[string]policyv1.ComplianceState, len(roots))
	soaks := make([]time.Duration, len(roots))
	for i, p := range roots {
		if p == nil {
			continue
		}
		compliant[i] = compliance(p)
		if seconds, err := strconv.Atoi(p.Annotations[SoakAnnotation]); err == nil && seconds > 0 {
			soaks[i] = time.Duration(seconds) * time.Second
		}
	}
	return func(cluster string) []rollout.Policy {
		out := make([]rollout.Policy, len(roots))
		for i := range roots {
			out[i] = rollout.Policy{Compliant: compliant[i][cluster] == policyv1.Compliant, Soak: soaks[i]}
		}
		return out
	}
}

// applyActions runs beforeEnable on every planned cluster when the rollout starts, and
// afterCompletion on each cluster as it completes (on every planned cluster when the
// rollout completes, late ones included).
func (r *ClusterGroupUpgradeReconciler) applyActions(ctx context.Context, s *scope) error {
	actions := s.cgu.Spec.Actions
	var clusters []string
	var what ranv1alpha1.ClusterActions
	if s.startedNow && actions.BeforeEnable != nil {
		if err := r.runActions(ctx, allClusters(s.plan), actions.BeforeEnable.ClusterActions); err != nil {
			return err
		}
	}
	if actions.AfterCompletion == nil {
		return nil
	}
	what = actions.AfterCompletion.ClusterActions
	if s.decision.State == ranv1alpha1.StateCompleted {
		clusters = allClusters(s.plan)
	} else {
		clusters = newlyCompleted(s)
	}
	return r.runActions(ctx, clusters, what)
}

func (r *ClusterGroupUpgradeReconciler) runActions(ctx context.Context, clusters []string, a ranv1alpha1.ClusterActions) error {
	var errs []error
	for _, c := range clusters {
		errs = append(errs, clusteractions.Run(ctx, r.Client, c, a))
	}
	if err := errors.Join(errs...); err != nil {
		r.Metrics.RemediationError(metrics.OperationActions)
		return err
	}
	return nil
}

func allClusters(p plan.Plan) []string {
	var out []string
	for _, b := range p.Batches {
		out = append(out, b.Clusters...)
	}
	return out
}

// newlyCompleted are the clusters the decision completes that the records do not show
// completed yet.
func newlyCompleted(s *scope) []string {
	recorded := map[string]ranv1alpha1.ClusterState{}
	for _, b := range s.records {
		for _, c := range b.Status.Clusters {
			recorded[c.Name] = c.State
		}
	}
	var out []string
	add := func(clusters map[string]rollout.Cluster) {
		for name, c := range clusters {
			if c.State == ranv1alpha1.ClusterCompleted && recorded[name] != ranv1alpha1.ClusterCompleted {
				out = append(out, name)
			}
		}
	}
	for _, e := range s.decision.Ended {
		add(e.Clusters)
	}
	add(s.decision.Progress.Clusters)
	slices.Sort(out)
	return slices.Compact(out)
}

// applyRecords writes the frozen plan when the rollout starts, then the progress of the
// batches the decision touched.
func (r *ClusterGroupUpgradeReconciler) applyRecords(ctx context.Context, s *scope) error {
	if s.startedNow {
		if err := r.createRecords(ctx, s); err != nil {
			return err
		}
	}
	statuses := rollout.RecordStatuses(s.records, s.decision, s.plan, s.policyNames(), s.now)
	for i := range s.records {
		st, ok := statuses[s.records[i].Name]
		if !ok {
			continue
		}
		old := s.records[i].Status
		updated := s.records[i].DeepCopy()
		updated.Status = st
		if err := r.Client.Status().Update(ctx, updated); err != nil {
			return fmt.Errorf("recording the progress of batch %d: %w", updated.Spec.Index, err)
		}
		s.records[i] = *updated
		r.recordEvents(s, updated, old)
	}
	return nil
}

func (r *ClusterGroupUpgradeReconciler) createRecords(ctx context.Context, s *scope) error {
	want := plan.Records(s.plan, s.cgu.Namespace, s.cgu.Name)
	existing := map[string]ranv1alpha1.ClusterGroupUpgradeBatch{}
	for _, b := range s.records {
		existing[b.Name] = b
	}
	s.records = s.records[:0]
	for i := range want {
		b := &want[i]
		if old, ok := existing[b.Name]; ok {
			if equalSpec(old.Spec, b.Spec) {
				s.records = append(s.records, old)
				continue
			}
			// A record of an earlier plan that never started: replace it.
			if err := r.Client.Delete(ctx, &old); client.IgnoreNotFound(err) != nil {
				return err
			}
			return fmt.Errorf("replacing the stale plan record %s", old.Name)
		}
		if err := controllerutil.SetControllerReference(s.cgu, b, r.Scheme); err != nil {
			return err
		}
		if err := r.Client.Create(ctx, b); err != nil {
			return fmt.Errorf("recording the plan: %w", err)
		}
		s.records = append(s.records, *b)
	}
	return nil
}

func equalSpec(a, b ranv1alpha1.ClusterGroupUpgradeBatchSpec) bool {
	return a.Upgrade == b.Upgrade && a.Index == b.Index && a.Part == b.Part && a.Parts == b.Parts &&
		a.Canary == b.Canary && slices.Equal(a.Clusters, b.Clusters)
}

// applyEnforcement binds each managed policy to exactly the clusters working on it; once
// the rollout is over nothing is enforced, and a Completed rollout deletes its objects
// (unless afterCompletion.deleteObjects is false).
func (r *ClusterGroupUpgradeReconciler) applyEnforcement(ctx context.Context, s *scope) error {
	if s.decision.Progress.Started.IsZero() {
		return nil
	}
	if s.decision.State == ranv1alpha1.StateCompleted && deleteObjects(s.cgu) {
		return r.cleanupCompleted(ctx, s)
	}
	var roots []*policyv1.Policy
	clusters := map[int][]string{}
	for i, p := range s.roots {
		if p == nil {
			continue
		}
		clusters[len(roots)] = s.decision.Enforce[i]
		roots = append(roots, p)
	}
	err := r.writer().Apply(ctx, policies.Enforcement{Upgrade: s.cgu, Mode: mode(s.cgu), Policies: roots, Clusters: clusters})
	if err != nil {
		if !apierrors.IsConflict(err) {
			r.Metrics.RemediationError(metrics.OperationPlacement)
		}
		return fmt.Errorf("enforcing the managed policies: %w", err)
	}
	return nil
}
