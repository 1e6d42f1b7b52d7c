// Package estimate says how long the batches left of a rollout may take, from the time the
// ended batches took and the timeout they share, and words it (Text). It is the one estimate:
// kubectl cgu preflight and status and the dashboard each build an Input from what they read,
// and show Of's result as Text writes it. It is pure.
package estimate

import (
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/pkg/timeout"
	"github.com/cgu-operator/cgu-operator/pkg/words"
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

// Batch is what an estimate reads of one batch of the plan.
type Batch struct {
	// Clusters are its clusters; Left those not done yet (0 once it ended).
	Clusters, Left int
	// Stages are a Progressive batch's stage sizes by step; Window a Window batch's size.
	Stages []int
	Window int
	// Started and Deadline bound a started batch's time; zero before it started.
	Started, Deadline time.Time
}

// Input is what an estimate is made from: the plan's batches, the rollout's timeout, and
// what the records say of the time ended batches (Ended) and a window's completed clusters
// (CompletedInWindow) took.
type Input struct {
	Batches                  []Batch
	TimeoutMinutes           int
	Ended, CompletedInWindow []time.Duration
}

// Of estimates the rest of a rollout. A Window batch with clusters left is estimated wave by
// wave (window); otherwise each batch left (each stage of a Progressive batch, counted from
// its first size: an upper bound once its growth went up) takes the median of the ended
// batches, or its share of the timeout (duration).
func Of(in Input) Estimate {
	left, stages, batches := 0, 0, 0
	for _, b := range in.Batches {
		batches += plan.StagesFor(b.Stages, 0, b.Clusters)
		if b.Left > 0 {
			k := plan.StagesFor(b.Stages, 0, b.Left)
			left += k
			if len(b.Stages) > 0 {
				stages += k
			}
		}
	}
	for _, b := range in.Batches {
		if b.Window > 0 && b.Left > 0 {
			return window(b.Left, b.Window, waveShare(b, batches, in.TimeoutMinutes), in.CompletedInWindow)
		}
	}
	e := duration(left, batches, in.TimeoutMinutes, in.Ended)
	e.StagesLeft = stages
	return e
}

// waveShare is a wave's share of a window batch's time: from its start to its deadline once
// started, else its share of the rollout's timeout; over the waves of all its clusters.
func waveShare(b Batch, batches, timeoutMinutes int) time.Duration {
	span := b.Deadline.Sub(b.Started)
	if b.Started.IsZero() || b.Deadline.IsZero() {
		start := time.Unix(0, 0)
		span = timeout.Batch(start, timeout.Overall(start, timeoutMinutes), max(batches, 1)).Sub(start)
	}
	waves := max((b.Clusters+b.Window-1)/b.Window, 1)
	return span / time.Duration(waves)
}

// Text writes an estimate for people: what is left, how long each part may take, and what
// that is based on.
func Text(e Estimate) string {
	d := func(m metav1.Duration) string { return words.Duration(m.Duration) }
	switch {
	case e.Window > 0 && e.BatchesLeft == 0:
		return "no cluster left"
	case e.Window > 0 && e.UpperBound:
		return fmt.Sprintf("at most %s: %s of %d clusters, each cluster within its share of the timeout (%s)",
			d(e.Total), words.Plural(e.BatchesLeft, "wave"), e.Window, d(e.PerBatch))
	case e.Window > 0:
		return fmt.Sprintf("about %s: %s of %d clusters at %s each, the median of %s that completed",
			d(e.Total), words.Plural(e.BatchesLeft, "wave"), e.Window, d(e.PerBatch), words.Plural(e.Ended, "cluster"))
	case e.BatchesLeft == 0:
		return "no batch left"
	case e.UpperBound:
		return fmt.Sprintf("at most %s: %s, each within its share of the timeout (%s)", d(e.Total), unitsLeft(e), d(e.PerBatch))
	}
	return fmt.Sprintf("about %s: %s at %s each, the median of %s that ended",
		d(e.Total), unitsLeft(e), d(e.PerBatch), words.Plural(e.Ended, "batch"))
}

// unitsLeft names what an estimate counts: "3 batches", "2 stages" (of a Progressive
// batch), or "1 batch and 2 stages".
func unitsLeft(e Estimate) string {
	switch e.StagesLeft {
	case 0:
		return words.Plural(e.BatchesLeft, "batch")
	case e.BatchesLeft:
		return words.Plural(e.StagesLeft, "stage")
	}
	return words.Plural(e.BatchesLeft-e.StagesLeft, "batch") + " and " + words.Plural(e.StagesLeft, "stage")
}

// duration estimates the batches left of a plan of batches batches whose ended
// batches took ended, under a timeout of timeoutMinutes (0: the default). It counts neither
// approvals nor maintenance windows.
func duration(left, batches, timeoutMinutes int, ended []time.Duration) Estimate {
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

// window estimates the rest of a Window rollout's window: its clusters not done (left, the
// running ones included), window at a time. Each wave takes the median time the window's
// completed clusters took from their start, or before any completed, each cluster's share of
// the window's time (share), an upper bound. BatchesLeft counts the waves left.
func window(left, window int, share time.Duration, completed []time.Duration) Estimate {
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
