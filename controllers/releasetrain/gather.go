package releasetrain

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/train"
)

// gather reads what a pass decides on: the channel's releases (when a read is due), the
// train's ManagedClustersUpgrades on this hub, its ManifestWorks and the availability of the
// regional hubs they are for.
func (r *Reconciler) gather(ctx context.Context, t *ranv1alpha1.ReleaseTrain) (train.Facts, error) {
	f := train.Facts{Train: t, Now: r.Clock.Now(), Rollouts: map[train.Key]train.Rollout{}}
	f.Source = r.source(ctx, t, f)
	var mcus ranv1alpha1.ManagedClustersUpgradeList
	sel := train.Selector(t)
	delete(sel, train.LabelTrainNamespace)
	if err := r.Client.List(ctx, &mcus, client.InNamespace(t.Namespace), client.MatchingLabels(sel)); err != nil {
		return f, fmt.Errorf("listing the train's ManagedClustersUpgrades: %w", err)
	}
	for i := range mcus.Items {
		if k, ok := train.KeyOf(mcus.Items[i].Labels); ok {
			ro := f.Rollouts[k]
			ro.Parts = append(ro.Parts, train.FromMCU(&mcus.Items[i]))
			f.Rollouts[k] = ro
		}
	}
	return f, r.gatherWorks(ctx, t, f)
}

// gatherWorks adds the rollouts on regional hubs: one part per hub the ring names (or that
// has a work of the rollout), from its ManifestWork's feedback while the hub is available.
func (r *Reconciler) gatherWorks(ctx context.Context, t *ranv1alpha1.ReleaseTrain, f train.Facts) error {
	if r.Unserved.Works {
		return nil
	}
	var works workv1.ManifestWorkList
	if err := r.Client.List(ctx, &works, client.MatchingLabels(train.Selector(t))); err != nil {
		return fmt.Errorf("listing the train's ManifestWorks: %w", err)
	}
	byKey := map[train.Key]map[string]*workv1.ManifestWork{}
	for i := range works.Items {
		w := &works.Items[i]
		if k, ok := train.KeyOf(w.Labels); ok {
			if byKey[k] == nil {
				byKey[k] = map[string]*workv1.ManifestWork{}
			}
			byKey[k][w.Namespace] = w
		}
	}
	available := map[string]bool{}
	for k, hubWorks := range byKey {
		hubs := ringHubs(t, k.Ring)
		for hub := range hubWorks {
			if !slices.Contains(hubs, hub) {
				hubs = append(hubs, hub)
			}
		}
		var ro train.Rollout
		for _, hub := range hubs {
			up, seen := available[hub]
			if !seen {
				var err error
				if up, err = r.hubAvailable(ctx, hub); err != nil {
					return err
				}
				available[hub] = up
			}
			ro.Parts = append(ro.Parts, train.FromWork(hub, hubWorks[hub], up))
		}
		f.Rollouts[k] = ro
	}
	return nil
}

func ringHubs(t *ranv1alpha1.ReleaseTrain, ring string) []string {
	for _, rg := range t.Spec.Rings {
		if rg.Name == ring {
			return append([]string(nil), rg.Hubs...)
		}
	}
	return nil
}

// hubAvailable reads whether a regional hub's ManagedCluster is available; a hub that is no
// managed cluster is not.
func (r *Reconciler) hubAvailable(ctx context.Context, hub string) (bool, error) {
	mc := &clusterv1.ManagedCluster{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: hub}, mc)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading ManagedCluster %s: %w", hub, err)
	}
	return train.Available(mc), nil
}

// source reads the releases: those named by hand, or the channel's when a read is due (the
// first pass, a changed spec, or checkInterval after the last read).
func (r *Reconciler) source(ctx context.Context, t *ranv1alpha1.ReleaseTrain, f train.Facts) train.Source {
	rel := t.Spec.Releases
	if len(rel.Versions) > 0 {
		return train.Source{Versions: rel.Versions, Read: true}
	}
	if c := t.Status.CheckedAt; c != nil && t.Status.ObservedGeneration == t.Generation && f.Now.Before(c.Add(train.CheckInterval(t))) {
		return train.Source{}
	}
	url := rel.Upstream
	if url == "" {
		url = r.UpdateService
	}
	g, err := r.Graphs.Graph(ctx, url, rel.Channel, "")
	if err != nil {
		return train.Source{Err: fmt.Sprintf("reading channel %s from %s: %v", rel.Channel, url, err)}
	}
	var versions []string
	for _, n := range g.Nodes {
		if n.InChannel(rel.Channel) {
			versions = append(versions, n.Version)
		}
	}
	if len(versions) == 0 {
		return train.Source{Err: fmt.Sprintf("channel %s of %s has no release", rel.Channel, url)}
	}
	return train.Source{Versions: versions, Read: true}
}
