// Package timeout computes a rollout's deadlines: the overall one from spec.remediationStrategy
// .timeout, and each batch's share of the time left. It is pure; times come in as arguments.
package timeout

import (
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// Overall returns when a rollout started at started runs out of time with a timeout of the
// given minutes. Zero is no time at all, as in TALM, where lowering the timeout to 0 is how a
// running rollout is stopped (an absent timeout is the API's default of 240 minutes); a
// negative count, which the API refuses, means that default.
func Overall(started time.Time, minutes int) time.Time {
	if minutes < 0 {
		minutes = ranv1alpha1.DefaultTimeoutMinutes
	}
	return started.Add(time.Duration(minutes) * time.Minute)
}

// Batch returns when a batch starting at start times out: it gets the time left until the
// overall deadline divided by the batches left, itself included, so that the last batch gets
// all that is left. A batch that starts after the overall deadline times out at once.
func Batch(start, overall time.Time, batchesLeft int) time.Time {
	left := overall.Sub(start)
	if left <= 0 {
		return start
	}
	if batchesLeft <= 1 {
		return overall
	}
	return start.Add(left / time.Duration(batchesLeft))
}

// Left returns how long until deadline at now, never less than zero.
func Left(deadline, now time.Time) time.Duration {
	return max(deadline.Sub(now), 0)
}
