package pull

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestPace(t *testing.T) {
	cases := map[string]struct {
		every    int
		interval time.Duration
		steps    []time.Duration // the time each image takes
		want     []int           // the images after which a report is due
	}{
		"every 3 images": {every: 3, interval: time.Hour, steps: []time.Duration{1, 1, 1, 1, 1, 1, 1}, want: []int{3, 6}},
		"every minute, 30 s per image": {
			every: 100, interval: time.Minute, steps: []time.Duration{30 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second},
			want: []int{2, 4},
		},
		"whichever comes first": {
			every: 3, interval: time.Minute, steps: []time.Duration{time.Second, time.Second, time.Second, 70 * time.Second, time.Second, time.Second, time.Second},
			want: []int{3, 4, 7},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := clocktesting.NewFakePassiveClock(time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC))
			p := pace{every: tc.every, interval: tc.interval, clock: c}
			p.reported()
			var due []int
			for i, step := range tc.steps {
				c.SetTime(c.Now().Add(step))
				if p.handledOne() {
					due = append(due, i+1)
					p.reported()
				}
			}
			if diff := cmp.Diff(tc.want, due); diff != "" {
				t.Errorf("reports due mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// spaceRequired as TALM's spec ConfigMap writes it (whole GiB) and as a quantity.
func TestParseSpaceRequired(t *testing.T) {
	for in, want := range map[string]int64{"": 0, "35": 35 << 30, " 1 ": 1 << 30, "30Gi": 30 << 30, "1Mi": 1 << 20, "0": 0} {
		if got, err := parseSpaceRequired(in); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"-1", "lots", "9999999999999"} {
		if _, err := parseSpaceRequired(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}
