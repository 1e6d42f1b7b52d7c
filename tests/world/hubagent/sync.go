package hubagent

import (
	"context"
	"maps"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// next is what follows a pass over a work, besides the events that queue it.
type next int

const (
	// idle: nothing until an event or a scheduled resync.
	idle next = iota
	// again: a write of the pass changed what the next pass reads, and the real agent is
	// woken by that write's event, which the agent does not watch (its AppliedManifestWork).
	again
	// waitDeletion: resources are being deleted on the regional hub; the next pass comes
	// after the finalize controller's backoff, or sooner when a watched object goes.
	waitDeletion
)

// applyRecord is what the manifest controller last did for a work.
type applyRecord struct {
	generation int64
	labels     map[string]string
	// again: the pass failed, or left resources being deleted; the real manifest
	// controller then runs again after its backoff.
	again bool
	// resyncAt is when the work is applied again without a change.
	resyncAt time.Time
}

// applyDue tells whether the manifest controller applies a work now: the real one is queued
// when a work gets its finalizer, when its spec (so its generation) or labels change, after
// a pass that failed or left resources being deleted, and on its resync.
func applyDue(work *workv1.ManifestWork, last *applyRecord, now time.Time) bool {
	switch {
	case last == nil, last.again:
		return true
	case last.generation != work.Generation, !maps.Equal(last.labels, work.Labels):
		return true
	}
	return !now.Before(last.resyncAt)
}

func (a *Agent) work(ctx context.Context) {
	for {
		name, shutdown := a.queue.Get()
		if shutdown {
			return
		}
		a.process(ctx, name)
		a.queue.Done(name)
	}
}

func (a *Agent) process(ctx context.Context, name string) {
	log := a.log.WithValues("manifestWork", name)
	n, err := a.sync(ctx, name)
	switch {
	case ctx.Err() != nil:
		return
	case apierrors.IsConflict(err):
		// The informer had not seen a write yet: again, from a fresher copy.
		log.V(1).Info("Write conflict, retrying", "error", err)
		a.queue.AddRateLimited(name)
		return
	case err != nil:
		log.Error(err, "Syncing the ManifestWork failed, retrying")
		a.queue.AddRateLimited(name)
		return
	}
	a.queue.Forget(name)
	switch n {
	case again:
		a.queue.Add(name)
	case waitDeletion:
		a.queue.AddAfter(name, a.deleting.When(name))
	}
}

// sync makes one pass over a work, unless the agent is disconnected.
func (a *Agent) sync(ctx context.Context, name string) (next, error) {
	a.connection.RLock()
	defer a.connection.RUnlock()
	if !a.connected {
		return idle, nil
	}
	work, err := a.works.Get(name)
	if apierrors.IsNotFound(err) {
		a.forget(name)
		return idle, nil
	}
	if err != nil {
		return idle, err
	}
	switch {
	case !work.DeletionTimestamp.IsZero():
		return a.finalize(ctx, work)
	case !controllerutil.ContainsFinalizer(work, workv1.ManifestWorkFinalizer):
		// The add-finalizer controller; the other controllers wait for the finalizer.
		_, err := a.workPatcher.AddFinalizer(ctx, work.DeepCopy(), workv1.ManifestWorkFinalizer)
		return idle, err
	}
	return a.reconcile(ctx, work)
}

// reconcile is a pass of the manifest controller, when due, then of the available-status
// controller, with the work's status written once if it changed.
func (a *Agent) reconcile(ctx context.Context, original *workv1.ManifestWork) (next, error) {
	work := original.DeepCopy()
	now := time.Now()
	last, seen := a.records[work.Name]
	if meta.IsStatusConditionTrue(work.Status.Conditions, workv1.WorkComplete) || !applyDue(work, recordOrNil(last, seen), now) {
		a.readStatus(ctx, work)
		return idle, a.writeStatus(ctx, work, original)
	}
	deleting, applyErr := a.applyWork(ctx, work)
	a.readStatus(ctx, work)
	if err := a.writeStatus(ctx, work, original); err != nil {
		return idle, err
	}
	record := applyRecord{generation: work.Generation, labels: work.Labels, again: applyErr != nil || deleting,
		resyncAt: now.Add(wait.Jitter(a.resync, 0.5))}
	a.records[work.Name] = record
	switch {
	case applyErr != nil:
		return idle, applyErr
	case deleting:
		return waitDeletion, nil
	}
	a.deleting.Forget(work.Name)
	a.queue.AddAfter(work.Name, record.resyncAt.Sub(now))
	return idle, nil
}

// writeStatus writes the work's status if it changed, and watches what it reports.
func (a *Agent) writeStatus(ctx context.Context, work, original *workv1.ManifestWork) error {
	if _, err := a.workPatcher.PatchStatus(ctx, work, work.Status, original.Status); err != nil {
		return err
	}
	a.watches.track(work.Name, work.Status.ResourceStatus.Manifests)
	return nil
}

func recordOrNil(r applyRecord, ok bool) *applyRecord {
	if !ok {
		return nil
	}
	return &r
}

// forget drops what the agent holds for a work that is gone.
func (a *Agent) forget(name string) {
	delete(a.records, name)
	a.deleting.Forget(name)
	a.watches.track(name, nil)
}
