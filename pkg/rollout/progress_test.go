package rollout

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

func TestRecordProgressOnly(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	working := func(name, policy string, since metav1.Time) ranv1alpha1.ClusterProgress {
		return ranv1alpha1.ClusterProgress{Name: name, State: ranv1alpha1.ClusterInProgress, CurrentPolicy: policy, Since: &since}
	}
	base := ranv1alpha1.ClusterGroupUpgradeBatchStatus{StartedAt: &t0, TimeoutAt: &t1,
		Clusters: []ranv1alpha1.ClusterProgress{working("a", "p1", t0), working("b", "p1", t0)}}
	with := func(change func(*ranv1alpha1.ClusterGroupUpgradeBatchStatus)) ranv1alpha1.ClusterGroupUpgradeBatchStatus {
		st := *base.DeepCopy()
		change(&st)
		return st
	}
	cases := map[string]struct {
		cur  ranv1alpha1.ClusterGroupUpgradeBatchStatus
		want bool
	}{
		"unchanged": {base, true},
		"next policy": {with(func(st *ranv1alpha1.ClusterGroupUpgradeBatchStatus) {
			st.Clusters[0] = working("a", "p2", t1)
		}), true},
		"soaking": {with(func(st *ranv1alpha1.ClusterGroupUpgradeBatchStatus) { st.Clusters[1].CompliantSince = &t1 }), false},
		"completed": {with(func(st *ranv1alpha1.ClusterGroupUpgradeBatchStatus) {
			st.Clusters[0] = ranv1alpha1.ClusterProgress{Name: "a", State: ranv1alpha1.ClusterCompleted, Since: &t1}
		}), true},
		"timed out": {with(func(st *ranv1alpha1.ClusterGroupUpgradeBatchStatus) {
			st.Clusters[0].State = ranv1alpha1.ClusterTimedOut
		}), false},
		"failed": {with(func(st *ranv1alpha1.ClusterGroupUpgradeBatchStatus) { st.Clusters[1].State = ranv1alpha1.ClusterFailed }), false},
		"verifying": {with(func(st *ranv1alpha1.ClusterGroupUpgradeBatchStatus) {
			st.Clusters[1].Reason = ranv1alpha1.ReasonVerifying
		}), false},
		"batch ended":       {with(func(st *ranv1alpha1.ClusterGroupUpgradeBatchStatus) { st.FinishedAt = &t1 }), false},
		"deadline moved":    {with(func(st *ranv1alpha1.ClusterGroupUpgradeBatchStatus) { st.TimeoutAt = &t0 }), false},
		"other cluster":     {with(func(st *ranv1alpha1.ClusterGroupUpgradeBatchStatus) { st.Clusters[1].Name = "c" }), false},
		"one cluster fewer": {with(func(st *ranv1alpha1.ClusterGroupUpgradeBatchStatus) { st.Clusters = st.Clusters[:1] }), false},
	}
	for name, tc := range cases {
		if got := RecordProgressOnly(base, tc.cur, false); got != tc.want {
			t.Errorf("%s: got %v, want %v", name, got, tc.want)
		}
	}
	if RecordProgressOnly(base, cases["completed"].cur, true) {
		t.Error("a completion a batch soak reads the time of is not only progress")
	}
	pending := with(func(st *ranv1alpha1.ClusterGroupUpgradeBatchStatus) {
		st.Clusters[0].State = ranv1alpha1.ClusterPending
	})
	if RecordProgressOnly(pending, base, false) {
		t.Error("a cluster starting is not only progress: it counts against the fleet-wide cap")
	}
}

