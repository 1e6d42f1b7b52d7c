package talm

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TALM's event reasons: what happened, to the rollout as a whole, to a batch or to a cluster.
const (
	ReasonCreated           = "CguCreated"
	ReasonStarted           = "CguStarted"
	ReasonSuccess           = "CguSuccess"
	ReasonTimedOut          = "CguTimedout"
	ReasonValidationFailure = "CguValidationFailure"
)

// Reasons of the events cgu-operator adds for what TALM never reported.
const (
	// ReasonBlocked: a blocking ClusterGroupUpgrade keeps the rollout from starting.
	ReasonBlocked = "CguBlocked"
	// ReasonPaused and ReasonResumed: spec.paused held the rollout, and let it go.
	ReasonPaused  = "CguPaused"
	ReasonResumed = "CguResumed"
	// ReasonWaiting: the next batch waits for an approval, a maintenance window or a soak.
	ReasonWaiting = "CguWaiting"
	// ReasonApproved: a batch was approved.
	ReasonApproved = "CguApproved"
	// ReasonFailed: a cluster failed, or the rollout cannot start (all pre-caching failed).
	ReasonFailed = "CguFailed"
	// ReasonStageStarted and ReasonStageUnhealthy: a stage of a Progressive rollout
	// started, and one ended unhealthy (the growth went back, or the rollout stops).
	ReasonStageStarted   = "CguStageStarted"
	ReasonStageUnhealthy = "CguStageUnhealthy"
	// ReasonSoftTimedOut: a cluster moved past a best-effort policy it did not comply with
	// in its soft timeout (ran.openshift.io/soft-timeout-seconds).
	ReasonSoftTimedOut = "CguSoftTimedOut"
)

// TALM's event actions, and ours after them.
const (
	ActionBuildingRemediationPlan       = "BuildingRemediationPlan"
	ActionRemediationStarted            = "RemediationStarted"
	ActionRemediationCompleted          = "RemediationCompleted"
	ActionRemediationTimeout            = "RemediationTimeout"
	ActionBatchStarted                  = "RemediationInBatchStarted"
	ActionBatchCompleted                = "RemediationInBatchCompleted"
	ActionBatchTimeout                  = "RemediationInBatchTimeout"
	ActionClusterStarted                = "RemediationInClusterStarted"
	ActionClusterCompleted              = "RemediationInClusterCompleted"
	ActionOnHoldDueToValidationFailure  = "RemediationOnHoldDueToValidationFailure"
	ActionOnHoldDueToBlockingCR         = "RemediationOnHoldDueToBlockingCR"
	ActionPaused                        = "RemediationPaused"
	ActionResumed                       = "RemediationResumed"
	ActionBatchWaiting                  = "RemediationInBatchWaiting"
	ActionBatchApproved                 = "RemediationInBatchApproved"
	ActionClusterFailed                 = "RemediationInClusterFailed"
	ActionClusterTimeout                = "RemediationInClusterTimeout"
	ActionOnHoldDueToPrecachingFailures = "RemediationOnHoldDueToPrecachingFailure"
	ActionStageStarted                  = "RemediationInStageStarted"
	ActionStageUnhealthy                = "RemediationInStageUnhealthy"
	ActionClusterSoftTimeout            = "RemediationInClusterSoftTimeout"
)

// Event annotations, TALM's keys.
const (
	annotationPrefix             = "cgu.openshift.io/"
	AnnotationEventType          = annotationPrefix + "event-type"
	AnnotationBatchClusters      = annotationPrefix + "batch-clusters"
	AnnotationBatchClustersCount = annotationPrefix + "batch-clusters-count"
	AnnotationClusterName        = annotationPrefix + "cluster-name"
	AnnotationTimedOutClusters   = annotationPrefix + "timedout-clusters"
	AnnotationTimedOutCount      = annotationPrefix + "timedout-clusters-count"
	AnnotationTotalBatchesCount  = annotationPrefix + "total-batches-count"
	AnnotationTotalClustersCount = annotationPrefix + "total-clusters-count"
	AnnotationMissingClusters    = annotationPrefix + "missing-clusters"
	AnnotationMissingClustersCnt = annotationPrefix + "missing-clusters-count"
	AnnotationMissingPolicies    = annotationPrefix + "missing-policies"
	AnnotationInvalidPolicies    = annotationPrefix + "invalid-policies"
	AnnotationAmbiguousPolicies  = annotationPrefix + "ambiguous-policies"
	AnnotationTruncated          = annotationPrefix + "truncated"
	// AnnotationBatchIndex is ours: the 1-based batch an event of ours is about.
	AnnotationBatchIndex = annotationPrefix + "batch-index"
	// AnnotationStageIndex and AnnotationStageSize are ours: the 1-based stage of a
	// Progressive batch an event is about, and how many clusters it takes.
	AnnotationStageIndex          = annotationPrefix + "stage-index"
	AnnotationStageSize           = annotationPrefix + "stage-size"
	EventTypeGlobal               = "global"
	EventTypeBatch                = "batch"
	EventTypeCluster              = "cluster"
	noteLimit                     = 1024
	annotationListLimit           = 32 * 1024
	annotationTruncationSeparator = ","
)

