package sim

import (
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// The simulated lifecycle agent follows openshift-kni/lifecycle-agent: the ImageBasedUpgrade
// of api/imagebasedupgrade/v1 (cluster-scoped, named upgrade, created at Idle when missing;
// spec.stage Idle, Prep, Upgrade or Rollback), the conditions each stage sets
// (controllers/utils/conditions.go: <Stage>InProgress then <Stage>Completed with reasons
// InProgress, Completed and Failed; Idle False with reason Finalizing or Aborting while it
// goes back to Idle, then Idle True alone), status.validNextStages as the agent computes it,
// and status.history with each stage's start and completion.

// ImageBasedUpgradeGVK is the kind of the lifecycle agent's ImageBasedUpgrade.
var ImageBasedUpgradeGVK = schema.GroupVersionKind{Group: "lca.openshift.io", Version: "v1", Kind: "ImageBasedUpgrade"}

// ImageBasedUpgradeName is the name of the one ImageBasedUpgrade the agent acts on.
const ImageBasedUpgradeName = "upgrade"

// The stages of an ImageBasedUpgrade.
const (
	StageIdle     = "Idle"
	StagePrep     = "Prep"
	StageUpgrade  = "Upgrade"
	StageRollback = "Rollback"
)

// LifecycleAgentBehaviour says how the simulated lifecycle agent runs each stage.
type LifecycleAgentBehaviour struct {
	// Durations are how long each stage takes (Idle: going back to Idle); zero is at once.
	Durations map[string]time.Duration
	// Failures are the stages that fail, with the message their conditions carry.
	Failures map[string]string
}

// ImageBasedUpgradeStatus is the status the agent writes.
type ImageBasedUpgradeStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
	ValidNextStages    []string           `json:"validNextStages,omitempty"`
	History            []StageHistory     `json:"history,omitempty"`
}

// StageHistory is one stage the agent ran: when it started and, once it succeeded, when it
// completed.
type StageHistory struct {
	Stage          string       `json:"stage"`
	StartTime      metav1.Time  `json:"startTime"`
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
}

// LifecycleAgent is the simulated lifecycle agent of one spoke; the simulator runs it on its
// spokes, and tests/world/realspoke on a real apiserver.
type LifecycleAgent struct {
	b LifecycleAgentBehaviour
}

// NewLifecycleAgent returns an agent that runs the stages as b says.
func NewLifecycleAgent(b LifecycleAgentBehaviour) *LifecycleAgent { return &LifecycleAgent{b: b} }

// Step creates the ImageBasedUpgrade at Idle when it is missing, and moves it toward the
// stage its spec asks for.
func (a *LifecycleAgent) Step(objects configpolicy.Store, now time.Time) (time.Duration, error) {
	obj, err := objects.Get(ImageBasedUpgradeGVK, "", ImageBasedUpgradeName)
	if errors.Is(err, configpolicy.ErrNotFound) {
		return 0, a.create(objects, now)
	}
	if err != nil {
		return 0, err
	}
	stage, _, err := unstructured.NestedString(obj.Object, "spec", "stage")
	if err != nil {
		return 0, err
	}
	var status ImageBasedUpgradeStatus
	if err := decodeField(obj, "status", &status); err != nil {
		return 0, err
	}
	status.ObservedGeneration = obj.GetGeneration()
	again := a.advance(&status, stage, now)
	status.ValidNextStages = validNextStages(status.Conditions)
	return again, storeStatus(objects, obj, &status)
}

// create makes the ImageBasedUpgrade the agent starts with: Idle.
func (a *LifecycleAgent) create(objects configpolicy.Store, now time.Time) error {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(ImageBasedUpgradeGVK)
	obj.SetName(ImageBasedUpgradeName)
	if err := unstructured.SetNestedField(obj.Object, StageIdle, "spec", "stage"); err != nil {
		return err
	}
	status := ImageBasedUpgradeStatus{Conditions: idle(now)}
	status.ValidNextStages = validNextStages(status.Conditions)
	m, err := toMap(&status)
	if err != nil {
		return err
	}
	obj.Object["status"] = m
	return createIfMissing(objects, obj)
}

// idle is the one condition of an agent at rest.
func idle(now time.Time) []metav1.Condition {
	return []metav1.Condition{{Type: "Idle", Status: metav1.ConditionTrue, Reason: "Idle", Message: "Idle", LastTransitionTime: metav1.NewTime(now)}}
}

