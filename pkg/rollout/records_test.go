package rollout

import (
	"fmt"
	"maps"
	"reflect"
	"testing"
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

// recordedFleet plays the same facts as fleet, but keeps its progress only in batch
// records, as the controller does: each decision is written with RecordStatuses and the next
// one starts from Recorded.
type recordedFleet struct {
	*fleet
	records  []ranv1alpha1.ClusterGroupUpgradeBatch
	policies []string
	started  time.Time
}

func newRecordedFleet(t *testing.T, batches []plan.Batch, policies int) *recordedFleet {
	rf := &recordedFleet{fleet: newFleet(t, batches, policies)}
	rf.records = plan.Records(rf.f.Plan, "ns", "cgu")
	for i := range policies {
		rf.policies = append(rf.policies, fmt.Sprintf("p%d", i))
	}
	return rf
}

func (rf *recordedFleet) decide(now time.Duration) Decision {
	return rf.decideWriting(now, func(ranv1alpha1.ClusterGroupUpgradeBatch) bool { return true })
}

// The records carry a rollout exactly as the in-memory progress does: the same states,
// batches, enforcement and messages at every step, through soaks, a batch timeout with
// Continue, and a batch larger than one record.
func TestRecordsCarryTheRollout(t *testing.T) {
	big := make([]string, 300)
	for i := range big {
		big[i] = fmt.Sprintf("big-%03d", i)
	}
	batches := append(canaryAndTwo(), plan.Batch{Clusters: big})
	mem, rec := newFleet(t, batches, 2), newRecordedFleet(t, batches, 2)
	for _, fl := range []*fleet{mem, rec.fleet} {
		fl.f.Policies[1].Soak = 3 * time.Minute
	}
	steps := []struct {
		at     time.Duration
		comply [][2]any
	}{
		{at: 0},
		{at: time.Minute, comply: [][2]any{{"c1", 0}}},
		{at: 2 * time.Minute, comply: [][2]any{{"c1", 1}}},
		{at: 4 * time.Minute},
		{at: 6 * time.Minute}, // c1 soaked; batch 2 starts
		{at: 8 * time.Minute, comply: [][2]any{{"a1", 0}, {"a1", 1}}},
		{at: 12 * time.Minute},
		{at: 40 * time.Minute}, // a2 times out, Continue
		{at: 41 * time.Minute, comply: [][2]any{{"b1", 0}, {"b1", 1}, {"big-007", 0}}},
		{at: 45 * time.Minute},
		{at: 61 * time.Minute},
	}
	for _, s := range steps {
		for _, c := range s.comply {
			mem.comply(c[0].(string), c[1].(int))
			rec.comply(c[0].(string), c[1].(int))
		}
		want, got := mem.decide(s.at), rec.decide(s.at)
		if got.State != want.State || got.Message != want.Message || got.Progress.Batch != want.Progress.Batch ||
			!reflect.DeepEqual(got.Enforce, want.Enforce) || !got.Wake.Equal(want.Wake) || got.Progress.Done != want.Progress.Done {
			t.Fatalf("at %v from records: %s %q batch %d enforce %v wake %v done %+v\nin memory: %s %q batch %d enforce %v wake %v done %+v",
				s.at, got.State, got.Message, got.Progress.Batch, got.Enforce, got.Wake, got.Progress.Done,
				want.State, want.Message, want.Progress.Batch, want.Enforce, want.Wake, want.Progress.Done)
		}
	}
	for _, r := range rec.records[len(rec.records)-2:] {
		if r.Status.FinishedAt == nil || len(r.Status.Clusters) != len(r.Spec.Clusters) {
			t.Fatalf("record %s: finished %v, %d of %d clusters; want each part of the ended batch in full",
				r.Name, r.Status.FinishedAt, len(r.Status.Clusters), len(r.Spec.Clusters))
		}
	}
}

// A decision that changes nothing writes nothing.
func TestRecordStatusesOnlyChanges(t *testing.T) {
	rf := newRecordedFleet(t, canaryAndTwo(), 1)
	rf.decide(0)
	d := Decide(Facts{Now: t0.Add(time.Minute), Enabled: true, Plan: rf.f.Plan, TimeoutMinutes: 60,
		Policies: rf.f.Policies, Progress: Recorded(rf.records, rf.policies, rf.started)})
	if got := RecordStatuses(rf.records, d, rf.f.Plan, rf.policies, t0.Add(time.Minute)); len(got) != 0 {
		t.Fatalf("unchanged rollout writes %v", slicesOf(got))
	}
	rf.comply("c1", 0)
	d = Decide(Facts{Now: t0.Add(2 * time.Minute), Enabled: true, Plan: rf.f.Plan, TimeoutMinutes: 60,
		Policies: rf.f.Policies, Progress: Recorded(rf.records, rf.policies, rf.started)})
	got := RecordStatuses(rf.records, d, rf.f.Plan, rf.policies, t0.Add(2*time.Minute))
	if len(got) != 2 || got[rf.records[0].Name].FinishedAt == nil || got[rf.records[1].Name].StartedAt == nil {
		t.Fatalf("canary done writes %v, want the canary ended and batch 2 started", slicesOf(got))
	}
}

func slicesOf(m map[string]ranv1alpha1.ClusterGroupUpgradeBatchStatus) []string {
	var out []string
	for k := range maps.Keys(m) {
		out = append(out, k)
	}
	return out
}

// decideWriting decides as decide does, but writes only the records write lets through: the
// operator stopped between the writes of one pass.
func (rf *recordedFleet) decideWriting(now time.Duration, write func(ranv1alpha1.ClusterGroupUpgradeBatch) bool) Decision {
	rf.f.Now = t0.Add(now)
	if !rf.started.IsZero() {
		rf.f.Progress = Recorded(rf.records, rf.policies, rf.started)
	}
	d := Decide(rf.f)
	rf.started = d.Progress.Started
	statuses := RecordStatuses(rf.records, d, rf.f.Plan, rf.policies, rf.f.Now)
	for i := range rf.records {
		if st, ok := statuses[rf.records[i].Name]; ok && write(rf.records[i]) {
			rf.records[i].Status = st
		}
	}
	return d
}

// A stop between the writes of the two parts of one batch's records, as the batch starts or
// as it ends: the next pass goes on from the part written, and writes the other one.
func TestRecordsWrittenInPart(t *testing.T) {
	big := make([]string, 300)
	for i := range big {
		big[i] = fmt.Sprintf("big-%03d", i)
	}
	firstPart := func(r ranv1alpha1.ClusterGroupUpgradeBatch) bool { return r.Spec.Part == 0 }
	every := func(ranv1alpha1.ClusterGroupUpgradeBatch) bool { return true }
	for _, tc := range []struct {
		name       string
		start, end func(ranv1alpha1.ClusterGroupUpgradeBatch) bool
	}{
		{name: "cut as the batch starts", start: firstPart, end: every},
		{name: "cut as the batch ends", start: every, end: firstPart},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rf := newRecordedFleet(t, []plan.Batch{{Clusters: big}}, 1)
			if len(rf.records) != 2 {
				t.Fatalf("%d records, want a batch in two parts", len(rf.records))
			}
			rf.decideWriting(0, tc.start)
			for _, c := range big {
				rf.comply(c, 0)
			}
			rf.decideWriting(time.Minute, tc.end)
			d := rf.decide(2 * time.Minute)
			rf.decide(3 * time.Minute)
			if d.State != ranv1alpha1.StateCompleted || d.Progress.Done.Completed != len(big) {
				t.Errorf("state %s, %d completed: want Completed with all %d", d.State, d.Progress.Done.Completed, len(big))
			}
			for _, r := range rf.records {
				if r.Status.StartedAt == nil || !r.Status.StartedAt.Time.Equal(t0) || r.Status.FinishedAt == nil ||
					len(r.Status.Clusters) != len(r.Spec.Clusters) {
					t.Errorf("record %s: started %v, finished %v, %d of %d clusters; want both parts started at %s and ended in full",
						r.Name, r.Status.StartedAt, r.Status.FinishedAt, len(r.Status.Clusters), len(r.Spec.Clusters), t0)
				}
			}
		})
	}
}

