package gates

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// Pauses are counted only while the rollout runs: a CGU paused before its start does not
// carry that time into its deadlines.
func TestPauseStatus(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	st := &ranv1alpha1.ClusterGroupUpgradeStatus{}
	RecordPause(st, true, false, t0)
	if st.PausedAt != nil || st.PausedFor != nil {
		t.Fatalf("a pause before the start was recorded: %v %v", st.PausedAt, st.PausedFor)
	}
	RecordPause(st, true, true, t0)
	if st.PausedAt == nil || !st.PausedAt.Time.Equal(t0) {
		t.Fatalf("pausedAt %v, want %v", st.PausedAt, t0)
	}
	if got := PausedFor(*st, t0.Add(time.Hour)); got != time.Hour {
		t.Fatalf("paused for %v during the pause, want an hour", got)
	}
	RecordPause(st, false, true, t0.Add(2*time.Hour))
	if st.PausedAt != nil || st.PausedFor == nil || st.PausedFor.Duration != 2*time.Hour {
		t.Fatalf("after resuming: %v %v, want two hours recorded", st.PausedAt, st.PausedFor)
	}
	st.PausedFor = &metav1.Duration{Duration: 2 * time.Hour}
	RecordPause(st, true, true, t0.Add(3*time.Hour))
	RecordPause(st, false, true, t0.Add(4*time.Hour))
	if st.PausedFor.Duration != 3*time.Hour {
		t.Fatalf("two pauses add up to %v, want three hours", st.PausedFor.Duration)
	}
}

// A pause that begins on a clock showing a fraction of a second lasts what the clock moved:
// status keeps whole seconds, so both ends are counted in whole seconds.
func TestPauseFromFractionOfSecond(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 8, 0, 0, 700_000_000, time.UTC)
	st := &ranv1alpha1.ClusterGroupUpgradeStatus{}
	RecordPause(st, true, true, t0)
	if got := PausedFor(*st, t0.Add(time.Hour)); got != time.Hour {
		t.Fatalf("paused for %v during the pause, want an hour", got)
	}
	RecordPause(st, false, true, t0.Add(2*time.Hour))
	if st.PausedFor == nil || st.PausedFor.Duration != 2*time.Hour {
		t.Fatalf("after resuming: %v, want two hours", st.PausedFor)
	}
}
