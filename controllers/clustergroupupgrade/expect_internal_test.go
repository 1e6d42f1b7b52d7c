package clustergroupupgrade

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

func TestExpectations(t *testing.T) {
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	obj := func(uid types.UID, version string) *ranv1alpha1.ClusterGroupUpgrade {
		return &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{UID: uid, ResourceVersion: version}}
	}
	var e expectations
	if wait := e.behind(at, obj("a", "1")); wait != 0 {
		t.Fatalf("nothing written yet: got a wait of %s", wait)
	}
	e.wrote(obj("a", "7"), at, 0)
	e.wrote(obj("b", "9"), at, 0)

	if wait := e.behind(at.Add(300*time.Millisecond), obj("a", "6")); wait != 700*time.Millisecond {
		t.Errorf("a is behind by one write 300 ms after it: got a wait of %s, want 700ms", wait)
	}
	if wait := e.behind(at.Add(300*time.Millisecond), obj("a", "6"), obj("b", "8")); wait != 700*time.Millisecond {
		t.Errorf("a and b behind: got a wait of %s, want the longest, 700ms", wait)
	}
	if e.observed(obj("a", "6")) {
		t.Error("an event of an older version met the expectation")
	}
	if !e.observed(obj("a", "7")) {
		t.Error("the event of the written version did not meet the expectation")
	}
	if e.observed(obj("a", "7")) {
		t.Error("a met expectation was met twice")
	}
	if wait := e.behind(at, obj("a", "6")); wait != 0 {
		t.Errorf("a's expectation was met: got a wait of %s", wait)
	}
	if wait := e.behind(at.Add(cacheLag), obj("b", "8")); wait != 0 {
		t.Errorf("past cacheLag the reconcile goes on: got a wait of %s", wait)
	}
	if wait := e.behind(at, obj("b", "8")); wait != 0 {
		t.Errorf("an expired expectation is dropped: got a wait of %s", wait)
	}
	e.wrote(obj("b", "10"), at, 0)
	if wait := e.behind(at, obj("b", "10")); wait != 0 {
		t.Errorf("the cache shows b's last write: got a wait of %s", wait)
	}
	if wait := e.behind(at, obj("b", "9")); wait != 0 {
		t.Errorf("an expectation the cache met once is dropped: got a wait of %s", wait)
	}
	e.wrote(obj("c", "3"), at, 0)
	e.forget(obj("c", ""))
	if wait := e.behind(at, obj("c", "2")); wait != 0 {
		t.Errorf("a deleted object's expectation is dropped: got a wait of %s", wait)
	}
	e.wrote(obj("d", ""), at, 0)
	if wait := e.behind(at, obj("d", "1")); wait != 0 {
		t.Errorf("a write without a version sets no expectation: got a wait of %s", wait)
	}
}

func TestStartsArePacedApartFromOtherWrites(t *testing.T) {
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	u := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{UID: "u", ResourceVersion: "1"}}
	var e expectations
	if due := e.startsDue(u); !due.IsZero() {
		t.Fatalf("nothing started yet: starts due at %v, want at once", due)
	}
	e.enforced(u, at)
	e.wrote(u, at, 0)
	if due := e.startsDue(u); !due.IsZero() {
		t.Errorf("writes without starts paced the starts until %v", due)
	}
	e.started(u, at.Add(time.Second))
	if due, want := e.startsDue(u), at.Add(time.Second+rollout.MinPace); !due.Equal(want) {
		t.Errorf("starts due at %v, want the start interval after the write with starts, %v", due, want)
	}
	if due, want := e.progressDue(u), at.Add(rollout.MinPace); !due.Equal(want) {
		t.Errorf("progress due at %v, want %v: a start is not a write of its own", due, want)
	}
}

func TestALargeStatusIsWrittenAndStartsClustersLessOften(t *testing.T) {
	at := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	u := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{UID: "u", ResourceVersion: "1"}}
	var e expectations
	size := 100 << 10
	e.wrote(u, at, size)
	e.started(u, at)
	pace := rollout.Pace(size)
	if pace <= rollout.MinPace {
		t.Fatalf("the pace of a %d-byte status is %v, not above the least pace %v", size, pace, rollout.MinPace)
	}
	if due, want := e.progressDue(u), at.Add(pace); !due.Equal(want) {
		t.Errorf("progress due at %v, want %v", due, want)
	}
	if due, want := e.startsDue(u), at.Add(pace); !due.Equal(want) {
		t.Errorf("starts due at %v, want %v", due, want)
	}
	e.wrote(u, at.Add(pace), 0)
	if due, want := e.progressDue(u), at.Add(pace+rollout.MinPace); !due.Equal(want) {
		t.Errorf("after a small status, progress due at %v, want %v", due, want)
	}
}

// The parts of a large batch share its pace: each is paced as the whole batch.
func TestABatchsPartsShareItsPace(t *testing.T) {
	at := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	status := ranv1alpha1.ClusterGroupUpgradeBatchStatus{}
	for i := range 250 {
		status.Clusters = append(status.Clusters, ranv1alpha1.ClusterProgress{Name: fmt.Sprintf("cluster-%04d", i), State: ranv1alpha1.ClusterInProgress})
	}
	record := func(uid types.UID, parts int) *ranv1alpha1.ClusterGroupUpgradeBatch {
		return &ranv1alpha1.ClusterGroupUpgradeBatch{ObjectMeta: metav1.ObjectMeta{UID: uid, ResourceVersion: "1"},
			Spec: ranv1alpha1.ClusterGroupUpgradeBatchSpec{Index: 1, Parts: parts}, Status: status}
	}
	alone, part := record("alone", 1), record("part", 4)
	var e expectations
	e.wroteRecord(alone, at)
	e.wroteRecord(part, at)
	size := statusSize(status)
	if due, want := e.progressDue(alone), at.Add(rollout.Pace(size)); !due.Equal(want) {
		t.Errorf("the record of a batch of one part: progress due at %v, want %v (its own size, %d bytes)", due, want, size)
	}
	if due, want := e.progressDue(part), at.Add(rollout.Pace(4*size)); !due.Equal(want) || !due.After(e.progressDue(alone)) {
		t.Errorf("a part of four: progress due at %v, want %v (four times its size), after the single part's", due, want)
	}
}
