package emitter

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
)

func cgu() *ranv1alpha1.ClusterGroupUpgrade {
	return &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Name: "night", Namespace: "ztp", UID: "u-1"}}
}

func TestEmitWritesTALMsEvent(t *testing.T) {
	g := NewWithT(t)
	scheme := runtime.NewScheme()
	g.Expect(eventsv1.AddToScheme(scheme)).To(Succeed())
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	e := New(c, nil)
	e.Emit(cgu(), talm.ClusterCompleted("night", "sno-1"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = e.Start(ctx) }()
	g.Eventually(func(g Gomega) []eventsv1.Event {
		var list eventsv1.EventList
		g.Expect(c.List(ctx, &list)).To(Succeed())
		return list.Items
	}).WithTimeout(5 * time.Second).Should(ConsistOf(And(
		HaveField("Namespace", "ztp"),
		HaveField("Reason", talm.ReasonSuccess), HaveField("Action", talm.ActionClusterCompleted),
		HaveField("ReportingController", Controller),
		HaveField("Regarding.Kind", "ClusterGroupUpgrade"), HaveField("Regarding.Name", "night"), HaveField("Regarding.UID", BeEquivalentTo("u-1")),
		HaveField("Related.Kind", "ManagedCluster"), HaveField("Related.Name", "sno-1"),
		HaveField("ObjectMeta.Annotations", HaveKeyWithValue(talm.AnnotationEventType, talm.EventTypeCluster)),
	)))
}

func TestAFullQueueDropsAndCounts(t *testing.T) {
	dropped := 0
	e := New(nil, func() { dropped++ })
	for range QueueSize + 3 {
		e.Emit(cgu(), talm.Created("night"))
	}
	if e.Pending() != QueueSize || dropped != 3 {
		t.Fatalf("pending %d, dropped %d; want %d and 3", e.Pending(), dropped, QueueSize)
	}
	var none *Emitter
	none.Emit(cgu(), talm.Created("night")) // a nil emitter emits nothing, and does not panic
}
