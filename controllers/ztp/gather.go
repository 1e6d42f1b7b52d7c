package ztp

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/ztp"
)

// gather reads the cluster's ZTP ClusterGroupUpgrade from the cache and, when the pass
// starts the cluster's flow, its replicated policies through policies (the cache leaves
// them out: read from the API server, once a cluster).
func gather(ctx context.Context, cache, policies client.Reader, mc *clusterv1.ManagedCluster, now time.Time, settle time.Duration) (ztp.Facts, error) {
	f := ztp.Facts{Cluster: cluster(mc)}
	cgu := &ranv1alpha1.ClusterGroupUpgrade{}
	err := cache.Get(ctx, client.ObjectKey{Namespace: ztp.Namespace, Name: mc.Name}, cgu)
	switch {
	case err == nil:
		f.Upgrade = cgu
	case !apierrors.IsNotFound(err):
		return f, fmt.Errorf("reading the ZTP ClusterGroupUpgrade: %w", err)
	}
	if !ztp.NeedsPolicies(f.Cluster, f.Upgrade, now, settle) {
		return f, nil
	}
	var list policyv1.PolicyList
	if err := policies.List(ctx, &list, client.InNamespace(mc.Name), client.HasLabels{ztp.RootPolicyLabel}); err != nil {
		return f, fmt.Errorf("listing the policies of the cluster: %w", err)
	}
	for i := range list.Items {
		if p, ok := ztp.FromReplicated(&list.Items[i]); ok {
			f.Policies = append(f.Policies, p)
		}
	}
	return f, nil
}

// cluster is what pkg/ztp decides from.
func cluster(mc *clusterv1.ManagedCluster) ztp.Cluster {
	c := ztp.Cluster{Name: mc.Name, Labels: mc.Labels}
	if cond := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); cond != nil {
		c.Available, c.AvailableSince = cond.Status == metav1.ConditionTrue, cond.LastTransitionTime.Time
	}
	return c
}
