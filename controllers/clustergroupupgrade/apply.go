package clustergroupupgrade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/cgu"
	"github.com/cgu-operator/cgu-operator/pkg/clusteractions"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/metrics"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/policies"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
	"github.com/cgu-operator/cgu-operator/pkg/spokeobjects"
	"github.com/cgu-operator/cgu-operator/pkg/talmjob"
	"github.com/cgu-operator/cgu-operator/pkg/views"
)

// EventInstallPlanApproved marks the approval of a Manual InstallPlan on a cluster.
const EventInstallPlanApproved = "InstallPlanApproved"

// The apply step: every write of a reconcile, each from the intents cgu.Decide returned, one
// writer per kind of object. The status is written after them (status.go).

// applySteps are the writes in order: the cluster actions, the plan's records at the start
// (before anything is enforced: a restarted operator finds the rollout in them), the
// enforcement, the records' progress (after the enforcement, so that a cluster's next policy
// is enforced without waiting for the write of a record of up to 250 clusters), InstallPlan
// approval, the spoke-side objects.
func (r *Reconciler) applySteps() []func(context.Context, *scope) error {
	return []func(context.Context, *scope) error{r.applyGauges, r.applyActions, r.applyPlan, r.applyEnforcement, r.applyRecords,
		r.applyInstallPlans, r.applySpoke, r.applySilences}
}

// applyGauges reports the clusters InProgress on the hub, with the cap, to the hub capacity
// gauges, when gather counted them.
func (r *Reconciler) applyGauges(_ context.Context, s *scope) error {
	if !s.in.Settled && !s.facts.Progress.Finished {
		r.Metrics.HubClusters(s.facts.Others.InProgress, r.MaxClustersInProgress)
	}
	return nil
}

