package plan

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/names"
)

// Records returns the ClusterGroupUpgradeBatch objects that freeze a plan for the
// ClusterGroupUpgrade namespace/name: one a batch, or one a part of at most
// ClusterDetailLimit clusters for a larger batch, in plan order. The caller sets the owner
// reference.
func Records(p Plan, namespace, name string) []ranv1alpha1.ClusterGroupUpgradeBatch {
	var out []ranv1alpha1.ClusterGroupUpgradeBatch
	for i, b := range p.Batches {
		parts := (len(b.Clusters) + ranv1alpha1.ClusterDetailLimit - 1) / ranv1alpha1.ClusterDetailLimit
		for part, start := 0, 0; start < len(b.Clusters); part, start = part+1, start+ranv1alpha1.ClusterDetailLimit {
			end := min(start+ranv1alpha1.ClusterDetailLimit, len(b.Clusters))
			out = append(out, ranv1alpha1.ClusterGroupUpgradeBatch{
				ObjectMeta: metav1.ObjectMeta{
					Name:      names.Safe(253, name, fmt.Sprintf("b%d-p%d", i+1, part)),
					Namespace: namespace,
					Labels:    map[string]string{ranv1alpha1.LabelUpgradeName: names.LabelValue(name)},
				},
				Spec: ranv1alpha1.ClusterGroupUpgradeBatchSpec{
					Upgrade: name, Index: i + 1, Part: part, Parts: parts, Batches: len(p.Batches), Canary: b.Canary, Window: b.Window,
					Stages: b.Stages, OnUnhealthy: onUnhealthy(b),
					Clusters: append([]string(nil), b.Clusters[start:end]...),
				},
			})
		}
	}
	return out
}

// FromRecords rebuilds the frozen plan of the ClusterGroupUpgrade named name from its
// records, in any order; records of other ClusterGroupUpgrades sharing the shortened label
// are ignored. A missing part or batch is an error: the plan cannot be trusted then.
func FromRecords(records []ranv1alpha1.ClusterGroupUpgradeBatch, name string) (Plan, error) {
	parts := map[int]map[int]ranv1alpha1.ClusterGroupUpgradeBatchSpec{}
	wantParts := map[int]int{}
	batches := 0
	for _, r := range records {
		if r.Spec.Upgrade != name {
			continue
		}
		if parts[r.Spec.Index] == nil {
			parts[r.Spec.Index] = map[int]ranv1alpha1.ClusterGroupUpgradeBatchSpec{}
		}
		parts[r.Spec.Index][r.Spec.Part] = r.Spec
		wantParts[r.Spec.Index] = max(wantParts[r.Spec.Index], r.Spec.Parts)
		batches = max(batches, r.Spec.Index)
	}
	var p Plan
	for i := 1; i <= batches; i++ {
		if len(parts[i]) == 0 {
			return Plan{}, fmt.Errorf("the plan of %s has no record of batch %d", name, i)
		}
		b, err := assemble(parts[i], wantParts[i])
		if err != nil {
			return Plan{}, fmt.Errorf("the plan of %s has %w of batch %d", name, err, i)
		}
		p.Batches = append(p.Batches, b)
	}
	return p, nil
}

// BatchOf is the batch the records of its parts make, when they are all there.
func BatchOf(records []ranv1alpha1.ClusterGroupUpgradeBatch) (Batch, bool) {
	parts := map[int]ranv1alpha1.ClusterGroupUpgradeBatchSpec{}
	want := 1
	for _, r := range records {
		parts[r.Spec.Part], want = r.Spec, max(want, r.Spec.Parts)
	}
	b, err := assemble(parts, want)
	return b, err == nil && len(records) > 0
}

// assemble joins the records of one batch's parts, by part number, into the batch; it fails
// saying what is missing when they are not parts 0 to want-1.
func assemble(parts map[int]ranv1alpha1.ClusterGroupUpgradeBatchSpec, want int) (Batch, error) {
	b := Batch{}
	if len(parts) != want {
		return Batch{}, fmt.Errorf("%d of the %d parts", len(parts), want)
	}
	for part := range want {
		spec, ok := parts[part]
		if !ok {
			return Batch{}, fmt.Errorf("no record of part %d", part)
		}
		b.Canary, b.Window, b.Stages = spec.Canary, spec.Window, spec.Stages
		b.StopUnhealthy = spec.OnUnhealthy == ranv1alpha1.UnhealthyStop
		b.Clusters = append(b.Clusters, spec.Clusters...)
	}
	return b, nil
}

// onUnhealthy is what the record of a progressive batch says an unhealthy stage does; empty
// for other batches.
func onUnhealthy(b Batch) ranv1alpha1.UnhealthyAction {
	switch {
	case len(b.Stages) == 0:
		return ""
	case b.StopUnhealthy:
		return ranv1alpha1.UnhealthyStop
	}
	return ranv1alpha1.UnhealthyReset
}

// Whole reports whether records hold a whole plan of the ClusterGroupUpgrade named name, as
// their spec.batches counts it; false for records that do not count it (written by an
// earlier version).
func Whole(records []ranv1alpha1.ClusterGroupUpgradeBatch, name string) bool {
	if len(records) == 0 || records[0].Spec.Batches == 0 {
		return false
	}
	p, err := FromRecords(records, name)
	return err == nil && len(p.Batches) == records[0].Spec.Batches
}
