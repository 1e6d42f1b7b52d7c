package rollout_test

import (
	"testing"
	"time"

	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

func TestPaceGrowsWithTheStatusWithinItsBounds(t *testing.T) {
	for _, c := range []struct {
		size int
		want time.Duration
	}{
		{0, rollout.MinPace},
		{20 << 10, rollout.MinPace},                // a rollout of a few dozen clusters
		{32 << 10, rollout.MinPace},                // the rate's reach at the least pace
		{64 << 10, 4 * time.Second},                // twice as large, half as often
		{105_000, 6_408_691_406 * time.Nanosecond}, // a batch of 250 with TALM's fields
		{160 << 10, rollout.MaxPace},
		{1 << 20, rollout.MaxPace},
	} {
		if got := rollout.Pace(c.size); got != c.want {
			t.Errorf("Pace(%d) = %v, want %v", c.size, got, c.want)
		}
	}
}
