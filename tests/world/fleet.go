package world

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// GlobalClusterSet is the ManagedClusterSet that selects every cluster, as OCM's own
// "global" set does. BindClusterSet makes it usable by Placements in a namespace.
const GlobalClusterSet = "global"

// Registration facts the hub's registration controller writes for a cluster; the world
// writes them the same way.
const (
	// TaintUnreachable is the taint registration puts on a cluster whose agent stopped
	// reporting (Available=Unknown); Placements do not select it.
	TaintUnreachable = "cluster.open-cluster-management.io/unreachable"
	// TaintUnavailable is the taint for Available=False.
	TaintUnavailable = "cluster.open-cluster-management.io/unavailable"
)

// Cluster describes one managed cluster of the fleet.
type Cluster struct {
	Name   string
	Labels map[string]string
	// Claims are cluster claims, for example "version.openshift.io": "4.16.10".
	Claims map[string]string
}

// fleetWorkers bounds the requests AddClusters sends at once.
const fleetWorkers = 16

// AddClusters registers clusters with the hub as if each had joined: a ManagedCluster
// accepted by the hub, with its labels (plus ACM's name and vendor labels), claims and
// Available=True, and its namespace labelled open-cluster-management.io/cluster-name as
// registration labels it.
func (h *Hub) AddClusters(ctx context.Context, clusters ...Cluster) error {
	if err := h.ensureGlobalClusterSet(ctx); err != nil {
		return err
	}
	return forEach(ctx, clusters, func(ctx context.Context, c Cluster) error {
		return h.addCluster(ctx, c)
	})
}

func (h *Hub) addCluster(ctx context.Context, c Cluster) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: c.Name, Labels: map[string]string{clusterv1.ClusterNameLabelKey: c.Name},
	}}
	if err := createIfMissing(ctx, h.Client, ns); err != nil {
		return fmt.Errorf("namespace of cluster %s: %w", c.Name, err)
	}
	mc := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: c.Name, Labels: clusterLabels(c)},
		Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: true, LeaseDurationSeconds: 60},
	}
	if err := createIfMissing(ctx, h.Client, mc); err != nil {
		return fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	for name, value := range c.Claims {
		mc.Status.ClusterClaims = append(mc.Status.ClusterClaims, clusterv1.ManagedClusterClaim{Name: name, Value: value})
	}
	setClusterConditions(mc, metav1.ConditionTrue)
	if err := h.Client.Status().Update(ctx, mc); err != nil {
		return fmt.Errorf("status of cluster %s: %w", c.Name, err)
	}
	return nil
}

// clusterLabels are a cluster's own labels plus those ACM's cluster-labels controller adds
// to every OpenShift cluster (name, vendor), unless the cluster sets them itself.
func clusterLabels(c Cluster) map[string]string {
	labels := map[string]string{"name": c.Name, "vendor": "OpenShift"}
	for k, v := range c.Labels {
		labels[k] = v
	}
	return labels
}

// SetAvailable sets a cluster's Available condition as registration would: True for a
// healthy agent, Unknown when its lease expired, False when it reports itself unavailable;
// the matching taint keeps Placements from selecting it.
//
// Like the real registration controller, it retries on a write conflict: the klusterlet's
// claims (the simulator's version claim) are written to the same object.
func (h *Hub) SetAvailable(ctx context.Context, name string, status metav1.ConditionStatus) error {
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := h.Client.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			return err
		}
		setClusterConditions(mc, status)
		if err := h.Client.Status().Update(ctx, mc); err != nil {
			return err
		}
		mc.Spec.Taints = withoutTaints(mc.Spec.Taints, TaintUnreachable, TaintUnavailable)
		switch status {
		case metav1.ConditionUnknown:
			mc.Spec.Taints = append(mc.Spec.Taints, clusterv1.Taint{Key: TaintUnreachable, Effect: clusterv1.TaintEffectNoSelect, TimeAdded: metav1.Now()})
		case metav1.ConditionFalse:
			mc.Spec.Taints = append(mc.Spec.Taints, clusterv1.Taint{Key: TaintUnavailable, Effect: clusterv1.TaintEffectNoSelect, TimeAdded: metav1.Now()})
		}
		return h.Client.Update(ctx, mc)
	})
}

// RemoveCluster deletes a cluster and its namespace, as detaching it from the hub does.
func (h *Hub) RemoveCluster(ctx context.Context, name string) error {
	err := h.Client.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	err = h.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// BindClusterSet lets Placements in namespace select from every cluster, creating the
// namespace if needed.
func (h *Hub) BindClusterSet(ctx context.Context, namespace string) error {
	if err := h.ensureGlobalClusterSet(ctx); err != nil {
		return err
	}
	if err := createIfMissing(ctx, h.Client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		return err
	}
	return createIfMissing(ctx, h.Client, &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Name: GlobalClusterSet, Namespace: namespace},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: GlobalClusterSet},
	})
}

func (h *Hub) ensureGlobalClusterSet(ctx context.Context) error {
	return createIfMissing(ctx, h.Client, &clusterv1beta2.ManagedClusterSet{
		ObjectMeta: metav1.ObjectMeta{Name: GlobalClusterSet},
		Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
			SelectorType:  clusterv1beta2.LabelSelector,
			LabelSelector: &metav1.LabelSelector{},
		}},
	})
}

func setClusterConditions(mc *clusterv1.ManagedCluster, available metav1.ConditionStatus) {
	reasons := map[metav1.ConditionStatus]string{
		metav1.ConditionTrue:    "ManagedClusterAvailable",
		metav1.ConditionFalse:   "ManagedClusterUnavailable",
		metav1.ConditionUnknown: "ManagedClusterLeaseUpdateStopped",
	}
	for _, c := range []metav1.Condition{
		{Type: clusterv1.ManagedClusterConditionHubAccepted, Status: metav1.ConditionTrue, Reason: "HubClusterAdminAccepted", Message: "Accepted by hub cluster admin"},
		{Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue, Reason: "ManagedClusterJoined", Message: "Managed cluster joined"},
		{Type: clusterv1.ManagedClusterConditionAvailable, Status: available, Reason: reasons[available], Message: "Set by the hub test world"},
	} {
		meta.SetStatusCondition(&mc.Status.Conditions, c)
	}
}

func withoutTaints(taints []clusterv1.Taint, keys ...string) []clusterv1.Taint {
	var out []clusterv1.Taint
	for _, t := range taints {
		drop := false
		for _, k := range keys {
			drop = drop || t.Key == k
		}
		if !drop {
			out = append(out, t)
		}
	}
	return out
}

func createIfMissing(ctx context.Context, c client.Client, obj client.Object) error {
	err := c.Create(ctx, obj)
	if apierrors.IsAlreadyExists(err) {
		return c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	}
	return err
}

// forEach calls f for every item with at most fleetWorkers calls at once and returns every
// error.
func forEach[T any](ctx context.Context, items []T, f func(context.Context, T) error) error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	work := make(chan T)
	for range min(fleetWorkers, len(items)) {
		wg.Go(func() {
			for item := range work {
				if err := f(ctx, item); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for _, item := range items {
		work <- item
	}
	close(work)
	wg.Wait()
	return errors.Join(errs...)
}
