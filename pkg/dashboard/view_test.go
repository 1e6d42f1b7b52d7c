package dashboard

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

var t0 = time.Date(2026, 11, 27, 2, 0, 0, 0, time.UTC)

func at(minutes int) *metav1.Time {
	return ptr.To(metav1.NewTime(t0.Add(time.Duration(minutes) * time.Minute)))
}

func progressing(reason, message string) []metav1.Condition {
	return []metav1.Condition{{Type: ranv1alpha1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: reason, Message: message}}
}

func TestWaitOf(t *testing.T) {
	cases := map[string]struct {
		status ranv1alpha1.ClusterGroupUpgradeStatus
		want   *Wait
	}{
		"running, waiting for its clusters only": {
			status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotCompleted,
				CurrentBatch: &ranv1alpha1.BatchStatus{Index: 2, Clusters: []ranv1alpha1.ClusterProgress{{Name: "a", State: ranv1alpha1.ClusterInProgress}}}},
		},
		"an approval between batches": {
			status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotCompleted,
				Waiting:    &ranv1alpha1.WaitingStatus{Reason: ranv1alpha1.ReasonWaitingForApproval, Batch: 3},
				Conditions: progressing(ranv1alpha1.ReasonWaitingForApproval, "Batch 3 waits for approval")},
			want: &Wait{Kind: WaitApproval, Reason: ranv1alpha1.ReasonWaitingForApproval, Batch: 3, Message: "Batch 3 waits for approval"},
		},
		"a maintenance window, with its opening": {
			status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotCompleted,
				Waiting: &ranv1alpha1.WaitingStatus{Reason: ranv1alpha1.ReasonOutsideMaintenanceWindow, Batch: 2, Until: at(60)}},
			want: &Wait{Kind: WaitWindow, Reason: ranv1alpha1.ReasonOutsideMaintenanceWindow, Batch: 2, Until: at(60)},
		},
		"a blocking rollout": {
			status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotStarted,
				Conditions: progressing(ranv1alpha1.ReasonIncompleteBlockingCR, "Blocked by platform/first")},
			want: &Wait{Kind: WaitBlocker, Reason: ranv1alpha1.ReasonIncompleteBlockingCR, Message: "Blocked by platform/first"},
		},
		"the hub's capacity": {
			status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotCompleted,
				CurrentBatch: &ranv1alpha1.BatchStatus{Index: 4, Clusters: []ranv1alpha1.ClusterProgress{
					{Name: "a", State: ranv1alpha1.ClusterInProgress},
					{Name: "b", State: ranv1alpha1.ClusterPending, Reason: ranv1alpha1.ReasonHubCapacityReached},
				}}},
			want: &Wait{Kind: WaitHubCapacity, Reason: ranv1alpha1.ReasonHubCapacityReached, Batch: 4,
				Message: "clusters of batch 4 wait for room under the hub-wide cap on clusters in progress"},
		},
		"a fleet freeze, inside a batch": {
			status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotCompleted,
				Conditions: progressing(ranv1alpha1.ReasonFleetFrozen, "Batch 1 of 2: 1 cluster in progress; cluster b waits: the fleet is frozen by FleetFreeze manual: sales"),
				CurrentBatch: &ranv1alpha1.BatchStatus{Index: 1, Clusters: []ranv1alpha1.ClusterProgress{
					{Name: "b", State: ranv1alpha1.ClusterPending, Reason: ranv1alpha1.ReasonFleetFrozen},
				}}},
			want: &Wait{Kind: WaitFrozen, Reason: ranv1alpha1.ReasonFleetFrozen,
				Message: "Batch 1 of 2: 1 cluster in progress; cluster b waits: the fleet is frozen by FleetFreeze manual: sales"},
		},
		"a batch analysed before it ends": {
			status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotCompleted,
				Waiting:    &ranv1alpha1.WaitingStatus{Reason: ranv1alpha1.ReasonBatchAnalysis, Batch: 2, Until: at(30)},
				Conditions: progressing(ranv1alpha1.ReasonBatchAnalysis, "Batch 2 is analysed before it ends: api-errors: 1 of 3 measurements passed")},
			want: &Wait{Kind: WaitAnalysis, Reason: ranv1alpha1.ReasonBatchAnalysis, Batch: 2, Until: at(30),
				Message: "Batch 2 is analysed before it ends: api-errors: 1 of 3 measurements passed"},
		},
		"an analysis that got no answer": {
			status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotCompleted,
				Waiting:    &ranv1alpha1.WaitingStatus{Reason: ranv1alpha1.ReasonAnalysisInconclusive, Batch: 1},
				Conditions: progressing(ranv1alpha1.ReasonAnalysisInconclusive, "Batch 1 is analysed before it ends: api-errors is inconclusive")},
			want: &Wait{Kind: WaitInconclusive, Reason: ranv1alpha1.ReasonAnalysisInconclusive, Batch: 1,
				Message: "Batch 1 is analysed before it ends: api-errors is inconclusive"},
		},
		"the analysis's condition alone": {
			status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotCompleted,
				Conditions: progressing(ranv1alpha1.ReasonAnalysisInconclusive, "api-errors is inconclusive")},
			want: &Wait{Kind: WaitInconclusive, Reason: ranv1alpha1.ReasonAnalysisInconclusive, Message: "api-errors is inconclusive"},
		},
		"the failure budget spent": {
			status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateTimedOut, Conditions: []metav1.Condition{
				{Type: ranv1alpha1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: ranv1alpha1.ReasonTimedOut},
				{Type: ranv1alpha1.ConditionSucceeded, Status: metav1.ConditionFalse, Reason: ranv1alpha1.ReasonFailureBudgetExceeded, Message: "3 clusters failed"},
			}},
			want: &Wait{Kind: WaitFailureBudget, Reason: ranv1alpha1.ReasonFailureBudgetExceeded, Message: "3 clusters failed"},
		},
		"a spec to fix": {
			status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateCannotStart,
				Conditions: progressing(ranv1alpha1.ReasonNotAllManagedPoliciesExist, "missing policy p")},
			want: &Wait{Kind: WaitSpec, Reason: ranv1alpha1.ReasonNotAllManagedPoliciesExist, Message: "missing policy p"},
		},
		"completed waits for nothing": {
			status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateCompleted,
				Waiting: &ranv1alpha1.WaitingStatus{Reason: ranv1alpha1.ReasonPaused}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := WaitOf(&ranv1alpha1.ClusterGroupUpgrade{Status: tc.status})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("WaitOf (-want +got):\n%s", diff)
			}
		})
	}
}

