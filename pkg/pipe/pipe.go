// Package pipe plans pre-caching against bandwidth: which clusters pull their release payload
// and operator bundles when, so that no shared link and not the registry carry more than they
// can, and how long the whole fleet takes. It is pure: the sizes, the links and their
// capacities come in, a schedule comes out.
//
// The model is a fluid one. A pull moves its bytes at the rate it holds. A pull holds a share of
// the registry's capacity and of its link's, reserved when it starts and given back when it
// ends, never more than its own ceiling (the site's line). A pull starts only once it can hold
// at least MinShare of its ceiling, so a link is never split into shares too thin to finish:
// the reserved rates on a link, and at the registry, never add up to more than its capacity.
// When a pull ends, the pulls running below their ceiling take the freed capacity first, in
// the order they started, then the next pulls start.
//
// The pulls start in Order: the slowest first, since a fleet ends with its slowest pull.
//
// Plan schedules a whole fleet at once; Admit takes the same rule one moment at a time, as
// the operator does when a pull ends; Fair is how the network shares the pulls out when
// nothing plans them, and Shared schedules a fleet that way.
package pipe

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// MinShare is the least part of its ceiling a pull starts with.
const MinShare = 0.25

// Pull is what one cluster pulls to pre-cache, and over what.
type Pull struct {
	Cluster string
	// Bytes is the size of what the cluster still has to pull.
	Bytes int64
	// Link names the link the cluster shares with others (the value of the label that groups
	// them); empty when it shares none.
	Link string
	// Rate is the fastest the cluster can pull, in bytes a second (its site's line); zero when
	// unknown, then bounded only by its link and the registry.
	Rate float64
}

// Budget is the capacity pre-caching may use, in bytes a second.
type Budget struct {
	// Registry is what the registry or mirror serves to every cluster together; zero is no
	// bound.
	Registry float64
	// Links is what each shared link carries, by name; a link not named has no bound.
	Links map[string]float64
	// Within is the time a pull has to end in (the precache Job's timeout): a pull starts
	// only when the rate it can hold ends it in time, or, when even its ceiling cannot, only
	// at its ceiling. Zero is no bound.
	Within time.Duration
}

// Slot is one pull in a schedule: when it starts and ends, from the schedule's start.
type Slot struct {
	Cluster    string
	Start, End time.Duration
}

// Schedule is a plan of pulls.
type Schedule struct {
	// Slots are the pulls in the order they start.
	Slots []Slot
	// Makespan is when the last pull ends.
	Makespan time.Duration
	// Unbounded names the pulls that no capacity bounds (no ceiling, no link and no registry
	// bound): they take no time in the plan.
	Unbounded []string
	// PeakRegistry and PeakLinks are the most the schedule reserves at the registry and on
	// each link at once, in bytes a second.
	PeakRegistry float64
	PeakLinks    map[string]float64
}

// Floor is the least time any schedule needs: the registry's bytes at its capacity, each
// link's bytes at its capacity, or the slowest pull at its own ceiling, whichever is longest.
func Floor(pulls []Pull, b Budget) time.Duration {
	d, _ := floor(pulls, b)
	return d
}

// Bound is what makes the floor: "registry", "link NAME" or "line of CLUSTER"; "" when
// nothing bounds the pulls.
func Bound(pulls []Pull, b Budget) string {
	_, what := floor(pulls, b)
	return what
}

func floor(pulls []Pull, b Budget) (time.Duration, string) {
	var total int64
	perLink := map[string]int64{}
	longest, what := 0.0, ""
	take := func(t float64, name string) {
		if t > longest {
			longest, what = t, name
		}
	}
	for _, p := range pulls {
		total += p.Bytes
		if p.Link != "" {
			perLink[p.Link] += p.Bytes
		}
		if p.Rate > 0 {
			take(float64(p.Bytes)/p.Rate, "line of "+p.Cluster)
		}
	}
	if b.Registry > 0 {
		take(float64(total)/b.Registry, "registry")
	}
	links := make([]string, 0, len(perLink))
	for link := range perLink {
		links = append(links, link)
	}
	slices.Sort(links) // the same link named on a tie, run after run
	for _, link := range links {
		if c, ok := b.Links[link]; ok && c > 0 {
			take(float64(perLink[link])/c, "link "+link)
		}
	}
	return seconds(longest), what
}

// Order is the order pulls start in: the longest alone at its own ceiling first, then the
// largest, then by name.
func Order(pulls []Pull) []Pull {
	out := slices.Clone(pulls)
	slices.SortStableFunc(out, func(a, b Pull) int {
		if c := cmp.Compare(alone(b), alone(a)); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Bytes, a.Bytes); c != 0 {
			return c
		}
		return cmp.Compare(a.Cluster, b.Cluster)
	})
	return out
}

// alone is how long a pull takes at its own ceiling, +Inf without one.
func alone(p Pull) float64 {
	if p.Rate <= 0 {
		return math.Inf(1)
	}
	return float64(p.Bytes) / p.Rate
}

func seconds(s float64) time.Duration {
	if math.IsInf(s, 0) || s > float64(math.MaxInt64/int64(time.Second)) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(math.Ceil(s * float64(time.Second)))
}
