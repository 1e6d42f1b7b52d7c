package hops

import "time"

// AcceptedRisk is a conditional-update risk accepted for a whole rollout: by whom, and until
// when (zero: with no end).
type AcceptedRisk struct {
	Name, By string
	Until    time.Time
}

// Acceptance is what a rollout's accepted risks say at one instant.
type Acceptance struct {
	risks []AcceptedRisk
	now   time.Time
}

// AcceptanceAt reads accepted risks at now: an acceptance whose Until has passed no longer
// holds.
func AcceptanceAt(risks []AcceptedRisk, now time.Time) Acceptance {
	return Acceptance{risks: risks, now: now}
}

// Accepted tells whether the risk, by name, is accepted now; it is Input.Accepted.
func (a Acceptance) Accepted(risk string) bool {
	for _, r := range a.risks {
		if r.Name == risk && (r.Until.IsZero() || a.now.Before(r.Until)) {
			return true
		}
	}
	return false
}

// NextExpiry is when the next acceptance that holds now ends, zero when none ends: the
// rollout plans again then, since a path through the risk may be blocked from that instant.
func (a Acceptance) NextExpiry() time.Time {
	var next time.Time
	for _, r := range a.risks {
		if r.Until.IsZero() || !a.now.Before(r.Until) {
			continue
		}
		if next.IsZero() || r.Until.Before(next) {
			next = r.Until
		}
	}
	return next
}