// applyActions runs the spec's cluster actions on the clusters the decision named.
func (r *Reconciler) applyActions(ctx context.Context, s *scope) error {
	actions := s.cgu.Spec.Actions
	if actions.BeforeEnable != nil {
		if err := r.runActions(ctx, s.in.Actions.BeforeEnable, actions.BeforeEnable.ClusterActions); err != nil {
			return err
		}
	}
	if actions.AfterCompletion != nil {
		return r.runActions(ctx, s.in.Actions.AfterCompletion, actions.AfterCompletion.ClusterActions)
	}
	return nil
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

// applyPlan records the plan when the rollout starts: the records come before anything is
// enforced. Records of an earlier ClusterGroupUpgrade of the same name, or of an earlier plan
// that never started, go first, and the reconcile waits for the cache to show them gone.
func (r *Reconciler) applyPlan(ctx context.Context, s *scope) error {
	if !s.in.StartedNow {
		return r.applyRebuilt(ctx, s)
	}
	if len(s.foreign) > 0 {
		for i := range s.foreign {
			if err := r.Client.Delete(ctx, &s.foreign[i], client.Preconditions{UID: &s.foreign[i].UID}); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting the batch record %s of an earlier rollout of the same name: %w", s.foreign[i].Name, err)
			}
		}
		s.waitFor(cacheLag, "the cache to show %d deleted batch records of an earlier rollout of the same name", len(s.foreign))
		return nil
	}
	existing := map[string]ranv1alpha1.ClusterGroupUpgradeBatch{}
	for _, b := range s.facts.Records {
		existing[b.Name] = b
	}
	s.records = nil
	for i := range s.in.Records {
		b := s.in.Records[i].DeepCopy()
		if old, ok := existing[b.Name]; ok {
			if rollout.SameSpec(old.Spec, b.Spec) {
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

// applyRebuilt makes again, with their status, the records the API server lost, before
// anything is enforced; the pass then writes their progress as it does any record's.
func (r *Reconciler) applyRebuilt(ctx context.Context, s *scope) error {
	for _, lost := range s.in.Rebuilt {
		b := lost.DeepCopy()
		if err := ownership.Adopt(s.cgu, b, r.Scheme); err != nil {
			return err
		}
		if b.ResourceVersion == "" { // else made again already, without its progress
			if err := r.Client.Create(ctx, b); err != nil {
				return fmt.Errorf("making the lost record %s again: %w", b.Name, err)
			}
		}
		if lost.Status.StartedAt != nil {
			b.Status = lost.Status
			if err := r.Client.Status().Update(ctx, b); err != nil {
				return fmt.Errorf("recording the progress of the lost record %s: %w", b.Name, err)
			}
		}
		r.expect.wrote(b, r.lagNow(), statusSize(b.Status))
		for i := range s.records {
			if s.records[i].Name == b.Name {
				s.records[i] = *b
			}
		}
	}
	if n := len(s.in.Rebuilt); n > 0 {
		s.log.Info("batch records lost and made again", "records", n)
	}
	return nil
}

// applyEnforcement binds each managed policy to exactly the clusters working on it, releases
// what enforced the managed policies deleted since the start, and deletes the objects of a
// completed rollout (applyCleanup).
func (r *Reconciler) applyEnforcement(ctx context.Context, s *scope) error {
	if s.in.Cleanup {
		return r.applyCleanup(ctx, s)
	}
	e := s.in.Enforcement
	if !e.Write {
		return nil
	}
	for _, ref := range e.Released {
		if err := r.writer().Release(ctx, s.owner, s.in.Mode, ref.Namespace, ref.Name); err != nil {
			r.Metrics.RemediationError(metrics.OperationPlacement)
			return fmt.Errorf("releasing the deleted managed policy %s/%s: %w", ref.Namespace, ref.Name, err)
		}
	}
	if e.Paced && s.deferWrite(r.expect.enforcementDue(s.cgu), r.lagNow()) {
		return nil
	}
	wrote, err := r.writer().Apply(ctx, policies.Enforcement{Upgrade: s.cgu, Mode: s.in.Mode, Policies: e.Policies,
		Clusters: e.Clusters, Frozen: e.Frozen})
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

// applyCleanup deletes the objects of a completed rollout.
func (r *Reconciler) applyCleanup(ctx context.Context, s *scope) error {
	if !s.in.Cleanup {
		return nil
	}
	_, held, err := r.cleaner().CleanupStep(ctx, s.owner)
	if err != nil {
		r.Metrics.RemediationError(metrics.OperationCleanup)
		return fmt.Errorf("deleting the objects of the completed rollout: %w", err)
	}
	if held {
		// The Placements go once the cache shows the bindings gone, whose deletion queues
		// this rollout again; the timer is the fallback.
		s.lookAgain(cacheLag)
	}
	return nil
}

// applyRecords writes the progress of the batches the decision touched; a change that is
// only clusters moving on waits for the record's pace (expectations.wroteRecord). An
// operator stopped between the
// enforcement and these writes re-derives the same progress from the same compliance at its
// next reconcile.
func (r *Reconciler) applyRecords(ctx context.Context, s *scope) error {
	for i := range s.records {
		st, ok := s.in.RecordStatus[s.records[i].Name]
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
		r.expect.wroteRecord(updated, r.lagNow())
		s.records[i] = *updated
		r.recordEvents(s, updated, old)
		logBatch(s, updated, old)
	}
	return nil
}

// applyInstallPlans makes the writes of InstallPlan approval the decision called for; the
// approvals that could not be built fail the pass.
func (r *Reconciler) applyInstallPlans(ctx context.Context, s *scope) error {
	in := s.in.Spoke.InstallPlans
	w := spokeobjects.Writer{Client: r.Client}
	errs := slices.Clone(in.Problems)
	for _, v := range in.Views {
		_, err := w.EnsureView(ctx, v)
		errs = append(errs, err)
	}
	for _, a := range in.Approvals {
		errs = append(errs, r.makeApproval(ctx, s, w, a))
	}
	for _, v := range in.Stale {
		errs = append(errs, w.Delete(ctx, v))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("approving InstallPlans: %w", err)
	}
	return nil
}

// makeApproval creates the action approving an InstallPlan, once per cluster and plan, and
// marks it with an event when created.
func (r *Reconciler) makeApproval(ctx context.Context, s *scope, w spokeobjects.Writer, a cgu.Approval) error {
	made, err := w.CreateAction(ctx, a.Action)
	if err != nil || !made {
		return err
	}
	s.log.Info("Approving an InstallPlan", "cluster", a.Cluster, "subscription", a.Subscription, "installPlan", a.Verdict.Plan.Name, "csv", a.Verdict.CSV)
	r.relatedEvent(s, managedCluster(a.Cluster), corev1.EventTypeNormal, EventInstallPlanApproved,
		"Approved InstallPlan %s/%s (%s) of Subscription %s on cluster %s", a.Verdict.Plan.Namespace, a.Verdict.Plan.Name, a.Verdict.CSV, a.Subscription, a.Cluster)
	return nil
}

// applySpoke makes the spoke-side objects the decision called for: the ClusterVersion views
// of the upgrade checks, the spoke Jobs, the ManifestWorks. Made ones cost nothing more.
func (r *Reconciler) applySpoke(ctx context.Context, s *scope) error {
	sp := s.in.Spoke
	v := views.Views{Client: r.Client, Owner: s.owner}
	for _, c := range sp.Views {
		if err := v.EnsureClusterVersion(ctx, c); err != nil {
			return err
		}
	}
	runner := spokejob.Runner{Client: r.Client}
	for _, j := range sp.Jobs {
		if err := runner.Start(ctx, j); err != nil {
			return fmt.Errorf("starting spoke Job %s on %s: %w", j.Name, j.Cluster, err)
		}
	}
	for _, in := range sp.Prestart {
		if err := r.writePrestart(ctx, in); err != nil {
			return err
		}
	}
	for _, w := range sp.Works {
		if err := r.makeWork(ctx, s, w); err != nil {
			return err
		}
	}
	if n := len(sp.Views) + len(sp.Jobs) + len(sp.Prestart) + len(sp.Works); n > 0 {
		s.log.V(1).Info("Spoke-side objects ensured", "views", len(sp.Views), "jobs", len(sp.Jobs), "prestart", len(sp.Prestart),
			"manifestWorks", len(sp.Works))
	}
	return nil
}

// applySettled clears the pre-caching and backup Jobs that succeeded (cgu.Spoke Settled),
// once the status that records their success is on the hub.
func (r *Reconciler) applySettled(ctx context.Context, s *scope) error {
	for _, in := range s.in.Spoke.Settled {
		if err := r.writePrestart(ctx, in); err != nil {
			return err
		}
	}
	return nil
}

// writePrestart writes one cluster's views and actions of a pre-caching or backup Job: the
// deletions first, then what is made. One of the name that exists already with no owner's
// labels (TALM's, of a pre-cache or backup it began) is adopted: it gets the rollout's
// labels, so that the cache, which holds labelled objects only, shows it from then on. The
// actions that remove a Job from its spoke carry no owner's labels and are never adopted.
func (r *Reconciler) writePrestart(ctx context.Context, in talmjob.Intents) error {
	w := spokeobjects.Writer{Client: r.Client}
	var errs []error
	for _, name := range in.DeleteActions {
		errs = append(errs, w.Delete(ctx, &actionv1beta1.ManagedClusterAction{ObjectMeta: metav1.ObjectMeta{Namespace: in.Cluster, Name: name}}))
	}
	for _, name := range in.DeleteViews {
		errs = append(errs, w.Delete(ctx, &viewv1beta1.ManagedClusterView{ObjectMeta: metav1.ObjectMeta{Namespace: in.Cluster, Name: name}}))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, a := range in.Actions {
		made, err := w.CreateAction(ctx, a)
		if _, _, owned := ownership.Of(a.Labels); err == nil && !made && owned {
			err = r.adopt(ctx, &actionv1beta1.ManagedClusterAction{}, a)
		}
		if err != nil {
			return err
		}
	}
	for _, v := range in.Views {
		made, err := w.CreateView(ctx, v)
		if err == nil && !made {
			err = r.adopt(ctx, &viewv1beta1.ManagedClusterView{}, v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// adopt puts want's labels on the stored object of its name when the cache does not show
// it: the cache holds the objects with an owner's labels only, so this one has none (TALM
// made it), or it is so new that the cache has not seen it yet (then it gets the labels it
// has). stored is an empty object of its kind. A merge patch adds the labels and keeps the
// others; no read of the API server is needed.
func (r *Reconciler) adopt(ctx context.Context, stored, want client.Object) error {
	switch err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), stored); {
	case err == nil:
		return nil
	case !apierrors.IsNotFound(err):
		return err
	}
	raw, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": want.GetLabels()}})
	if err != nil {
		return err
	}
	stored.SetNamespace(want.GetNamespace())
	stored.SetName(want.GetName())
	if err := r.Client.Patch(ctx, stored, client.RawPatch(types.MergePatchType, raw)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("adopting %s/%s: %w", want.GetNamespace(), want.GetName(), err)
	}
	return nil
}

// makeWork makes, or deletes, the ManifestWork of an intent.
func (r *Reconciler) makeWork(ctx context.Context, s *scope, w cgu.Work) error {
	writer := spokeobjects.Writer{Client: r.Client}
	var err error
	if w.Delete {
		err = writer.Delete(ctx, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: w.Cluster,
			Name: manifestwork.Name(s.owner, w.Role, w.Template)}})
	} else {
		err = writer.CreateWork(ctx, manifestwork.New(s.facts.Works.Templates[w.Template], w.Role, w.Cluster, s.owner))
	}
	if err != nil {
		r.Metrics.RemediationError(metrics.OperationPlacement)
	}
	return err
}
