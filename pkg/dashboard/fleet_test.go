package dashboard

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
)

// The map lists clusters by batch, then naturally, with one letter per state; a pending
// cluster of the running batch that waits for the hub's cap is "waiting".
func TestFleetOf(t *testing.T) {
	b1 := record(1, 0, at(0), at(10), 2, ranv1alpha1.ClusterCompleted, ranv1alpha1.ClusterTimedOut)
	b1.Spec.Clusters = []string{"sno-10", "sno-9"}
	b1.Status.Clusters[0].Name, b1.Status.Clusters[1].Name = "sno-10", "sno-9"
	b2 := record(2, 0, at(10), nil, 4, ranv1alpha1.ClusterInProgress, ranv1alpha1.ClusterPending, ranv1alpha1.ClusterHeld, ranv1alpha1.ClusterFailed)
	b2.Status.Clusters[1].Reason = ranv1alpha1.ReasonHubCapacityReached
	b2.Status.Clusters[0].Stage = 2
	b3 := record(3, 0, nil, nil, 1)
	st := ranv1alpha1.ClusterGroupUpgradeStatus{CurrentBatch: &ranv1alpha1.BatchStatus{Index: 2}}

	f := FleetOf([]ranv1alpha1.ClusterGroupUpgradeBatch{b3, b2, b1}, st)
	want := &Fleet{Epoch: f.Epoch, Canaries: 1,
		Names:   []string{"sno-9", "sno-10", "b2-p0-0000", "b2-p0-0001", "b2-p0-0002", "b2-p0-0003", "b3-p0-0000"},
		Batches: []int{1, 1, 2, 2, 2, 2, 3},
		Stages:  []int{0, 0, 2, 0, 0, 0, 0},
		States:  "tcrwhfp"}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("fleet (-want +got):\n%s", diff)
	}
	if FleetOf(nil, st) != nil {
		t.Error("a rollout without records has a map")
	}

	// The epoch follows the clusters and their batches, not their states.
	b2.Status.Clusters[0].State = ranv1alpha1.ClusterCompleted
	if again := FleetOf([]ranv1alpha1.ClusterGroupUpgradeBatch{b1, b2, b3}, st); again.Epoch != f.Epoch || again.States == f.States {
		t.Errorf("a state change: epoch %s -> %s, states %s -> %s", f.Epoch, again.Epoch, f.States, again.States)
	}
	b3.Spec.Index = 4
	if moved := FleetOf([]ranv1alpha1.ClusterGroupUpgradeBatch{b1, b2, b3}, st); moved.Epoch == f.Epoch {
		t.Error("a cluster moved to another batch and the epoch stayed")
	}
}

func TestDeltaOf(t *testing.T) {
	if d := DeltaOf("e", "pppp", "pppp"); d != nil {
		t.Errorf("no change sends %+v", d)
	}
	if d := DeltaOf("e", "pprpppppp", "cprpppppr"); *d != (Delta{Epoch: "e", Changes: "0c8r"}) {
		t.Errorf("delta %+v", d)
	}
	// A change of most clusters sends the whole string, which is shorter.
	if d := DeltaOf("e", "pppp", "rrrr"); *d != (Delta{Epoch: "e", States: "rrrr"}) {
		t.Errorf("delta %+v", d)
	}
	// Applying a delta as the page does gives the states after.
	before := strings.Repeat("p", 10000)
	after := []byte(before)
	for i := 0; i < len(after); i += 97 {
		after[i] = "rcft"[i%4]
	}
	d := DeltaOf("e", before, string(after))
	got := []byte(before)
	for _, m := range regexp.MustCompile(`(\d+)([a-z])`).FindAllStringSubmatch(d.Changes, -1) {
		i, _ := strconv.Atoi(m[1])
		got[i] = m[2][0]
	}
	if string(got) != string(after) {
		t.Error("the delta does not turn the states before into those after")
	}
	if len(d.Changes) > 1000 {
		t.Errorf("104 changes of 10,000 clusters take %d bytes", len(d.Changes))
	}
}

