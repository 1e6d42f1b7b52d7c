package estimate

import (
	"testing"
	"time"
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
