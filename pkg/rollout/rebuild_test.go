package rollout

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

// cguStatusOf is the ClusterGroupUpgrade status a controller writes after decision d.
func cguStatusOf(d Decision, p plan.Plan) *ranv1alpha1.ClusterGroupUpgradeStatus {
	st := statusOf(d, p)
	for _, b := range p.Batches {
		st.RemediationPlan = append(st.RemediationPlan, slices.Clone(b.Clusters))
	}
	return &st
}

func damaged(rf *recordedFleet, keep func(ranv1alpha1.ClusterGroupUpgradeBatch) bool, st *ranv1alpha1.ClusterGroupUpgradeStatus, now time.Duration) Damaged {
	var live []ranv1alpha1.ClusterGroupUpgradeBatch
	for _, r := range rf.records {
		if keep(r) {
			live = append(live, r)
		}
	}
	return Damaged{Namespace: "ns", Name: "cgu", Records: live, Status: st, Now: t0.Add(now),
		Compliant: func(c string) bool {
			for _, p := range rf.f.Policies {
				if p.Compliance[c] != policyv1.Compliant {
					return false
				}
			}
			return true
		}}
}

// twins are two recorded rollouts of the same fleet: one whose records are lost at lostAt
// and rebuilt, and one never touched.
type twins struct {
	t              *testing.T
	touched, twin  *recordedFleet
	lostAt         time.Duration
	lose           func(ranv1alpha1.ClusterGroupUpgradeBatch) bool
	everyRecordRun bool
}

// step makes clusters compliant and decides both at at; they must decide the same.
func (tw *twins) step(at time.Duration, comply ...string) {
	t := tw.t
	t.Helper()
	for _, c := range comply {
		tw.touched.comply(c, 0)
		tw.twin.comply(c, 0)
	}
	got, want := tw.touched.decide(at), tw.twin.decide(at)
	if got.State != want.State || got.Message != want.Message || got.Progress.Batch != want.Progress.Batch ||
		!reflect.DeepEqual(got.Enforce, want.Enforce) || !got.BatchDeadline.Equal(want.BatchDeadline) {
		t.Fatalf("at %v rebuilt: %s %q batch %d deadline %v\nuntouched: %s %q batch %d deadline %v",
			at, got.State, got.Message, got.Progress.Batch, got.BatchDeadline,
			want.State, want.Message, want.Progress.Batch, want.BatchDeadline)
	}
	if at == tw.lostAt {
		tw.rebuild(at, cguStatusOf(got, tw.touched.f.Plan))
	}
}

func (tw *twins) rebuild(at time.Duration, st *ranv1alpha1.ClusterGroupUpgradeStatus) {
	t := tw.t
	t.Helper()
	keep := func(r ranv1alpha1.ClusterGroupUpgradeBatch) bool { return !tw.lose(r) }
	all, rebuilt, problem := Rebuild(damaged(tw.touched, keep, st, at))
	if problem != nil {
		t.Fatalf("rebuilding: %s", problem.Message)
	}
	if len(all) != len(tw.twin.records) || len(rebuilt) == 0 || len(rebuilt) == len(all) && !tw.everyRecordRun {
		t.Fatalf("%d records with %d rebuilt, want %d in all", len(all), len(rebuilt), len(tw.twin.records))
	}
	tw.touched.records = all
}

// Records deleted by hand (all of them, an ended batch's, one part of the running batch's,
// a later batch's) are rebuilt from the status and the spokes' compliance, and the rollout
// goes on exactly as one whose records were never touched: the same batches, deadlines and
// enforcement, and every cluster completed in the end.
func TestRebuildLostRecords(t *testing.T) {
	big := make([]string, 300)
	for i := range big {
		big[i] = fmt.Sprintf("big-%03d", i)
	}
	batches := append(canaryAndTwo(), plan.Batch{Clusters: big})
	all := func(ranv1alpha1.ClusterGroupUpgradeBatch) bool { return true }
	for _, tc := range []struct {
		name string
		// at is when the records are lost: batch 2 runs from 1m, 3 from 3m, 4 from 4m.
		at   time.Duration
		lose func(ranv1alpha1.ClusterGroupUpgradeBatch) bool
	}{
		{name: "every record, batch 2 running", at: 2 * time.Minute, lose: all},
		{name: "an ended batch's record", at: 4 * time.Minute, lose: func(r ranv1alpha1.ClusterGroupUpgradeBatch) bool { return r.Spec.Index == 2 }},
		{name: "a part of the running batch", at: 6 * time.Minute, lose: func(r ranv1alpha1.ClusterGroupUpgradeBatch) bool { return r.Spec.Index == 4 && r.Spec.Part == 1 }},
		{name: "a later batch's records", at: 2 * time.Minute, lose: func(r ranv1alpha1.ClusterGroupUpgradeBatch) bool { return r.Spec.Index == 4 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tw := &twins{t: t, touched: newRecordedFleet(t, batches, 1), twin: newRecordedFleet(t, batches, 1),
				lostAt: tc.at, lose: tc.lose, everyRecordRun: tc.at == 2*time.Minute && tc.lose(ranv1alpha1.ClusterGroupUpgradeBatch{})}
			tw.step(0)
			tw.step(time.Minute, "c1")
			tw.step(2*time.Minute, "a1")
			tw.step(3*time.Minute, "a2")
			tw.step(4*time.Minute, "b1")
			tw.step(5*time.Minute, big[:10]...)
			tw.step(6*time.Minute, big[260:]...)
			tw.step(7*time.Minute, big[10:260]...)
			d := tw.touched.decide(8 * time.Minute)
			if d.State != ranv1alpha1.StateCompleted || d.Progress.Done.Completed != 304 {
				t.Fatalf("rebuilt rollout ends %s with %d completed, want Completed with 304", d.State, d.Progress.Done.Completed)
			}
		})
	}
}

