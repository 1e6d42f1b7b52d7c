package rollout

import "time"

// The operator writes a status change that is only clusters moving on, and a change that
// starts clusters inside a batch (a window's freed slots), at most once a pace for each
// object (controllers, expectations). The pace grows with the size of the status last
// written: the API server decodes, validates, tracks the fields of and encodes the whole
// object at every update, about 0.7 ms of its CPU for each kilobyte of a custom resource on
// the benchmark's hub, so a 100 KB status written every two seconds costs it as much as
// the propagator's work on a hundred clusters. A small rollout keeps its status fresh to
// two seconds; a batch of hundreds of clusters is written about every six.
const (
	// MinPace is the pace of a status of up to PaceRate*MinPace bytes.
	MinPace = 2 * time.Second
	// MaxPace bounds the pace of the largest statuses.
	MaxPace = 10 * time.Second
	// PaceRate is the bytes a second of progress the operator writes to one object at most,
	// between MinPace and MaxPace.
	PaceRate = 16 << 10
)

// Pace returns the least time between two progress writes of an object whose status was
// size bytes of JSON when last written: size / PaceRate seconds, within MinPace and MaxPace.
func Pace(size int) time.Duration {
	d := time.Duration(size) * time.Second / PaceRate
	return min(max(d, MinPace), MaxPace)
}
