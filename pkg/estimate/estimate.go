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
		sorted := slices.Clone(ended)
		slices.Sort(sorted)
		per = sorted[len(sorted)/2]
		if len(sorted)%2 == 0 {
			per = (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
		}
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
