// Package managedclusters is the one writer of ManagedCluster metadata: the labels and
// annotations that a rollout's cluster actions, an image-based group upgrade's progress
// labels and ZTP's done label set. Each write is a JSON merge patch of the keys that change,
// so that labels other controllers own are never written back.
package managedclusters

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// GVK is the kind of ManagedClusters, for reading them as metadata.
var GVK = schema.GroupVersionKind{Group: clusterv1.GroupName, Version: "v1", Kind: "ManagedCluster"}

// Changes are the metadata keys to set, by value, and to remove (a nil value).
type Changes struct {
	Labels      map[string]*string
	Annotations map[string]*string
}

// Empty reports whether c changes nothing.
func (c Changes) Empty() bool { return len(c.Labels) == 0 && len(c.Annotations) == 0 }

// Diff are the changes that turn the metadata before into after.
func Diff(before, after map[string]string) map[string]*string {
	out := map[string]*string{}
	for k := range before {
		if _, ok := after[k]; !ok {
			out[k] = nil
		}
	}
	for k, v := range after {
		if old, ok := before[k]; !ok || old != v {
			out[k] = &v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Writer writes ManagedCluster metadata.
type Writer struct {
	Client client.Writer
}

// Patch writes the changes to the named ManagedCluster. A cluster that no longer exists is
// skipped: found is false.
func (w Writer) Patch(ctx context.Context, cluster string, c Changes) (found bool, err error) {
	if c.Empty() {
		return true, nil
	}
	meta := map[string]any{}
	if len(c.Labels) > 0 {
		meta["labels"] = maps.Clone(c.Labels)
	}
	if len(c.Annotations) > 0 {
		meta["annotations"] = maps.Clone(c.Annotations)
	}
	patch, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return true, fmt.Errorf("writing the metadata of ManagedCluster %s: %w", cluster, err)
	}
	mc := &metav1.PartialObjectMetadata{}
	mc.SetGroupVersionKind(GVK)
	mc.SetName(cluster)
	if err := w.Client.Patch(ctx, mc, client.RawPatch(types.MergePatchType, patch)); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return true, fmt.Errorf("writing the metadata of ManagedCluster %s: %w", cluster, err)
	}
	return true, nil
}

// Trim is the cache transform of typed ManagedClusters: it keeps the
// metadata the controllers read (name, UID, resourceVersion, labels, owner references,
// deletion), the status conditions and the version and topology claims, and drops the rest (spec,
// capacity, other claims, versions, managed fields), so that a fleet of thousands of clusters stays small in
// memory. Other objects, the metadata-only ManagedClusters among them, pass unchanged.
// Code that needs more of a ManagedCluster must read it with the API reader.
func Trim(in any) (any, error) {
	mc, ok := in.(*clusterv1.ManagedCluster)
	if !ok {
		return in, nil
	}
	return &clusterv1.ManagedCluster{
		TypeMeta: mc.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: mc.Name, UID: mc.UID, ResourceVersion: mc.ResourceVersion, Generation: mc.Generation,
			CreationTimestamp: mc.CreationTimestamp, DeletionTimestamp: mc.DeletionTimestamp,
			Labels: mc.Labels, OwnerReferences: mc.OwnerReferences,
		},
		Status: clusterv1.ManagedClusterStatus{Conditions: mc.Status.Conditions, ClusterClaims: keptClaims(mc.Status.ClusterClaims)},
	}, nil
}

// ClaimVersion is the cluster claim of the OpenShift version a cluster runs, as its
// klusterlet reports it: a release-named rollout plans each cluster's path from it.
const ClaimVersion = "version.openshift.io"

// ClaimControlPlaneTopology is the claim the klusterlet reports of an OpenShift cluster's
// Infrastructure status.controlPlaneTopology: SingleReplica (single-node OpenShift),
// HighlyAvailable (three control-plane nodes, with or without workers) or External (hosted
// control planes).
const ClaimControlPlaneTopology = "controlplanetopology.openshift.io"

// Claim is the value of a cluster's claim, "" when it reports none.
func Claim(mc *clusterv1.ManagedCluster, name string) string {
	for _, c := range mc.Status.ClusterClaims {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// keptClaims keeps, of a cluster's claims, the version and the control-plane topology.
func keptClaims(claims []clusterv1.ManagedClusterClaim) []clusterv1.ManagedClusterClaim {
	var out []clusterv1.ManagedClusterClaim
	for _, c := range claims {
		if c.Name == ClaimVersion || c.Name == ClaimControlPlaneTopology {
			out = append(out, c)
		}
	}
	return out
}
