package clustergroupupgrade

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/backup"
	"github.com/cgu-operator/cgu-operator/pkg/clusteractions"
	"github.com/cgu-operator/cgu-operator/pkg/gates"
	"github.com/cgu-operator/cgu-operator/pkg/metrics"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/pkg/policies"
	"github.com/cgu-operator/cgu-operator/pkg/preview"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

// SoakAnnotation on a managed policy is how many seconds a cluster must stay compliant with
// it before moving on (TALM's name).
const SoakAnnotation = "ran.openshift.io/soak-seconds"

// gatherRecords reads the batch records.
func (r *Reconciler) gatherRecords(ctx context.Context, s *scope) error {
	var list ranv1alpha1.ClusterGroupUpgradeBatchList
	if err := r.Client.List(ctx, &list, client.InNamespace(s.cgu.Namespace),
		client.MatchingLabels{ranv1alpha1.LabelUpgradeName: names.LabelValue(s.cgu.Name)}); err != nil {
		return fmt.Errorf("listing batch records: %w", err)
	}
	for _, b := range list.Items {
		switch {
		case b.Spec.Upgrade != s.cgu.Name:
		case !metav1.IsControlledBy(&b, s.cgu):
			// A record of an earlier ClusterGroupUpgrade of the same name, which the
			// garbage collector has not deleted yet: never this rollout's progress.
			s.foreign = append(s.foreign, b)
		default:
			s.records = append(s.records, b)
		}
	}
	slices.SortFunc(s.records, func(a, b ranv1alpha1.ClusterGroupUpgradeBatch) int {
		return a.Spec.Index*10000 + a.Spec.Part - b.Spec.Index*10000 - b.Spec.Part
	})
	read := []client.Object{s.cgu}
	for i := range s.records {
		read = append(read, &s.records[i])
	}
	if lag := r.expect.behind(r.lagNow(), read...); lag > 0 {
		// The update event that shows the last write queues the ClusterGroupUpgrade again
		// (expectationsMet); the timer is the fallback.
		s.waitFor(lag, "the cache to show the operator's last write")
		return nil
	}
	s.started = s.before.StartedAt != nil
	for _, b := range s.records {
		s.started = s.started || b.Status.StartedAt != nil
	}
	s.mode = rollout.Enforcement(s.cgu.Spec.Enforcement, s.before.Enforcement, s.started, r.DefaultEnforcement)
	return nil
}

func (r *Reconciler) cleanupCompleted(ctx context.Context, s *scope) error {
	if !deleteObjects(s.cgu) {
		return nil
	}
	if _, err := r.cleaner().Cleanup(ctx, s.owner); err != nil {
		r.Metrics.RemediationError(metrics.OperationCleanup)
		return fmt.Errorf("deleting the objects of the completed rollout: %w", err)
	}
	return nil
}

func deleteObjects(cgu *ranv1alpha1.ClusterGroupUpgrade) bool {
	ac := cgu.Spec.Actions.AfterCompletion
	return ac == nil || ac.DeleteObjects == nil || *ac.DeleteObjects
}

// gatherStart gathers, before the start, what the start is decided from: the blocking CGUs,
// the selection, the managed policies and the plan (pkg/preview, which tools read too).
func (r *Reconciler) gatherStart(ctx context.Context, s *scope) error {
	if s.started {
		return nil
	}
	f, err := preview.GatherIn(ctx, r.Client, s.cgu, r.previewScope(s))
	if err != nil {
		return err
	}
	s.blocked, s.selected, s.selectProblem = f.Blocked, f.Selected, f.SelectionProblem
	s.roots, s.invalid, s.plan, s.compliantBefore = f.Policies, f.Invalid, f.Plan, f.CompliantBefore
	if s.invalid == nil && s.selectProblem == nil {
		s.invalid = gates.WindowProblem(s.cgu.Spec.MaintenanceWindows)
	}
	return nil
}