// Event is an event about a ClusterGroupUpgrade, with TALM's reason, action and annotations.
type Event struct {
	// Type is Normal or Warning.
	Type, Reason, Action, Note string
	Annotations                map[string]string
	// Cluster names the ManagedCluster the event is also about, "" for none.
	Cluster string
}

func newEvent(kind, reason, action, eventType, note string) Event {
	if len(note) > noteLimit {
		note = note[:noteLimit]
	}
	return Event{Type: kind, Reason: reason, Action: action, Note: note,
		Annotations: map[string]string{AnnotationEventType: eventType}}
}

func (e Event) with(kv ...string) Event {
	for i := 0; i+1 < len(kv); i += 2 {
		e.Annotations[kv[i]] = kv[i+1]
	}
	return e
}

// withList sets a list annotation of names, comma-separated, and its count when countKey is
// set. A list longer than annotationListLimit keeps the names that fit, and
// cgu.openshift.io/truncated names the annotation cut, as TALM marks it.
func (e Event) withList(key, countKey string, names []string) Event {
	list := strings.Join(names, annotationTruncationSeparator)
	if len(list) > annotationListLimit {
		cut := strings.LastIndex(list[:annotationListLimit+1], annotationTruncationSeparator)
		list = list[:max(cut, 0)]
		e.Annotations[AnnotationTruncated] = key
	}
	e.Annotations[key] = list
	if countKey != "" {
		e.Annotations[countKey] = strconv.Itoa(len(names))
	}
	return e
}

// Created is the event of a ClusterGroupUpgrade the operator sees for the first time.
func Created(name string) Event {
	return newEvent(corev1.EventTypeNormal, ReasonCreated, ActionBuildingRemediationPlan, EventTypeGlobal,
		fmt.Sprintf("New ClusterGroupUpgrade found: %s", name))
}

// RolloutStarted is the event of a rollout starting its first batch.
func RolloutStarted(name string, clusters, batches int) Event {
	return newEvent(corev1.EventTypeNormal, ReasonStarted, ActionRemediationStarted, EventTypeGlobal,
		fmt.Sprintf("ClusterGroupUpgrade %s started remediating policies: %s in %s", name, count(clusters, "cluster", "clusters"),
			count(batches, "batch", "batches"))).
		with(AnnotationTotalClustersCount, strconv.Itoa(clusters), AnnotationTotalBatchesCount, strconv.Itoa(batches))
}

// RolloutCompleted is the event of a rollout every cluster completed.
func RolloutCompleted(name string, clusters int) Event {
	return newEvent(corev1.EventTypeNormal, ReasonSuccess, ActionRemediationCompleted, EventTypeGlobal,
		fmt.Sprintf("ClusterGroupUpgrade %s succeeded remediating policies", name)).
		with(AnnotationTotalClustersCount, strconv.Itoa(clusters))
}

// RolloutTimedOut is the event of a rollout that ended TimedOut, naming the clusters that
// timed out (or failed) and why.
func RolloutTimedOut(name string, clusters int, timedOut []string, why string) Event {
	return newEvent(corev1.EventTypeWarning, ReasonTimedOut, ActionRemediationTimeout, EventTypeGlobal,
		fmt.Sprintf("ClusterGroupUpgrade %s timed-out remediating policies: %s", name, why)).
		with(AnnotationTotalClustersCount, strconv.Itoa(clusters)).
		withList(AnnotationTimedOutClusters, AnnotationTimedOutCount, timedOut)
}

// BatchStarted is the event of a batch (1-based index) starting with its clusters.
func BatchStarted(name string, index int, clusters []string, total int) Event {
	return newEvent(corev1.EventTypeNormal, ReasonStarted, ActionBatchStarted, EventTypeBatch,
		fmt.Sprintf("ClusterGroupUpgrade %s: batch index %d upgrade started", name, index)).
		with(AnnotationTotalClustersCount, strconv.Itoa(total)).
		withList(AnnotationBatchClusters, AnnotationBatchClustersCount, sorted(clusters))
}

