package precache

import (
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/prestart"
)

// Kind is pre-caching as a pre-start job (pkg/prestart): TALM's words for the final states
// that are not Succeeded in status.precaching.status, and the PrecachingSucceeded
// condition's reasons and messages. status.precaching.counts keys the states by their own
// names.
var Kind = prestart.Kind{
	Noun: "Pre-caching", Job: "precache",
	Words:      map[prestart.State]string{prestart.Timeout: "PrecacheTimeout", prestart.Failed: "UnrecoverableError"},
	Completed:  ranv1alpha1.ReasonPrecachingCompleted,
	Failed:     ranv1alpha1.ReasonPrecachingFailed,
	InProgress: "Pre-caching: %d of %d clusters done",
}

// Observed adds to what the hub sees of a cluster's precache Job what the program's summary
// of this run says (nil before it wrote one).
func Observed(o prestart.Observation, sum *Summary) prestart.Observation {
	if sum == nil {
		return o
	}
	o.Summarized = true
	o.Succeeded = sum.Phase == PhaseSucceeded
	if sum.Phase == PhaseFailed && !sum.Retryable {
		o.Unrecoverable = sum.Error
	}
	return o
}