// advance moves the status toward stage at now, and returns when to look again (zero: only
// a new spec moves it).
func (a *LifecycleAgent) advance(st *ImageBasedUpgradeStatus, stage string, now time.Time) time.Duration {
	if stage == StageIdle {
		return a.toIdle(st, now)
	}
	if isTrue(st.Conditions, stage+"Completed") || failed(st.Conditions, stage) {
		return 0 // this stage ended
	}
	h := a.start(st, stage, now)
	if done := h.StartTime.Add(a.b.Durations[stage]); now.Before(done) {
		return done.Sub(now)
	}
	set := func(t string, s metav1.ConditionStatus, reason, message string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(now)})
	}
	if message, fails := a.b.Failures[stage]; fails {
		set(stage+"InProgress", metav1.ConditionFalse, "Failed", message)
		set(stage+"Completed", metav1.ConditionFalse, "Failed", message)
		return 0
	}
	set(stage+"InProgress", metav1.ConditionFalse, "Completed", stage+" completed")
	set(stage+"Completed", metav1.ConditionTrue, "Completed", stage+" completed")
	completed := metav1.NewTime(now)
	h.CompletionTime = &completed
	return 0
}

// start records a stage's start once, with the conditions of a stage in progress, and
// returns its history.
func (a *LifecycleAgent) start(st *ImageBasedUpgradeStatus, stage string, now time.Time) *StageHistory {
	for i := range st.History {
		if st.History[i].Stage == stage {
			return &st.History[i]
		}
	}
	set := func(t string, s metav1.ConditionStatus, reason, message string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(now)})
	}
	set("Idle", metav1.ConditionFalse, "InProgress", "In progress")
	if stage == StageRollback {
		set("UpgradeInProgress", metav1.ConditionFalse, "Failed", "Rollback requested")
		set("UpgradeCompleted", metav1.ConditionFalse, "Failed", "Rollback requested")
	}
	set(stage+"InProgress", metav1.ConditionTrue, "InProgress", stage+" in progress")
	st.History = append(st.History, StageHistory{Stage: stage, StartTime: metav1.NewTime(now)})
	return &st.History[len(st.History)-1]
}

// toIdle goes back to Idle: finalizing after an upgrade or rollback, aborting before; once
// done only Idle True is left, and the history is cleared.
func (a *LifecycleAgent) toIdle(st *ImageBasedUpgradeStatus, now time.Time) time.Duration {
	if isTrue(st.Conditions, "Idle") {
		return 0
	}
	if c := meta.FindStatusCondition(st.Conditions, "Idle"); c == nil || (c.Reason != "Finalizing" && c.Reason != "Aborting") {
		reason := "Aborting"
		if isTrue(st.Conditions, "UpgradeCompleted") || isTrue(st.Conditions, "RollbackCompleted") {
			reason = "Finalizing"
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: "Idle", Status: metav1.ConditionFalse, Reason: reason,
			Message: reason, LastTransitionTime: metav1.NewTime(now)})
		st.History = append(st.History, StageHistory{Stage: StageIdle, StartTime: metav1.NewTime(now)})
	}
	started := now
	for _, h := range st.History {
		if h.Stage == StageIdle {
			started = h.StartTime.Time
		}
	}
	if done := started.Add(a.b.Durations[StageIdle]); now.Before(done) {
		return done.Sub(now)
	}
	st.Conditions, st.History = idle(now), nil
	return 0
}

// validNextStages are the stages the agent accepts next, as it computes them.
func validNextStages(conds []metav1.Condition) []string {
	switch {
	case isTrue(conds, "Idle"):
		return []string{StagePrep}
	case meta.FindStatusCondition(conds, "Idle") != nil && meta.FindStatusCondition(conds, "Idle").Reason != "InProgress":
		return nil // finalizing or aborting
	case meta.FindStatusCondition(conds, "RollbackInProgress") != nil:
		if isTrue(conds, "RollbackCompleted") {
			return []string{StageIdle}
		}
		return nil
	case isTrue(conds, "UpgradeCompleted"):
		return []string{StageIdle, StageRollback}
	case meta.FindStatusCondition(conds, "UpgradeInProgress") != nil:
		return []string{StageRollback}
	case isTrue(conds, "PrepCompleted"):
		return []string{StageIdle, StageUpgrade}
	}
	return []string{StageIdle}
}

// isTrue reports whether the condition of type t is True.
func isTrue(conds []metav1.Condition, t string) bool {
	return meta.IsStatusConditionTrue(conds, t)
}

// failed reports whether the stage failed.
func failed(conds []metav1.Condition, stage string) bool {
	c := meta.FindStatusCondition(conds, stage+"Completed")
	return c != nil && c.Status == metav1.ConditionFalse && c.Reason == "Failed"
}
