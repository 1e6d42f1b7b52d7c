package dashboard

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

func trainRing(name string, soak time.Duration) ranv1alpha1.TrainRing {
	r := ranv1alpha1.TrainRing{Name: name}
	if soak > 0 {
		r.Qualification.Soak = &metav1.Duration{Duration: soak}
	}
	return r
}

func ledgerRing(name string, state ranv1alpha1.RingState, clusters, complete, failed int, started int) ranv1alpha1.LedgerRing {
	return ranv1alpha1.LedgerRing{Name: name, State: state, Clusters: clusters, Complete: complete, Failed: failed, StartedAt: *at(started)}
}

// threeRings is a train of three rings on this hub: 4.16.11 soaks in ring late, 4.16.12
// qualified in canary and stopped in early, 4.16.13 awaits its approval.
func threeRings() *ranv1alpha1.ReleaseTrain {
	soaking := ledgerRing("late", ranv1alpha1.RingSoaking, 2, 2, 0, 20)
	soaking.SoakingSince = at(25)
	failed := ledgerRing("early", ranv1alpha1.RingFailed, 2, 1, 1, 40)
	failed.DecidedAt = at(45)
	return &ranv1alpha1.ReleaseTrain{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "edge"},
		Spec: ranv1alpha1.ReleaseTrainSpec{
			Releases: ranv1alpha1.TrainReleases{Channel: "stable-4.16"},
			Approval: &ranv1alpha1.TrainApproval{Required: true},
			Rings:    []ranv1alpha1.TrainRing{trainRing("canary", 0), trainRing("early", 0), trainRing("late", time.Hour)},
		},
		Status: ranv1alpha1.ReleaseTrainStatus{
			Newest: "4.16.13",
			Rings: []ranv1alpha1.RingStatus{
				{Name: "canary", Release: "4.16.12", Rollout: "edge-canary-4.16.12", Ended: true},
				{Name: "early", Release: "4.16.12", Rollout: "edge-early-4.16.12", Ended: true},
				{Name: "late", Release: "4.16.11", Rollout: "edge-late-4.16.11"},
			},
			Ledger: []ranv1alpha1.LedgerRelease{
				{Version: "4.16.13", State: ranv1alpha1.ReleaseAwaitingApproval, FoundAt: *at(50), Message: "waits for an approval"},
				{Version: "4.16.12", State: ranv1alpha1.ReleaseStopped, FoundAt: *at(30), Message: "stopped: 1 clusters failed in ring early",
					Rings: []ranv1alpha1.LedgerRing{ledgerRing("canary", ranv1alpha1.RingQualified, 1, 1, 0, 30), failed}},
				{Version: "4.16.11", State: ranv1alpha1.ReleaseRolling, FoundAt: *at(0), Message: "soaks in ring late",
					Rings: []ranv1alpha1.LedgerRing{ledgerRing("canary", ranv1alpha1.RingQualified, 1, 1, 0, 0),
						ledgerRing("early", ranv1alpha1.RingQualified, 2, 2, 0, 10), soaking}},
			},
			Conditions: []metav1.Condition{
				{Type: ranv1alpha1.TrainConditionSourceRead, Status: metav1.ConditionTrue, Reason: ranv1alpha1.TrainReasonVersionsNamed},
				{Type: ranv1alpha1.TrainConditionProgressing, Status: metav1.ConditionTrue, Reason: ranv1alpha1.TrainReasonRolling, Message: "4.16.11 soaks in ring late"},
				{Type: ranv1alpha1.TrainConditionHubsReporting, Status: metav1.ConditionTrue, Reason: ranv1alpha1.TrainReasonAllReporting},
			},
		},
	}
}

