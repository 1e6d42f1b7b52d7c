package ibgu

import (
	"testing"

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