// The records show a rollout's end only once the pass that ended it wrote them: a status
// that ended ahead of its records, or records short of one, does not pass for an end.
func TestEndRecorded(t *testing.T) {
	for _, tc := range []struct {
		name  string
		play  func(rf *recordedFleet)
		state ranv1alpha1.UpgradeState
	}{
		{name: "completed", state: ranv1alpha1.StateCompleted, play: func(rf *recordedFleet) {
			for _, batch := range [][]string{{"c1"}, {"a1", "a2"}} {
				for _, c := range batch {
					rf.comply(c, 0)
				}
				rf.decide(time.Minute)
			}
			rf.comply("b1", 0) // the last batch ends in the pass under test
		}},
		{name: "canary timed out", state: ranv1alpha1.StateTimedOut, play: func(*recordedFleet) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rf := newRecordedFleet(t, canaryAndTwo(), 1)
			rf.decide(0)
			tc.play(rf)
			before := make([]ranv1alpha1.ClusterGroupUpgradeBatch, len(rf.records))
			for i := range rf.records {
				rf.records[i].DeepCopyInto(&before[i])
			}
			d := rf.decide(2 * time.Hour)
			if d.State != tc.state {
				t.Fatalf("state %s, want %s", d.State, tc.state)
			}
			total := counts(d, rf.f.Plan).Total
			if !EndRecorded(total, rf.records) {
				t.Errorf("the records the ending pass wrote do not show the end")
			}
			if EndRecorded(total, before) {
				t.Errorf("the records before the ending pass show the end")
			}
			if EndRecorded(total, rf.records[1:]) {
				t.Errorf("the records less the first show the end")
			}
		})
	}
}
