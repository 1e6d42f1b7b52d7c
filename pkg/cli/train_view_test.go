package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// largestTrain is a train at the API's bounds: 16 rings, the last of 64 regional hubs that
// all do not report, the first blocked with a long message, a full ledger whose messages are
// long, and a long Progressing message.
func largestTrain(now time.Time) *ranv1alpha1.ReleaseTrain {
	var hubs []string
	for i := range ranv1alpha1.TrainHubLimit {
		hubs = append(hubs, fmt.Sprintf("hub-%d", 2*i)) // no runs: each hub is named
	}
	since := metav1.NewTime(now.Add(-10 * time.Minute))
	t := &ranv1alpha1.ReleaseTrain{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet-upgrades", Name: "edge"},
		Spec: ranv1alpha1.ReleaseTrainSpec{Releases: ranv1alpha1.TrainReleases{Channel: "stable-4.16"}}}
	var rings []ranv1alpha1.LedgerRing
	for i := range ranv1alpha1.TrainRingLimit {
		ring := ranv1alpha1.TrainRing{Name: fmt.Sprintf("ring-with-long-%d", i),
			ClusterSelector: &ranv1alpha1.MCUClusterSelector{ClusterSets: []string{"edge", "core"},
				MatchLabels: map[string]string{"du-profile": "4.16", "ring": fmt.Sprintf("ring-with-long-%d", i)},
				MatchExpressions: []ranv1alpha1.ClusterSelectorRequirement{
					{Key: "region", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"emea-west", "emea-east"}}}},
			Qualification: ranv1alpha1.RingQualification{Soak: &metav1.Duration{Duration: time.Hour}}}
		if i == ranv1alpha1.TrainRingLimit-1 {
			ring.Hubs = hubs
		}
		t.Spec.Rings = append(t.Spec.Rings, ring)
		t.Status.Rings = append(t.Status.Rings, ranv1alpha1.RingStatus{Name: ring.Name, Release: "4.16.30"})
		rings = append(rings, ranv1alpha1.LedgerRing{Name: ring.Name, State: ranv1alpha1.RingSoaking,
			Clusters: 3500, Complete: 3400, Failed: 12, SoakingSince: &since})
	}
	t.Status.Rings[len(t.Status.Rings)-1].Unreachable = hubs
	t.Status.Rings[0].Message = strings.Repeat("the rollout selects no cluster ", 33)
	for i := range ranv1alpha1.TrainLedgerLimit + 4 { // more than the API keeps: the view still bounds it
		t.Status.Ledger = append(t.Status.Ledger, ranv1alpha1.LedgerRelease{Version: fmt.Sprintf("4.16.%d", 30-i),
			State: ranv1alpha1.ReleaseRolling, Message: strings.Repeat("a message of many words ", 40), Rings: rings})
	}
	t.Status.Conditions = []metav1.Condition{{Type: ranv1alpha1.TrainConditionProgressing, Status: metav1.ConditionTrue,
		Reason: ranv1alpha1.TrainReasonRolling, Message: strings.Repeat("4.16.30 soaks in ring lab; ", 37)}}
	return t
}

// `train NAME` keeps every line within the width, and bounds the ledger and the hubs it
// lists however large the train.
func TestTrainViewIsBounded(t *testing.T) {
	now := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	for _, width := range []int{defaultWidth, 80} {
		var b bytes.Buffer
		if err := writeTrain(&b, painter{}, largestTrain(now), now, width); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > width || strings.HasSuffix(line, " ") {
				t.Errorf("width %d: a line of %d characters, or with trailing spaces: %q", width, n, line)
			}
		}
		if got := strings.Count(out, "\n  4.16."); got != ranv1alpha1.TrainLedgerLimit {
			t.Errorf("width %d: %d releases of the ledger shown, want %d", width, got, ranv1alpha1.TrainLedgerLimit)
		}
		for _, want := range []string{
			"... and 4 more: kubectl get train edge -n fleet-upgrades -o yaml",
			"Ring ring-with-long-15 held, not reporting: 64 hubs:", "and 44 more", // the hubs that do not report, in 20 runs
			"Ring ring-with-long-0 blocked: the rollout selects no cluster",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("width %d: the view does not say %q:\n%s", width, want, out)
			}
		}
		if lines := strings.Count(out, "\n"); lines > 1500 {
			t.Errorf("width %d: %d lines", width, lines)
		}
		var coloured bytes.Buffer
		if err := writeTrain(&coloured, painter{on: true}, largestTrain(now), now, width); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(coloured.String(), ansiCyan+"Soaking"+ansiReset) {
			t.Errorf("width %d: the states are not coloured", width)
		}
		if got := stripANSI(coloured.String()); got != out {
			t.Errorf("width %d: colour changes the layout:\n%s", width, got)
		}
	}
}

