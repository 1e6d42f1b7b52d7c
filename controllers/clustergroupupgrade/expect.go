package clustergroupupgrade

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

// cacheLag bounds how long a reconcile waits for the cache to show the operator's own last
// write of a ClusterGroupUpgrade or of one of its batch records. Past it the reconcile goes
// on, and the write it then makes is checked against the resourceVersion as always.
const cacheLag = time.Second

// A change of a ClusterGroupUpgrade's status, or of a batch record's, that is only clusters
// moving on (rollout.StatusProgressOnly, rollout.RecordProgressOnly) waits until the
// object's pace (rollout.Pace, from the size of its status as last written) has passed
// since its last write, and goes with any other change meanwhile. A rollout of many
// clusters through several policies would otherwise rewrite its records and status at
// every reconcile (one or more a second), which loads the API server that the propagator
// and the spokes need, for figures a user reads every few seconds at most.

// enforcementInterval is the least time between two writes of a ClusterGroupUpgrade's
// enforcement (Placements, enforce copies, bindings) while clusters move on inside a
// batch: the clusters that moved meanwhile go in one write of each Placement. Every
// Placement change makes the placement controller decide again and the propagator
// reconcile the policy for each of the Placement's clusters, so a write for each cluster
// as it moves costs the hub more than the moves are worth. A batch starting or ending is
// written at once; clusters starting inside a batch (a window's freed slots, which the
// rollout's pace gathers, or a stage) go with the moves.
const enforcementInterval = 500 * time.Millisecond

// Clusters start inside a batch at most once the ClusterGroupUpgrade's pace after the last
// status write that started some: a window's slots freed meanwhile are filled together, in
// one write of the status, the batch record and each Placement (rollout.Gates.StartsPaced).
// On instant spokes a window of 250 clusters frees a slot every few milliseconds, and
// filling each at once wrote the rollout's status and its batch record, of about 100 KiB
// each, at nearly every reconcile. Against upgrades of an hour the wait is nothing.

// expectations remember the resourceVersion each ClusterGroupUpgrade and batch record had
// after the reconciler's last write of it, until the cache shows that version, and when
// each was last written, for the write intervals above.
//
// A reconcile reads from the cache, and the cache learns of a write only when its watch
// event arrives. A reconcile that starts before then reads what the previous one
// replaced: it would compute the same rollout again, write its Placements again, and fail
// at its status update with a conflict (then retry with back-off). Waiting for the event
// instead costs no request: the update event that shows the version clears the
// expectation and queues the ClusterGroupUpgrade (expectationsMet). Correctness never
// depends on it: every status write is still checked against the resourceVersion read.
type expectations struct {
	mu      sync.Mutex
	pending map[types.UID]expectation
	// written is when each object, or a ClusterGroupUpgrade's enforcement, was last
	// written, and the pace of the next such write.
	written map[writeKey]paced
}

// paced is when a write was made, and how long the next one of its kind waits.
type paced struct {
	at   time.Time
	pace time.Duration
}

type expectation struct {
	version string
	at      time.Time
}

// writeKey names a write: of the object itself, or of the enforcement of a
// ClusterGroupUpgrade, or of its status when it starts clusters.
type writeKey struct {
	uid         types.UID
	enforcement bool
	// starts is a status write that starts clusters inside a batch.
	starts bool
}

// wrote records the version a write of o returned; size is the length of the status
// written, in JSON, which sets the pace of o's progress.
func (e *expectations) wrote(o client.Object, now time.Time, size int) {
	if o.GetResourceVersion() == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pending == nil {
		e.pending = map[types.UID]expectation{}
	}
	e.pending[o.GetUID()] = expectation{version: o.GetResourceVersion(), at: now}
	e.setWritten(writeKey{uid: o.GetUID()}, paced{at: now, pace: rollout.Pace(size)})
}

// enforced records a write of u's enforcement.
func (e *expectations) enforced(u client.Object, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.setWritten(writeKey{uid: u.GetUID(), enforcement: true}, paced{at: now, pace: enforcementInterval})
}

