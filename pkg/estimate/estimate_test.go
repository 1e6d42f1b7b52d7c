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
			e := Duration(tc.left, tc.batches, tc.mins, tc.ended)
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
			if got := Window(tc.left, tc.window, time.Hour, tc.completed); got != tc.want {
				t.Errorf("Window = %+v, want %+v", got, tc.want)
			}
		})
	}
}
