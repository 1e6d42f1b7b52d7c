package realspoke

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/tests/sim"
)

// cvoKey is the one item of the operator's work queue: there is one ClusterVersion.
const cvoKey = ClusterVersionName

// cvoRunner plays the cluster-version operator on a spoke: the simulator's CVO decides, the
// runner reads the ClusterVersion from the spoke's apiserver and writes the status back.
type cvoRunner struct {
	cvo    *sim.CVO
	client client.Client
	clock  clock.WithTicker
	queue  workqueue.TypedRateLimitingInterface[string]
	log    logr.Logger
}

// startCVO watches the spoke's ClusterVersion with a cache of its own and runs the simulated
// cluster-version operator on every change and whenever the operator asks to run again, until
// Stop. It returns once the watch has synced.
func (s *Spoke) startCVO(ctx context.Context) error {
	c, err := cache.New(clientConfig(s.cfg), cache.Options{
		Scheme: s.scheme,
		ByObject: map[client.Object]cache.ByObject{
			&configv1.ClusterVersion{}: {Field: fields.OneTermEqualSelector("metadata.name", ClusterVersionName)},
		},
	})
	if err != nil {
		return fmt.Errorf("creating the cluster-version operator's cache: %w", err)
	}
	r := &cvoRunner{
		cvo:    &sim.CVO{Cluster: s.opts.ClusterName, Behaviour: s.opts.Behaviour, Updates: s.opts.Updates},
		client: s.client,
		clock:  s.opts.Clock,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "cluster-version-operator", Clock: s.opts.Clock}),
		log: s.opts.Logger.WithName("cluster-version-operator"),
	}
	informer, err := c.GetInformer(ctx, &configv1.ClusterVersion{})
	if err != nil {
		r.queue.ShutDown()
		return fmt.Errorf("watching the ClusterVersion: %w", err)
	}
	enqueue := func(any) { r.queue.Add(cvoKey) }
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		r.queue.ShutDown()
		return fmt.Errorf("watching the ClusterVersion: %w", err)
	}
	s.goRun("cluster-version operator cache", c.Start)
	s.goRun("cluster-version operator", r.run)
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("waiting for the cluster-version operator's cache: %w", ctx.Err())
	}
	return nil
}

// run works the queue until ctx ends; it returns only once the queue has shut down.
func (r *cvoRunner) run(ctx context.Context) error {
	stop := context.AfterFunc(ctx, r.queue.ShutDown)
	defer stop()
	for r.next(ctx) {
	}
	// The queue shuts down once; a second call returns when the first one is done.
	r.queue.ShutDown()
	return nil
}

// next steps the operator for one item of the queue and schedules what follows: again after
// the delay the operator asked for, at once after a conflict (the write that caused it is
// being watched anyway), with backoff after other errors.
func (r *cvoRunner) next(ctx context.Context) bool {
	key, shutdown := r.queue.Get()
	if shutdown {
		return false
	}
	defer r.queue.Done(key)
	again, err := r.step(ctx)
	switch {
	case ctx.Err() != nil:
		r.queue.Forget(key)
	case apierrors.IsConflict(err):
		r.queue.Forget(key)
		r.queue.Add(key)
	case err != nil:
		r.log.Error(err, "Cluster-version operator failed a step, retrying")
		r.queue.AddRateLimited(key)
	case again > 0:
		r.queue.Forget(key)
		r.queue.AddAfter(key, again)
	default:
		r.queue.Forget(key)
	}
	return true
}

// step reads the ClusterVersion, lets the simulated operator advance it at the clock's time
// and writes the status through the status subresource when it changed. The operator owns
// the status only: whatever it might change in the spec is not written.
func (r *cvoRunner) step(ctx context.Context) (time.Duration, error) {
	cv := &configv1.ClusterVersion{}
	if err := r.client.Get(ctx, client.ObjectKey{Name: ClusterVersionName}, cv); err != nil {
		return 0, client.IgnoreNotFound(err)
	}
	before := cv.Status.DeepCopy()
	again, err := r.cvo.StepClusterVersion(cv, r.clock.Now())
	if err != nil {
		return 0, fmt.Errorf("stepping the ClusterVersion: %w", err)
	}
	if equality.Semantic.DeepEqual(before, &cv.Status) {
		return again, nil
	}
	if err := r.client.Status().Update(ctx, cv); err != nil {
		return 0, fmt.Errorf("writing the ClusterVersion status: %w", err)
	}
	return again, nil
}