// record is one part of a batch: clusters named <prefix>-<i>, the first states given.
func record(index, part int, started, finished *metav1.Time, n int, states ...ranv1alpha1.ClusterState) ranv1alpha1.ClusterGroupUpgradeBatch {
	r := ranv1alpha1.ClusterGroupUpgradeBatch{
		Spec:   ranv1alpha1.ClusterGroupUpgradeBatchSpec{Upgrade: "u", Index: index, Part: part, Canary: index == 1},
		Status: ranv1alpha1.ClusterGroupUpgradeBatchStatus{StartedAt: started, FinishedAt: finished},
	}
	for i := range n {
		name := fmt.Sprintf("b%d-p%d-%04d", index, part, i)
		r.Spec.Clusters = append(r.Spec.Clusters, name)
		if i < len(states) {
			r.Status.Clusters = append(r.Status.Clusters, ranv1alpha1.ClusterProgress{Name: name, State: states[i]})
		}
	}
	return r
}

func repeat(s ranv1alpha1.ClusterState, n int) []ranv1alpha1.ClusterState {
	out := make([]ranv1alpha1.ClusterState, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestUpgradeDetail(t *testing.T) {
	cgu := &ranv1alpha1.ClusterGroupUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "u"},
		Spec:       ranv1alpha1.ClusterGroupUpgradeSpec{RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{Timeout: 240}},
		Status: ranv1alpha1.ClusterGroupUpgradeStatus{
			State: ranv1alpha1.StateNotCompleted, Plan: &ranv1alpha1.PlanSummary{Batches: 4, FrozenAt: at(0)},
			CurrentBatch: &ranv1alpha1.BatchStatus{Index: 3},
			Counts:       ranv1alpha1.ClusterCounts{Total: 1201, Completed: 300, Failed: 1, InProgress: 200, Pending: 700},
		},
	}
	// Batch 3 is split over three parts: 600 clusters, 200 in progress, 120 held for the
	// hub's capacity. Batch 2 ended with a failed cluster.
	held := append(repeat(ranv1alpha1.ClusterInProgress, 200), repeat(ranv1alpha1.ClusterPending, 120)...)
	records := []ranv1alpha1.ClusterGroupUpgradeBatch{
		record(4, 0, nil, nil, 1),
		record(3, 2, at(20), nil, 100),
		record(3, 0, at(20), nil, 250, held[:250]...),
		record(3, 1, at(20), nil, 250, held[250:]...),
		record(1, 0, at(0), at(10), 1, ranv1alpha1.ClusterCompleted),
		record(2, 0, at(10), at(20), 250, append(repeat(ranv1alpha1.ClusterCompleted, 249), ranv1alpha1.ClusterFailed)...),
		record(2, 1, at(10), at(20), 100, repeat(ranv1alpha1.ClusterCompleted, 100)...),
	}
	for i := range records[2].Status.Clusters {
		if records[2].Status.Clusters[i].State == ranv1alpha1.ClusterPending {
			records[2].Status.Clusters[i].Reason = ranv1alpha1.ReasonHubCapacityReached
		}
	}
	for i := range records[3].Status.Clusters {
		if records[3].Status.Clusters[i].State == ranv1alpha1.ClusterPending {
			records[3].Status.Clusters[i].Reason = ranv1alpha1.ReasonHubCapacityReached
		}
	}
	var events []corev1.Event
	for i := range 30 {
		events = append(events, corev1.Event{Reason: fmt.Sprintf("E%02d", i), LastTimestamp: *at(i)})
	}
	d := UpgradeDetail(cgu, records, events, at(30).Time)

	t.Run("timeline", func(t *testing.T) { checkTimeline(t, d) })
	t.Run("running batch", func(t *testing.T) { checkRunning(t, d) })
	t.Run("held and failed", func(t *testing.T) { checkProblems(t, d) })
	t.Run("events, estimate and actions", func(t *testing.T) { checkRest(t, d) })
}