// The chart's last point counts what the records count; each batch start is a boundary; the
// estimate projects the clusters done to the total.
func TestProgressOf(t *testing.T) {
	completed := func(r *ranv1alpha1.ClusterGroupUpgradeBatch, i, minute int) {
		r.Status.Clusters[i].Since = at(minute)
	}
	b1 := record(1, 0, at(0), at(10), 2, ranv1alpha1.ClusterCompleted, ranv1alpha1.ClusterCompleted)
	completed(&b1, 0, 4)
	completed(&b1, 1, 9)
	b2 := record(2, 0, at(10), nil, 4, ranv1alpha1.ClusterCompleted, ranv1alpha1.ClusterFailed, ranv1alpha1.ClusterInProgress, ranv1alpha1.ClusterHeld)
	completed(&b2, 0, 15)
	completed(&b2, 1, 20)
	b3 := record(3, 0, nil, nil, 3)
	cgu := &ranv1alpha1.ClusterGroupUpgrade{Status: ranv1alpha1.ClusterGroupUpgradeStatus{StartedAt: at(0),
		CurrentBatch: &ranv1alpha1.BatchStatus{Index: 2}}}
	records := []ranv1alpha1.ClusterGroupUpgradeBatch{b1, b2, b3}
	line := timeline(records, cgu.Status)
	p := ProgressOf(cgu, records, nil, line, &ETA{TotalSeconds: 1200}, at(30).Time)

	// 30 minutes fit in 180 points of 10 seconds.
	if p.Step != 10 || len(p.Completed) != 180 || p.Total != 9 {
		t.Fatalf("step %ds, %d points, total %d", p.Step, len(p.Completed), p.Total)
	}
	last := len(p.Completed) - 1
	if got := [4]int{p.Completed[last], p.Failed[last], p.TimedOut[last], p.InProgress[last]}; got != [4]int{3, 1, 0, 1} {
		t.Errorf("last point: completed, failed, timed out, in progress = %v, want [3 1 0 1]", got)
	}
	// At minute 5 (the 30th point): one completed, one in progress; at minute 12: two
	// completed, three in progress (batch 2 started at 10).
	if got := [2]int{p.Completed[29], p.InProgress[29]}; got != [2]int{1, 1} {
		t.Errorf("minute 5: %v, want [1 1]", got)
	}
	if got := [2]int{p.Completed[71], p.InProgress[71]}; got != [2]int{2, 3} {
		t.Errorf("minute 12: %v, want [2 3]", got)
	}
	if diff := cmp.Diff([]BatchStart{{1, at(0).Time}, {2, at(10).Time}}, p.Batches); diff != "" {
		t.Errorf("batches (-want +got):\n%s", diff)
	}
	if want := (Projection{From: at(30).Time, Done: 4, Until: at(50).Time}); p.Projection == nil || *p.Projection != want {
		t.Errorf("projection %+v, want %+v", p.Projection, want)
	}
	if ProgressOf(&ranv1alpha1.ClusterGroupUpgrade{}, nil, nil, nil, nil, t0) != nil {
		t.Error("a rollout not started has a chart")
	}

	// A rollout of three days has points of half an hour at most.
	long := ProgressOf(cgu, records, nil, line, nil, at(3*24*60).Time)
	if len(long.Completed) > ProgressPoints || long.Step != 1800 {
		t.Errorf("three days: %d points of %ds", len(long.Completed), long.Step)
	}
}

// A pause is drawn from its event to the resume; a frozen fleet from the batch's waiting
// event to its start; the hold of now from the condition.
func TestProgressHolds(t *testing.T) {
	event := func(reason string, minute int, message string, batch int) corev1.Event {
		e := corev1.Event{Reason: reason, Message: message, FirstTimestamp: *at(minute), LastTimestamp: *at(minute), Count: 1}
		if batch > 0 {
			e.Annotations = map[string]string{talm.AnnotationBatchIndex: strconv.Itoa(batch)}
		}
		return e
	}
	events := []corev1.Event{
		event(talm.ReasonResumed, 8, "resumed", 0),
		event(talm.ReasonPaused, 5, "paused", 0),
		event(talm.ReasonWaiting, 11, "ClusterGroupUpgrade u: batch index 2 waits (FleetFrozen): frozen", 2),
		event(talm.ReasonWaiting, 21, "ClusterGroupUpgrade u: batch index 3 waits (WaitingForApproval): approve", 3),
	}
	b1 := record(1, 0, at(0), at(10), 1, ranv1alpha1.ClusterCompleted)
	b2 := record(2, 0, at(15), at(20), 1, ranv1alpha1.ClusterCompleted)
	b3 := record(3, 0, nil, nil, 1)
	cgu := &ranv1alpha1.ClusterGroupUpgrade{Status: ranv1alpha1.ClusterGroupUpgradeStatus{StartedAt: at(0),
		Waiting: &ranv1alpha1.WaitingStatus{Reason: ranv1alpha1.ReasonWaitingForApproval, Batch: 3}}}
	records := []ranv1alpha1.ClusterGroupUpgradeBatch{b1, b2, b3}
	p := ProgressOf(cgu, records, events, timeline(records, cgu.Status), nil, at(30).Time)
	want := []Hold{
		{Kind: HoldPause, Reason: ranv1alpha1.ReasonPaused, From: at(5).Time, To: &at(8).Time},
		{Kind: HoldFreeze, Reason: ranv1alpha1.ReasonFleetFrozen, Batch: 2, From: at(11).Time, To: &at(15).Time},
		{Kind: HoldWait, Reason: ranv1alpha1.ReasonWaitingForApproval, Batch: 3, From: at(21).Time},
	}
	if diff := cmp.Diff(want, p.Holds); diff != "" {
		t.Errorf("holds (-want +got):\n%s", diff)
	}

	// Without the events (expired), the hold of now comes from the condition.
	cgu.Spec.Paused = true
	cgu.Status.Waiting = &ranv1alpha1.WaitingStatus{Reason: ranv1alpha1.ReasonPaused, Batch: 3}
	cgu.Status.Conditions = []metav1.Condition{{Type: ranv1alpha1.ConditionProgressing, Reason: ranv1alpha1.ReasonPaused, LastTransitionTime: *at(25)}}
	p = ProgressOf(cgu, records, nil, timeline(records, cgu.Status), nil, at(30).Time)
	if diff := cmp.Diff([]Hold{{Kind: HoldPause, Reason: ranv1alpha1.ReasonPaused, From: at(25).Time}}, p.Holds); diff != "" {
		t.Errorf("holds without events (-want +got):\n%s", diff)
	}
}

