package bench_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

// observer watches, with its own cache (its requests are not the operator's), the managed
// root policies and the rollout's Placements (those labelled for an owner in the rollout
// namespace: in that namespace in Copy mode, in the policies' in Override mode), and
// timestamps what a rollout driver reacts to and what it writes: when each cluster is
// Compliant with every managed policy on the root policies' status (done), and when a
// Placement first names it (enforced).
type observer struct {
	mu        sync.Mutex
	index     map[string]int
	compliant []map[string]bool
	doneAt    map[string]time.Time
	enforced  map[string]time.Time
	// updates counts the versions of the managed root policies seen: each is a write of the
	// compliance of every cluster the policy is placed on, the hub's costliest write.
	updates int
	// changed receives a value (never blocking) after each change of compliance.
	changed chan struct{}
}

func startObserver(ctx context.Context, hub *world.Hub, policyNames []string) (*observer, error) {
	o := &observer{
		index: map[string]int{}, compliant: make([]map[string]bool, len(policyNames)),
		doneAt: map[string]time.Time{}, enforced: map[string]time.Time{}, changed: make(chan struct{}, 1),
	}
	for i, name := range policyNames {
		o.index[name] = i
		o.compliant[i] = map[string]bool{}
	}
	c, err := cache.New(hub.Config, cache.Options{Scheme: hub.Scheme, ByObject: map[client.Object]cache.ByObject{
		&policyv1.Policy{}:          {Namespaces: map[string]cache.Config{policyNamespace: {}}},
		&clusterv1beta1.Placement{}: {Namespaces: map[string]cache.Config{rolloutNamespace: {}, policyNamespace: {}}, Label: rolloutObjects},
	}})
	if err != nil {
		return nil, err
	}
	policies, err := c.GetInformer(ctx, &policyv1.Policy{})
	if err != nil {
		return nil, err
	}
	if _, err := policies.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: o.policy, UpdateFunc: func(_, obj any) { o.policy(obj) },
	}); err != nil {
		return nil, err
	}
	placements, err := c.GetInformer(ctx, &clusterv1beta1.Placement{})
	if err != nil {
		return nil, err
	}
	if _, err := placements.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: o.placement, UpdateFunc: func(_, obj any) { o.placement(obj) },
	}); err != nil {
		return nil, err
	}
	hub.Go(func(ctx context.Context) { _ = c.Start(ctx) })
	if !c.WaitForCacheSync(ctx) {
		return nil, errors.New("observer cache did not sync")
	}
	return o, nil
}

// rolloutObjects selects the objects made for an owner in the rollout namespace, the floor
// driver's and the operator's (ownership.Owner.Labels).
var rolloutObjects = labels.SelectorFromSet(labels.Set{ownership.LabelUpgradeNamespace: rolloutNamespace})

func (o *observer) policy(obj any) {
	now := time.Now()
	p, ok := obj.(*policyv1.Policy)
	if !ok {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	i, ok := o.index[p.Name]
	if !ok {
		return
	}
	o.updates++
	changed := false
	for _, st := range p.Status.Status {
		c := st.ComplianceState == policyv1.Compliant
		if o.compliant[i][st.ClusterName] == c {
			continue
		}
		changed = true
		o.compliant[i][st.ClusterName] = c
		if c && o.doneAt[st.ClusterName].IsZero() && o.allCompliant(st.ClusterName) {
			o.doneAt[st.ClusterName] = now
		}
	}
	if changed {
		select {
		case o.changed <- struct{}{}:
		default:
		}
	}
}

func (o *observer) allCompliant(cluster string) bool {
	for _, m := range o.compliant {
		if !m[cluster] {
			return false
		}
	}
	return true
}

func (o *observer) placement(obj any) {
	now := time.Now()
	p, ok := obj.(*clusterv1beta1.Placement)
	if !ok {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, pred := range p.Spec.Predicates {
		for _, req := range pred.RequiredClusterSelector.LabelSelector.MatchExpressions {
			for _, c := range req.Values {
				if _, seen := o.enforced[c]; !seen {
					o.enforced[c] = now
				}
			}
		}
	}
}

// rootUpdates returns how many versions of the managed root policies the observer has seen.
func (o *observer) rootUpdates() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.updates
}

// compliance returns a copy of each policy's compliant clusters, by policy index.
func (o *observer) compliance() []map[string]bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]map[string]bool, len(o.compliant))
	for i, m := range o.compliant {
		out[i] = make(map[string]bool, len(m))
		for k, v := range m {
			out[i][k] = v
		}
	}
	return out
}

// done returns how many of clusters are done and when the last of them was.
func (o *observer) done(clusters []string) (int, time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n, last := 0, time.Time{}
	for _, c := range clusters {
		if t, ok := o.doneAt[c]; ok {
			n++
			if t.After(last) {
				last = t
			}
		}
	}
	return n, last
}

// switches returns, for each batch after the first, the time from the last cluster of the
// batch before it done to the first Placement naming one of its clusters.
func (o *observer) switches(batches [][]string) ([]time.Duration, error) {
	var out []time.Duration
	for k := 1; k < len(batches); k++ {
		n, last := o.done(batches[k-1])
		if n < len(batches[k-1]) {
			return out, fmt.Errorf("batch %d: %d of %d clusters done", k, n, len(batches[k-1]))
		}
		first := o.firstEnforced(batches[k])
		if first.IsZero() {
			return out, fmt.Errorf("batch %d was never enforced", k+1)
		}
		out = append(out, first.Sub(last))
	}
	return out, nil
}

func (o *observer) firstEnforced(clusters []string) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	var first time.Time
	for _, c := range clusters {
		if t, ok := o.enforced[c]; ok && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	return first
}

// spans returns the time from start to the first Placement naming a cluster of the first
// batch, and for each batch the time from its first cluster enforced to its last done: where
// a rollout spends its time besides the switches.
func (o *observer) spans(start time.Time, batches [][]string) (time.Duration, []time.Duration) {
	if len(batches) == 0 {
		return 0, nil
	}
	var first time.Duration
	if t := o.firstEnforced(batches[0]); !t.IsZero() {
		first = t.Sub(start)
	}
	out := make([]time.Duration, 0, len(batches))
	for _, b := range batches {
		enforced := o.firstEnforced(b)
		n, last := o.done(b)
		if enforced.IsZero() || n < len(b) {
			break
		}
		out = append(out, last.Sub(enforced))
	}
	return first, out
}
