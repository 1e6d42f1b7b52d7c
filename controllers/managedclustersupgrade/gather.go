package managedclustersupgrade

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	workv1 "open-cluster-management.io/api/work/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/managedclusters"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/mcu"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

// gather reads, from the cache, what a pass decides from. Once the ClusterGroupUpgrade
// exists it reads only that and what reports on it: the plan is frozen.
func (r *Reconciler) gather(ctx context.Context, m *ranv1alpha1.ManagedClustersUpgrade) (mcu.Facts, error) {
	f := mcu.Facts{MCU: m, Now: r.Clock.Now()}
	cgu := &ranv1alpha1.ClusterGroupUpgrade{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.Name}, cgu)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return f, fmt.Errorf("reading the ClusterGroupUpgrade: %w", err)
	case !metav1.IsControlledBy(cgu, m):
		return f, fmt.Errorf("ClusterGroupUpgrade %s/%s is in the way: this ManagedClustersUpgrade does not own it", cgu.Namespace, cgu.Name)
	default:
		f.Upgrade, err = r.gatherChild(ctx, cgu)
		if err == nil {
			f.PreWorks, f.PostWorks, err = r.gatherWorks(ctx, cgu)
		}
		if err == nil && m.Spec.UpgradeStrategy.WorkerCapacity != nil {
			f.Capacity, err = r.placedOn(ctx, m.Namespace, mcu.ScaleUpPolicyName(m))
		}
		return f, err
	}
	if f.Clusters, f.MissingPlacements, err = r.selected(ctx, m); err != nil || len(f.Clusters) == 0 {
		return f, err
	}
	url := m.Spec.ClusterVersion.Upstream
	if url == "" {
		url = r.UpdateService
	}
	f.Graph, f.GraphErr = r.Graphs.Graph(ctx, url, m.Spec.ClusterVersion.Channel, "")
	f.Placed, err = r.placed(ctx, m)
	return f, err
}

// gatherChild reads the ClusterGroupUpgrade and its clusters' states from its batch records.
// It has ended once its status says so and its records show the end (rollout.EndRecorded):
// until then the clusters' states may be those of a pass before.
func (r *Reconciler) gatherChild(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) (*mcu.Child, error) {
	child := &mcu.Child{Name: cgu.Name, State: cgu.Status.State, Clusters: cgu.Spec.Clusters, Batch: cgu.Status.CurrentBatch,
		States: map[string]ranv1alpha1.ClusterState{}, Reasons: map[string]string{},
		Policies: cgu.Spec.ManagedPolicies, At: map[string]int{}, SoftTimedOut: map[string][]string{}}
	if rs := cgu.Spec.RemediationStrategy; rs != nil {
		child.Canaries = rs.Canaries
	}
	var records ranv1alpha1.ClusterGroupUpgradeBatchList
	if err := r.Client.List(ctx, &records, client.InNamespace(cgu.Namespace), client.MatchingLabels{ranv1alpha1.LabelUpgradeName: names.LabelValue(cgu.Name)}); err != nil {
		return nil, fmt.Errorf("listing the batch records of %s: %w", cgu.Name, err)
	}
	var owned []ranv1alpha1.ClusterGroupUpgradeBatch
	for i := range records.Items {
		if !metav1.IsControlledBy(&records.Items[i], cgu) {
			continue
		}
		owned = append(owned, records.Items[i])
		for _, cp := range records.Items[i].Status.Clusters {
			child.States[cp.Name] = cp.State
			if cp.Reason != "" {
				child.Reasons[cp.Name] = cp.Reason
			}
			if at, ok := positionOf(cp, child.Policies); ok {
				child.At[cp.Name] = at
			}
			if len(cp.SoftTimedOut) > 0 {
				child.SoftTimedOut[cp.Name] = cp.SoftTimedOut
			}
		}
	}
	child.Ended = meta.FindStatusCondition(cgu.Status.Conditions, ranv1alpha1.ConditionSucceeded) != nil &&
		rollout.EndRecorded(cgu.Status.Counts.Total, owned)
	return child, nil
}

// positionOf is the index of the policy a cluster's record shows it on, len(policies) once
// past the last (completed, or verifying after it); false for a cluster not started.
func positionOf(cp ranv1alpha1.ClusterProgress, policies []string) (int, bool) {
	switch {
	case cp.State == ranv1alpha1.ClusterCompleted, cp.State == ranv1alpha1.ClusterInProgress && cp.Reason == ranv1alpha1.ReasonVerifying:
		return len(policies), true
	case cp.CurrentPolicy != "":
		i := slices.Index(policies, cp.CurrentPolicy)
		return i, i >= 0
	}
	return 0, false
}

// placedOn names the clusters the rollout's Placement name selects by name (placementOf).
func (r *Reconciler) placedOn(ctx context.Context, namespace, name string) ([]string, error) {
	p := &clusterv1beta1.Placement{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, p); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	var out []string
	for _, pred := range p.Spec.Predicates {
		for _, e := range pred.RequiredClusterSelector.LabelSelector.MatchExpressions {
			if e.Key == "name" && e.Operator == metav1.LabelSelectorOpIn {
				out = append(out, e.Values...)
			}
		}
	}
	return out, nil
}