func checkTimeline(t *testing.T, d Detail) {
	t.Helper()
	var states []string
	for _, b := range d.Timeline {
		states = append(states, fmt.Sprintf("%d:%s:%d", b.Index, b.State, b.Clusters))
	}
	if diff := cmp.Diff([]string{"1:ended:1", "2:ended:350", "3:running:600", "4:planned:1"}, states); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
	if got := d.Timeline[2].Counts; got != (ranv1alpha1.ClusterCounts{Total: 600, InProgress: 200, Pending: 400}) {
		t.Errorf("batch 3 counts %+v", got)
	}
}

func checkRunning(t *testing.T, d Detail) {
	t.Helper()
	if d.Running == nil || d.Running.Index != 3 || d.Running.Counts.Total != 600 {
		t.Fatalf("running batch %+v", d.Running)
	}
	if want := (ranv1alpha1.ClusterCounts{Total: 600, InProgress: 200, Pending: 400}); d.Running.Counts != want {
		t.Errorf("running batch counts %+v, want %+v", d.Running.Counts, want)
	}
}

func checkProblems(t *testing.T, d Detail) {
	t.Helper()
	if len(d.Held) != ProblemLimit || d.HeldNotShown != 20 || d.Held[0].Reason != ranv1alpha1.ReasonHubCapacityReached {
		t.Errorf("held: %d shown, %d not shown, first %+v", len(d.Held), d.HeldNotShown, d.Held[0])
	}
	if diff := cmp.Diff([]Cluster{{Name: "b2-p0-0249", Batch: 2, State: "Failed"}}, d.Failed); diff != "" {
		t.Errorf("failed (-want +got):\n%s", diff)
	}
}

func checkRest(t *testing.T, d Detail) {
	t.Helper()
	if len(d.Events) != EventLimit || d.Events[0].Reason != "E29" || d.Events[EventLimit-1].Reason != "E10" {
		t.Errorf("events: %d, from %s to %s; want the latest %d, newest first", len(d.Events), d.Events[0].Reason, d.Events[len(d.Events)-1].Reason, EventLimit)
	}
	// Two batches ended, in ten minutes each: the two left are estimated at twenty.
	if d.ETA == nil || *d.ETA != (ETA{BatchesLeft: 2, PerBatchSeconds: 600, TotalSeconds: 1200, Ended: 2,
		Text: "about 20m: 2 batches at 10m each, the median of 2 batches that ended"}) {
		t.Errorf("ETA %+v", d.ETA)
	}
	if d.Actions != (Actions{Pause: true}) {
		t.Errorf("actions %+v, want pause only", d.Actions)
	}
}

