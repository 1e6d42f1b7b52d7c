// Package estimate says how long the batches left of a rollout may take, from the time the
// ended batches took and the timeout they share (kubectl cgu preflight and status show it).
// It is pure.
package estimate

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/timeout"
)

// Estimate is how long the batches left of a rollout may take.
type Estimate struct {
	// BatchesLeft are the batches not ended, the running one included.
	BatchesLeft int `json:"batchesLeft"`
	// PerBatch is the median duration of the ended batches, or, before any ended, a
	// batch's share of the rollout's timeout.
	PerBatch metav1.Duration `json:"perBatch"`
	// Total is PerBatch times BatchesLeft.
	Total metav1.Duration `json:"total"`
	// UpperBound is true when PerBatch is the timeout's share: the batches take at most
	// that long, or time out.
	UpperBound bool `json:"upperBound"`
	// Ended is how many ended batches the median is taken over.
	Ended int `json:"ended"`
	// Window, for the window of a Window rollout, is its size: BatchesLeft then counts its
	// waves left, PerBatch is a cluster's time, and Ended the clusters that completed.
	Window int `json:"window,omitempty"`
	// StagesLeft, of BatchesLeft, are the stages of a Progressive batch, each counted as a
	// batch.
	StagesLeft int `json:"stagesLeft,omitempty"`
}

// Duration estimates the batches left of a plan of batches batches whose ended
// batches took ended, under a timeout of timeoutMinutes (0: the default). It counts neither
// approvals nor maintenance windows.
func Duration(left, batches, timeoutMinutes int, ended []time.Duration) Estimate {
	e := Estimate{BatchesLeft: left, Ended: len(ended)}
	if left == 0 || batches == 0 {
		return e
	}
	var per time.Duration
	if len(ended) > 0 {
		per = median(ended)
	} else {
		start := time.Unix(0, 0)
		per = timeout.Batch(start, timeout.Overall(start, timeoutMinutes), batches).Sub(start)
		e.UpperBound = true
	}
	e.PerBatch = metav1.Duration{Duration: per}
	e.Total = metav1.Duration{Duration: per * time.Duration(left)}
	return e
}

// EndedDurations are how long each ended batch of a started rollout took, from its first
// record's start to its end.
func EndedDurations(records []ranv1alpha1.ClusterGroupUpgradeBatch) []time.Duration {
	var out []time.Duration
	for _, r := range records {
		if r.Spec.Part == 0 && r.Status.StartedAt != nil && r.Status.FinishedAt != nil {
			out = append(out, r.Status.FinishedAt.Sub(r.Status.StartedAt.Time))
		}
	}
	return out
}

// Window estimates the rest of a Window rollout's window: its clusters not done (left, the
// running ones included), window at a time. Each wave takes the median time the window's
// completed clusters took from their start, or before any completed, each cluster's share of
// the window's time (share), an upper bound. BatchesLeft counts the waves left.
func Window(left, window int, share time.Duration, completed []time.Duration) Estimate {
	waves := 0
	if left > 0 {
		waves = 1
		if window > 0 {
			waves = (left + window - 1) / window
		}
	}
	e := Estimate{BatchesLeft: waves, Ended: len(completed), Window: window}
	if waves == 0 {
		return e
	}
	per := median(completed)
	if len(completed) == 0 {
		per, e.UpperBound = share, true
	}
	e.PerBatch = metav1.Duration{Duration: per}
	e.Total = metav1.Duration{Duration: per * time.Duration(waves)}
	return e
}

// CompletedInWindow are how long each completed cluster of a window took, from its start to
// its completion, from the window's records.
func CompletedInWindow(records []ranv1alpha1.ClusterGroupUpgradeBatch) []time.Duration {
	var out []time.Duration
	for _, r := range records {
		if r.Spec.Window == 0 {
			continue
		}
		for _, c := range r.Status.Clusters {
			if c.State == ranv1alpha1.ClusterCompleted && c.StartedAt != nil && c.Since != nil {
				out = append(out, c.Since.Sub(c.StartedAt.Time))
			}
		}
	}
	return out
}

// median is the median of ds, 0 for none.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	if len(sorted)%2 == 0 {
		return (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	}
	return sorted[len(sorted)/2]
}
