package imagebasedgroupupgrade

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/ibgu"
	"github.com/cgu-operator/cgu-operator/pkg/managedclusters"
	"github.com/cgu-operator/cgu-operator/pkg/spokeobjects"
)

// apply makes the writes the decision called for, in its order: cluster labels, the
// deletion of ended steps' ManifestWorks (what they applied stays on the clusters,
// deleteOption Orphan), the running step's pause, new templates, the next step's
// ClusterGroupUpgrade (with its event once created).
func (r *Reconciler) apply(ctx context.Context, g *lcmv1alpha1.ImageBasedGroupUpgrade, in ibgu.Intents) error {
	labels := managedclusters.Writer{Client: r.Client}
	for _, cluster := range slices.Sorted(maps.Keys(in.Labels)) {
		if _, err := labels.Patch(ctx, cluster, managedclusters.Changes{Labels: in.Labels[cluster]}); err != nil {
			return err
		}
	}
	works := spokeobjects.Writer{Client: r.Client}
	for _, w := range in.DeleteWorks {
		if err := works.Delete(ctx, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name}}); err != nil {
			return err
		}
	}
	if p := in.Pause; p != nil {
		// A merge patch of that field only: a user's own pause of the step is undone only
		// when the ImageBasedGroupUpgrade's changes.
		cgu := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: g.Namespace, Name: p.Upgrade}}
		patch := fmt.Sprintf(`{"spec":{"paused":%t}}`, p.Paused)
		if err := r.Client.Patch(ctx, cgu, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			return fmt.Errorf("pausing the ClusterGroupUpgrade %s: %w", p.Upgrade, err)
		}
	}
	for _, t := range in.Templates {
		if err := controllerutil.SetControllerReference(g, t, r.Scheme); err != nil {
			return fmt.Errorf("owning ManifestWorkReplicaSet %s: %w", t.Name, err)
		}
		if err := r.Client.Create(ctx, t); client.IgnoreAlreadyExists(err) != nil {
			return fmt.Errorf("creating ManifestWorkReplicaSet %s/%s: %w", t.Namespace, t.Name, err)
		}
	}
	if in.Step != nil {
		return r.startStep(ctx, g, in.Step, in.StepIndex)
	}
	return nil
}

// startStep creates the ClusterGroupUpgrade of plan step i. One of that name already there
// is this one's when the cache was behind (its event comes back here), or a foreign one,
// which the plan cannot go on beside.
func (r *Reconciler) startStep(ctx context.Context, g *lcmv1alpha1.ImageBasedGroupUpgrade, cgu *ranv1alpha1.ClusterGroupUpgrade, i int) error {
	if err := controllerutil.SetControllerReference(g, cgu, r.Scheme); err != nil {
		return fmt.Errorf("owning the ClusterGroupUpgrade of step %d: %w", i, err)
	}
	err := r.Client.Create(ctx, cgu)
	switch {
	case apierrors.IsAlreadyExists(err):
		have := &ranv1alpha1.ClusterGroupUpgrade{}
		if gerr := r.Client.Get(ctx, client.ObjectKeyFromObject(cgu), have); gerr != nil || metav1.IsControlledBy(have, g) {
			return client.IgnoreNotFound(gerr)
		}
		return &ibgu.Foreign{Object: fmt.Sprintf("ClusterGroupUpgrade %s/%s of plan step %d", cgu.Namespace, cgu.Name, i)}
	case err != nil:
		return fmt.Errorf("creating the ClusterGroupUpgrade of step %d: %w", i, err)
	}
	e := ibgu.StepStarted(g, i, cgu.Name)
	r.Recorder.Eventf(g, cgu, corev1.EventTypeNormal, e.Reason, eventAction, "%s", e.Message)
	ctrl.LoggerFrom(ctx).Info("Plan step started", "step", i, "clustergroupupgrade", cgu.Name)
	return nil
}
