package estimate

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEstimateDuration(t *testing.T) {
	cases := []struct {
		name                string
		left, batches, mins int
		ended               []time.Duration
		per                 time.Duration
		upper               bool
	}{
		{"before any batch ended: the timeout's share", 4, 4, 240, nil, time.Hour, true},
		{"a timeout of zero leaves no time", 2, 2, 0, nil, 0, true},
		{"the median of an odd count", 2, 5, 240, []time.Duration{30 * time.Minute, 10 * time.Minute, 20 * time.Minute}, 20 * time.Minute, false},
		{"the median of an even count", 1, 3, 240, []time.Duration{10 * time.Minute, 20 * time.Minute}, 15 * time.Minute, false},
		{"nothing left", 0, 3, 240, []time.Duration{time.Minute}, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := duration(tc.left, tc.batches, tc.mins, tc.ended)
			if e.PerBatch.Duration != tc.per || e.UpperBound != tc.upper || e.Total.Duration != tc.per*time.Duration(tc.left) {
				t.Fatalf("got %+v, want %s per batch (upper bound %v) over %d batches", e, tc.per, tc.upper, tc.left)
			}
		})
	}
}

func TestWindow(t *testing.T) {
	cases := map[string]struct {
		left, window int
		completed    []time.Duration
		want         Estimate
	}{
		"before any cluster completed: the share, an upper bound": {left: 1200, window: 500, want: Estimate{BatchesLeft: 3, Window: 500,
			PerBatch: metav1.Duration{Duration: time.Hour}, Total: metav1.Duration{Duration: 3 * time.Hour}, UpperBound: true}},
		"the median of the completed clusters": {left: 501, window: 500, completed: []time.Duration{50 * time.Minute, 70 * time.Minute, 61 * time.Minute},
			want: Estimate{BatchesLeft: 2, PerBatch: metav1.Duration{Duration: 61 * time.Minute}, Total: metav1.Duration{Duration: 122 * time.Minute}, Ended: 3, Window: 500}},
		"nothing left": {left: 0, window: 500, completed: []time.Duration{time.Hour}, want: Estimate{Ended: 1, Window: 500}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := window(tc.left, tc.window, time.Hour, tc.completed); got != tc.want {
				t.Errorf("Window = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A Progressive batch counts as the stages its clusters take, in the batches left and in the
// plan's batches that share the timeout.
func TestOfCountsAProgressiveBatchAsItsStages(t *testing.T) {
	// 9 clusters in stages of 1, 2, 4, then 2 of 4: four stages; eight not done: 1, 2, 4, 1.
	in := Input{TimeoutMinutes: 100, Batches: []Batch{{Clusters: 1}, {Clusters: 9, Left: 8, Stages: []int{1, 2, 4}}}}
	e := Of(in)
	if e.BatchesLeft != 4 || e.StagesLeft != 4 || e.PerBatch.Duration != 20*time.Minute || !e.UpperBound {
		t.Errorf("got %+v; want four stages left, all stages, each a fifth of 100m (the canary and four stages)", e)
	}
	in.Batches[0].Left = 1
	if e := Of(in); e.BatchesLeft != 5 || e.StagesLeft != 4 {
		t.Errorf("with the canary not done: got %d left, %d stages; want five, four of them stages", e.BatchesLeft, e.StagesLeft)
	}
}

// A window with clusters left is estimated wave by wave, each wave its share of the window
// batch's time: from its start to its deadline once started.
func TestOfAWindow(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	in := Input{TimeoutMinutes: 240, Batches: []Batch{{Clusters: 1}, {Clusters: 10, Left: 6, Window: 2, Started: start, Deadline: start.Add(100 * time.Minute)}}}
	e := Of(in)
	if e.Window != 2 || e.BatchesLeft != 3 || e.PerBatch.Duration != 20*time.Minute || !e.UpperBound {
		t.Errorf("got %+v; want three waves of 2 at most 20m each (100m over the window's five waves)", e)
	}
	in.CompletedInWindow = []time.Duration{5 * time.Minute, 7 * time.Minute, 6 * time.Minute}
	if e := Of(in); e.PerBatch.Duration != 6*time.Minute || e.UpperBound || e.Total.Duration != 18*time.Minute {
		t.Errorf("with completed clusters: got %+v; want three waves at the median 6m", e)
	}
	in.Batches[1].Started, in.Batches[1].Deadline = time.Time{}, time.Time{}
	in.CompletedInWindow = nil
	if e := Of(in); e.PerBatch.Duration != 24*time.Minute {
		t.Errorf("not started: got %s a wave; want the window batch's share of 240m (120m) over its five waves", e.PerBatch.Duration)
	}
}

func TestText(t *testing.T) {
	m := func(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }
	for want, e := range map[string]Estimate{
		"no batch left":   {},
		"no cluster left": {Window: 2},
		"at most 4h: 3 batches, each within its share of the timeout (1h20m)":   {BatchesLeft: 3, PerBatch: m(80 * time.Minute), Total: m(4 * time.Hour), UpperBound: true},
		"about 18m: 2 batches at 9m each, the median of 1 batch that ended":     {BatchesLeft: 2, PerBatch: m(9 * time.Minute), Total: m(18 * time.Minute), Ended: 1},
		"at most 2h40m: 2 stages, each within its share of the timeout (1h20m)": {BatchesLeft: 2, StagesLeft: 2, PerBatch: m(80 * time.Minute), Total: m(160 * time.Minute), UpperBound: true},
		"about 27m: 1 batch and 2 stages at 9m each, the median of 2 batches that ended": {BatchesLeft: 3, StagesLeft: 2, PerBatch: m(9 * time.Minute),
			Total: m(27 * time.Minute), Ended: 2},
		"at most 1h: 3 waves of 2 clusters, each cluster within its share of the timeout (20m)": {Window: 2, BatchesLeft: 3, PerBatch: m(20 * time.Minute),
			Total: m(time.Hour), UpperBound: true},
		"about 18m: 3 waves of 2 clusters at 6m each, the median of 3 clusters that completed": {Window: 2, BatchesLeft: 3, PerBatch: m(6 * time.Minute),
			Total: m(18 * time.Minute), Ended: 3},
	} {
		if got := Text(e); got != want {
			t.Errorf("Text(%+v) = %q, want %q", e, got, want)
		}
	}
}

// An estimate names the stages it counts apart from the batches.
func TestUnitsLeft(t *testing.T) {
	for _, tc := range []struct {
		left, stages int
		want         string
	}{
		{3, 0, "3 batches"}, {1, 0, "1 batch"}, {2, 2, "2 stages"}, {1, 1, "1 stage"}, {3, 2, "1 batch and 2 stages"},
	} {
		if got := unitsLeft(Estimate{BatchesLeft: tc.left, StagesLeft: tc.stages}); got != tc.want {
			t.Errorf("unitsLeft(%d, %d stages) = %q, want %q", tc.left, tc.stages, got, tc.want)
		}
	}
}
