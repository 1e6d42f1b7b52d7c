package precache

import (
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/prestart"
	"github.com/cgu-operator/cgu-operator/pkg/talmjob"
)

// Kind is pre-caching as a pre-start job (pkg/prestart): TALM's words for the final states
// that are not Succeeded in status.precaching.status, and the PrecachingSucceeded
// condition's reasons and messages. status.precaching.counts keys the states by their own
// names.
var Kind = prestart.Kind{
	Noun: "Pre-caching", Job: "precache",
	Words:      map[prestart.State]string{prestart.Timeout: talmjob.Precache.Timeout, prestart.Failed: talmjob.Failed},
	Completed:  ranv1alpha1.ReasonPrecachingCompleted,
	Failed:     ranv1alpha1.ReasonPrecachingFailed,
	InProgress: "Pre-caching: %d of %d clusters done",
}
