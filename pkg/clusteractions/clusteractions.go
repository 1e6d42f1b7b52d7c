// Package clusteractions carries out a ClusterGroupUpgrade's beforeEnable and
// afterCompletion actions on ManagedClusters: labels and annotations added or removed.
package clusteractions

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/managedclusters"
)

// ManagedClusterGVK is the kind of ManagedClusters, for reading them as metadata.
var ManagedClusterGVK = managedclusters.GVK

// Empty reports whether a does nothing.
func Empty(a ranv1alpha1.ClusterActions) bool {
	return len(a.AddClusterLabels) == 0 && len(a.DeleteClusterLabels) == 0 && len(a.RemoveClusterLabels) == 0 &&
		len(a.AddClusterAnnotations) == 0 && len(a.RemoveClusterAnnotations) == 0
}

// Invalid says what in a cannot be written to a ManagedCluster (a key that is not a label
// or annotation key, a value that is not a label value), empty when everything can. The CRD
// refuses these at admission; a ClusterGroupUpgrade stored before it did may still hold some.
func Invalid(a ranv1alpha1.ClusterActions) string {
	var problems []string
	key := func(field, k string) {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			problems = append(problems, fmt.Sprintf("%s key %q: %s", field, k, errs[0]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(a.AddClusterLabels)) {
		key("addClusterLabels", k)
		if errs := validation.IsValidLabelValue(string(a.AddClusterLabels[k])); len(errs) > 0 {
			problems = append(problems, fmt.Sprintf("addClusterLabels value %q: %s", a.AddClusterLabels[k], errs[0]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(a.DeleteClusterLabels)) {
		key("deleteClusterLabels", k)
	}
	for _, k := range a.RemoveClusterLabels {
		key("removeClusterLabels", k)
	}
	for _, k := range slices.Sorted(maps.Keys(a.AddClusterAnnotations)) {
		key("addClusterAnnotations", strings.ToLower(k))
	}
	for _, k := range a.RemoveClusterAnnotations {
		key("removeClusterAnnotations", strings.ToLower(k))
	}
	return strings.Join(problems, "; ")
}

// Keys returns every label and annotation key a writes or removes, each once, sorted.
func Keys(a ranv1alpha1.ClusterActions) []string {
	keys := slices.Concat(slices.Collect(maps.Keys(a.AddClusterLabels)), slices.Collect(maps.Keys(a.DeleteClusterLabels)),
		a.RemoveClusterLabels, slices.Collect(maps.Keys(a.AddClusterAnnotations)), a.RemoveClusterAnnotations)
	slices.Sort(keys)
	return slices.Compact(keys)
}

// Apply returns a cluster's labels and annotations after the actions, and whether they
// changed. Removals come before additions, so that an action can replace a label. The
// deprecated deleteClusterLabels removes each named key whatever its value, as
// removeClusterLabels does. The inputs are not modified.
func Apply(labels, annotations map[string]string, a ranv1alpha1.ClusterActions) (map[string]string, map[string]string, bool) {
	newLabels, newAnnotations := maps.Clone(labels), maps.Clone(annotations)
	if newLabels == nil {
		newLabels = map[string]string{}
	}
	if newAnnotations == nil {
		newAnnotations = map[string]string{}
	}
	for k := range a.DeleteClusterLabels {
		delete(newLabels, k)
	}
	for _, k := range a.RemoveClusterLabels {
		delete(newLabels, k)
	}
	for k, v := range a.AddClusterLabels {
		newLabels[k] = string(v)
	}
	for _, k := range a.RemoveClusterAnnotations {
		delete(newAnnotations, k)
	}
	maps.Copy(newAnnotations, a.AddClusterAnnotations)
	changed := !maps.Equal(labels, newLabels) || !maps.Equal(annotations, newAnnotations)
	return newLabels, newAnnotations, changed
}

// Run applies the actions to the named ManagedCluster, read through c (its metadata is
// enough), writing the keys they change through the one ManagedCluster writer, and only
// when they change some. A cluster that no longer exists is skipped.
func Run(ctx context.Context, c client.Client, cluster string, a ranv1alpha1.ClusterActions) error {
	if Empty(a) {
		return nil
	}
	mc := &metav1.PartialObjectMetadata{}
	mc.SetGroupVersionKind(ManagedClusterGVK)
	if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
		return client.IgnoreNotFound(err)
	}
	labels, annotations, changed := Apply(mc.Labels, mc.Annotations, a)
	if !changed {
		return nil
	}
	changes := managedclusters.Changes{Labels: managedclusters.Diff(mc.Labels, labels), Annotations: managedclusters.Diff(mc.Annotations, annotations)}
	if _, err := (managedclusters.Writer{Client: c}).Patch(ctx, cluster, changes); err != nil {
		return fmt.Errorf("cluster actions on %s: %w", cluster, err)
	}
	return nil
}
