package ownership

import (
	"context"
	"errors"
	"fmt"

	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/pkg/hubapi"
)

// Cleaner finds and deletes the objects made for a rollout.
type Cleaner struct {
	Client client.Client
	// Copies reads the ConfigMaps copied for hub templates, from a cache that holds only
	// those; nil reads them through Client.
	Copies client.Reader
	// Unserved are the optional APIs the hub does not serve: their kinds are not looked for.
	Unserved hubapi.Unserved
	// Teardown, when set, is given the rollout's views before they are deleted, to remove
	// from the spokes what the rollout's jobs set up there (spokejob.Runner.Teardown); the
	// views are deleted once it succeeded.
	Teardown func(ctx context.Context, views []viewv1beta1.ManagedClusterView) error
}

// Cleanup deletes every object made for owner (Kinds, and the copied ConfigMaps in the
// owner's namespace), in every namespace. It returns how many were found, those already
// being deleted included. Everything is listed from the cache, which holds these kinds
// filtered by the owner labels: cleaning up reads nothing from the API server.
func (c Cleaner) Cleanup(ctx context.Context, owner Owner) (int, error) {
	selector := client.MatchingLabels(owner.Labels())
	found := 0
	var errs []error
	var views *viewv1beta1.ManagedClusterViewList
	for _, k := range Kinds {
		if c.Unserved.Missing(k.Needs) {
			continue
		}
		list := k.List()
		if err := c.Client.List(ctx, list, selector); err != nil {
			if !meta.IsNoMatchError(err) {
				errs = append(errs, err)
			}
			continue
		}
		if v, ok := list.(*viewv1beta1.ManagedClusterViewList); ok && c.Teardown != nil {
			views = v // after the actions: see below
			continue
		}
		n, err := c.deleteAll(ctx, list)
		found += n
		errs = append(errs, err)
	}
	if views != nil {
		n, err := c.tearDown(ctx, views)
		found += n
		errs = append(errs, err)
	}
	copies := c.Copies
	if copies == nil {
		copies = c.Client
	}
	var configMaps corev1.ConfigMapList
	if err := copies.List(ctx, &configMaps, client.InNamespace(owner.Namespace), selector); err != nil {
		errs = append(errs, err)
	} else {
		n, err := c.deleteAll(ctx, &configMaps)
		found += n
		errs = append(errs, err)
	}
	return found, errors.Join(errs...)
}

// tearDown removes from the spokes what the rollout's jobs set up (Teardown), then deletes
// their views. It runs once the rollout's actions were deleted, so that no setup action
// still unanswered creates an object after the teardown deleted it.
func (c Cleaner) tearDown(ctx context.Context, views *viewv1beta1.ManagedClusterViewList) (int, error) {
	if len(views.Items) == 0 {
		return 0, nil
	}
	if err := c.Teardown(ctx, views.Items); err != nil {
		return len(views.Items), fmt.Errorf("tearing down the spoke jobs' objects: %w", err)
	}
	return c.deleteAll(ctx, views)
}

func (c Cleaner) deleteAll(ctx context.Context, list client.ObjectList) (int, error) {
	items, err := meta.ExtractList(list)
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, item := range items {
		o, ok := item.(client.Object)
		if !ok || !o.GetDeletionTimestamp().IsZero() {
			continue // already being deleted: its finalizers hold it
		}
		if err := c.Client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting %T %s/%s: %w", o, o.GetNamespace(), o.GetName(), err))
		}
	}
	return len(items), errors.Join(errs...)
}

// Delete deletes those of objects (named, otherwise empty) that exist and were made for
// owner; those gone, or made by someone else, are skipped.
func (c Cleaner) Delete(ctx context.Context, owner Owner, objects ...client.Object) error {
	for _, o := range objects {
		err := c.Client.Get(ctx, client.ObjectKeyFromObject(o), o)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("reading %T %s/%s: %w", o, o.GetNamespace(), o.GetName(), err)
		case !owner.Owns(o.GetLabels()):
			continue
		}
		uid := o.GetUID()
		if err := c.Client.Delete(ctx, o, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting %T %s/%s: %w", o, o.GetNamespace(), o.GetName(), err)
		}
	}
	return nil
}
