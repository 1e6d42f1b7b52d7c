package bench_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/operator"
)

// operatorController is the ClusterGroupUpgrade controller's name in controller-runtime's
// metrics.
const operatorController = "clustergroupupgrade"

// operatorRun is the operator's side of a benchmark: its request counter and the work
// queue depth sampled while it runs.
type operatorRun struct {
	requests *requestCounter
	mu       sync.Mutex
	maxDepth int
	stop     chan struct{}
	done     chan struct{}
}

// startOperator starts the operator on the hub through operator.New, as the production
// binary does, with its production defaults except: no leader election, no metrics or probe
// endpoints, no ZTP controller (it would make a CGU for every cluster without the ztp-done
// label). Every request it makes goes through a counting transport. It returns once the
// caches synced and the operator has made no request for two seconds, and counts what
// follows as made after the sync.
func startOperator(ctx context.Context, f *fleet) (*operatorRun, error) {
	run := &operatorRun{requests: newRequestCounter(), stop: make(chan struct{}), done: make(chan struct{})}
	cfg := rest.CopyConfig(f.hub.Config)
	cfg.WrapTransport = run.requests.wrap
	opts := operator.DefaultOptions()
	opts.LeaderElect, opts.MetricsAddr, opts.ProbeAddr, opts.ZTP, opts.SkipNameValidation = false, "0", "0", false, true
	mgr, err := operator.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	f.hub.Go(func(ctx context.Context) { _ = mgr.Start(ctx) })
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the operator's caches did not sync")
	}
	if err := waitUntil(ctx, 100*time.Millisecond, func() (bool, error) {
		return run.requests.quietSince() > 2*time.Second, nil
	}); err != nil {
		return nil, err
	}
	run.requests.markSynced()
	go run.sampleQueue()
	return run, nil
}

func (r *operatorRun) sampleQueue() {
	defer close(r.done)
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		d := queueDepths(controllerFamilies())[operatorController]
		r.mu.Lock()
		r.maxDepth = max(r.maxDepth, d)
		r.mu.Unlock()
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
	}
}

func (r *operatorRun) close() int {
	close(r.stop)
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.maxDepth
}

// newUpgrade is the benchmark's ClusterGroupUpgrade: every cluster of the fleet by label,
// the managed policies in order, maxConcurrency clusters at a time, enabled at once, with a
// timeout long enough never to matter.
func newUpgrade(f *fleet, maxConcurrency int) *ranv1alpha1.ClusterGroupUpgrade {
	return &ranv1alpha1.ClusterGroupUpgrade{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: rolloutNamespace},
		Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
			ClusterLabelSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{fleetLabel: "bench"}}},
			ManagedPolicies:       f.policyNames(),
			RemediationStrategy:   &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: maxConcurrency, Timeout: 24 * 60},
			Enable:                ptr.To(true),
		},
	}
}

// waitCompleted waits until the ClusterGroupUpgrade is Completed and returns when that was
// first seen (polled every 200 ms with the bench's own client).
func waitCompleted(ctx context.Context, f *fleet, cgu *ranv1alpha1.ClusterGroupUpgrade) (time.Time, error) {
	var at time.Time
	err := waitUntil(ctx, 200*time.Millisecond, func() (bool, error) {
		cur := &ranv1alpha1.ClusterGroupUpgrade{}
		if err := f.hub.Client.Get(ctx, client.ObjectKeyFromObject(cgu), cur); err != nil {
			return false, err
		}
		if cur.Status.State == ranv1alpha1.StateCompleted {
			at = time.Now()
			return true, nil
		}
		return false, nil
	})
	return at, err
}

// planOf reads the frozen plan from the batch records, in order.
func planOf(ctx context.Context, f *fleet) ([][]string, error) {
	var records ranv1alpha1.ClusterGroupUpgradeBatchList
	if err := f.hub.Client.List(ctx, &records, client.InNamespace(rolloutNamespace)); err != nil {
		return nil, err
	}
	slices.SortFunc(records.Items, func(a, b ranv1alpha1.ClusterGroupUpgradeBatch) int {
		if a.Spec.Index != b.Spec.Index {
			return a.Spec.Index - b.Spec.Index
		}
		return a.Spec.Part - b.Spec.Part
	})
	var out [][]string
	for _, r := range records.Items {
		if len(out) < r.Spec.Index {
			out = append(out, nil)
		}
		out[r.Spec.Index-1] = append(out[r.Spec.Index-1], r.Spec.Clusters...)
	}
	return out, nil
}

// waitCleanedUp waits until no Placement is left in the rollout namespace, so that the
// requests of the operator's cleanup are counted.
func waitCleanedUp(ctx context.Context, f *fleet) error {
	return waitUntil(ctx, 200*time.Millisecond, func() (bool, error) {
		var list clusterv1beta1.PlacementList
		if err := f.hub.Client.List(ctx, &list, client.InNamespace(rolloutNamespace)); err != nil {
			return false, err
		}
		return len(list.Items) == 0, nil
	})
}