// gatherFrozen reads, once started, the frozen managed policies (status
// managedPoliciesForUpgrade; an entry is nil when its policy was deleted), the frozen plan
// and the progress from the batch records.
func (r *Reconciler) gatherFrozen(ctx context.Context, s *scope) error {
	if !s.started {
		return nil
	}
	if err := r.frozenPolicies(ctx, s); err != nil {
		return err
	}
	p, err := plan.FromRecords(s.records, s.cgu.Name)
	if err != nil {
		return err
	}
	if want := s.before.Plan; want != nil && want.Batches != len(p.Batches) {
		// The cache has not caught up with the records written at the start.
		s.waitFor(cacheLag, "the cache to show the plan's records (%d of %d batches seen)", len(p.Batches), want.Batches)
		return nil
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

func (r *Reconciler) frozenPolicies(ctx context.Context, s *scope) error {
	refs := s.before.ManagedPoliciesForUpgrade
	if len(refs) == 0 { // status lost its policies: resolve them again on the plan's clusters
		f, err := preview.GatherIn(ctx, r.Client, s.cgu, r.previewScope(s))
		s.roots = f.Policies
		return err
	}
	roots, err := preview.AcceptedPolicies(ctx, r.Client, s.cgu)
	s.roots = roots
	return err
}

// decide lets pkg/rollout decide from the gathered facts, through the gates pkg/gates
// builds from them.
func (r *Reconciler) decide(_ context.Context, s *scope) error {
	f := rollout.Facts{
		Now: s.now, Enabled: s.cgu.Spec.Enable == nil || *s.cgu.Spec.Enable, Blocked: s.blocked,
		Plan: s.plan, Abort: s.cgu.Spec.BatchTimeoutAction == ranv1alpha1.BatchTimeoutAbort,
		Policies: stepFacts(s, policyFacts(s.roots)), Progress: s.progress,
	}
	if rs := s.cgu.Spec.RemediationStrategy; rs != nil {
		f.TimeoutMinutes = rs.Timeout
	}
	if !s.started {
		f.Invalid = s.selectProblem
		if f.Invalid == nil {
			f.Invalid = s.invalid
		}
		if f.Invalid == nil {
			f.Invalid = s.precacheFailed
		}
		if f.Invalid == nil {
			f.Invalid = s.backupFailed
		}
	}
	s.approvals = gates.Approvals(s.cgu, s.now)
	in := gates.Input{Upgrade: s.cgu, Now: s.now, Started: s.started, Plan: s.plan, Approvals: s.approvals, Roots: s.roots,
		Busy: s.busy, Capacity: s.capacity, Progress: s.progress, Verdicts: s.verdicts,
		HealthBefore: s.healthBefore, HealthAfter: s.healthAfter}
	if s.works != nil {
		in.Works, in.Pre, in.Post = true, s.works.pre, s.works.post
	}
	// Pre-caching is decided before the gate reads how far it got.
	s.spoke.jobs = append(precacheJobs(s, r.MaxConcurrentPrecaching), backupJobs(s)...)
	in.Precaching, in.Backup = precacheGate(s), backupGate(s)
	if s.backup != nil {
		in.BackupDeadline = s.backup.startedAt.Add(backup.Overall)
	}
	f.Gates = gates.Build(in)
	s.decision = rollout.Decide(f)
	s.decided = true
	s.spoke.jobs = append(s.spoke.jobs, healthJobs(s, r.SpokeImage)...)
	s.spoke.views, s.spoke.works = checkViews(s), workIntents(s)
	s.spoke.installPlans = decideInstallPlans(s)
	logDecision(s)
	s.startedNow = !s.started && !s.decision.Progress.Started.IsZero()
	return nil
}

// policyFacts are what each managed policy says of the clusters: compliance on the root
// policy's status, and the soak it asks for.
func policyFacts(roots []*policyv1.Policy) []rollout.PolicyFacts {
	out := make([]rollout.PolicyFacts, len(roots))
	for i, p := range roots {
		if p == nil {
			continue // deleted since the start: nothing is done with it
		}
		out[i].Compliance = preview.Compliance(p)
		if seconds, err := strconv.Atoi(p.Annotations[SoakAnnotation]); err == nil && seconds > 0 {
			out[i].Soak = time.Duration(seconds) * time.Second
		}
	}
	return out
}

// applyActions runs beforeEnable on every planned cluster when the rollout starts, and
// afterCompletion on each cluster as it completes (on every planned cluster when the
// rollout completes, late ones included), and at the start on the selected clusters left
// out of the plan as already compliant.
func (r *Reconciler) applyActions(ctx context.Context, s *scope) error {
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
	if s.startedNow {
		// Clusters already compliant with every managed policy are done at the start, as
		// in TALM: a ZTP site compliant from day one is labelled ztp-done.
		clusters = append(clusters, s.plan.SkippedCompliant...)
	}
	return r.runActions(ctx, clusters, what)
}

func (r *Reconciler) runActions(ctx context.Context, clusters []string, a ranv1alpha1.ClusterActions) error {
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

// applyRecords writes the progress of the batches the decision touched. It comes after the
// enforcement, so that a cluster's next policy is enforced without waiting for the write of
// a record of up to 250 clusters; an operator stopped between the two re-derives the same
// progress from the same compliance at its next reconcile.
func (r *Reconciler) applyRecords(ctx context.Context, s *scope) error {
	statuses := rollout.RecordStatuses(s.records, s.decision, s.plan, s.policyNames(), s.now)
	for i := range s.records {
		st, ok := statuses[s.records[i].Name]
		if !ok {
			continue
		}
		old := s.records[i].Status
		if rollout.RecordProgressOnly(old, st, s.cgu.Spec.BatchSoak != nil) && s.deferWrite(r.expect.progressDue(&s.records[i]), r.lagNow()) {
			continue
		}
		updated := s.records[i].DeepCopy()
		updated.Status = st
		if err := r.Client.Status().Update(ctx, updated); err != nil {
			return fmt.Errorf("recording the progress of batch %d: %w", updated.Spec.Index, err)
		}
		r.expect.wrote(updated, r.lagNow())
		s.records[i] = *updated
		r.recordEvents(s, updated, old)
		logBatch(s, updated, old)
	}
	return nil
}

// applyPlan records the plan when the rollout starts. The records come before anything is
// enforced: a restarted operator finds the rollout, and its progress, in them.
func (r *Reconciler) applyPlan(ctx context.Context, s *scope) error {
	if !s.startedNow {
		return nil
	}
	return r.createRecords(ctx, s)
}

func (r *Reconciler) createRecords(ctx context.Context, s *scope) error {
	if len(s.foreign) > 0 {
		for i := range s.foreign {
			if err := r.Client.Delete(ctx, &s.foreign[i], client.Preconditions{UID: &s.foreign[i].UID}); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting the batch record %s of an earlier rollout of the same name: %w", s.foreign[i].Name, err)
			}
		}
		s.waitFor(cacheLag, "the cache to show %d deleted batch records of an earlier rollout of the same name", len(s.foreign))
		return nil
	}
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
			// A record of an earlier plan that never started: replace it once the cache
			// shows it gone.
			if err := r.Client.Delete(ctx, &old); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting the batch record %s of an earlier plan: %w", old.Name, err)
			}
			s.waitFor(cacheLag, "the cache to show the batch record %s of an earlier plan deleted", old.Name)
			return nil
		}
		if err := ownership.Adopt(s.cgu, b, r.Scheme); err != nil {
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
func (r *Reconciler) applyEnforcement(ctx context.Context, s *scope) error {
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
			if err := r.releaseDeleted(ctx, s, i); err != nil {
				return err
			}
			continue
		}
		clusters[len(roots)] = s.decision.Enforce[i]
		roots = append(roots, p)
	}
	// Clusters moving on inside a batch are enforced at most every enforcementInterval,
	// together; a batch starting or ending is enforced at once.
	paced := !s.startedNow && len(s.decision.Ended) == 0
	if paced && s.deferWrite(r.expect.enforcementDue(s.cgu), r.lagNow()) {
		return nil
	}
	wrote, err := r.writer().Apply(ctx, policies.Enforcement{Upgrade: s.cgu, Mode: s.mode, Policies: roots, Clusters: clusters,
		Frozen: frozenPolicies(s, roots)})
	if wrote > 0 {
		r.expect.enforced(s.cgu, r.lagNow())
	}
	if err != nil {
		if !apierrors.IsConflict(err) {
			r.Metrics.RemediationError(metrics.OperationPlacement)
		}
		return fmt.Errorf("enforcing the managed policies: %w", err)
	}
	return nil
}

// releaseDeleted deletes what enforced the i-th managed policy, deleted since the rollout
// froze it: its enforce copy would outlive it and go on enforcing on the clusters it was
// last bound to. The clusters working on it stay there until their batch times out.
func (r *Reconciler) releaseDeleted(ctx context.Context, s *scope, i int) error {
	if i >= len(s.before.ManagedPoliciesForUpgrade) {
		return nil
	}
	ref := s.before.ManagedPoliciesForUpgrade[i]
	if err := r.writer().Release(ctx, s.owner, s.mode, ref.Namespace, ref.Name); err != nil {
		r.Metrics.RemediationError(metrics.OperationPlacement)
		return fmt.Errorf("releasing the deleted managed policy %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	return nil
}

// previewScope is what the operator lets the rollout do, for pkg/preview.
func (r *Reconciler) previewScope(s *scope) preview.Scope {
	return preview.Scope{PolicyNamespaces: r.PolicyNamespaces, Enforcement: s.mode, Unserved: r.Unserved}
}
