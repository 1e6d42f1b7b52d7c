package hubagent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	workv1 "open-cluster-management.io/api/work/v1"
	"open-cluster-management.io/ocm/pkg/work/helper"
)

// The reasons and messages of the manifest controller's Applied conditions.
const (
	reasonWorkApplied      = "AppliedManifestWorkComplete"
	reasonWorkApplyFailed  = "AppliedManifestWorkFailed"
	messageWorkApplied     = "Apply manifest work complete"
	messageWorkApplyFailed = "Failed to apply manifest work"
)

// applyResult is how one manifest was applied.
type applyResult struct {
	meta   workv1.ManifestResourceMeta
	object runtime.Object
	err    error
}

// applyWork is the manifest controller's pass: the work's AppliedManifestWork ensured, each
// manifest applied, the Applied conditions set in work's status, then the resources the
// work applied recorded and those it no longer holds deleted. It tells whether some of
// those are still being deleted, which calls for another pass.
func (a *Agent) applyWork(ctx context.Context, work *workv1.ManifestWork) (bool, error) {
	applied, err := a.ensureApplied(ctx, work)
	if err != nil {
		return false, err
	}
	owner := *helper.NewAppliedManifestWorkOwner(applied)
	results := a.applyManifests(ctx, work, owner)
	setAppliedConditions(work, results)
	var errs []error
	for _, r := range results {
		if r.err != nil {
			errs = append(errs, r.err)
		}
	}
	failed := len(errs)
	deleting, err := a.recordApplied(ctx, work, applied, results)
	a.log.Info("Applied ManifestWork", "manifestWork", work.Name, "generation", work.Generation,
		"manifests", len(results), "failed", failed, "stillDeleting", deleting)
	return deleting > 0, errors.Join(append(errs, err)...)
}

// ensureApplied creates the work's AppliedManifestWork, or brings its spec up to date.
func (a *Agent) ensureApplied(ctx context.Context, work *workv1.ManifestWork) (*workv1.AppliedManifestWork, error) {
	required := &workv1.AppliedManifestWork{
		ObjectMeta: metav1.ObjectMeta{
			Name: a.AppliedManifestWorkName(work.Name), Labels: work.Labels,
			Finalizers: []string{workv1.AppliedManifestWorkFinalizer},
		},
		// The agent's ID is the hub hash unless the klusterlet sets one.
		Spec: workv1.AppliedManifestWorkSpec{HubHash: a.hubHash, ManifestWorkName: work.Name, AgentID: a.hubHash},
	}
	existing, err := a.applied.Get(ctx, required.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return a.applied.Create(ctx, required, metav1.CreateOptions{})
	}
	if err != nil {
		return nil, err
	}
	_, err = a.appliedPatcher.PatchSpec(ctx, existing, required.Spec, existing.Spec)
	return existing, err
}

// applyManifests applies every manifest, again for those that met a write conflict.
func (a *Agent) applyManifests(ctx context.Context, work *workv1.ManifestWork, owner metav1.OwnerReference) []applyResult {
	manifests := work.Spec.Workload.Manifests
	results := make([]applyResult, len(manifests))
	_ = retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		var conflict error
		for i, m := range manifests {
			if results[i].object == nil || apierrors.IsConflict(results[i].err) {
				results[i] = a.applyManifest(ctx, i, m, work, owner)
			}
			if apierrors.IsConflict(results[i].err) {
				conflict = results[i].err
			}
		}
		return conflict
	})
	return results
}

// applyManifest applies the index-th manifest with the strategy its manifestConfigs give
// (Update by default) and an owner reference to the AppliedManifestWork, or one to remove
// for what the work's deleteOption orphans; a manifest whose Complete condition is True is
// left alone.
func (a *Agent) applyManifest(ctx context.Context, index int, m workv1.Manifest, work *workv1.ManifestWork, owner metav1.OwnerReference) applyResult {
	required := &unstructured.Unstructured{}
	if err := required.UnmarshalJSON(m.Raw); err != nil {
		return applyResult{err: err}
	}
	required.SetUID("")
	resMeta, gvr, err := helper.BuildResourceMeta(index, required, a.mapper)
	result := applyResult{meta: resMeta, err: err}
	if err != nil {
		return result
	}
	if c := helper.FindManifestCondition(resMeta, work.Status.ResourceStatus.Manifests); c != nil &&
		meta.IsStatusConditionTrue(c.Conditions, workv1.ManifestComplete) {
		result.object = required
		return result
	}
	if !helper.OwnedByTheWork(gvr, resMeta.Namespace, resMeta.Name, work.Spec.DeleteOption) {
		owner.UID += "-"
	}
	option := helper.FindManifestConfiguration(resMeta, work.Spec.ManifestConfigs)
	strategy := workv1.UpdateStrategyTypeUpdate
	if option != nil && option.UpdateStrategy != nil {
		strategy = option.UpdateStrategy.Type
	}
	applier := a.appliers.GetApplier(strategy)
	if applier == nil {
		result.err = fmt.Errorf("unknown update strategy %q", strategy)
		return result
	}
	result.object, result.err = applier.Apply(ctx, gvr, required, owner, option, a.recorder)
	return result
}