func TestStatusProgressOnly(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	base := &ranv1alpha1.ClusterGroupUpgradeStatus{
		State: ranv1alpha1.StateNotCompleted, Message: "Batch 1 of 2: 0 of 2 clusters done",
		Counts: ranv1alpha1.ClusterCounts{Total: 4, Pending: 2, InProgress: 2},
		Conditions: []metav1.Condition{{Type: ranv1alpha1.ConditionProgressing, Status: metav1.ConditionTrue,
			Reason: ranv1alpha1.ReasonInProgress, Message: "0 of 2"}},
		CurrentBatch: &ranv1alpha1.BatchStatus{Index: 1, StartedAt: &t0, Clusters: []ranv1alpha1.ClusterProgress{
			{Name: "a", State: ranv1alpha1.ClusterInProgress, CurrentPolicy: "p1"},
			{Name: "b", State: ranv1alpha1.ClusterInProgress, CurrentPolicy: "p1"},
		}},
	}
	with := func(change func(*ranv1alpha1.ClusterGroupUpgradeStatus)) *ranv1alpha1.ClusterGroupUpgradeStatus {
		st := base.DeepCopy()
		change(st)
		return st
	}
	cases := map[string]struct {
		cur  *ranv1alpha1.ClusterGroupUpgradeStatus
		want bool
	}{
		"a cluster completes, listed after the others": {with(func(st *ranv1alpha1.ClusterGroupUpgradeStatus) {
			st.Message, st.Conditions[0].Message = "Batch 1 of 2: 1 of 2 clusters done", "1 of 2"
			st.Counts.InProgress, st.Counts.Completed = 1, 1
			st.CurrentBatch.Clusters = []ranv1alpha1.ClusterProgress{
				{Name: "b", State: ranv1alpha1.ClusterInProgress, CurrentPolicy: "p2"}, {Name: "a", State: ranv1alpha1.ClusterCompleted}}
		}), true},
		"a cluster completes, in TALM's fields too": {with(func(st *ranv1alpha1.ClusterGroupUpgradeStatus) {
			st.Counts.InProgress, st.Counts.Completed = 1, 1
			st.CurrentBatch.Clusters[0].State = ranv1alpha1.ClusterCompleted
			st.Clusters = []ranv1alpha1.ClusterFinalState{{Name: "a", State: ranv1alpha1.TALMClusterComplete}}
			st.Status.CurrentBatchRemediationProgress = map[string]*ranv1alpha1.ClusterRemediationProgress{"a": {State: ranv1alpha1.RemediationCompleted}}
		}), true},
		"TALM's current batch moves": {with(func(st *ranv1alpha1.ClusterGroupUpgradeStatus) { st.Status.CurrentBatch = 2 }), false},
		"a cluster shown in the place of one that completed": {with(func(st *ranv1alpha1.ClusterGroupUpgradeStatus) {
			st.Counts.InProgress, st.Counts.Completed = 1, 1
			st.CurrentBatch.Clusters[0] = ranv1alpha1.ClusterProgress{Name: "c", State: ranv1alpha1.ClusterInProgress, CurrentPolicy: "p2"}
		}), true},
		"a failed cluster shown": {with(func(st *ranv1alpha1.ClusterGroupUpgradeStatus) {
			st.CurrentBatch.Clusters[0] = ranv1alpha1.ClusterProgress{Name: "c", State: ranv1alpha1.ClusterFailed}
		}), false},
		"a cluster timed out": {with(func(st *ranv1alpha1.ClusterGroupUpgradeStatus) {
			st.Counts.InProgress, st.Counts.TimedOut = 1, 1
			st.CurrentBatch.Clusters[0].State = ranv1alpha1.ClusterTimedOut
		}), false},
		"next batch":       {with(func(st *ranv1alpha1.ClusterGroupUpgradeStatus) { st.CurrentBatch.Index = 2 }), false},
		"state":            {with(func(st *ranv1alpha1.ClusterGroupUpgradeStatus) { st.State = ranv1alpha1.StateCompleted }), false},
		"condition reason": {with(func(st *ranv1alpha1.ClusterGroupUpgradeStatus) { st.Conditions[0].Reason = ranv1alpha1.ReasonPaused }), false},
		"a condition more": {with(func(st *ranv1alpha1.ClusterGroupUpgradeStatus) {
			st.Conditions = append(st.Conditions, metav1.Condition{Type: ranv1alpha1.ConditionSucceeded, Status: metav1.ConditionFalse})
		}), false},
		"waiting": {with(func(st *ranv1alpha1.ClusterGroupUpgradeStatus) { st.Waiting = &ranv1alpha1.WaitingStatus{} }), false},
		"paused":  {with(func(st *ranv1alpha1.ClusterGroupUpgradeStatus) { st.PausedAt = &t0 }), false},
	}
	for name, tc := range cases {
		if got := StatusProgressOnly(base, tc.cur, false); got != tc.want {
			t.Errorf("%s: got %v, want %v", name, got, tc.want)
		}
	}
	// A completion its batch record does not hold yet is derived again at each reconcile,
	// with that reconcile's time; the status shows it completed at the time of its write.
	shown := with(func(st *ranv1alpha1.ClusterGroupUpgradeStatus) {
		st.Counts.InProgress, st.Counts.Completed = 1, 1
		st.CurrentBatch.Clusters[0] = ranv1alpha1.ClusterProgress{Name: "a", State: ranv1alpha1.ClusterCompleted, Since: &t0}
	})
	again := shown.DeepCopy()
	later := metav1.NewTime(t0.Add(2 * time.Second)) // times are to the second, as stored
	again.CurrentBatch.Clusters[0].Since = &later
	if !StatusProgressOnly(shown, again, false) {
		t.Error("a completion derived again with a later time is only progress")
	}
	if StatusProgressOnly(shown, again, true) {
		t.Error("a completion time a batch soak reads is not only progress")
	}
	again.CurrentBatch.Clusters[0].Reason = ranv1alpha1.ReasonVerifying
	if StatusProgressOnly(shown, again, false) {
		t.Error("a completed cluster with a new reason is not only progress")
	}
	if StatusProgressOnly(&ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotStarted}, &ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotStarted}, false) {
		t.Error("a status without a current batch is never only progress")
	}
}

