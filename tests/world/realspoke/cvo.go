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
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/tests/sim"
)

// queueKey is the one item of a spoke operator's work queue: it acts on one object.
const queueKey = "the"

// runner plays a spoke operator that acts on one object: step reads the object, lets the
// simulated operator advance it and writes what changed; it runs on every change of the
// object and whenever step asks to run again.
type runner struct {
	step  func(ctx context.Context) (time.Duration, error)
	queue workqueue.TypedRateLimitingInterface[string]
	log   logr.Logger
}

// startRunner watches obj (narrowed by byObject) with a cache of its own and runs step on
// each change, until Stop. It returns once the watch has synced.
func (s *Spoke) startRunner(ctx context.Context, name string, obj client.Object, byObject cache.ByObject,
	step func(ctx context.Context) (time.Duration, error)) error {
	c, err := cache.New(clientConfig(s.cfg), cache.Options{Scheme: s.scheme, ByObject: map[client.Object]cache.ByObject{obj: byObject}})
	if err != nil {
		return fmt.Errorf("creating the %s's cache: %w", name, err)
	}
	r := &runner{
		step: step,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name, Clock: s.opts.Clock}),
		log: s.opts.Logger.WithName(name),
	}
	informer, err := c.GetInformer(ctx, obj)
	if err != nil {
		r.queue.ShutDown()
		return fmt.Errorf("watching for the %s: %w", name, err)
	}
	enqueue := func(any) { r.queue.Add(queueKey) }
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		r.queue.ShutDown()
		return fmt.Errorf("watching for the %s: %w", name, err)
	}
	s.goRun(name+" cache", c.Start)
	s.goRun(name, r.run)
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("waiting for the %s's cache: %w", name, ctx.Err())
	}
	return nil
}

// startCVO runs the simulated cluster-version operator on the spoke's ClusterVersion.
func (s *Spoke) startCVO(ctx context.Context) error {
	cvo := &sim.CVO{Cluster: s.opts.ClusterName, Behaviour: s.opts.Behaviour, Updates: s.opts.Updates}
	return s.startRunner(ctx, "cluster-version operator", &configv1.ClusterVersion{},
		cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", ClusterVersionName)},
		func(ctx context.Context) (time.Duration, error) { return s.stepClusterVersion(ctx, cvo) })
}

// run works the queue until ctx ends; it returns only once the queue has shut down.
func (r *runner) run(ctx context.Context) error {
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
func (r *runner) next(ctx context.Context) bool {
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
		r.log.Error(err, "Failed a step, retrying")
		r.queue.AddRateLimited(key)
	case again > 0:
		r.queue.Forget(key)
		r.queue.AddAfter(key, again)
	default:
		r.queue.Forget(key)
	}
	return true
}

// stepClusterVersion reads the ClusterVersion, lets the simulated operator advance it at the
// clock's time and writes the status through the status subresource when it changed. The
// operator owns the status only: whatever it might change in the spec is not written.
func (s *Spoke) stepClusterVersion(ctx context.Context, cvo *sim.CVO) (time.Duration, error) {
	cv := &configv1.ClusterVersion{}
	if err := s.client.Get(ctx, client.ObjectKey{Name: ClusterVersionName}, cv); err != nil {
		return 0, client.IgnoreNotFound(err)
	}
	before := cv.Status.DeepCopy()
	again, err := cvo.StepClusterVersion(cv, s.opts.Clock.Now())
	if err != nil {
		return 0, fmt.Errorf("stepping the ClusterVersion: %w", err)
	}
	if equality.Semantic.DeepEqual(before, &cv.Status) {
		return again, nil
	}
	if err := s.client.Status().Update(ctx, cv); err != nil {
		return 0, fmt.Errorf("writing the ClusterVersion status: %w", err)
	}
	return again, nil
}
