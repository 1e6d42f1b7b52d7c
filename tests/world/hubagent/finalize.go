package hubagent

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	"open-cluster-management.io/ocm/pkg/work/helper"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// finalize carries out the deletion of a work as the manifest-work and applied-manifest-work
// finalize controllers do: the work goes Deleting and its AppliedManifestWork is deleted;
// the resources that recorded are deleted from the regional hub; once none is left the
// AppliedManifestWork's finalizer goes, and once the AppliedManifestWork is gone, the work's.
func (a *Agent) finalize(ctx context.Context, work *workv1.ManifestWork) (next, error) {
	if !controllerutil.ContainsFinalizer(work, workv1.ManifestWorkFinalizer) {
		return idle, nil
	}
	applied, err := a.applied.Get(ctx, a.AppliedManifestWorkName(work.Name), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if err := a.workPatcher.RemoveFinalizer(ctx, work.DeepCopy(), workv1.ManifestWorkFinalizer); err != nil {
			return idle, err
		}
		a.log.Info("Removed the finalizer of the deleted ManifestWork", "manifestWork", work.Name)
		a.forget(work.Name)
		return idle, nil
	case err != nil:
		return idle, err
	case applied.DeletionTimestamp.IsZero():
		return again, a.deleteApplied(ctx, work, applied.Name)
	}
	return a.finalizeApplied(ctx, applied)
}

// deleteApplied marks the work Deleting and deletes its AppliedManifestWork.
func (a *Agent) deleteApplied(ctx context.Context, work *workv1.ManifestWork, name string) error {
	updated := work.DeepCopy()
	meta.SetStatusCondition(&updated.Status.Conditions, metav1.Condition{Type: workv1.WorkDeleting, Status: metav1.ConditionTrue,
		Reason: "WorkDeleting", Message: "ManifestWork is being deleted", ObservedGeneration: work.Generation})
	if _, err := a.workPatcher.PatchStatus(ctx, updated, updated.Status, work.Status); err != nil {
		return err
	}
	if err := a.applied.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// finalizeApplied deletes what a deleted AppliedManifestWork recorded (background
// propagation, only resources still owned by it and of the recorded UID) and keeps recorded
// those still being deleted; once none is left, it removes the AppliedManifestWork's
// finalizer.
func (a *Agent) finalizeApplied(ctx context.Context, applied *workv1.AppliedManifestWork) (next, error) {
	if !controllerutil.ContainsFinalizer(applied, workv1.AppliedManifestWorkFinalizer) {
		// Going away without the agent: look again after a while.
		return waitDeletion, nil
	}
	reason := fmt.Sprintf("manifestwork %s is terminating", applied.Spec.ManifestWorkName)
	pending, errs := helper.DeleteAppliedResources(ctx, applied.Status.AppliedResources, reason, a.dynamic,
		*helper.NewAppliedManifestWorkOwner(applied))
	updated := applied.DeepCopy()
	updated.Status.AppliedResources = pending
	changed, err := a.appliedPatcher.PatchStatus(ctx, updated, updated.Status, applied.Status)
	if err := errors.Join(append(errs, err)...); err != nil {
		return idle, err
	}
	switch {
	case changed:
		return again, nil
	case len(pending) > 0:
		return waitDeletion, nil
	}
	a.deleting.Forget(applied.Spec.ManifestWorkName)
	if err := a.appliedPatcher.RemoveFinalizer(ctx, updated, workv1.AppliedManifestWorkFinalizer); err != nil {
		return idle, err
	}
	a.log.Info("Deleted the resources of the deleted ManifestWork", "manifestWork", applied.Spec.ManifestWorkName)
	return again, nil
}