// Where what a lost record held cannot be known, nothing is rebuilt and the problem says
// what is missing.
func TestRebuildRefusesTheUnknowable(t *testing.T) {
	big := make([]string, 300)
	for i := range big {
		big[i] = fmt.Sprintf("big-%03d", i)
	}
	rf := newRecordedFleet(t, append(canaryAndTwo(), plan.Batch{Clusters: big}), 1)
	rf.decide(0)
	rf.comply("c1", 0)
	d := rf.decide(time.Minute)
	everything := func(ranv1alpha1.ClusterGroupUpgradeBatch) bool { return false }
	for _, tc := range []struct {
		name string
		mend func(*ranv1alpha1.ClusterGroupUpgradeStatus)
		keep func(ranv1alpha1.ClusterGroupUpgradeBatch) bool
		want string
	}{
		{name: "the plan shortened in status", keep: everything, want: "no longer lists its clusters",
			mend: func(st *ranv1alpha1.ClusterGroupUpgradeStatus) {
				st.Shortened = &ranv1alpha1.ShortenedStatus{RemediationPlanClustersNotShown: 1}
			}},
		{name: "status wiped", keep: everything, want: "no longer lists its clusters",
			mend: func(st *ranv1alpha1.ClusterGroupUpgradeStatus) {
				*st = ranv1alpha1.ClusterGroupUpgradeStatus{Plan: st.Plan}
			}},
		{name: "a record that disagrees", want: "disagrees with status.remediationPlan",
			keep: func(r ranv1alpha1.ClusterGroupUpgradeBatch) bool { return r.Spec.Index != 4 || r.Spec.Part == 0 },
			mend: func(st *ranv1alpha1.ClusterGroupUpgradeStatus) { st.RemediationPlan[3] = slices.Clone(big[1:]) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := cguStatusOf(d, rf.f.Plan)
			tc.mend(st)
			all, rebuilt, problem := Rebuild(damaged(rf, tc.keep, st, 2*time.Minute))
			if problem == nil || problem.Reason != ranv1alpha1.ReasonRecordsLost || !strings.Contains(problem.Message, tc.want) || all != nil || rebuilt != nil {
				t.Fatalf("got %d records, %d rebuilt, problem %+v; want none and a problem saying %q", len(all), len(rebuilt), problem, tc.want)
			}
		})
	}
}

// A lost record of a batch that is not a canary takes the form the spec asks for when no
// part of it is left; a part left says the form itself.
func TestRebuildShapesTheBatch(t *testing.T) {
	rf := newRecordedFleet(t, []plan.Batch{{Canary: true, Clusters: []string{"c1"}}, {Clusters: []string{"a1", "a2", "a3"}, Window: 2}}, 1)
	d := rf.decide(0)
	dm := damaged(rf, func(r ranv1alpha1.ClusterGroupUpgradeBatch) bool { return r.Spec.Index == 1 }, cguStatusOf(d, rf.f.Plan), time.Minute)
	dm.Shape = func(clusters []string) plan.Batch { return plan.Batch{Clusters: clusters, Window: 2} }
	all, rebuilt, problem := Rebuild(dm)
	if problem != nil || len(rebuilt) != 1 || rebuilt[0].Spec.Window != 2 || all[0].Spec.Canary != true || rebuilt[0].Status.StartedAt != nil {
		t.Fatalf("rebuilt %+v (problem %v), want the window batch of 2, not started", rebuilt, problem)
	}
}

// A record made again whose progress was not written (a pass cut between the two writes)
// is found unfinished before the running batch, and gets its progress.
func TestRebuildFinishesARecordMadeWithoutProgress(t *testing.T) {
	rf := newRecordedFleet(t, canaryAndTwo(), 1)
	rf.decide(0)
	rf.comply("c1", 0)
	d := rf.decide(time.Minute)
	if Unfinished(rf.records) {
		t.Fatal("untouched records found unfinished")
	}
	rf.records[0].Status = ranv1alpha1.ClusterGroupUpgradeBatchStatus{}
	if !Unfinished(rf.records) {
		t.Fatal("a record of an ended batch without progress not found unfinished")
	}
	all, rebuilt, problem := Rebuild(damaged(rf, func(ranv1alpha1.ClusterGroupUpgradeBatch) bool { return true }, cguStatusOf(d, rf.f.Plan), 2*time.Minute))
	if problem != nil || len(rebuilt) != 1 || rebuilt[0].Name != rf.records[0].Name || len(all) != 3 ||
		rebuilt[0].Status.FinishedAt == nil || rebuilt[0].Status.Clusters[0].State != ranv1alpha1.ClusterCompleted {
		t.Fatalf("rebuilt %+v (problem %v), want the canary's record ended with c1 completed", rebuilt, problem)
	}
}
