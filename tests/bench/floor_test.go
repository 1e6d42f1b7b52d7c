package bench_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/policies"
)

// floorOwner owns the floor driver's objects, as a ClusterGroupUpgrade owns the operator's.
var floorOwner = ownership.Owner{Namespace: rolloutNamespace, Name: "floor"}

// floorDriver is the harness floor: no operator logic, only the writes a rollout in its mode
// needs, each made the moment the observed compliance allows it. It writes, per managed
// policy, what the operator's policies.Writer writes (the pkg/policies builders): in Copy
// mode an enforce copy with a Placement and a PlacementBinding of the copy in the rollout
// namespace; in Override mode a Placement and a restricted PlacementBinding with the enforce
// override of the root policy itself, in the policy's namespace. Then, on each change of the
// root policies' status, it moves each cluster of the current batch to its first policy not
// Compliant (in order, as the operator does) and patches the Placements whose clusters
// changed; the moment every cluster of the batch is Compliant with every policy, it writes
// the next batch's Placements.
type floorDriver struct {
	client   client.Client
	obs      *observer
	mode     ranv1alpha1.EnforcementMode
	policies []*policyv1.Policy
	batches  [][]string
	// placements are the Placements as last written, by policy index.
	placements []*clusterv1beta1.Placement
	// next is each cluster's first policy not done, by cluster.
	next map[string]int
}

func (d *floorDriver) run(ctx context.Context) error {
	d.next = map[string]int{}
	if err := d.create(ctx); err != nil {
		return err
	}
	for k := range d.batches {
		for {
			done, err := d.step(ctx, k)
			if err != nil {
				return err
			}
			if done {
				break
			}
			select {
			case <-ctx.Done():
				n, _ := d.obs.done(d.batches[k])
				return fmt.Errorf("floor: batch %d of %d: %d of %d clusters done: %w", k+1, len(d.batches), n, len(d.batches[k]), ctx.Err())
			case <-d.obs.changed:
			}
		}
	}
	return nil
}

// runWindow drives the fleet as one window of size clusters: the moment a cluster is
// Compliant with every policy its slot is taken by the next cluster in order, in the same
// write of the Placements as the moves of the clusters in progress. d.batches holds the one
// batch of the clusters in progress, a slice of its own.
func (d *floorDriver) runWindow(ctx context.Context, fleet []string, size int) error {
	d.next = map[string]int{}
	started := min(size, len(fleet))
	d.batches = [][]string{slices.Clone(fleet[:started])}
	if err := d.create(ctx); err != nil {
		return err
	}
	for {
		compliant := d.obs.compliance()
		d.want(0, compliant)
		running := d.batches[0][:0]
		for _, c := range d.batches[0] {
			if d.next[c] < len(d.policies) {
				running = append(running, c)
			}
		}
		for len(running) < size && started < len(fleet) {
			running = append(running, fleet[started])
			started++
		}
		d.batches[0] = running
		if len(running) == 0 {
			return nil
		}
		if err := d.write(ctx, d.want(0, compliant)); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			n, _ := d.obs.done(fleet)
			return fmt.Errorf("floor: window: %d of %d clusters done: %w", n, len(fleet), ctx.Err())
		case <-d.obs.changed:
		}
	}
}

// create writes, per policy, the enforce copy (Copy mode), the Placement (the first
// batch's clusters) and the binding.
func (d *floorDriver) create(ctx context.Context) error {
	want := d.want(0, d.obs.compliance())
	override := d.mode == ranv1alpha1.EnforcementOverride
	for i, parent := range d.policies {
		namespace, subject := parent.Namespace, parent.Name
		if !override {
			cp, err := policies.EnforceCopy(parent, floorOwner)
			if err != nil {
				return err
			}
			if err := d.client.Create(ctx, cp); err != nil {
				return fmt.Errorf("floor: enforce copy: %w", err)
			}
			namespace, subject = floorOwner.Namespace, cp.Name
		}
		name := names.Placement(floorOwner.Namespace, floorOwner.Name, parent.Name)
		p := policies.ExactPlacement(namespace, name, want[i], floorOwner.Labels())
		if err := d.client.Create(ctx, p); err != nil {
			return fmt.Errorf("floor: placement: %w", err)
		}
		d.placements = append(d.placements, p)
		b := policies.Binding(namespace, name, name, subject, override, floorOwner.Labels())
		if err := d.client.Create(ctx, b); err != nil {
			return fmt.Errorf("floor: binding: %w", err)
		}
	}
	return nil
}

// step brings the Placements up to date for batch k and reports whether the batch is done.
// The last batch's Placements stay as they are once it is done.
func (d *floorDriver) step(ctx context.Context, k int) (bool, error) {
	compliant := d.obs.compliance()
	want := d.want(k, compliant)
	if d.batchDone(k) {
		if k+1 == len(d.batches) {
			return true, nil
		}
		want = d.want(k+1, compliant)
		return true, d.write(ctx, want)
	}
	return false, d.write(ctx, want)
}

// want advances each cluster of batch k past the policies it is Compliant with and returns,
// per policy, the clusters working on it.
func (d *floorDriver) want(k int, compliant []map[string]bool) [][]string {
	out := make([][]string, len(d.policies))
	for _, c := range d.batches[k] {
		i := d.next[c]
		for i < len(d.policies) && compliant[i][c] {
			i++
		}
		d.next[c] = i
		if i < len(d.policies) {
			out[i] = append(out[i], c)
		}
	}
	return out
}

func (d *floorDriver) batchDone(k int) bool {
	for _, c := range d.batches[k] {
		if d.next[c] < len(d.policies) {
			return false
		}
	}
	return true
}

// write patches each Placement whose clusters changed.
func (d *floorDriver) write(ctx context.Context, want [][]string) error {
	for i, clusters := range want {
		old := d.placements[i]
		desired := policies.ExactPlacement(old.Namespace, old.Name, clusters, old.Labels)
		if equalSpec(old.Spec, desired.Spec) {
			continue
		}
		updated := old.DeepCopy()
		updated.Spec = desired.Spec
		if err := d.client.Patch(ctx, updated, client.MergeFrom(old)); err != nil {
			return fmt.Errorf("floor: placement %s: %w", old.Name, err)
		}
		d.placements[i] = updated
	}
	return nil
}

func equalSpec(a, b clusterv1beta1.PlacementSpec) bool {
	values := func(s clusterv1beta1.PlacementSpec) []string {
		if len(s.Predicates) == 0 {
			return nil
		}
		return s.Predicates[0].RequiredClusterSelector.LabelSelector.MatchExpressions[0].Values
	}
	return slices.Equal(values(a), values(b)) && (a.NumberOfClusters == nil) == (b.NumberOfClusters == nil)
}

// waitUntil polls cond every interval until it holds or ctx ends.
func waitUntil(ctx context.Context, interval time.Duration, cond func() (bool, error)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