// sameProgress agrees with equality.Semantic.DeepEqual on progress, its times to the second,
// that differs in any one field or in none: a field added to ClusterProgress and not to
// sameProgress fails here.
func TestSameProgressComparesEveryField(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
	base := ranv1alpha1.ClusterProgress{Name: "sno-1", State: ranv1alpha1.ClusterInProgress, CurrentPolicy: "upgrade",
		Since: &at, StartedAt: &at, Stage: 1, CompliantSince: &at, Reason: "", SoftTimedOut: []string{"operators"}}
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		other := base
		f := reflect.ValueOf(&other).Elem().Field(i)
		switch v := f.Addr().Interface().(type) {
		case *string:
			*v += "-other"
		case *ranv1alpha1.ClusterState:
			*v = ranv1alpha1.ClusterCompleted
		case *int:
			*v++
		case **metav1.Time:
			later := metav1.NewTime(at.Add(time.Second))
			*v = &later
		case *[]string:
			*v = append(slices.Clone(*v), "more")
		default:
			t.Fatalf("field %s of type %s: the test does not know how to change it", typ.Field(i).Name, f.Type())
		}
		if sameProgress(base, other) || equality.Semantic.DeepEqual(base, other) != sameProgress(base, other) {
			t.Errorf("progress differing in %s: sameProgress %v, want false as DeepEqual", typ.Field(i).Name, sameProgress(base, other))
		}
	}
	copied := base
	copied.Since = ptr.To(metav1.NewTime(at.Time))
	if !sameProgress(base, copied) {
		t.Error("the same progress, its time a copy: sameProgress false")
	}
	copied.SoftTimedOut, base.SoftTimedOut = nil, []string{}
	if !sameProgress(base, copied) || !equality.Semantic.DeepEqual(base, copied) {
		t.Error("no soft timeout, nil or empty: sameProgress or DeepEqual tells them apart")
	}
}
