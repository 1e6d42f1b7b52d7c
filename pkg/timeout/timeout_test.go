package timeout

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 21, 2, 0, 0, 0, time.UTC)

func TestOverall(t *testing.T) {
	cases := map[string]struct {
		minutes int
		want    time.Time
	}{
		"zero is no time":      {0, t0},
		"default for negative": {-3, t0.Add(240 * time.Minute)},
		"given":                {90, t0.Add(90 * time.Minute)},
		"ten years":            {5256000, t0.Add(5256000 * time.Minute)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Overall(t0, tc.minutes); !got.Equal(tc.want) {
				t.Fatalf("Overall(%d) = %v, want %v", tc.minutes, got, tc.want)
			}
		})
	}
}

func TestBatch(t *testing.T) {
	overall := t0.Add(240 * time.Minute)
	cases := map[string]struct {
		start       time.Time
		batchesLeft int
		want        time.Time
	}{
		"first of four gets a quarter":          {t0, 4, t0.Add(60 * time.Minute)},
		"an early finish leaves more for later": {t0.Add(20 * time.Minute), 3, t0.Add(20*time.Minute + 220*time.Minute/3)},
		"the last batch gets all that is left":  {t0.Add(200 * time.Minute), 1, overall},
		"no batch count left counts as last":    {t0.Add(200 * time.Minute), 0, overall},
		"starting at the deadline times out":    {overall, 2, overall},
		"starting after the deadline times out": {overall.Add(time.Minute), 2, overall.Add(time.Minute)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Batch(tc.start, overall, tc.batchesLeft); !got.Equal(tc.want) {
				t.Fatalf("Batch = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestBatchesShareTheWholeTimeout walks a rollout whose batches each use all their time:
// together they end exactly at the overall deadline, each taking an equal share.
func TestBatchesShareTheWholeTimeout(t *testing.T) {
	overall := Overall(t0, 240)
	start := t0
	for left := 5; left >= 1; left-- {
		end := Batch(start, overall, left)
		if got := end.Sub(start); got != 48*time.Minute {
			t.Fatalf("batch with %d left lasted %v, want 48m", left, got)
		}
		start = end
	}
	if !start.Equal(overall) {
		t.Fatalf("the last batch ended at %v, want the overall deadline %v", start, overall)
	}
}

func TestLeft(t *testing.T) {
	if got := Left(t0.Add(time.Minute), t0); got != time.Minute {
		t.Fatalf("Left = %v", got)
	}
	if got := Left(t0, t0.Add(time.Minute)); got != 0 {
		t.Fatalf("Left after the deadline = %v, want 0", got)
	}
}
