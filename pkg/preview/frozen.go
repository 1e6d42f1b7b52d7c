package preview

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/estimate"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

// Frozen is the plan of a started rollout as its ClusterGroupUpgradeBatch records hold it.
type Frozen struct {
	// Started is true once the rollout started; the other fields are empty before.
	Started bool
	// FrozenAt is when the plan was frozen (status.plan.frozenAt, else status.startedAt,
	// else the earliest start a record shows); zero when unknown.
	FrozenAt time.Time
	// Plan is the frozen plan.
	Plan plan.Plan
	// Clusters holds each planned cluster's progress; a cluster whose batch has not
	// started is Pending.
	Clusters map[string]ranv1alpha1.ClusterProgress
	// Ended are the durations of the batches that ended.
	Ended []time.Duration
	// CompletedInWindow are the durations of the completed clusters of a Window rollout's
	// window, each from its own start.
	CompletedInWindow []time.Duration
}

// State returns a planned cluster's state, Pending when its batch has not started.
func (f Frozen) State(cluster string) ranv1alpha1.ClusterState {
	if c, ok := f.Clusters[cluster]; ok && c.State != "" {
		return c.State
	}
	return ranv1alpha1.ClusterPending
}

// NotCompleted returns the planned clusters that are not Completed, in plan order.
func (f Frozen) NotCompleted() []string {
	var out []string
	for _, b := range f.Plan.Batches {
		for _, c := range b.Clusters {
			if f.State(c) != ranv1alpha1.ClusterCompleted {
				out = append(out, c)
			}
		}
	}
	return out
}

// Records lists the ClusterGroupUpgradeBatch records of the ClusterGroupUpgrade
// namespace/name, leaving out those of another ClusterGroupUpgrade sharing its shortened
// label value.
func Records(ctx context.Context, r client.Reader, namespace, name string) ([]ranv1alpha1.ClusterGroupUpgradeBatch, error) {
	var list ranv1alpha1.ClusterGroupUpgradeBatchList
	if err := r.List(ctx, &list, client.InNamespace(namespace),
		client.MatchingLabels{ranv1alpha1.LabelUpgradeName: names.LabelValue(name)}); err != nil {
		return nil, fmt.Errorf("listing the batch records of %s/%s: %w", namespace, name, err)
	}
	out := list.Items[:0]
	for _, b := range list.Items {
		if b.Spec.Upgrade == name {
			out = append(out, b)
		}
	}
	return out, nil
}

// ReadFrozen reads the frozen plan of a ClusterGroupUpgrade and its clusters' progress
// from its batch records. Before the rollout started it returns a Frozen with Started
// false. A record missing from the plan is an error.
func ReadFrozen(ctx context.Context, r client.Reader, cgu *ranv1alpha1.ClusterGroupUpgrade) (Frozen, error) {
	records, err := Records(ctx, r, cgu.Namespace, cgu.Name)
	if err != nil {
		return Frozen{}, err
	}
	return FromRecords(cgu, records)
}

// FromRecords rebuilds the frozen plan of cgu from its batch records (plan.FromRecords)
// with the progress their status holds.
func FromRecords(cgu *ranv1alpha1.ClusterGroupUpgrade, records []ranv1alpha1.ClusterGroupUpgradeBatch) (Frozen, error) {
	f := Frozen{FrozenAt: frozenAt(cgu), Started: cgu.Status.StartedAt != nil}
	var firstBatch time.Time
	for _, b := range records {
		if b.Status.StartedAt != nil && b.Spec.Upgrade == cgu.Name {
			f.Started = true
			firstBatch = earliest(firstBatch, b.Status.StartedAt.Time)
		}
	}
	if f.FrozenAt.IsZero() {
		f.FrozenAt = firstBatch
	}
	if !f.Started {
		return Frozen{}, nil
	}
	p, err := plan.FromRecords(records, cgu.Name)
	if err != nil {
		return Frozen{}, fmt.Errorf("reading the frozen plan of %s/%s: %w", cgu.Namespace, cgu.Name, err)
	}
	f.Plan = p
	f.Ended = estimate.EndedDurations(records)
	f.CompletedInWindow = estimate.CompletedInWindow(records)
	f.Clusters = map[string]ranv1alpha1.ClusterProgress{}
	for _, b := range records {
		if b.Spec.Upgrade != cgu.Name {
			continue
		}
		for _, c := range b.Status.Clusters {
			f.Clusters[c.Name] = c
		}
	}
	return f, nil
}

func frozenAt(cgu *ranv1alpha1.ClusterGroupUpgrade) time.Time {
	switch st := cgu.Status; {
	case st.Plan != nil && st.Plan.FrozenAt != nil:
		return st.Plan.FrozenAt.Time
	case st.StartedAt != nil:
		return st.StartedAt.Time
	}
	return time.Time{}
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

// AcceptedPolicies reads the managed policies a started rollout accepted (refs:
// status.managedPoliciesForUpgrade, or what the batch records froze), in order; an entry is
// nil when its policy was deleted. Read from a cache, the policies share their status,
// labels, annotations and spec with the cached ones (no deep copy: each holds every
// cluster's compliance, and a rollout reads them at every pass): read them, never write
// them.
func AcceptedPolicies(ctx context.Context, r client.Reader, refs []ranv1alpha1.PolicyReference) ([]*policyv1.Policy, error) {
	var out []*policyv1.Policy
	for _, ref := range refs {
		p := &policyv1.Policy{}
		err := r.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, p, client.UnsafeDisableDeepCopy)
		switch {
		case apierrors.IsNotFound(err):
			p = nil
		case err != nil:
			return nil, fmt.Errorf("reading policy %s/%s: %w", ref.Namespace, ref.Name, err)
		}
		out = append(out, p)
	}
	return out, nil
}
