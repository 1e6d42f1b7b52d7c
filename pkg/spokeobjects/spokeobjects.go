// Package spokeobjects is the one writer of the hub objects that reach into managed
// clusters: ManagedClusterViews (the cluster's work agent copies an object into the view's
// status), ManagedClusterActions (the agent creates, updates or deletes an object) and
// ManifestWorks (the agent applies manifests and feeds their status back). Every reconciler
// and adapter that makes, corrects or deletes one goes through Writer: the ClusterVersion
// views of the upgrade checks (pkg/views), the views and actions of spoke jobs
// (pkg/spokejob) and of the pre-caching and backup Jobs (pkg/talmjob), the views and approvals of InstallPlan approval, the ManifestWorks of a
// rollout's steps and actions, and those an image-based group upgrade deletes once their
// step ended.
package spokeobjects

import (
	"context"
	"fmt"

	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Writer writes views, actions and ManifestWorks.
type Writer struct {
	Client client.Client
}

// EnsureView makes want exist as it is: created when missing, its spec corrected when the
// stored one differs. It returns the view as stored.
func (w Writer) EnsureView(ctx context.Context, want *viewv1beta1.ManagedClusterView) (*viewv1beta1.ManagedClusterView, error) {
	got := &viewv1beta1.ManagedClusterView{}
	err := w.Client.Get(ctx, client.ObjectKeyFromObject(want), got)
	switch {
	case apierrors.IsNotFound(err):
		if err := w.Client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating view %s/%s: %w", want.Namespace, want.Name, err)
		}
		return want, nil
	case err != nil:
		return nil, fmt.Errorf("reading view %s/%s: %w", want.Namespace, want.Name, err)
	case equality.Semantic.DeepEqual(got.Spec, want.Spec):
		return got, nil
	}
	got.Spec = want.Spec
	if err := w.Client.Update(ctx, got); err != nil {
		return nil, fmt.Errorf("updating view %s/%s: %w", got.Namespace, got.Name, err)
	}
	return got, nil
}

// CreateAction creates an action unless one of its name exists; made says this call made
// it.
func (w Writer) CreateAction(ctx context.Context, a *actionv1beta1.ManagedClusterAction) (made bool, err error) {
	return w.create(ctx, a)
}

// CreateView creates a view unless one of its name exists; made says this call made it.
func (w Writer) CreateView(ctx context.Context, v *viewv1beta1.ManagedClusterView) (made bool, err error) {
	return w.create(ctx, v)
}

func (w Writer) create(ctx context.Context, obj client.Object) (bool, error) {
	switch err := w.Client.Create(ctx, obj); {
	case apierrors.IsAlreadyExists(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("creating %s %s/%s: %w", kindOf(obj), obj.GetNamespace(), obj.GetName(), err)
	}
	return true, nil
}

// CreateWork creates a ManifestWork unless one of its name exists.
func (w Writer) CreateWork(ctx context.Context, mw *workv1.ManifestWork) error {
	if err := w.Client.Create(ctx, mw); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ManifestWork %s/%s: %w", mw.Namespace, mw.Name, err)
	}
	return nil
}

// Delete deletes a view, an action or a ManifestWork; one gone already counts as deleted.
func (w Writer) Delete(ctx context.Context, obj client.Object) error {
	if err := w.Client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting %s %s/%s: %w", kindOf(obj), obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

func kindOf(obj client.Object) string {
	switch obj.(type) {
	case *actionv1beta1.ManagedClusterAction:
		return "action"
	case *workv1.ManifestWork:
		return "ManifestWork"
	}
	return "view"
}