// wroteRecord records a write of a batch record b's status: its pace is that of its whole
// batch, its part's size times its parts. The parts of a batch larger than
// ClusterDetailLimit move together, and the API server's cost is in the bytes: each part
// paced on its own size wrote the batch's progress as often as one small record.
func (e *expectations) wroteRecord(b *ranv1alpha1.ClusterGroupUpgradeBatch, now time.Time) {
	e.wrote(b, now, max(b.Spec.Parts, 1)*statusSize(b.Status))
}

// statusSize is the length of a status in JSON, which sets the pace of the object's next
// progress write; 0 (the least pace) when it cannot be encoded.
func statusSize(status any) int {
	raw, err := json.Marshal(status)
	if err != nil {
		return 0
	}
	return len(raw)
}

// started records a write of u's status that starts clusters inside a batch, after wrote:
// the next starts wait for u's pace.
func (e *expectations) started(u client.Object, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	pace := rollout.MinPace
	if w, ok := e.written[writeKey{uid: u.GetUID()}]; ok {
		pace = w.pace
	}
	e.setWritten(writeKey{uid: u.GetUID(), starts: true}, paced{at: now, pace: pace})
}

func (e *expectations) setWritten(k writeKey, w paced) {
	if e.written == nil {
		e.written = map[writeKey]paced{}
	}
	e.written[k] = w
}

// progressDue returns when a change of o that is only progress may be written: at once
// (zero, or a time not after now) when o was not written within its pace.
func (e *expectations) progressDue(o client.Object) time.Time {
	return e.due(writeKey{uid: o.GetUID()})
}

// enforcementDue returns when u's enforcement may be written again while clusters move on
// inside a batch.
func (e *expectations) enforcementDue(u client.Object) time.Time {
	return e.due(writeKey{uid: u.GetUID(), enforcement: true})
}

// startsDue returns when u's clusters may start again inside a batch.
func (e *expectations) startsDue(u client.Object) time.Time {
	return e.due(writeKey{uid: u.GetUID(), starts: true})
}

// due returns the end of the write k's pace, or the zero time when there was none.
func (e *expectations) due(k writeKey) time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	w, ok := e.written[k]
	if !ok {
		return time.Time{}
	}
	return w.at.Add(w.pace)
}

// behind reports how long to wait for the cache when any of objects, read from it, is not
// the version last written yet; zero when the cache is up to date, or when the write is
// older than cacheLag (its expectation is then dropped).
func (e *expectations) behind(now time.Time, objects ...client.Object) time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	var wait time.Duration
	for _, o := range objects {
		x, ok := e.pending[o.GetUID()]
		switch {
		case !ok:
		case o.GetResourceVersion() == x.version || now.Sub(x.at) >= cacheLag:
			delete(e.pending, o.GetUID())
		default:
			wait = max(wait, cacheLag-now.Sub(x.at))
		}
	}
	return wait
}

// observed clears o's expectation when o is the version last written, and reports it.
func (e *expectations) observed(o client.Object) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.pending[o.GetUID()]
	if !ok || o.GetResourceVersion() != x.version {
		return false
	}
	delete(e.pending, o.GetUID())
	return true
}

// forget drops the expectations of objects that are gone.
func (e *expectations) forget(o client.Object) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.pending, o.GetUID())
	delete(e.written, writeKey{uid: o.GetUID()})
	delete(e.written, writeKey{uid: o.GetUID(), enforcement: true})
}

// expectationsMet queues a ClusterGroupUpgrade when the cache shows the reconciler's last
// write of it or of one of its batch records.
type expectationsMet struct{ e *expectations }

var _ handler.EventHandler = expectationsMet{}

func (h expectationsMet) Create(context.Context, event.CreateEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
}

func (h expectationsMet) Update(_ context.Context, ev event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if !h.e.observed(ev.ObjectNew) {
		return
	}
	key := types.NamespacedName{Namespace: ev.ObjectNew.GetNamespace(), Name: ev.ObjectNew.GetName()}
	if b, ok := ev.ObjectNew.(*ranv1alpha1.ClusterGroupUpgradeBatch); ok {
		key.Name = b.Spec.Upgrade
	}
	q.Add(reconcile.Request{NamespacedName: key})
}

func (h expectationsMet) Delete(_ context.Context, ev event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.e.forget(ev.Object)
}

func (h expectationsMet) Generic(context.Context, event.GenericEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
}