func TestActions(t *testing.T) {
	cases := map[string]struct {
		spec   ranv1alpha1.ClusterGroupUpgradeSpec
		status ranv1alpha1.ClusterGroupUpgradeStatus
		want   Actions
	}{
		"not enabled":   {spec: ranv1alpha1.ClusterGroupUpgradeSpec{Enable: ptr.To(false)}, want: Actions{Enable: true, Pause: true}},
		"paused":        {spec: ranv1alpha1.ClusterGroupUpgradeSpec{Paused: true}, status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotCompleted}, want: Actions{Resume: true}},
		"waiting":       {status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotCompleted, Waiting: &ranv1alpha1.WaitingStatus{Reason: ranv1alpha1.ReasonManagedPolicyChanged, Batch: 2}}, want: Actions{Pause: true, Approve: 2}},
		"completed":     {status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateCompleted}},
		"timed out off": {spec: ranv1alpha1.ClusterGroupUpgradeSpec{Enable: ptr.To(false)}, status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateTimedOut}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := actions(&ranv1alpha1.ClusterGroupUpgrade{Spec: tc.spec, Status: tc.status}); got != tc.want {
				t.Errorf("actions %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestOverview(t *testing.T) {
	cgus := []ranv1alpha1.ClusterGroupUpgrade{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "z"}, Status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateCompleted,
			Counts: ranv1alpha1.ClusterCounts{Total: 3, Completed: 3}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "y", OwnerReferences: []metav1.OwnerReference{{Kind: KindIBGU, Name: "ibu"}}},
			Status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotCompleted, Counts: ranv1alpha1.ClusterCounts{Total: 5, Completed: 1, Failed: 1, InProgress: 3}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "x"}},
	}
	groups := []lcmv1alpha1.ImageBasedGroupUpgrade{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "ibu"},
		Spec:       lcmv1alpha1.ImageBasedGroupUpgradeSpec{Plan: []lcmv1alpha1.PlanItem{{Actions: []string{"Prep"}}, {Actions: []string{"Upgrade"}}}},
		Status: lcmv1alpha1.ImageBasedGroupUpgradeStatus{
			Steps:    []lcmv1alpha1.StepStatus{{Index: 0, Ended: true, Counts: &ranv1alpha1.ClusterCounts{Total: 5, Completed: 4, Failed: 1}}},
			Clusters: []lcmv1alpha1.ClusterState{{Name: "c", FailedActions: []lcmv1alpha1.ActionMessage{{Action: "Prep", Message: "no room"}}}},
		},
	}}
	o := NewOverview("all namespaces", cgus, groups, nil)
	var names []string
	for _, r := range o.Rows {
		names = append(names, r.Namespace+"/"+r.Name+" "+r.State+" "+r.Batch)
	}
	if diff := cmp.Diff([]string{"a/ibu - 2/2", "a/x NotStarted ", "a/y NotCompleted ", "b/z Completed "}, names); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if o.Rows[2].Owner != "ibu" || o.Rows[0].Done != 5 || o.Rows[0].Total != 5 {
		t.Errorf("rows %+v", o.Rows)
	}
	if diff := cmp.Diff(map[string]int{"Completed": 1, "NotCompleted": 1, "NotStarted": 1}, o.States); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if o.Clusters != (ranv1alpha1.ClusterCounts{Total: 8, Completed: 4, Failed: 1, InProgress: 3}) {
		t.Errorf("clusters %+v", o.Clusters)
	}
	d := GroupDetail(&groups[0], nil)
	if len(d.Steps) != 2 || d.Steps[1].State != BatchPlanned || len(d.Failed) != 1 || d.Failed[0].Reason != "no room" {
		t.Errorf("group detail %+v", d)
	}
}