// Per-cluster events fold into one group per kind and batch, failures first, then holds,
// with their clusters abbreviated.
func TestGroupEvents(t *testing.T) {
	var events []corev1.Event
	batchOf := map[string]int{}
	for i := 1; i <= 300; i++ {
		name := fmt.Sprintf("sno-%03d", i)
		batchOf[name] = 1 + (i-1)/100
		e := talm.ClusterCompleted("u", name)
		if i == 150 {
			e = talm.ClusterTimedOut("u", name, "upgrade")
		}
		events = append(events, corev1.Event{Type: e.Type, Reason: e.Reason, Action: e.Action, Message: e.Note, Count: 1,
			ObjectMeta: metav1.ObjectMeta{Annotations: e.Annotations}, LastTimestamp: *at(i / 10)})
	}
	started := talm.BatchStarted("u", 2, []string{"sno-101"}, 300)
	events = append(events, corev1.Event{Type: started.Type, Reason: started.Reason, Action: started.Action, Message: started.Note, Count: 1,
		ObjectMeta: metav1.ObjectMeta{Annotations: started.Annotations}, LastTimestamp: *at(1)})
	w := talm.Waiting("u", 3, ranv1alpha1.ReasonWaitingForApproval, "approve")
	events = append(events, corev1.Event{Type: w.Type, Reason: w.Reason, Action: w.Action, Message: w.Note, Count: 2,
		ObjectMeta: metav1.ObjectMeta{Annotations: w.Annotations}, LastTimestamp: *at(5)})

	g := GroupEvents(events, batchOf)
	var got []string
	for _, x := range g {
		got = append(got, fmt.Sprintf("%d %s b%d ×%d %s", x.Rank, x.Action, x.Batch, x.Count, x.ClusterText))
	}
	want := []string{
		"0 RemediationInClusterTimeout b2 ×1 1 cluster: sno-150",
		"1 RemediationInBatchWaiting b3 ×2 ",
		"2 RemediationInClusterCompleted b3 ×100 100 clusters: sno-201..sno-300",
		"2 RemediationInClusterCompleted b2 ×99 99 clusters: sno-101..sno-149, sno-151..sno-200",
		"2 RemediationInClusterCompleted b1 ×100 100 clusters: sno-001..sno-100",
		"2 RemediationInBatchStarted b2 ×1 ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	if g[0].Message != "ClusterGroupUpgrade u: cluster sno-150 timed out remediating policy upgrade" || g[2].Clusters != 100 {
		t.Errorf("first group %+v", g[0])
	}
}

// The map of 10,000 clusters is sent once, in less than 30 bytes a cluster; the detail beside it
// stays bounded.
func TestFleetSizeAtTenThousand(t *testing.T) {
	f := FleetOf(fleetRecords(10000, 2000), ranv1alpha1.ClusterGroupUpgradeStatus{CurrentBatch: &ranv1alpha1.BatchStatus{Index: 1}})
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Names) != 10000 || len(data) > 10000*30 {
		t.Errorf("%d clusters in %d bytes", len(f.Names), len(data))
	}
	t.Logf("the map of 10,000 clusters is %d bytes", len(data))
}

// The map groups by a label the rollout's clusters carry; a label with a value per cluster
// (a name) or the hub's own feature labels are not offered.
func TestLabelsOf(t *testing.T) {
	f := &Fleet{Epoch: "e", Names: []string{"a", "b", "c", "d"}}
	clusters := map[string]map[string]string{
		"a": {"site": "paris", "name": "a", "feature.open-cluster-management.io/addon-x": "available"},
		"b": {"site": "lyon", "name": "b"},
		"c": {"site": "paris", "name": "c", "region": "eu"},
		"d": {"name": "d"},
	}
	got := LabelsOf(f, clusters, "")
	if diff := cmp.Diff(Labels{Epoch: "e", Keys: []string{"region", "site"}}, got); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	got = LabelsOf(f, clusters, "site")
	want := Labels{Epoch: "e", Keys: []string{"region", "site"}, Key: "site", Values: []string{"lyon", "paris"}, Of: []int{1, 0, 1, -1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("site (-want +got):\n%s", diff)
	}
	if got := LabelsOf(f, clusters, "name"); got.Key != "" || got.Of != nil {
		t.Errorf("a key not offered is answered: %+v", got)
	}
}