// setAppliedConditions merges each manifest's Applied condition into the work's status and
// sets the work's: True once every manifest is applied.
func setAppliedConditions(work *workv1.ManifestWork, results []applyResult) {
	manifests := make([]workv1.ManifestCondition, 0, len(results))
	allApplied, anyApplied := true, false
	for _, r := range results {
		c := metav1.Condition{Type: workv1.ManifestApplied, Status: metav1.ConditionTrue, Reason: workv1.AppliedManifestComplete,
			Message: "Apply manifest complete", ObservedGeneration: work.Generation}
		if r.err != nil {
			c.Status, c.Reason, c.Message = metav1.ConditionFalse, workv1.AppliedManifestFailed, fmt.Sprintf("Failed to apply manifest: %v", r.err)
			allApplied = false
		}
		anyApplied = true
		manifests = append(manifests, workv1.ManifestCondition{ResourceMeta: r.meta, Conditions: []metav1.Condition{c}})
	}
	work.Status.ResourceStatus.Manifests = helper.MergeManifestConditions(work.Status.ResourceStatus.Manifests, manifests)
	if !anyApplied {
		return
	}
	c := metav1.Condition{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, ObservedGeneration: work.Generation,
		Reason: reasonWorkApplied, Message: messageWorkApplied}
	if !allApplied {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, reasonWorkApplyFailed, messageWorkApplyFailed
	}
	meta.SetStatusCondition(&work.Status.Conditions, c)
}

// recordApplied is the applied-manifest-work reconciler: it records in the
// AppliedManifestWork's status the resources the work applied, with their UIDs, and deletes
// those it applied before and no longer holds; one still being deleted stays recorded, and
// it returns how many are.
func (a *Agent) recordApplied(ctx context.Context, work *workv1.ManifestWork, applied *workv1.AppliedManifestWork, results []applyResult) (int, error) {
	if !applied.DeletionTimestamp.IsZero() || meta.FindStatusCondition(work.Status.Conditions, workv1.WorkApplied) == nil {
		return 0, nil
	}
	var (
		resources []workv1.AppliedManifestResourceMeta
		errs      []error
	)
	for _, r := range results {
		uid, err := a.uidOf(ctx, r)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("reading %s %s/%s: %w", r.meta.Kind, r.meta.Namespace, r.meta.Name, err))
			continue
		}
		resources = append(resources, workv1.AppliedManifestResourceMeta{
			ResourceIdentifier: workv1.ResourceIdentifier{Group: r.meta.Group, Resource: r.meta.Resource,
				Namespace: r.meta.Namespace, Name: r.meta.Name},
			Version: r.meta.Version, UID: string(uid),
		})
	}
	if len(errs) > 0 {
		return 0, errors.Join(errs...)
	}
	untracked := helper.FindUntrackedResources(applied.Status.AppliedResources, resources)
	reason := fmt.Sprintf("it is no longer maintained by manifestwork %s", work.Name)
	pending, deleteErrs := helper.DeleteAppliedResources(ctx, untracked, reason, a.dynamic, *helper.NewAppliedManifestWorkOwner(applied))
	if len(deleteErrs) > 0 {
		return 0, errors.Join(deleteErrs...)
	}
	resources = append(resources, pending...)
	slices.SortStableFunc(resources, func(x, y workv1.AppliedManifestResourceMeta) int {
		return cmp.Or(cmp.Compare(x.Group, y.Group), cmp.Compare(x.Version, y.Version), cmp.Compare(x.Resource, y.Resource),
			cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Name, y.Name))
	})
	updated := applied.DeepCopy()
	updated.Status.AppliedResources = resources
	_, err := a.appliedPatcher.PatchStatus(ctx, updated, updated.Status, applied.Status)
	return len(pending), err
}

// uidOf is the UID of what a manifest applied: from the apply's result, else read.
func (a *Agent) uidOf(ctx context.Context, r applyResult) (types.UID, error) {
	if r.err == nil && r.object != nil {
		if o, err := meta.Accessor(r.object); err == nil && o.GetUID() != "" {
			return o.GetUID(), nil
		}
	}
	if r.meta.Resource == "" || r.meta.Version == "" || r.meta.Name == "" {
		return "", fmt.Errorf("resource %s/%s: %w", r.meta.Namespace, r.meta.Name, errIncompleteMeta)
	}
	gvr := schema.GroupVersionResource{Group: r.meta.Group, Version: r.meta.Version, Resource: r.meta.Resource}
	obj, err := a.dynamic.Resource(gvr).Namespace(r.meta.Namespace).Get(ctx, r.meta.Name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return obj.GetUID(), nil
}

var errIncompleteMeta = errors.New("the manifest's resource is not known")