// A ManagedClustersUpgrade lists first, with its summary; its ClusterGroupUpgrade names it;
// its page has its release, its updates and the clusters its plan holds.
func TestReleaseRowAndPage(t *testing.T) {
	cgus := []ranv1alpha1.ClusterGroupUpgrade{{ObjectMeta: metav1.ObjectMeta{Namespace: "c", Name: "to-4.16",
		OwnerReferences: []metav1.OwnerReference{{Kind: KindMCU, Name: "to-4.16"}}}}}
	groups := []lcmv1alpha1.ImageBasedGroupUpgrade{{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "ibu"}}}
	releases := []ranv1alpha1.ManagedClustersUpgrade{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "c", Name: "to-4.16"},
		Spec:       ranv1alpha1.ManagedClustersUpgradeSpec{ClusterVersion: ranv1alpha1.MCUClusterVersion{Channel: "eus-4.16", Version: "4.16.20"}},
		Status: ranv1alpha1.ManagedClustersUpgradeStatus{Upgrade: "to-4.16",
			Stages:          []ranv1alpha1.MCUStage{{Index: 1, Version: "4.15.40", Clusters: 1, Policy: "to-4.16-4-15-40"}},
			Held:            []ranv1alpha1.MCUHold{{Cluster: "old", Reason: "NoUpdatePath", Message: "the update graph offers no path"}},
			ClustersSummary: &ranv1alpha1.ClustersSummary{Total: 4, Initialized: 2, PartialUpgrade: 1, Complete: 1, Pending: 1, Held: 1},
			WorkerCapacity:  &ranv1alpha1.CapacitySummary{Total: 2, Added: 1},
			Conditions: []metav1.Condition{{Type: ranv1alpha1.MCUConditionInProgress, Status: metav1.ConditionTrue,
				Reason: "UpgradeInProgress", Message: "1 clusters upgrading"}},
		},
	}}
	o := NewOverview("all namespaces", cgus, groups, releases)
	var rows []string
	for _, r := range o.Rows {
		rows = append(rows, r.Kind+" "+r.Namespace+"/"+r.Name+" "+r.State+" "+r.OwnerKind+" "+r.Owner)
	}
	want := []string{"ManagedClustersUpgrade c/to-4.16 InProgress  ", "ImageBasedGroupUpgrade a/ibu -  ",
		"ClusterGroupUpgrade c/to-4.16 NotStarted ManagedClustersUpgrade to-4.16"}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if r := o.Rows[0]; r.Done != 2 || r.Total != 4 || r.Counts.InProgress != 1 || r.Message != "1 clusters upgrading" {
		t.Errorf("release row %+v", r)
	}
	d := ReleaseDetail(&releases[0], nil)
	if d.Release == nil || d.Release.Upgrade != "to-4.16" || len(d.Release.Updates) != 1 || len(d.Held) != 1 ||
		d.Held[0].Reason != "NoUpdatePath: the update graph offers no path" || d.Release.WorkerCapacity == nil || d.Release.WorkerCapacity.Added != 1 {
		t.Errorf("release detail %+v %+v", d.Release, d.Held)
	}
}

// fleetRecords is a started plan of n clusters in batches of size, the first batch running
// with every cluster in progress, the others waiting.
func fleetRecords(n, size int) []ranv1alpha1.ClusterGroupUpgradeBatch {
	var records []ranv1alpha1.ClusterGroupUpgradeBatch
	for index := 1; (index-1)*size < n; index++ {
		inBatch := min(size, n-(index-1)*size)
		for part := 0; part*ranv1alpha1.ClusterDetailLimit < inBatch; part++ {
			count := min(ranv1alpha1.ClusterDetailLimit, inBatch-part*ranv1alpha1.ClusterDetailLimit)
			if index == 1 {
				records = append(records, record(index, part, at(0), nil, count, repeat(ranv1alpha1.ClusterFailed, count)...))
			} else {
				records = append(records, record(index, part, nil, nil, count))
			}
		}
	}
	return records
}

// At 10,000 clusters in batches of 2,000, all failing, the page's detail has the timeline,
// the running batch's counts and ProblemLimit failed clusters: it does not grow with the
// fleet (the map's Fleet does, sent once).
func TestDetailIsBoundedOnALargeFleet(t *testing.T) {
	cgu := &ranv1alpha1.ClusterGroupUpgrade{Status: ranv1alpha1.ClusterGroupUpgradeStatus{
		State: ranv1alpha1.StateNotCompleted, Plan: &ranv1alpha1.PlanSummary{Batches: 5, FrozenAt: at(0)},
		CurrentBatch: &ranv1alpha1.BatchStatus{Index: 1},
	}}
	d := UpgradeDetail(cgu, fleetRecords(10000, 2000), nil, t0)
	if len(d.Timeline) != 5 || d.Running.Counts.Total != 2000 || d.Running.Counts.Failed != 2000 || d.Running.Window != 0 {
		t.Fatalf("timeline %d batches, running %+v", len(d.Timeline), d.Running.Counts)
	}
	if len(d.Failed) != ProblemLimit || d.FailedNotShown != 2000-ProblemLimit {
		t.Errorf("failed: %d shown, %d not shown", len(d.Failed), d.FailedNotShown)
	}
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 64<<10 {
		t.Errorf("the detail of a 10,000-cluster rollout is %d bytes, more than 64 KiB", len(data))
	}
}

