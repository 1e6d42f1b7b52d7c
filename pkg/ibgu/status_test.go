package ibgu

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/google/go-cmp/cmp"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

func TestNext(t *testing.T) {
	plan := sample().Spec.Plan
	for name, tc := range map[string]struct {
		children        map[int]*Child
		create, running int
		done            bool
	}{
		"nothing made":           {children: map[int]*Child{}, create: 0, running: -1},
		"the first step runs":    {children: map[int]*Child{0: {}}, create: -1, running: 0},
		"the first ended":        {children: map[int]*Child{0: {Ended: true}}, create: 1, running: -1},
		"the second runs":        {children: map[int]*Child{0: {Ended: true}, 1: {}}, create: -1, running: 1},
		"every step ended: done": {children: map[int]*Child{0: {Ended: true}, 1: {Ended: true}}, create: -1, running: -1, done: true},
	} {
		create, running, done := Next(plan, tc.children)
		if create != tc.create || running != tc.running || done != tc.done {
			t.Errorf("%s: create %d running %d done %v, want %d %d %v", name, create, running, done, tc.create, tc.running, tc.done)
		}
	}
}

func TestClustersAndLabels(t *testing.T) {
	ibgu := sample() // [Prep] then [Upgrade, FinalizeUpgrade]
	upgrade, finalize := TemplateName(ibgu.Name, "Upgrade"), TemplateName(ibgu.Name, "FinalizeUpgrade")
	children := map[int]*Child{
		0: {Ended: true, Clusters: map[string]Progress{
			"sno-1": {State: ranv1alpha1.ClusterCompleted},
			"sno-2": {State: ranv1alpha1.ClusterCompleted},
			"sno-3": {State: ranv1alpha1.ClusterTimedOut, Template: TemplateName(ibgu.Name, "Prep"), Message: "PrepCompleted is False: pull failed"},
		}},
		1: {Clusters: map[string]Progress{
			"sno-1": {State: ranv1alpha1.ClusterCompleted},
			"sno-2": {State: ranv1alpha1.ClusterInProgress, Template: finalize},
			"sno-4": {State: ranv1alpha1.ClusterPending},
		}},
	}
	want := []lcmv1alpha1.ClusterState{
		{Name: "sno-1", CompletedActions: []lcmv1alpha1.ActionMessage{{Action: "Prep"}, {Action: "Upgrade"}, {Action: "FinalizeUpgrade"}}},
		{Name: "sno-2", CompletedActions: []lcmv1alpha1.ActionMessage{{Action: "Prep"}, {Action: "Upgrade"}},
			CurrentAction: &lcmv1alpha1.ActionMessage{Action: "FinalizeUpgrade"}},
		{Name: "sno-3", FailedActions: []lcmv1alpha1.ActionMessage{{Action: "Prep", Message: "PrepCompleted is False: pull failed"}}},
	}
	got := Clusters(ibgu, children)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("clusters (-want +got):\n%s", diff)
	}

	children[1].Clusters["sno-2"] = Progress{State: ranv1alpha1.ClusterTimedOut, Template: upgrade, Message: "UpgradeCompleted is not True"}
	sno2 := Clusters(ibgu, children)[1]
	if len(sno2.CompletedActions) != 1 || sno2.FailedActions[0].Action != "Upgrade" || sno2.CurrentAction != nil {
		t.Fatalf("sno-2 timed out on Upgrade: %+v", sno2)
	}

	for _, tc := range []struct {
		state  lcmv1alpha1.ClusterState
		labels []string
		clean  bool
	}{
		{state: got[1], labels: []string{Label("Prep", Completed), Label("Upgrade", Completed)}},
		{state: got[2], labels: []string{Label("Prep", Failed)}},
		{state: got[0], clean: true}, // FinalizeUpgrade completed: back to Idle, labels removed
	} {
		labels, clean := Labels(tc.state)
		if !cmp.Equal(labels, tc.labels) || clean != tc.clean {
			t.Errorf("%s: labels %v clean %v, want %v %v", tc.state.Name, labels, clean, tc.labels, tc.clean)
		}
	}
	for key, want := range map[string]bool{
		"lcm.openshift.io/ibgu-prep-completed": true, "lcm.openshift.io/ibgu-abortonfailure-failed": true,
		"lcm.openshift.io/ibgu-prep": false, "lcm.openshift.io/ibgu-prep-done": false, "lcm.openshift.io/other": false, "common": false,
	} {
		if IsLabel(key) != want {
			t.Errorf("IsLabel(%s) = %v", key, !want)
		}
	}
}

