package managedclustersupgrade

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/controllers/internal/reconciled"
	"github.com/cgu-operator/cgu-operator/pkg/mcu"
)

// apply makes what the decision asks for, in its order: policies, Placements, bindings,
// action templates (each made when missing, owned by the ManagedClustersUpgrade), then the
// ClusterGroupUpgrade, with its event.
func (r *Reconciler) apply(ctx context.Context, m *ranv1alpha1.ManagedClustersUpgrade, in mcu.Intents) error {
	var objs []client.Object
	for _, p := range in.Policies {
		objs = append(objs, p)
	}
	for _, p := range in.Placements {
		objs = append(objs, p)
	}
	for _, b := range in.Bindings {
		objs = append(objs, b)
	}
	for _, t := range in.Templates {
		objs = append(objs, t)
	}
	for _, o := range objs {
		if err := r.create(ctx, m, o); err != nil {
			return err
		}
	}
	if in.Upgrade == nil {
		return nil
	}
	if err := r.create(ctx, m, in.Upgrade); err != nil {
		return err
	}
	r.Recorder.Eventf(m, in.Upgrade, corev1.EventTypeNormal, mcu.EventUpgradeApplied, eventAction,
		"ClusterGroupUpgrade %s rolls %d clusters out to %s", in.Upgrade.Name, len(in.Upgrade.Spec.Clusters), m.Spec.ClusterVersion.Version)
	ctrl.LoggerFrom(ctx).Info("Upgrade applied", "clustergroupupgrade", in.Upgrade.Name, "clusters", len(in.Upgrade.Spec.Clusters))
	return nil
}

// create makes an object owned by the ManagedClustersUpgrade; one already there is left as it is.
func (r *Reconciler) create(ctx context.Context, m *ranv1alpha1.ManagedClustersUpgrade, o client.Object) error {
	if err := controllerutil.SetControllerReference(m, o, r.Scheme); err != nil {
		return fmt.Errorf("owning %s: %w", o.GetName(), err)
	}
	if err := r.Client.Create(ctx, o); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("creating %T %s/%s: %w", o, o.GetNamespace(), o.GetName(), err)
	}
	return nil
}

// ensureFinalizer adds the cleanup finalizer, so that deleting the rollout deletes what it
// made even on a hub without a garbage collector running.
func (r *Reconciler) ensureFinalizer(ctx context.Context, m *ranv1alpha1.ManagedClustersUpgrade) error {
	if controllerutil.ContainsFinalizer(m, mcu.Finalizer) {
		return nil
	}
	return reconciled.PatchFinalizers(ctx, r.Client, m, append(m.Finalizers, mcu.Finalizer))
}

// cleanup deletes what a ManagedClustersUpgrade being deleted made: its ClusterGroupUpgrade
// first, and waits for it to go (its own cleanup stops every enforcement), then its
// policies, Placements, bindings and templates; then it lets the rollout go.
func (r *Reconciler) cleanup(ctx context.Context, m *ranv1alpha1.ManagedClustersUpgrade) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(m, mcu.Finalizer) {
		return ctrl.Result{}, nil
	}
	cgu := &ranv1alpha1.ClusterGroupUpgrade{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.Name}, cgu)
	switch {
	case err == nil && isOwned(cgu, m):
		if cgu.DeletionTimestamp.IsZero() {
			if err := r.Client.Delete(ctx, cgu); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, fmt.Errorf("deleting the ClusterGroupUpgrade: %w", err)
			}
		}
		return ctrl.Result{}, nil // its deletion comes back here
	case err != nil && !apierrors.IsNotFound(err):
		return ctrl.Result{}, fmt.Errorf("reading the ClusterGroupUpgrade: %w", err)
	}
	in := []client.Object{&policyv1.PlacementBinding{}, &clusterv1beta1.Placement{}, &policyv1.Policy{}}
	if !r.Unserved.Works {
		in = append(in, &workv1alpha1.ManifestWorkReplicaSet{})
	}
	for _, kind := range in {
		if err := r.Client.DeleteAllOf(ctx, kind, client.InNamespace(m.Namespace), client.MatchingLabels(mcu.Labels(m))); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("deleting the %T objects of the rollout: %w", kind, err)
		}
	}
	var keep []string
	for _, f := range m.Finalizers {
		if f != mcu.Finalizer {
			keep = append(keep, f)
		}
	}
	return ctrl.Result{}, client.IgnoreNotFound(reconciled.PatchFinalizers(ctx, r.Client, m, keep))
}

func isOwned(cgu *ranv1alpha1.ClusterGroupUpgrade, m *ranv1alpha1.ManagedClustersUpgrade) bool {
	for _, o := range cgu.OwnerReferences {
		if o.UID == m.UID {
			return true
		}
	}
	return false
}
