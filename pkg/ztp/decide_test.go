package ztp

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	const settle = time.Minute
	settled := Cluster{Name: "sno-1", Available: true, AvailableSince: now.Add(-2 * time.Minute)}
	wave := func(name, w string) Policy {
		return Policy{Name: name, Namespace: "ztp-common", Inform: true, Annotations: map[string]string{WaveAnnotation: w}}
	}
	completed := func(total int) *ranv1alpha1.ClusterGroupUpgrade {
		c := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: "sno-1", UID: "u1"}}
		c.Status.State, c.Status.Counts.Total = ranv1alpha1.StateCompleted, total
		return c
	}
	done := Cluster{Name: "sno-1", Available: true, Labels: map[string]string{DoneLabel: ""}}
	cases := map[string]struct {
		facts      Facts
		create     []string // the managed policies of the ClusterGroupUpgrade to create
		markDone   bool
		deleteUID  string
		events     []string
		wait       time.Duration
		needPolicy bool
	}{
		"not settled yet: a wait": {facts: Facts{Cluster: Cluster{Name: "sno-1", Available: true, AvailableSince: now.Add(-20 * time.Second)}},
			wait: 40 * time.Second},
		"settled, wave policies: its ClusterGroupUpgrade in wave order": {
			facts:  Facts{Cluster: settled, Policies: []Policy{wave("b", "2"), wave("a", "1")}},
			create: []string{"a", "b"}, needPolicy: true},
		"settled, no wave policy: labelled done": {
			facts: Facts{Cluster: settled}, markDone: true, events: []string{EventZTPDone}, needPolicy: true},
		"an invalid wave: reported, left out": {
			facts:  Facts{Cluster: settled, Policies: []Policy{wave("a", "1"), wave("bad", "x")}},
			create: []string{"a"}, events: []string{EventInvalidWave}, needPolicy: true},
		"done label removed after a completed run: rerun": {
			facts:     Facts{Cluster: settled, Upgrade: completed(3)},
			deleteUID: "u1", events: []string{EventZTPRerun}},
		"a run with nothing to do: done, and its ClusterGroupUpgrade deleted": {
			facts:    Facts{Cluster: done, Upgrade: completed(0)},
			markDone: true, deleteUID: "u1", events: []string{EventZTPDone}},
		"done: nothing": {facts: Facts{Cluster: done}},
		"running: nothing": {facts: Facts{Cluster: settled, Upgrade: &ranv1alpha1.ClusterGroupUpgrade{
			Status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotCompleted}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := Decide(tc.facts, now, settle)
			var created []string
			if in.Create != nil {
				created = in.Create.Spec.ManagedPolicies
			}
			var events []string
			for _, e := range in.Events {
				events = append(events, e.Reason)
			}
			var deleted string
			if in.Delete != nil {
				deleted = string(in.Delete.UID)
			}
			switch {
			case !slices.Equal(created, tc.create):
				t.Errorf("created over %v, want %v", created, tc.create)
			case (in.MarkDone != "") != tc.markDone:
				t.Errorf("mark done %q, want %v", in.MarkDone, tc.markDone)
			case deleted != tc.deleteUID:
				t.Errorf("deleted %q, want %q", deleted, tc.deleteUID)
			case !slices.Equal(events, tc.events):
				t.Errorf("events %v, want %v", events, tc.events)
			case in.Wait != tc.wait:
				t.Errorf("wait %s, want %s", in.Wait, tc.wait)
			case NeedsPolicies(tc.facts.Cluster, tc.facts.Upgrade, now, settle) != tc.needPolicy:
				t.Errorf("needs policies: want %v", tc.needPolicy)
			}
		})
	}
}

func TestStarted(t *testing.T) {
	cgu := Upgrade("sno-1", []WavePolicy{{Name: "a", Namespace: "ztp-common", Wave: 1}, {Name: "b", Namespace: "ztp-common", Wave: 2}})
	e := Started(cgu)
	if e.Type != corev1.EventTypeNormal || e.Reason != EventZTPStarted || e.Related != cgu ||
		e.Message != "Created ClusterGroupUpgrade ztp-install/sno-1 over 2 wave policies: a, b" {
		t.Errorf("got %+v", e)
	}
}