// secondStepRunning: the sample's Prep step ended, its second step runs.
func secondStepRunning() map[int]*Child {
	started := time.Date(2026, 11, 26, 22, 0, 0, 0, time.UTC)
	return map[int]*Child{
		0: {Upgrade: "u-prep-0", Ended: true, State: ranv1alpha1.StateCompleted, StartedAt: started, CompletedAt: started.Add(time.Hour),
			Counts: ranv1alpha1.ClusterCounts{Total: 3, Completed: 2, Failed: 1}},
		1: {Upgrade: "u-upgrade-finalizeupgrade-1", State: ranv1alpha1.StateNotCompleted, Message: "Batch 1/2 running"},
	}
}

func TestProgressing(t *testing.T) {
	plan := sample().Spec.Plan
	running := secondStepRunning()
	c := Progressing(plan, running)
	if c.Status != metav1.ConditionTrue || c.Reason != ReasonInProgress || c.Message != "Waiting for plan step 1 (Upgrade, FinalizeUpgrade)" {
		t.Errorf("running: %+v", c)
	}
	if c := Progressing(plan, map[int]*Child{}); c.Message != "Waiting for plan step 0 (Prep)" {
		t.Errorf("nothing made: %+v", c)
	}
	c = Progressing(plan, map[int]*Child{0: running[0], 1: {Skipped: true, Ended: true}})
	if c.Status != metav1.ConditionFalse || c.Reason != ReasonCompleted || !strings.Contains(c.Message, "step 1 selected no cluster") {
		t.Errorf("done: %+v", c)
	}
}

func TestSteps(t *testing.T) {
	plan := sample().Spec.Plan
	running := secondStepRunning()
	steps := Steps(plan, running)
	if len(steps) != 2 || steps[0].Counts.Failed != 1 || !steps[0].Ended || steps[0].CompletedAt == nil || steps[1].Ended || steps[1].Message != "Batch 1/2 running" {
		t.Errorf("steps %+v", steps)
	}

	done := map[int]*Child{0: running[0], 1: {Skipped: true, Ended: true}}
	steps = Steps(plan, done)
	if steps[1].State != lcmv1alpha1.StepSkipped || steps[1].Upgrade != "" || steps[1].Counts != nil {
		t.Errorf("skipped step %+v", steps[1])
	}
	if got := SkippedSteps(lcmv1alpha1.ImageBasedGroupUpgradeStatus{Steps: steps}); !cmp.Equal(got, []int{1}) {
		t.Errorf("skipped steps read back %v", got)
	}
}

func TestFailureMessages(t *testing.T) {
	ibgu := sample()
	prep := TemplateName(ibgu.Name, "Prep")
	children := map[int]*Child{0: {Clusters: map[string]Progress{
		"late":    {State: ranv1alpha1.ClusterTimedOut, Template: prep},
		"failed":  {State: ranv1alpha1.ClusterFailed, Template: prep, Reason: "ManifestWorkDegraded"},
		"held":    {State: ranv1alpha1.ClusterHeld, Reason: "ClusterNotAvailable"},
		"running": {State: ranv1alpha1.ClusterInProgress, Template: prep, Message: "Pulling the seed image"},
	}}}
	want := map[string]string{
		"late":   "Prep did not complete within the step's rolloutStrategy timeout",
		"failed": "Prep failed (ManifestWorkDegraded)",
		"held":   "The cluster was held before Prep started (ClusterNotAvailable)",
	}
	for _, s := range Clusters(ibgu, children) {
		if s.Name == "running" {
			if s.CurrentAction == nil || s.CurrentAction.Message != "Pulling the seed image" {
				t.Errorf("running: %+v", s)
			}
			continue
		}
		if len(s.FailedActions) != 1 || s.FailedActions[0].Message != want[s.Name] {
			t.Errorf("%s: %+v, want the message %q", s.Name, s.FailedActions, want[s.Name])
		}
	}
}