// gatherWorks reads what the pre- and post-action ManifestWorks report, by cluster.
func (r *Reconciler) gatherWorks(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) (pre, post map[string]mcu.WorkState, _ error) {
	if r.Unserved.Works || (len(cgu.Spec.PreUpgradeActions) == 0 && len(cgu.Spec.PostUpgradeActions) == 0) {
		return nil, nil, nil
	}
	owner := ownership.OwnerOf(cgu)
	var works workv1.ManifestWorkList
	if err := r.Client.List(ctx, &works, client.MatchingLabels(owner.Labels())); err != nil {
		return nil, nil, fmt.Errorf("listing the ManifestWorks of %s: %w", cgu.Name, err)
	}
	pre, post = map[string]mcu.WorkState{}, map[string]mcu.WorkState{}
	for i := range works.Items {
		w := &works.Items[i]
		st := mcu.WorkState{
			Applied:     meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkApplied),
			Available:   meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkAvailable),
			Progressing: meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkProgressing),
			Degraded:    meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkDegraded),
		}
		switch {
		case slices.ContainsFunc(cgu.Spec.PreUpgradeActions, func(t string) bool { return w.Name == manifestwork.Name(owner, manifestwork.RolePre, t) }):
			pre[w.Namespace] = st
		case slices.ContainsFunc(cgu.Spec.PostUpgradeActions, func(t string) bool { return w.Name == manifestwork.Name(owner, manifestwork.RolePost, t) }):
			post[w.Namespace] = st
		}
	}
	return pre, post, nil
}

// selected returns the clusters of the Placements named and of the cluster selector, by
// name, with their versions, and the Placements not found.
func (r *Reconciler) selected(ctx context.Context, m *ranv1alpha1.ManagedClustersUpgrade) ([]mcu.Cluster, []string, error) {
	var list clusterv1.ManagedClusterList
	if err := r.Client.List(ctx, &list); err != nil {
		return nil, nil, fmt.Errorf("listing ManagedClusters: %w", err)
	}
	chosen := map[string]bool{}
	var missing []string
	for _, ref := range m.Spec.Placement {
		ns := ref.Namespace
		if ns == "" {
			ns = m.Namespace
		}
		decided, found, err := r.decisions(ctx, ns, ref.Name)
		if err != nil {
			return nil, nil, err
		}
		if !found {
			missing = append(missing, ns+"/"+ref.Name)
		}
		for _, c := range decided {
			chosen[c] = true
		}
	}
	sel, err := selectorOf(m.Spec.ClusterSelector)
	if err != nil {
		return nil, nil, err
	}
	var out []mcu.Cluster
	for i := range list.Items {
		mc := &list.Items[i]
		picked := chosen[mc.Name] || sel != nil && sel.Matches(labels.Set(mc.Labels))
		if !picked || !mc.DeletionTimestamp.IsZero() {
			continue
		}
		out = append(out, mcu.Cluster{Name: mc.Name, Labels: mc.Labels, Version: versionOf(mc),
			Topology: managedclusters.Claim(mc, managedclusters.ClaimControlPlaneTopology)})
	}
	slices.SortFunc(out, func(a, b mcu.Cluster) int { return strings.Compare(a.Name, b.Name) })
	return out, missing, nil
}

// selectorOf is the cluster selector as a label selector: the cluster sets as ACM labels
// their clusters, and the labels and expressions; nil when there is none.
func selectorOf(s *ranv1alpha1.MCUClusterSelector) (labels.Selector, error) {
	if s == nil {
		return nil, nil
	}
	ls := &metav1.LabelSelector{MatchLabels: s.MatchLabels}
	for _, e := range s.MatchExpressions {
		ls.MatchExpressions = append(ls.MatchExpressions, metav1.LabelSelectorRequirement{Key: e.Key, Operator: e.Operator, Values: e.Values})
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, fmt.Errorf("spec.clusterSelector: %w", err)
	}
	if len(s.ClusterSets) > 0 {
		req, err := labels.NewRequirement(clusterv1beta2.ClusterSetLabel, selection.In, s.ClusterSets)
		if err != nil {
			return nil, fmt.Errorf("spec.clusterSelector.clusterSets: %w", err)
		}
		sel = sel.Add(*req)
	}
	return sel, nil
}

// versionOf is the version a cluster reports: its claim, else ACM's label.
func versionOf(mc *clusterv1.ManagedCluster) string {
	if v := managedclusters.Claim(mc, managedclusters.ClaimVersion); v != "" {
		return v
	}
	return mc.Labels[mcu.LabelVersion]
}

// decisions returns the clusters a Placement decided, and whether it exists.
func (r *Reconciler) decisions(ctx context.Context, ns, name string) ([]string, bool, error) {
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &clusterv1beta1.Placement{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("reading Placement %s/%s: %w", ns, name, err)
	}
	var list clusterv1beta1.PlacementDecisionList
	if err := r.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: name}); err != nil {
		return nil, true, fmt.Errorf("listing the decisions of Placement %s/%s: %w", ns, name, err)
	}
	var out []string
	for _, d := range list.Items {
		for _, c := range d.Status.Decisions {
			out = append(out, c.ClusterName)
		}
	}
	return out, true, nil
}

// placed returns, for each policy of the rollout, the clusters its status reports on.
func (r *Reconciler) placed(ctx context.Context, m *ranv1alpha1.ManagedClustersUpgrade) (map[string][]string, error) {
	var list policyv1.PolicyList
	if err := r.Client.List(ctx, &list, client.InNamespace(m.Namespace), client.MatchingLabels(mcu.Labels(m))); err != nil {
		return nil, fmt.Errorf("listing the policies of the rollout: %w", err)
	}
	out := map[string][]string{}
	for i := range list.Items {
		p := &list.Items[i]
		if !metav1.IsControlledBy(p, m) {
			continue
		}
		for _, s := range p.Status.Status {
			out[p.Name] = append(out[p.Name], s.ClusterName)
		}
	}
	return out, nil
}
