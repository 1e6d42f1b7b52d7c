package sim

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// lcaSpoke is a spoke's store with its simulated lifecycle agent.
type lcaSpoke struct {
	store *configpolicy.MapStore
	agent *LifecycleAgent
}

func newLCASpoke(t *testing.T, b LifecycleAgentBehaviour) *lcaSpoke {
	t.Helper()
	s := &lcaSpoke{store: newSpokeStore(t, "4.16.10"), agent: NewLifecycleAgent(b)}
	round(t, s.store, opsT0, s.agent)
	return s
}

// setStage writes spec.stage, as a ManifestWork applying the ImageBasedUpgrade would.
func (s *lcaSpoke) setStage(t *testing.T, stage string) {
	t.Helper()
	obj, err := s.store.Get(ImageBasedUpgradeGVK, "", ImageBasedUpgradeName)
	if err != nil {
		t.Fatal(err)
	}
	obj = obj.DeepCopy()
	if err := unstructured.SetNestedField(obj.Object, stage, "spec", "stage"); err != nil {
		t.Fatal(err)
	}
	if err := s.store.Update(obj); err != nil {
		t.Fatal(err)
	}
}

func (s *lcaSpoke) status(t *testing.T) ImageBasedUpgradeStatus {
	t.Helper()
	obj, err := s.store.Get(ImageBasedUpgradeGVK, "", ImageBasedUpgradeName)
	if err != nil {
		t.Fatal(err)
	}
	var st ImageBasedUpgradeStatus
	if err := decodeField(obj, "status", &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// expectCondition fails unless the status has the condition with that status and reason.
func expectCondition(t *testing.T, st ImageBasedUpgradeStatus, kind string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	c := meta.FindStatusCondition(st.Conditions, kind)
	if c == nil || c.Status != status || c.Reason != reason {
		t.Fatalf("%s = %+v, want %s %s (conditions %+v)", kind, c, status, reason, st.Conditions)
	}
}

// Prep, Upgrade and FinalizeUpgrade, each taking its time: the conditions and valid next
// stages the agent shows at each step, and Idle alone at the end.
func TestLifecycleAgentUpgrade(t *testing.T) {
	s := newLCASpoke(t, LifecycleAgentBehaviour{Durations: map[string]time.Duration{
		StagePrep: 10 * time.Minute, StageUpgrade: 30 * time.Minute, StageIdle: time.Minute}})
	st := s.status(t)
	expectCondition(t, st, "Idle", metav1.ConditionTrue, "Idle")
	if !slices.Equal(st.ValidNextStages, []string{StagePrep}) {
		t.Fatalf("valid next stages %v at Idle", st.ValidNextStages)
	}

	s.setStage(t, StagePrep)
	if again := round(t, s.store, opsT0, s.agent); again != 10*time.Minute {
		t.Fatalf("wake in %v, want the 10 minutes Prep takes", again)
	}
	st = s.status(t)
	expectCondition(t, st, "PrepInProgress", metav1.ConditionTrue, "InProgress")
	expectCondition(t, st, "Idle", metav1.ConditionFalse, "InProgress")
	round(t, s.store, opsT0.Add(10*time.Minute), s.agent)
	st = s.status(t)
	expectCondition(t, st, "PrepCompleted", metav1.ConditionTrue, "Completed")
	if !slices.Equal(st.ValidNextStages, []string{StageIdle, StageUpgrade}) || st.History[0].CompletionTime == nil {
		t.Fatalf("after Prep: valid next stages %v, history %+v", st.ValidNextStages, st.History)
	}

	s.setStage(t, StageUpgrade)
	round(t, s.store, opsT0.Add(11*time.Minute), s.agent)
	round(t, s.store, opsT0.Add(41*time.Minute), s.agent)
	st = s.status(t)
	expectCondition(t, st, "UpgradeCompleted", metav1.ConditionTrue, "Completed")
	if !slices.Equal(st.ValidNextStages, []string{StageIdle, StageRollback}) {
		t.Fatalf("after Upgrade: valid next stages %v", st.ValidNextStages)
	}

	s.setStage(t, StageIdle)
	round(t, s.store, opsT0.Add(42*time.Minute), s.agent)
	expectCondition(t, s.status(t), "Idle", metav1.ConditionFalse, "Finalizing")
	round(t, s.store, opsT0.Add(43*time.Minute), s.agent)
	st = s.status(t)
	if len(st.Conditions) != 1 || len(st.History) != 0 {
		t.Fatalf("after finalizing: conditions %+v history %+v, want Idle alone", st.Conditions, st.History)
	}
	expectCondition(t, st, "Idle", metav1.ConditionTrue, "Idle")
}

// A failing Prep ends Failed; going back to Idle aborts.
func TestLifecycleAgentPrepFails(t *testing.T) {
	s := newLCASpoke(t, LifecycleAgentBehaviour{Failures: map[string]string{StagePrep: "seed image pull failed"}})
	s.setStage(t, StagePrep)
	round(t, s.store, opsT0, s.agent)
	st := s.status(t)
	expectCondition(t, st, "PrepCompleted", metav1.ConditionFalse, "Failed")
	if c := meta.FindStatusCondition(st.Conditions, "PrepInProgress"); c.Message != "seed image pull failed" {
		t.Fatalf("PrepInProgress %+v, want the failure's message", c)
	}
	if !slices.Equal(st.ValidNextStages, []string{StageIdle}) {
		t.Fatalf("after a failed Prep: valid next stages %v, want Idle only", st.ValidNextStages)
	}
	s.setStage(t, StageIdle)
	round(t, s.store, opsT0.Add(time.Minute), s.agent)
	expectCondition(t, s.status(t), "Idle", metav1.ConditionTrue, "Idle")
}

// Rolling an upgraded cluster back, then finalizing the rollback.
func TestLifecycleAgentRollback(t *testing.T) {
	s := newLCASpoke(t, LifecycleAgentBehaviour{})
	for _, stage := range []string{StagePrep, StageUpgrade, StageRollback} {
		s.setStage(t, stage)
		round(t, s.store, opsT0, s.agent)
	}
	st := s.status(t)
	expectCondition(t, st, "RollbackCompleted", metav1.ConditionTrue, "Completed")
	expectCondition(t, st, "UpgradeCompleted", metav1.ConditionFalse, "Failed")
	if !slices.Equal(st.ValidNextStages, []string{StageIdle}) {
		t.Fatalf("after a rollback: valid next stages %v", st.ValidNextStages)
	}
	s.setStage(t, StageIdle)
	round(t, s.store, opsT0, s.agent)
	expectCondition(t, s.status(t), "Idle", metav1.ConditionTrue, "Idle")
}