// BatchEnded is the event of a batch that ended: completed, or timed out with the clusters
// that did not complete.
func BatchEnded(name string, index int, clusters, timedOut []string, total int) Event {
	if len(timedOut) == 0 {
		return newEvent(corev1.EventTypeNormal, ReasonSuccess, ActionBatchCompleted, EventTypeBatch,
			fmt.Sprintf("ClusterGroupUpgrade %s: all clusters in the batch index %d are compliant with managed policies", name, index)).
			with(AnnotationTotalClustersCount, strconv.Itoa(total)).
			withList(AnnotationBatchClusters, AnnotationBatchClustersCount, sorted(clusters))
	}
	return newEvent(corev1.EventTypeWarning, ReasonTimedOut, ActionBatchTimeout, EventTypeBatch,
		fmt.Sprintf("ClusterGroupUpgrade %s: some clusters in the batch index %d timed out remediating policies", name, index)).
		with(AnnotationTotalClustersCount, strconv.Itoa(total), AnnotationBatchClustersCount, strconv.Itoa(len(clusters))).
		withList(AnnotationTimedOutClusters, AnnotationTimedOutCount, sorted(timedOut))
}

// ClusterStarted is the event of a cluster of the running batch starting.
func ClusterStarted(name, cluster string) Event {
	return clusterEvent(newEvent(corev1.EventTypeNormal, ReasonStarted, ActionClusterStarted, EventTypeCluster,
		fmt.Sprintf("ClusterGroupUpgrade %s: cluster %s upgrade started", name, cluster)), cluster)
}

// ClusterCompleted is the event of a cluster complying with every managed policy.
func ClusterCompleted(name, cluster string) Event {
	return clusterEvent(newEvent(corev1.EventTypeNormal, ReasonSuccess, ActionClusterCompleted, EventTypeCluster,
		fmt.Sprintf("ClusterGroupUpgrade %s: cluster %s upgrade finished successfully", name, cluster)), cluster)
}

// ClusterTimedOut is the event of a cluster past its deadline (ours: TALM has none).
func ClusterTimedOut(name, cluster, policy string) Event {
	return clusterEvent(newEvent(corev1.EventTypeWarning, ReasonTimedOut, ActionClusterTimeout, EventTypeCluster,
		fmt.Sprintf("ClusterGroupUpgrade %s: cluster %s timed out remediating policy %s", name, cluster, policy)), cluster)
}

// ClusterFailed is the event of a cluster that failed (ours: TALM has none).
func ClusterFailed(name, cluster, why string) Event {
	return clusterEvent(newEvent(corev1.EventTypeWarning, ReasonFailed, ActionClusterFailed, EventTypeCluster,
		fmt.Sprintf("ClusterGroupUpgrade %s: cluster %s failed: %s", name, cluster, why)), cluster)
}

// ClusterSoftTimedOut is the event of a cluster moving past a best-effort policy it did not
// comply with in time (ours): its upgrade goes on.
func ClusterSoftTimedOut(name, cluster, policy string) Event {
	return clusterEvent(newEvent(corev1.EventTypeWarning, ReasonSoftTimedOut, ActionClusterSoftTimeout, EventTypeCluster,
		fmt.Sprintf("ClusterGroupUpgrade %s: cluster %s went on without policy %s, not compliant within its soft timeout", name, cluster, policy)), cluster)
}

func clusterEvent(e Event, cluster string) Event {
	e.Cluster = cluster
	return e.with(AnnotationClusterName, cluster)
}

// Failure is what a validation failure names, for its annotations.
type Failure struct {
	// Kind is TALM's word for it: "missing clusters", "missing policies", "ambiguous
	// policies", "invalid policies", or ours ("invalid spec").
	Kind string
	// Names are the clusters or policies it names, if any.
	Names []string
}

// ValidationFailed is the event of a ClusterGroupUpgrade whose selection or validation
// failed: the rollout is on hold.
func ValidationFailed(name string, f Failure, message string) Event {
	e := newEvent(corev1.EventTypeWarning, ReasonValidationFailure, ActionOnHoldDueToValidationFailure, EventTypeGlobal,
		fmt.Sprintf("ClusterGroupUpgrade %s: validation failure (%s): %s", name, f.Kind, message))
	switch f.Kind {
	case FailureMissingClusters:
		e = e.withList(AnnotationMissingClusters, AnnotationMissingClustersCnt, f.Names)
	case FailureMissingPolicies:
		e = e.withList(AnnotationMissingPolicies, "", f.Names)
	case FailureInvalidPolicies:
		e = e.withList(AnnotationInvalidPolicies, "", f.Names)
	case FailureAmbiguousPolicies:
		e = e.withList(AnnotationAmbiguousPolicies, "", sorted(f.Names))
	}
	return e
}