func BenchmarkUpgradeDetail(b *testing.B) {
	cgu := &ranv1alpha1.ClusterGroupUpgrade{Status: ranv1alpha1.ClusterGroupUpgradeStatus{
		State: ranv1alpha1.StateNotCompleted, Plan: &ranv1alpha1.PlanSummary{Batches: 20, FrozenAt: at(0)},
		CurrentBatch: &ranv1alpha1.BatchStatus{Index: 1},
	}}
	for _, n := range []int{1000, 10000} {
		records := fleetRecords(n, 500)
		b.Run(fmt.Sprintf("clusters=%d", n), func(b *testing.B) {
			for b.Loop() {
				d := UpgradeDetail(cgu, records, nil, t0)
				if _, err := json.Marshal(d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A Window rollout's window shows its size on the timeline and on the running batch.
func TestWindowShowsItsSize(t *testing.T) {
	cgu := &ranv1alpha1.ClusterGroupUpgrade{Status: ranv1alpha1.ClusterGroupUpgradeStatus{
		State: ranv1alpha1.StateNotCompleted, Plan: &ranv1alpha1.PlanSummary{Batches: 2, FrozenAt: at(0)},
		CurrentBatch: &ranv1alpha1.BatchStatus{Index: 2},
	}}
	// 40 clusters, 10 at a time: 4 waves in 200 minutes, 50 a cluster. Two completed, in 20
	// and 30 minutes; 10 run, 28 wait: 4 waves left at the median 25 minutes.
	records := []ranv1alpha1.ClusterGroupUpgradeBatch{record(1, 0, at(0), at(5), 1, ranv1alpha1.ClusterCompleted),
		record(2, 0, at(5), nil, 40, append([]ranv1alpha1.ClusterState{ranv1alpha1.ClusterCompleted, ranv1alpha1.ClusterCompleted},
			repeat(ranv1alpha1.ClusterInProgress, 10)...)...)}
	records[1].Spec.Window = 10
	records[1].Status.TimeoutAt = at(205)
	for i, took := range []int{20, 30} {
		records[1].Status.Clusters[i].StartedAt, records[1].Status.Clusters[i].Since = at(5), at(5+took)
	}
	d := UpgradeDetail(cgu, records, nil, t0)
	if d.Timeline[0].Window != 0 || d.Timeline[1].Window != 10 || d.Running == nil || d.Running.Window != 10 {
		t.Fatalf("timeline %+v, running %+v", d.Timeline, d.Running)
	}
	if want := (ETA{Window: 10, BatchesLeft: 4, PerBatchSeconds: 1500, TotalSeconds: 6000, Ended: 2,
		Text: "about 1h40m: 4 waves of 10 clusters at 25m each, the median of 2 clusters that completed"}); d.ETA == nil || *d.ETA != want {
		t.Errorf("ETA %+v, want %+v", d.ETA, want)
	}
}

// A Progressive batch shows its stage sizes on the timeline and its stage in the running
// batch, and counts in the estimate as the stages its clusters not done take.
func TestProgressiveShowsItsStages(t *testing.T) {
	stage := &ranv1alpha1.StageStatus{Number: 2, Size: 2, Step: 2, StartedAt: at(10), Resets: 0}
	cgu := &ranv1alpha1.ClusterGroupUpgrade{Status: ranv1alpha1.ClusterGroupUpgradeStatus{
		State: ranv1alpha1.StateNotCompleted, Plan: &ranv1alpha1.PlanSummary{Batches: 2, FrozenAt: at(0)},
		CurrentBatch: &ranv1alpha1.BatchStatus{Index: 2, Stage: stage},
	}}
	// 10 clusters growing 1, 2, 4: one done, two run, seven wait. The nine not done take
	// four stages from the first size (1, 2, 4, 2), and the canary ended in 5 minutes.
	records := []ranv1alpha1.ClusterGroupUpgradeBatch{record(1, 0, at(0), at(5), 1, ranv1alpha1.ClusterCompleted),
		record(2, 0, at(5), nil, 10, ranv1alpha1.ClusterCompleted, ranv1alpha1.ClusterInProgress, ranv1alpha1.ClusterInProgress)}
	records[1].Spec.Stages = []int{1, 2, 4}
	d := UpgradeDetail(cgu, records, nil, t0)
	if !slices.Equal(d.Timeline[1].Stages, []int{1, 2, 4}) || d.Timeline[0].Stages != nil || d.Running == nil || d.Running.Stage != stage {
		t.Fatalf("timeline %+v, running %+v", d.Timeline, d.Running)
	}
	if want := (ETA{BatchesLeft: 4, StagesLeft: 4, PerBatchSeconds: 300, TotalSeconds: 1200, Ended: 1,
		Text: "about 20m: 4 stages at 5m each, the median of 1 batch that ended"}); d.ETA == nil || *d.ETA != want {
		t.Errorf("ETA %+v, want %+v", d.ETA, want)
	}
}

// analysed is a batch's first record with the analysis of gates (named, with measurements
// as value:outcome pairs, the value "" for none).
func analysed(index int, gates map[string][]string) ranv1alpha1.ClusterGroupUpgradeBatch {
	r := record(index, 0, at(index*10), nil, 2)
	r.Status.Analysis = &ranv1alpha1.BatchAnalysis{StartedAt: *at(index*10 + 5)}
	for _, name := range slices.Sorted(maps.Keys(gates)) {
		g := ranv1alpha1.AnalysisGateStatus{Name: name, Phase: ranv1alpha1.AnalysisRunning, Query: "q{cluster=~\"{{clusters}}\"}"}
		for i, m := range gates[name] {
			value, outcome, _ := strings.Cut(m, ":")
			g.Measurements = append(g.Measurements, ranv1alpha1.AnalysisMeasurement{At: *at(index*10 + 6 + i), Outcome: ranv1alpha1.AnalysisPhase(outcome), Value: value})
		}
		r.Status.Analysis.Gates = append(r.Status.Analysis.Gates, g)
	}
	return r
}

func TestAnalysisOfEachBatch(t *testing.T) {
	spec := &ranv1alpha1.Analysis{Gates: []ranv1alpha1.AnalysisGate{
		{Name: "api-errors", SuccessCondition: "< 0.05"},
		{Name: "vs-baseline", Mode: ranv1alpha1.AnalysisComparison},
	}}
	cases := map[string]struct {
		records []ranv1alpha1.ClusterGroupUpgradeBatch
		// want is each batch's gates as "batch name mode condition: value/baseline outcome, ..."
		want []string
	}{
		"no analysis": {records: []ranv1alpha1.ClusterGroupUpgradeBatch{record(1, 0, at(0), nil, 2)}},
		"an Absolute gate, in plan order, the first record of a batch only": {
			records: func() []ranv1alpha1.ClusterGroupUpgradeBatch {
				later, part := analysed(2, map[string][]string{"api-errors": {"0.2:Failed"}}), analysed(1, map[string][]string{"api-errors": {"9:Failed"}})
				part.Spec.Part = 1
				return []ranv1alpha1.ClusterGroupUpgradeBatch{later, part, analysed(1, map[string][]string{"api-errors": {"0.01:Passed", ":Inconclusive", "0.012:Passed"}})}
			}(),
			want: []string{"1 api-errors Absolute < 0.05: 0.01/- Passed, -/- Inconclusive, 0.012/- Passed", "2 api-errors Absolute < 0.05: 0.2/- Failed"},
		},
		"a comparison's baseline": {
			records: func() []ranv1alpha1.ClusterGroupUpgradeBatch {
				r := analysed(1, map[string][]string{"vs-baseline": {"0.03:Failed"}})
				r.Status.Analysis.Gates[0].Measurements[0].Baseline = "0.0125"
				return []ranv1alpha1.ClusterGroupUpgradeBatch{r}
			}(),
			want: []string{"1 vs-baseline Comparison : 0.03/0.0125 Failed"},
		},
		"a value that is no finite number is none": {
			records: []ranv1alpha1.ClusterGroupUpgradeBatch{analysed(1, map[string][]string{"api-errors": {"NaN:Failed", "+Inf:Failed", "x:Failed"}})},
			want:    []string{"1 api-errors Absolute < 0.05: -/- Failed, -/- Failed, -/- Failed"},
		},
		"a gate no longer in the spec": {
			records: []ranv1alpha1.ClusterGroupUpgradeBatch{analysed(1, map[string][]string{"gone": {"1:Passed"}})},
			want:    []string{"1 gone  : 1/- Passed"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cgu := &ranv1alpha1.ClusterGroupUpgrade{Spec: ranv1alpha1.ClusterGroupUpgradeSpec{Analysis: spec}}
			var got []string
			for _, a := range UpgradeDetail(cgu, tc.records, nil, t0).Analysis {
				for _, g := range a.Gates {
					var points []string
					for _, p := range g.Points {
						points = append(points, show(p.Value)+"/"+show(p.Baseline)+" "+p.Outcome)
					}
					got = append(got, fmt.Sprintf("%d %s %s %s: %s", a.Batch, g.Name, g.Mode, g.Condition, strings.Join(points, ", ")))
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("analysis (-want +got):\n%s", diff)
			}
		})
	}
}

func show(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

// The page gets a gate's verdict with its counts and the clusters it names, and JSON it can
// read: a measurement without a value is null, never a number.
func TestGateVerdictAsJSON(t *testing.T) {
	r := analysed(1, map[string][]string{"api-errors": {"0.2:Failed", ":Inconclusive"}})
	g := &r.Status.Analysis.Gates[0]
	g.Phase, g.Conclusive, g.Failures, g.Inconclusives = ranv1alpha1.AnalysisFailed, 1, 1, 1
	g.Message, g.Clusters = "api-errors failed: b1-p0-0001 missed value < 0.05", []string{"b1-p0-0001"}
	d := UpgradeDetail(&ranv1alpha1.ClusterGroupUpgrade{}, []ranv1alpha1.ClusterGroupUpgradeBatch{r}, nil, t0)
	data, err := json.Marshal(d.Analysis)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"batch":1,"startedAt":"2026-11-27T02:15:00Z","gates":[{"name":"api-errors","phase":"Failed",` +
		`"query":"q{cluster=~\"{{clusters}}\"}","message":"api-errors failed: b1-p0-0001 missed value \u003c 0.05",` +
		`"conclusive":1,"failures":1,"inconclusives":1,"clusters":["b1-p0-0001"],"points":[` +
		`{"at":"2026-11-27T02:16:00Z","outcome":"Failed","value":0.2,"baseline":null},` +
		`{"at":"2026-11-27T02:17:00Z","outcome":"Inconclusive","value":null,"baseline":null}]}]}]`
	if diff := cmp.Diff(want, string(data)); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
}

// A long plan keeps the latest AnalysisLimit batches' analyses, each with at most GateLimit
// gates of AnalysisGateMeasurementLimit points and GateClusterLimit clusters: what the page
// draws does not grow with the plan or the fleet.
func TestAnalysisIsBounded(t *testing.T) {
	var records []ranv1alpha1.ClusterGroupUpgradeBatch
	for index := 1; index <= 40; index++ {
		gates := map[string][]string{}
		for i := range GateLimit + 2 {
			gates[fmt.Sprintf("gate-%02d", i)] = slices.Repeat([]string{"0.2:Failed"}, ranv1alpha1.AnalysisGateMeasurementLimit+5)
		}
		r := analysed(index, gates)
		for i := range r.Status.Analysis.Gates {
			for c := range 250 {
				r.Status.Analysis.Gates[i].Clusters = append(r.Status.Analysis.Gates[i].Clusters, fmt.Sprintf("cluster-%04d", c))
			}
		}
		records = append(records, r)
	}
	a := UpgradeDetail(&ranv1alpha1.ClusterGroupUpgrade{}, records, nil, t0).Analysis
	if len(a) != AnalysisLimit || a[0].Batch != 31 || a[AnalysisLimit-1].Batch != 40 {
		t.Fatalf("%d batches from %d, want the latest %d", len(a), a[0].Batch, AnalysisLimit)
	}
	g := a[0].Gates
	if len(g) != GateLimit || len(g[0].Points) != ranv1alpha1.AnalysisGateMeasurementLimit ||
		len(g[0].Clusters) != GateClusterLimit || g[0].ClustersNotShown != 250-GateClusterLimit {
		t.Errorf("%d gates, the first with %d points, %d clusters and %d not shown", len(g), len(g[0].Points), len(g[0].Clusters), g[0].ClustersNotShown)
	}
	if last := g[0].Points[len(g[0].Points)-1].At; !last.Equal(at(31*10 + 6 + ranv1alpha1.AnalysisGateMeasurementLimit + 4).Time) {
		t.Errorf("the last point is at %s: the latest measurements are not kept", last)
	}
	// 10 batches of 8 gates of 30 points, at most: about 220 KiB with short queries.
	data, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 256<<10 {
		t.Errorf("the analysis of a long plan is %d bytes, more than 256 KiB", len(data))
	}
}

// Before the start, the page shows the pre-caching and its plan; once started, it does not.
func TestPrecacheBeforeTheStart(t *testing.T) {
	plan := &ranv1alpha1.PrecachePlan{ETA: at(30), Bound: "registry", Bytes: 1 << 30}
	cgu := &ranv1alpha1.ClusterGroupUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "u"},
		Status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotStarted,
			Precaching: &ranv1alpha1.PrecachingStatus{Counts: map[string]int{"Active": 2, "NotStarted": 1}, Plan: plan}},
	}
	d := UpgradeDetail(cgu, nil, nil, at(0).Time)
	if d.Precache == nil || d.Precache.Counts["Active"] != 2 || d.Precache.Plan != plan ||
		!strings.HasPrefix(d.Precache.Text, "Pre-cache plan: ends at ") {
		t.Fatalf("precache %+v", d.Precache)
	}
	cgu.Status.StartedAt = at(40)
	if d := UpgradeDetail(cgu, nil, nil, at(41).Time); d.Precache != nil {
		t.Errorf("a started rollout shows its pre-caching: %+v", d.Precache)
	}
}
