package releasetrain

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/controllers/internal/reconciled"
	"github.com/cgu-operator/cgu-operator/pkg/train"
)

// Finalizer holds a ReleaseTrain until its rollouts are deleted.
const Finalizer = "ran.openshift.io/release-train"

// apply makes the rollouts the decision keeps (each made when missing, never changed: a
// rollout started is never started again) and deletes those it drops. The events wait for
// the status write (status.go).
func (r *Reconciler) apply(ctx context.Context, t *ranv1alpha1.ReleaseTrain, in train.Intents) error {
	for _, p := range in.Ensure {
		if err := r.ensure(ctx, t, p); err != nil {
			return err
		}
	}
	for _, k := range in.Delete {
		if err := r.remove(ctx, t, k); err != nil {
			return err
		}
	}
	return nil
}

// ensure makes a rollout when missing: the ManagedClustersUpgrade of a ring of this hub, owned
// by the train, or one ManifestWork per regional hub of the ring.
func (r *Reconciler) ensure(ctx context.Context, t *ranv1alpha1.ReleaseTrain, p train.Planned) error {
	ring := t.Spec.Rings[p.Index]
	if len(ring.Hubs) == 0 {
		m := train.MCU(t, p, t.Namespace)
		if err := controllerutil.SetControllerReference(t, m, r.Scheme); err != nil {
			return fmt.Errorf("owning %s: %w", m.Name, err)
		}
		return r.create(ctx, m, p)
	}
	for _, hub := range ring.Hubs {
		w, err := train.Work(t, p, hub)
		if err != nil {
			return fmt.Errorf("writing the ManifestWork of %s for %s: %w", p.Name, hub, err)
		}
		if err := r.create(ctx, w, p); err != nil {
			return err
		}
	}
	return nil
}

func (r *Reconciler) create(ctx context.Context, o client.Object, p train.Planned) error {
	err := r.Client.Create(ctx, o)
	switch {
	case apierrors.IsAlreadyExists(err):
		return nil
	case err != nil:
		return fmt.Errorf("creating %T %s/%s: %w", o, o.GetNamespace(), o.GetName(), err)
	}
	ctrl.LoggerFrom(ctx).Info("Rollout made", "kind", fmt.Sprintf("%T", o), "namespace", o.GetNamespace(), "name", o.GetName(),
		"ring", p.Ring, "release", p.Version)
	return nil
}

// remove deletes a rollout: its ManagedClustersUpgrade here and its ManifestWorks.
func (r *Reconciler) remove(ctx context.Context, t *ranv1alpha1.ReleaseTrain, k train.Key) error {
	labels := train.Labels(t, k.Ring, k.Version)
	if err := r.Client.DeleteAllOf(ctx, &ranv1alpha1.ManagedClustersUpgrade{}, client.InNamespace(t.Namespace),
		client.MatchingLabels(labels)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting the rollout of %s in ring %s: %w", k.Version, k.Ring, err)
	}
	if r.Unserved.Works {
		return nil
	}
	labels[train.LabelTrainNamespace] = t.Namespace
	return r.deleteWorks(ctx, labels)
}

// deleteWorks deletes the ManifestWorks with labels, in whatever regional hub's namespace, and
// reports whether some remain.
func (r *Reconciler) deleteWorks(ctx context.Context, labels map[string]string) error {
	var works workv1.ManifestWorkList
	if err := r.Client.List(ctx, &works, client.MatchingLabels(labels)); err != nil {
		return fmt.Errorf("listing ManifestWorks: %w", err)
	}
	for i := range works.Items {
		if w := &works.Items[i]; w.DeletionTimestamp.IsZero() {
			if err := r.Client.Delete(ctx, w); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting ManifestWork %s/%s: %w", w.Namespace, w.Name, err)
			}
		}
	}
	return nil
}

func (r *Reconciler) ensureFinalizer(ctx context.Context, t *ranv1alpha1.ReleaseTrain) error {
	if controllerutil.ContainsFinalizer(t, Finalizer) {
		return nil
	}
	return reconciled.PatchFinalizers(ctx, r.Client, t, append(t.Finalizers, Finalizer))
}

// cleanup deletes a train's rollouts and waits until they are gone (each
// ManagedClustersUpgrade's own cleanup stops its enforcement; a regional hub's work agent
// deletes what it applied there) before it lets the train go. A regional hub that does not
// report holds the train until it does, as it holds the work.
func (r *Reconciler) cleanup(ctx context.Context, t *ranv1alpha1.ReleaseTrain) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(t, Finalizer) {
		return ctrl.Result{}, nil
	}
	sel := train.Selector(t)
	local := map[string]string{train.LabelTrain: sel[train.LabelTrain]}
	var mcus ranv1alpha1.ManagedClustersUpgradeList
	if err := r.Client.List(ctx, &mcus, client.InNamespace(t.Namespace), client.MatchingLabels(local)); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the train's ManagedClustersUpgrades: %w", err)
	}
	remaining := 0
	for i := range mcus.Items {
		remaining++
		if m := &mcus.Items[i]; m.DeletionTimestamp.IsZero() {
			if err := r.Client.Delete(ctx, m); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, fmt.Errorf("deleting ManagedClustersUpgrade %s: %w", m.Name, err)
			}
		}
	}
	if !r.Unserved.Works {
		var works workv1.ManifestWorkList
		if err := r.Client.List(ctx, &works, client.MatchingLabels(sel)); err != nil {
			return ctrl.Result{}, fmt.Errorf("listing the train's ManifestWorks: %w", err)
		}
		remaining += len(works.Items)
		if err := r.deleteWorks(ctx, sel); err != nil {
			return ctrl.Result{}, err
		}
	}
	if remaining > 0 {
		ctrl.LoggerFrom(ctx).V(1).Info("Waiting", "for", "the train's rollouts to go", "remaining", remaining)
		return ctrl.Result{}, nil // their deletion brings the train back
	}
	return ctrl.Result{}, reconciled.PatchFinalizers(ctx, r.Client, t, slices.DeleteFunc(slices.Clone(t.Finalizers), func(f string) bool { return f == Finalizer }))
}
