package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

// clusterView is a cluster as the display shows it.
type clusterView struct {
	name   string
	state  ranv1alpha1.ClusterState
	policy string
}

// batchView is a batch as the display shows it, from its records once the rollout started.
type batchView struct {
	index  int
	canary bool
	// shape says how a Window or Progressive batch runs its clusters, empty for a batch.
	shape                       string
	clusters                    []clusterView
	started, finished, deadline time.Time
}

func (b batchView) count(states ...ranv1alpha1.ClusterState) int {
	n := 0
	for _, c := range b.clusters {
		for _, s := range states {
			if c.state == s {
				n++
			}
		}
	}
	return n
}

// names are the batch's clusters in plan order.
func (b batchView) names() []string {
	out := make([]string, len(b.clusters))
	for i, c := range b.clusters {
		out[i] = c.name
	}
	return out
}

func (b batchView) done() int {
	return b.count(ranv1alpha1.ClusterCompleted, ranv1alpha1.ClusterTimedOut, ranv1alpha1.ClusterFailed)
}

func (b batchView) label(batches int) string {
	if b.canary {
		return fmt.Sprintf("Batch %d/%d canary", b.index, batches)
	}
	return fmt.Sprintf("Batch %d/%d", b.index, batches)
}

// snapshot is what the display draws at one moment.
type snapshot struct {
	cgu     *ranv1alpha1.ClusterGroupUpgrade
	batches []batchView
}

func (s snapshot) ended() bool {
	st := s.cgu.Status.State
	return s.cgu.Status.StartedAt != nil && (st == ranv1alpha1.StateCompleted || st == ranv1alpha1.StateTimedOut)
}

func (s snapshot) clusters() int {
	n := 0
	for _, b := range s.batches {
		n += len(b.clusters)
	}
	return n
}

func (s snapshot) count(states ...ranv1alpha1.ClusterState) int {
	n := 0
	for _, b := range s.batches {
		n += b.count(states...)
	}
	return n
}

// snapshot reads the CGU and its batch records from the display's cache.
func (d *demo) snapshot(ctx context.Context) (snapshot, error) {
	cgu := &ranv1alpha1.ClusterGroupUpgrade{}
	if err := d.cache.Get(ctx, d.cgu, cgu); err != nil {
		return snapshot{}, err
	}
	var records ranv1alpha1.ClusterGroupUpgradeBatchList
	if err := d.cache.List(ctx, &records, client.InNamespace(d.cgu.Namespace),
		client.MatchingLabels{ranv1alpha1.LabelUpgradeName: names.LabelValue(d.cgu.Name)}); err != nil {
		return snapshot{}, err
	}
	p, err := plan.FromRecords(records.Items, d.cgu.Name)
	if err != nil {
		return snapshot{}, err
	}
	s := snapshot{cgu: cgu, batches: d.preview} // until the operator records the frozen plan
	if len(p.Batches) > 0 {
		s.batches = nil
		for i, b := range p.Batches {
			s.batches = append(s.batches, batchOf(i+1, b, records.Items, d.cgu.Name))
		}
	}
	return s, nil
}

func batchOf(index int, b plan.Batch, records []ranv1alpha1.ClusterGroupUpgradeBatch, cgu string) batchView {
	v := batchView{index: index, canary: b.Canary}
	switch {
	case b.Window > 0:
		v.shape = fmt.Sprintf("a window of %d at once", b.Window)
	case len(b.Stages) > 0:
		sizes := make([]string, len(b.Stages))
		for i, n := range b.Stages {
			sizes[i] = strconv.Itoa(n)
		}
		v.shape = "stages of " + strings.Join(sizes, ", ") + " clusters, growing after each healthy one"
	}
	progress := map[string]ranv1alpha1.ClusterProgress{}
	for _, r := range records {
		if r.Spec.Upgrade != cgu || r.Spec.Index != index {
			continue
		}
		for _, c := range r.Status.Clusters {
			progress[c.Name] = c
		}
		v.started, v.finished, v.deadline = timeOf(r.Status.StartedAt), timeOf(r.Status.FinishedAt), timeOf(r.Status.TimeoutAt)
	}
	for _, name := range b.Clusters {
		c := clusterView{name: name, state: ranv1alpha1.ClusterPending}
		if p, ok := progress[name]; ok {
			c.state, c.policy = p.State, p.CurrentPolicy
		}
		v.clusters = append(v.clusters, c)
	}
	return v
}

func timeOf(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}
