package orphans

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/orphans"
)

// gather reads whether a ClusterGroupUpgrade of namespace gives the owner label value: from
// the cache, then, when it shows none, from the API server.
func (r *Reconciler) gather(ctx context.Context, namespace, value string) (orphans.Facts, error) {
	var f orphans.Facts
	var err error
	if f.Cached, err = owns(ctx, r.Client, namespace, value); err != nil || f.Cached {
		return f, err
	}
	f.Live, err = owns(ctx, r.Reader, namespace, value)
	return f, err
}

// owns reports whether reader has a ClusterGroupUpgrade in namespace whose name gives value.
func owns(ctx context.Context, reader client.Reader, namespace, value string) (bool, error) {
	var list ranv1alpha1.ClusterGroupUpgradeList
	if err := reader.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return false, fmt.Errorf("listing the ClusterGroupUpgrades of %s: %w", namespace, err)
	}
	for _, u := range list.Items {
		if names.LabelValue(u.Name) == value {
			return true, nil
		}
	}
	return false, nil
}
