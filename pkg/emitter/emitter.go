// Package emitter writes the operator's events about ClusterGroupUpgrades as
// events.k8s.io/v1 Events with TALM's annotations (cgu.openshift.io/event-type and the
// lists of clusters), which the events library cannot set. Events are queued and written in
// the background, so that a reconcile never waits on them; a full queue drops the event and
// counts it. An event is queued after the write that records its transition succeeded, so it
// is emitted at most once, and never again after a restart.
package emitter

import (
	"context"
	"os"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/clusteractions"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
)

// Controller is the reporting controller of the events, TALM's.
const Controller = "ClusterGroupUpgrade"

// QueueSize bounds the events waiting to be written: a batch of 500 clusters starting queues
// about 500 at once.
const QueueSize = 10000

// Emitter queues events and writes them with its client.
type Emitter struct {
	client   client.Client
	instance string
	queue    chan eventsv1.Event
	// dropped counts an event the full queue left out, or one the API server refused.
	dropped func()
	// now stamps eventTime.
	now func() metav1.MicroTime
}

// New returns an Emitter writing with c; dropped (which may be nil) counts the events lost.
func New(c client.Client, dropped func()) *Emitter {
	instance, _ := os.Hostname()
	if dropped == nil {
		dropped = func() {}
	}
	return &Emitter{client: c, instance: instance, queue: make(chan eventsv1.Event, QueueSize), dropped: dropped, now: metav1.NowMicro}
}

// Emit queues an event about the ClusterGroupUpgrade; it never blocks. A nil Emitter emits
// nothing.
func (e *Emitter) Emit(cgu *ranv1alpha1.ClusterGroupUpgrade, ev talm.Event) {
	if e == nil {
		return
	}
	out := eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{GenerateName: cgu.Name + "-", Namespace: cgu.Namespace, Annotations: ev.Annotations},
		EventTime:           e.now(),
		ReportingController: Controller,
		ReportingInstance:   e.instance,
		Action:              ev.Action,
		Reason:              ev.Reason,
		Note:                ev.Note,
		Type:                ev.Type,
		Regarding: corev1.ObjectReference{
			APIVersion: ranv1alpha1.GroupVersion.String(), Kind: "ClusterGroupUpgrade",
			Namespace: cgu.Namespace, Name: cgu.Name, UID: cgu.UID, ResourceVersion: cgu.ResourceVersion,
		},
	}
	if ev.Cluster != "" {
		gvk := clusteractions.ManagedClusterGVK
		out.Related = &corev1.ObjectReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: ev.Cluster}
	}
	select {
	case e.queue <- out:
	default:
		e.dropped()
	}
}

// Start writes the queued events until ctx ends (a manager.Runnable).
func (e *Emitter) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("events")
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-e.queue:
			if err := e.client.Create(ctx, &ev); err != nil {
				e.dropped()
				logger.V(1).Info("Event not written", "reason", ev.Reason, "action", ev.Action, "regarding", ev.Regarding.Name, "error", err)
			}
		}
	}
}

// NeedLeaderElection is false: only the leader's reconciler queues events, and any replica
// drains what it queued.
func (e *Emitter) NeedLeaderElection() bool { return false }

// Pending is how many events wait to be written.
func (e *Emitter) Pending() int { return len(e.queue) }