// TALM's words for what a validation failure is about.
const (
	FailureMissingClusters   = "missing clusters"
	FailureMissingPolicies   = "missing policies"
	FailureInvalidPolicies   = "invalid policies"
	FailureAmbiguousPolicies = "ambiguous policies"
	FailureInvalid           = "invalid spec"
)

// Blocked is the event of a rollout kept from starting by blocking ClusterGroupUpgrades.
func Blocked(name, reason, message string) Event {
	return newEvent(corev1.EventTypeNormal, ReasonBlocked, ActionOnHoldDueToBlockingCR, EventTypeGlobal,
		fmt.Sprintf("ClusterGroupUpgrade %s: on hold (%s): %s", name, reason, message))
}

// Paused is the event of spec.paused holding the rollout.
func Paused(name string) Event {
	return newEvent(corev1.EventTypeNormal, ReasonPaused, ActionPaused, EventTypeGlobal,
		fmt.Sprintf("ClusterGroupUpgrade %s: paused: no new batch or cluster starts", name))
}

// Resumed is the event of spec.paused letting the rollout go.
func Resumed(name string) Event {
	return newEvent(corev1.EventTypeNormal, ReasonResumed, ActionResumed, EventTypeGlobal,
		fmt.Sprintf("ClusterGroupUpgrade %s: resumed", name))
}

// Waiting is the event of a batch (1-based index) waiting for a gate (reason: the
// Progressing reason, such as WaitingForApproval, OutsideMaintenanceWindow or BatchSoaking).
func Waiting(name string, index int, reason, message string) Event {
	return newEvent(corev1.EventTypeNormal, ReasonWaiting, ActionBatchWaiting, EventTypeBatch,
		fmt.Sprintf("ClusterGroupUpgrade %s: batch index %d waits (%s): %s", name, index, reason, message)).
		with(AnnotationBatchIndex, strconv.Itoa(index))
}

// Approved is the event of a batch (1-based index) approved by someone.
func Approved(name string, index int, by string) Event {
	who := by
	if who == "" {
		who = "an unnamed user"
	}
	return newEvent(corev1.EventTypeNormal, ReasonApproved, ActionBatchApproved, EventTypeBatch,
		fmt.Sprintf("ClusterGroupUpgrade %s: batch index %d approved by %s", name, index, who)).
		with(AnnotationBatchIndex, strconv.Itoa(index))
}

// StageStarted is the event of a stage (1-based number) of a Progressive batch (1-based
// index) starting, with its size and its step in the growth (1-based).
func StageStarted(name string, index, number, size, step int) Event {
	return newEvent(corev1.EventTypeNormal, ReasonStageStarted, ActionStageStarted, EventTypeBatch,
		fmt.Sprintf("ClusterGroupUpgrade %s: batch index %d: stage %d started with %s (step %d of the growth)",
			name, index, number, count(size, "cluster", "clusters"), step)).
		with(AnnotationBatchIndex, strconv.Itoa(index), AnnotationStageIndex, strconv.Itoa(number), AnnotationStageSize, strconv.Itoa(size))
}

// StageUnhealthy is the warning of a stage of a Progressive batch (1-based index) that ended
// unhealthy; message says which stage, why, and what it did to the growth.
func StageUnhealthy(name string, index int, message string) Event {
	return newEvent(corev1.EventTypeWarning, ReasonStageUnhealthy, ActionStageUnhealthy, EventTypeBatch,
		fmt.Sprintf("ClusterGroupUpgrade %s: batch index %d: %s", name, index, message)).
		with(AnnotationBatchIndex, strconv.Itoa(index))
}

// CannotStart is the event of a rollout that cannot start for a reason other than
// validation or blocking (pre-caching failed on every cluster).
func CannotStart(name, reason, message string) Event {
	return newEvent(corev1.EventTypeWarning, ReasonFailed, ActionOnHoldDueToPrecachingFailures, EventTypeGlobal,
		fmt.Sprintf("ClusterGroupUpgrade %s: cannot start (%s): %s", name, reason, message))
}

func sorted(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return out
}

// count writes n with its noun: "1 cluster", "2 clusters".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// LastSeen is when an event last happened, whichever events API wrote it: the core API's
// lastTimestamp, an events.k8s.io series' last observation, its eventTime, or else when the
// object was made.
func LastSeen(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}
