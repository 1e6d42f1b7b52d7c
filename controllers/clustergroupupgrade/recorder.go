package clustergroupupgrade

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/cgu-operator/cgu-operator/pkg/clusteractions"
)

// The event recorder's helpers, under every step that records an event.

func (r *Reconciler) event(s *scope, kind, reason, note string, args ...any) {
	r.Recorder.Eventf(s.cgu, nil, kind, reason, eventAction, note, args...)
}

// relatedEvent records an event about the ClusterGroupUpgrade and a related object (a
// batch record, a ManagedCluster). The related object also keeps events of the same reason
// apart: the events library folds events with the same regarding and related objects and
// reason into one series, whatever their notes.
func (r *Reconciler) relatedEvent(s *scope, related runtime.Object, kind, reason, note string, args ...any) {
	r.Recorder.Eventf(s.cgu, related, kind, reason, eventAction, note, args...)
}

func managedCluster(name string) *metav1.PartialObjectMetadata {
	mc := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name}}
	mc.SetGroupVersionKind(clusteractions.ManagedClusterGVK)
	return mc
}