func TestTrainOf(t *testing.T) {
	soaking := ReleaseRing{Ring: 2, Name: "late", State: "Soaking", Clusters: 2, Complete: 2}
	failed := ReleaseRing{Ring: 1, Name: "early", State: "Failed", Clusters: 2, Complete: 1, Failed: 1}
	qualified := ReleaseRing{Ring: 0, Name: "canary", State: "Qualified", Clusters: 1, Complete: 1}
	want := Train{
		Namespace: "fleet", Name: "edge", Channel: "stable-4.16", Newest: "4.16.13", Approval: true,
		Progressing: &TrainCondition{Type: "Progressing", Status: "True", Reason: "Rolling", Message: "4.16.11 soaks in ring late"},
		Rings: []RingView{
			{Name: "canary", Release: "4.16.12", Rollout: "edge-canary-4.16.12", Ended: true,
				In: &RingRelease{State: "Qualified", Clusters: 1, Complete: 1, StartedAt: *at(30)}},
			{Name: "early", Release: "4.16.12", Rollout: "edge-early-4.16.12", Ended: true,
				In: &RingRelease{State: "Failed", Clusters: 2, Complete: 1, Failed: 1, StartedAt: *at(40), DecidedAt: at(45)}},
			{Name: "late", Soak: 3600, Release: "4.16.11", Rollout: "edge-late-4.16.11",
				In: &RingRelease{State: "Soaking", Clusters: 2, Complete: 2, StartedAt: *at(20), SoakingSince: at(25), SoakEnds: at(85)}},
		},
		Ledger: []ReleaseView{
			{Version: "4.16.13", State: "AwaitingApproval", FoundAt: *at(50), Message: "waits for an approval", At: -1, Rings: []ReleaseRing{}},
			{Version: "4.16.12", State: "Stopped", FoundAt: *at(30), Message: "stopped: 1 clusters failed in ring early", At: 1,
				Rings: []ReleaseRing{qualified, failed}},
			{Version: "4.16.11", State: "Rolling", FoundAt: *at(0), Message: "soaks in ring late", At: 2, Rings: []ReleaseRing{
				{Ring: 0, Name: "canary", State: "Qualified", Clusters: 1, Complete: 1},
				{Ring: 1, Name: "early", State: "Qualified", Clusters: 2, Complete: 2},
				soaking}},
		},
	}
	if diff := cmp.Diff(want, TrainOf(threeRings())); diff != "" {
		t.Errorf("TrainOf (-want +got):\n%s", diff)
	}
}