func TestBound(t *testing.T) {
	var all []lcmv1alpha1.ClusterState
	for i := range 300 {
		s := lcmv1alpha1.ClusterState{Name: fmt.Sprintf("sno-%03d", i),
			CompletedActions: []lcmv1alpha1.ActionMessage{{Action: "Prep"}}}
		switch {
		case i%100 == 7:
			s.FailedActions = []lcmv1alpha1.ActionMessage{{Action: "Upgrade", Message: "did not complete"}}
		case i%10 == 3:
			s.CurrentAction = &lcmv1alpha1.ActionMessage{Action: "Upgrade"}
		}
		all = append(all, s)
	}
	kept, notShown := Bound(all, 1<<20)
	if len(kept) != 300 || notShown != 0 {
		t.Fatalf("within the budget: %d kept, %d not shown", len(kept), notShown)
	}
	kept, notShown = Bound(all, 4096)
	if notShown == 0 || len(kept)+notShown != 300 {
		t.Fatalf("over the budget: %d kept, %d not shown", len(kept), notShown)
	}
	raw, err := json.Marshal(kept)
	if err != nil || len(raw) > 4096 {
		t.Fatalf("kept %d bytes (%v), budget 4096", len(raw), err)
	}
	failed, running := countKept(t, kept)
	if failed != 3 || running != 30 || len(kept) == 33 {
		t.Errorf("kept %d failed and %d running of %d: every failed one, every running one, then others while they fit", failed, running, len(kept))
	}
}

// countKept checks that kept is sorted by name and counts its clusters with a failed
// action and those running one.
func countKept(t *testing.T, kept []lcmv1alpha1.ClusterState) (failed, running int) {
	t.Helper()
	for i, s := range kept {
		if i > 0 && kept[i-1].Name >= s.Name {
			t.Fatalf("not sorted by name at %d", i)
		}
		if len(s.FailedActions) > 0 {
			failed++
		}
		if s.CurrentAction != nil {
			running++
		}
	}
	return failed, running
}

func TestLabelChanges(t *testing.T) {
	prepDone := lcmv1alpha1.ClusterState{CompletedActions: []lcmv1alpha1.ActionMessage{{Action: "Prep"}}}
	finalized := lcmv1alpha1.ClusterState{CompletedActions: []lcmv1alpha1.ActionMessage{{Action: "Prep"}, {Action: "Upgrade"}, {Action: "FinalizeUpgrade"}}}
	for name, tc := range map[string]struct {
		state   lcmv1alpha1.ClusterState
		current map[string]string
		want    map[string]*string
	}{
		"a label to add":     {state: prepDone, current: map[string]string{"common": "true"}, want: map[string]*string{Label("Prep", Completed): ptr.To("")}},
		"already labelled":   {state: prepDone, current: map[string]string{Label("Prep", Completed): ""}},
		"another IBGU's too": {state: prepDone, current: map[string]string{Label("Prep", Completed): "", Label("Rollback", Failed): ""}},
		"clean": {state: finalized, current: map[string]string{"common": "true", Label("Prep", Completed): "", Label("Rollback", Failed): ""},
			want: map[string]*string{Label("Prep", Completed): nil, Label("Rollback", Failed): nil}},
		"clean already": {state: finalized, current: map[string]string{"common": "true"}},
	} {
		if got := LabelChanges(tc.state, tc.current); !cmp.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}

func TestWorkMessage(t *testing.T) {
	if WorkMessage(nil) != "" {
		t.Fatal("no work, no message")
	}
	w := &workv1.ManifestWork{Status: workv1.ManifestWorkStatus{
		Conditions: []metav1.Condition{{Type: workv1.WorkDegraded, Status: metav1.ConditionTrue, Message: "Prep failed on the cluster"}},
		ResourceStatus: workv1.ManifestResourceStatus{Manifests: []workv1.ManifestCondition{
			{Conditions: []metav1.Condition{{Type: workv1.ManifestApplied, Status: metav1.ConditionFalse, Message: "namespace openshift-adp not found"}}},
			{StatusFeedbacks: workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{
				{Name: "isPrepCompleted", Value: workv1.FieldValue{String: ptr.To("False")}},
				{Name: "prepInProgressConditionMessage", Value: workv1.FieldValue{String: ptr.To("failed to pull the seed image")}},
				{Name: "prepCompletedConditionMessages", Value: workv1.FieldValue{String: ptr.To("failed to pull the seed image")}},
			}}},
		}},
	}}
	want := "namespace openshift-adp not found; failed to pull the seed image; Prep failed on the cluster"
	if got := WorkMessage(w); got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	long := strings.Repeat("é", 400)
	w.Status.Conditions[0].Message = long
	if got := WorkMessage(w); len(got) > maxMessage || !strings.HasSuffix(got, "...") || !utf8.ValidString(got) {
		t.Errorf("a long message is cut to %d bytes of valid text: %d bytes", maxMessage, len(got))
	}
}
