package talm

import (
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
)

func TestEvents(t *testing.T) {
	cases := map[string]struct {
		got                  Event
		kind, reason, action string
		eventType, noteHas   string
		annotations          map[string]string
		cluster              string
	}{
		"created": {got: Created("night"), kind: corev1.EventTypeNormal, reason: ReasonCreated, action: ActionBuildingRemediationPlan,
			eventType: EventTypeGlobal, noteHas: "New ClusterGroupUpgrade found: night"},
		"started": {got: RolloutStarted("night", 12, 5), kind: corev1.EventTypeNormal, reason: ReasonStarted, action: ActionRemediationStarted,
			eventType: EventTypeGlobal, noteHas: "started remediating policies",
			annotations: map[string]string{AnnotationTotalClustersCount: "12", AnnotationTotalBatchesCount: "5"}},
		"batch started, clusters sorted": {got: BatchStarted("night", 2, []string{"sno-3", "sno-1"}, 12), reason: ReasonStarted,
			kind: corev1.EventTypeNormal, action: ActionBatchStarted, eventType: EventTypeBatch, noteHas: "batch index 2 upgrade started",
			annotations: map[string]string{AnnotationBatchClusters: "sno-1,sno-3", AnnotationBatchClustersCount: "2", AnnotationTotalClustersCount: "12"}},
		"batch completed": {got: BatchEnded("night", 2, []string{"sno-1"}, nil, 12), kind: corev1.EventTypeNormal, reason: ReasonSuccess,
			action: ActionBatchCompleted, eventType: EventTypeBatch, noteHas: "are compliant with managed policies",
			annotations: map[string]string{AnnotationBatchClusters: "sno-1"}},
		"batch timed out": {got: BatchEnded("night", 3, []string{"sno-1", "sno-2"}, []string{"sno-2"}, 12), kind: corev1.EventTypeWarning,
			reason: ReasonTimedOut, action: ActionBatchTimeout, eventType: EventTypeBatch, noteHas: "timed out remediating policies",
			annotations: map[string]string{AnnotationTimedOutClusters: "sno-2", AnnotationTimedOutCount: "1", AnnotationBatchClustersCount: "2"}},
		"cluster started": {got: ClusterStarted("night", "sno-1"), kind: corev1.EventTypeNormal, reason: ReasonStarted, action: ActionClusterStarted,
			eventType: EventTypeCluster, noteHas: "cluster sno-1 upgrade started", annotations: map[string]string{AnnotationClusterName: "sno-1"}, cluster: "sno-1"},
		"cluster failed": {got: ClusterFailed("night", "sno-1", "HealthCheckFailed"), kind: corev1.EventTypeWarning, reason: ReasonFailed,
			action: ActionClusterFailed, eventType: EventTypeCluster, noteHas: "failed: HealthCheckFailed", cluster: "sno-1"},
		"completed": {got: RolloutCompleted("night", 12), kind: corev1.EventTypeNormal, reason: ReasonSuccess, action: ActionRemediationCompleted,
			eventType: EventTypeGlobal, noteHas: "succeeded remediating policies"},
		"timed out": {got: RolloutTimedOut("night", 12, []string{"sno-2"}, "out of time"), kind: corev1.EventTypeWarning, reason: ReasonTimedOut,
			action: ActionRemediationTimeout, eventType: EventTypeGlobal, noteHas: "timed-out remediating policies: out of time",
			annotations: map[string]string{AnnotationTimedOutClusters: "sno-2", AnnotationTimedOutCount: "1"}},
		"missing clusters": {got: ValidationFailed("night", Failure{Kind: FailureMissingClusters, Names: []string{"x", "y"}}, "Clusters not found"),
			kind: corev1.EventTypeWarning, reason: ReasonValidationFailure, action: ActionOnHoldDueToValidationFailure, eventType: EventTypeGlobal,
			noteHas: "validation failure (missing clusters)", annotations: map[string]string{AnnotationMissingClusters: "x,y", AnnotationMissingClustersCnt: "2"}},
		"ambiguous policies": {got: ValidationFailed("night", Failure{Kind: FailureAmbiguousPolicies, Names: []string{"b", "a"}}, "twice"),
			kind: corev1.EventTypeWarning, reason: ReasonValidationFailure, action: ActionOnHoldDueToValidationFailure, eventType: EventTypeGlobal,
			noteHas: "ambiguous policies", annotations: map[string]string{AnnotationAmbiguousPolicies: "a,b"}},
		"waiting": {got: Waiting("night", 3, "OutsideMaintenanceWindow", "opens at 02:00"), kind: corev1.EventTypeNormal, reason: ReasonWaiting,
			action: ActionBatchWaiting, eventType: EventTypeBatch, noteHas: "batch index 3 waits (OutsideMaintenanceWindow)",
			annotations: map[string]string{AnnotationBatchIndex: "3"}},
		"approved": {got: Approved("night", 3, ""), kind: corev1.EventTypeNormal, reason: ReasonApproved, action: ActionBatchApproved,
			eventType: EventTypeBatch, noteHas: "approved by an unnamed user"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(tc.got.Type).To(Equal(tc.kind))
			g.Expect(tc.got.Reason).To(Equal(tc.reason))
			g.Expect(tc.got.Action).To(Equal(tc.action))
			g.Expect(tc.got.Note).To(ContainSubstring(tc.noteHas))
			g.Expect(tc.got.Annotations).To(HaveKeyWithValue(AnnotationEventType, tc.eventType))
			for k, v := range tc.annotations {
				g.Expect(tc.got.Annotations).To(HaveKeyWithValue(k, v))
			}
			g.Expect(tc.got.Cluster).To(Equal(tc.cluster))
		})
	}
}

func TestEventListsAreBounded(t *testing.T) {
	var clusters []string
	for i := range 5000 {
		clusters = append(clusters, fmt.Sprintf("sno-%04d-%s", i, strings.Repeat("x", 54)))
	}
	e := BatchStarted(strings.Repeat("n", 253), 1, clusters, 5000)
	g := NewWithT(t)
	list := e.Annotations[AnnotationBatchClusters]
	g.Expect(len(list)).To(BeNumerically("<=", annotationListLimit))
	g.Expect(e.Annotations).To(HaveKeyWithValue(AnnotationTruncated, AnnotationBatchClusters))
	g.Expect(e.Annotations).To(HaveKeyWithValue(AnnotationBatchClustersCount, "5000"), "the count counts every cluster")
	for _, c := range strings.Split(list, ",") {
		g.Expect(c).To(HaveLen(63), "names are cut between names, never inside one")
	}
	g.Expect(len(e.Note)).To(BeNumerically("<=", noteLimit))
}