func TestTrainOfTellsWhatTheStatusLeavesOut(t *testing.T) {
	long := strings.Repeat("é", ranv1alpha1.MessageLimit)
	cases := map[string]struct {
		change func(*ranv1alpha1.ReleaseTrain)
		// read picks what the case is about from the train; want is what it must be.
		read func(Train) any
		want any
	}{
		"a ring of regional hubs, one of them not reporting: the ring and the condition name it": {
			change: func(tr *ranv1alpha1.ReleaseTrain) {
				tr.Spec.Rings[2].Hubs = []string{"hub-east", "hub-west"}
				tr.Status.Rings[2].Unreachable = []string{"hub-west"}
				tr.Status.Conditions[2] = metav1.Condition{Type: ranv1alpha1.TrainConditionHubsReporting, Status: metav1.ConditionFalse,
					Reason: ranv1alpha1.TrainReasonHubUnreachable, Message: "held until their regional hubs report again: late (hub-west)"}
			},
			read: func(tr Train) any { return []any{tr.Rings[2].Hubs, tr.Rings[2].Unreachable, tr.Unreachable} },
			want: []any{[]string{"hub-east", "hub-west"}, []string{"hub-west"}, &TrainCondition{Type: "HubsReporting", Status: "False",
				Reason: "HubUnreachable", Message: "held until their regional hubs report again: late (hub-west)", Hubs: []string{"late/hub-west"}}},
		},
		"every hub reporting: no Unreachable, no problem": {
			change: func(*ranv1alpha1.ReleaseTrain) {},
			read:   func(tr Train) any { return []any{tr.Unreachable, tr.Problems} },
			want:   []any{(*TrainCondition)(nil), []TrainCondition(nil)},
		},
		"the channel not read and a failed pass are problems, their messages cut on a rune": {
			change: func(tr *ranv1alpha1.ReleaseTrain) {
				tr.Status.Conditions[0] = metav1.Condition{Type: ranv1alpha1.TrainConditionSourceRead, Status: metav1.ConditionFalse,
					Reason: ranv1alpha1.TrainReasonGraphUnavailable, Message: "reading channel stable-4.16: refused"}
				tr.Status.Conditions = append(tr.Status.Conditions, metav1.Condition{Type: ranv1alpha1.ConditionReconciled,
					Status: metav1.ConditionFalse, Reason: "WriteFailed", Message: long})
			},
			read: func(tr Train) any { return tr.Problems },
			want: []TrainCondition{
				{Type: "SourceRead", Status: "False", Reason: "GraphUnavailable", Message: "reading channel stable-4.16: refused"},
				// 1024 bytes are 512 runes of two bytes: 510 of them and "..." fit.
				{Type: "Reconciled", Status: "False", Reason: "WriteFailed", Message: long[:1020] + "..."},
			},
		},
		"a ring the spec no longer has: the release stands at the furthest ring it still has": {
			change: func(tr *ranv1alpha1.ReleaseTrain) {
				tr.Spec.Rings = tr.Spec.Rings[:2]
				tr.Status.Rings = tr.Status.Rings[:2]
			},
			read: func(tr Train) any {
				return []any{tr.Ledger[2].At, tr.Ledger[2].Rings[2].Name, tr.Ledger[2].Rings[2].Ring}
			},
			want: []any{1, "late", -1},
		},
		"a ring that runs a release the ledger no longer holds, and a ring that ran none": {
			change: func(tr *ranv1alpha1.ReleaseTrain) {
				tr.Status.Rings[2].Release = "4.16.9"
				tr.Status.Rings[1] = ranv1alpha1.RingStatus{Name: "early"}
			},
			read: func(tr Train) any { return tr.Rings[1:] },
			want: []RingView{{Name: "early"}, {Name: "late", Soak: 3600, Release: "4.16.9", Rollout: "edge-late-4.16.11"}},
		},
		"a ring whose rollout is blocked says why": {
			change: func(tr *ranv1alpha1.ReleaseTrain) {
				tr.Status.Rings[2].Message = "its ManagedClustersUpgrade refuses its spec: no cluster selected"
			},
			read: func(tr Train) any { return tr.Rings[2].Blocked },
			want: "its ManagedClustersUpgrade refuses its spec: no cluster selected",
		},
		"a ring's qualification": {
			change: func(tr *ranv1alpha1.ReleaseTrain) {
				tr.Spec.Rings[1].Qualification = ranv1alpha1.RingQualification{MinClusters: ptr.To[int32](40), MaxFailed: 2,
					Soak: &metav1.Duration{Duration: 72 * time.Hour}}
			},
			read: func(tr Train) any { return []int{tr.Rings[1].MinClusters, tr.Rings[1].MaxFailed, tr.Rings[1].Soak} },
			want: []int{40, 2, 72 * 3600},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tr := threeRings()
			tc.change(tr)
			if diff := cmp.Diff(tc.want, tc.read(TrainOf(tr))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTrainsOfSortsByNamespaceAndName(t *testing.T) {
	var trains []ranv1alpha1.ReleaseTrain
	for _, key := range []string{"b/a", "a/z", "a/b"} {
		tr := threeRings()
		tr.Namespace, tr.Name, _ = strings.Cut(key, "/")
		trains = append(trains, *tr)
	}
	got := TrainsOf("all namespaces", true, trains)
	var keys []string
	for _, tr := range got.Trains {
		keys = append(keys, tr.Namespace+"/"+tr.Name)
	}
	if diff := cmp.Diff([]string{"a/b", "a/z", "b/a"}, keys); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if none := TrainsOf("namespace x", false, nil); none.Trains == nil || none.Served {
		t.Errorf("a hub without trains: %+v (the page needs an empty list and served false)", none)
	}
}

// trainAtTheLimits has 16 rings of 64 regional hubs, none of them reporting, 16 releases that
// each entered the 16 rings, every name and message at its limit.
func trainAtTheLimits() *ranv1alpha1.ReleaseTrain {
	name := func(prefix string, i, n int) string {
		s := fmt.Sprintf("%s%d-", prefix, i)
		return s + strings.Repeat("x", n-len(s))
	}
	tr := &ranv1alpha1.ReleaseTrain{ObjectMeta: metav1.ObjectMeta{Namespace: name("ns", 0, 63), Name: name("train", 0, 253)}}
	tr.Spec.Releases.Channel = "stable-4.16"
	for i := range ranv1alpha1.TrainRingLimit {
		ring := trainRing(name("r", i, 20), time.Hour)
		for h := range ranv1alpha1.TrainHubLimit {
			ring.Hubs = append(ring.Hubs, name(fmt.Sprintf("hub%d-", i), h, 63))
		}
		tr.Spec.Rings = append(tr.Spec.Rings, ring)
		tr.Status.Rings = append(tr.Status.Rings, ranv1alpha1.RingStatus{Name: ring.Name, Release: "4.16.100", Rollout: name("roll", i, 48),
			Unreachable: ring.Hubs, Message: strings.Repeat("m", 1024)})
	}
	for v := range ranv1alpha1.TrainLedgerLimit {
		r := ranv1alpha1.LedgerRelease{Version: fmt.Sprintf("4.16.%d", 100-v), State: ranv1alpha1.ReleaseRolling, FoundAt: *at(v),
			Message: strings.Repeat("m", 1024)}
		for _, ring := range tr.Spec.Rings {
			lr := ledgerRing(ring.Name, ranv1alpha1.RingSoaking, 5000, 4000, 1000, v)
			lr.SoakingSince, lr.DecidedAt = at(v+1), at(v+2)
			r.Rings = append(r.Rings, lr)
		}
		tr.Status.Ledger = append(tr.Status.Ledger, r)
	}
	for _, kind := range []string{ranv1alpha1.TrainConditionSourceRead, ranv1alpha1.TrainConditionProgressing, ranv1alpha1.TrainConditionHubsReporting, ranv1alpha1.ConditionReconciled} {
		tr.Status.Conditions = append(tr.Status.Conditions, metav1.Condition{Type: kind, Status: metav1.ConditionFalse, Reason: "Because", Message: strings.Repeat("m", 32768)})
	}
	return tr
}

// A train at the API's limits stays small: the hubs shown are bounded, the rest counted.
func TestTrainAtTheAPILimitsIsBounded(t *testing.T) {
	got := TrainOf(trainAtTheLimits())
	data, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	const bound = 96 << 10
	if len(data) > bound {
		t.Errorf("the train is %d bytes of JSON, more than %d", len(data), bound)
	}
	t.Logf("a train at the API's limits: %d bytes of JSON", len(data))
	r, u := got.Rings[0], got.Unreachable
	shown := []int{len(r.Hubs), r.HubsNotShown, len(r.Unreachable), r.UnreachableNotShown, len(u.Hubs), u.HubsNotShown}
	want := []int{TrainHubLimit, 64 - TrainHubLimit, TrainHubLimit, 64 - TrainHubLimit, TrainHubLimit, 16*64 - TrainHubLimit}
	if diff := cmp.Diff(want, shown); diff != "" {
		t.Errorf("hubs shown and counted: ring 0's, its unreachable ones, HubsReporting's (-want +got):\n%s", diff)
	}
	if got.Ledger[0].At != 15 || got.Rings[15].In == nil || got.Rings[15].In.SoakEnds == nil {
		t.Errorf("the newest release at ring %d; ring 15 runs %+v", got.Ledger[0].At, got.Rings[15].In)
	}
}