func TestTrainProgress(t *testing.T) {
	rings := []ranv1alpha1.TrainRing{{Name: "lab"}, {Name: "early"}, {Name: "field"}}
	progressing := func(reason string) []metav1.Condition {
		return []metav1.Condition{{Type: ranv1alpha1.TrainConditionProgressing, Reason: reason}}
	}
	cases := map[string]struct {
		status ranv1alpha1.ReleaseTrainStatus
		want   string
	}{
		"before the first pass": {want: "-"},
		"awaiting approval":     {status: ranv1alpha1.ReleaseTrainStatus{Conditions: progressing(ranv1alpha1.TrainReasonAwaitingApproval)}, want: "AwaitingApproval"},
		"idle":                  {status: ranv1alpha1.ReleaseTrainStatus{Conditions: progressing(ranv1alpha1.TrainReasonIdle)}, want: "Idle"},
		"the newest release on the move and its ring": {status: ranv1alpha1.ReleaseTrainStatus{Conditions: progressing(ranv1alpha1.TrainReasonRolling),
			Ledger: []ranv1alpha1.LedgerRelease{
				{Version: "4.16.22", State: ranv1alpha1.ReleaseRolling, Rings: []ranv1alpha1.LedgerRing{{Name: "lab", State: ranv1alpha1.RingSoaking}}},
				{Version: "4.16.21", State: ranv1alpha1.ReleaseRolling, Rings: []ranv1alpha1.LedgerRing{{Name: "lab", State: ranv1alpha1.RingQualified}, {Name: "early", State: ranv1alpha1.RingRolling}}},
				{Version: "4.16.20", State: ranv1alpha1.ReleaseDelivered},
			}}, want: "4.16.22 Soaking in lab (+1 more)"},
		"a release that waits for its next ring": {status: ranv1alpha1.ReleaseTrainStatus{Conditions: progressing(ranv1alpha1.TrainReasonRolling),
			Ledger: []ranv1alpha1.LedgerRelease{
				{Version: "4.16.21", State: ranv1alpha1.ReleaseWaiting, Rings: []ranv1alpha1.LedgerRing{{Name: "lab", State: ranv1alpha1.RingQualified}}},
			}}, want: "4.16.21 waits for early"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tr := &ranv1alpha1.ReleaseTrain{Spec: ranv1alpha1.ReleaseTrainSpec{Rings: rings}, Status: tc.status}
			if got := trainProgress(tr).text; got != tc.want {
				t.Errorf("progress %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRingWhere(t *testing.T) {
	cases := map[string]struct {
		ring ranv1alpha1.TrainRing
		want string
	}{
		"labels": {ranv1alpha1.TrainRing{ClusterSelector: &ranv1alpha1.MCUClusterSelector{MatchLabels: map[string]string{"ring": "lab"}}},
			"this hub: ring=lab"},
		"placements, sets and expressions": {ranv1alpha1.TrainRing{Placement: []ranv1alpha1.PlacementReference{{Name: "edge-early"}, {Namespace: "ops", Name: "canaries"}},
			ClusterSelector: &ranv1alpha1.MCUClusterSelector{ClusterSets: []string{"edge"},
				MatchExpressions: []ranv1alpha1.ClusterSelectorRequirement{{Key: "ring", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"lab", "early"}}}}},
			"this hub: 2 placements: edge-early, ops/canaries; 1 cluster set: edge; ring notin (early,lab)"},
		"regional hubs": {ranv1alpha1.TrainRing{Hubs: []string{"hub-west", "hub-east"},
			ClusterSelector: &ranv1alpha1.MCUClusterSelector{MatchLabels: map[string]string{"ring": "lab"}}}, "2 hubs: hub-east, hub-west"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ringWhere(tc.ring); got != tc.want {
				t.Errorf("%q, want %q", got, tc.want)
			}
		})
	}
}
