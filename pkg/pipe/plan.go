package pipe

import (
	"math"
	"time"
)

// Plan schedules pulls under b: each starts, in Order, as soon as it can hold its need;
// see the package's model.
func Plan(pulls []Pull, b Budget) Schedule {
	s := &simulation{b: b, reservedOn: map[string]float64{}, out: Schedule{PeakLinks: map[string]float64{}}}
	for _, p := range Order(pulls) {
		if c := ceiling(p, s.b); math.IsInf(c, 1) {
			s.out.Unbounded = append(s.out.Unbounded, p.Cluster)
			s.out.Slots = append(s.out.Slots, Slot{Cluster: p.Cluster})
			continue
		}
		s.waiting = append(s.waiting, p)
	}
	s.admit()
	for len(s.running) > 0 {
		s.advance()
		s.topUp()
		s.admit()
	}
	return s.out
}

// Admit is which of the waiting pulls start now, in Order, given the pulls under way in the
// order they started: Plan's rule at one moment. The pulls under way hold, in that order,
// what they can of their ceilings (as in Plan, where capacity freed goes to the earliest
// first); a waiting pull starts when what is left holds its need. A pull no capacity bounds
// starts at once. Admit returns the pulls to start, in the order they start.
func Admit(running, waiting []Pull, b Budget) []Pull {
	s := &simulation{b: b, reservedOn: map[string]float64{}, out: Schedule{PeakLinks: map[string]float64{}}}
	for _, p := range running {
		if c := ceiling(p, b); !math.IsInf(c, 1) {
			s.reserve(p, s.room(p, c))
		}
	}
	var out []Pull
	for _, p := range Order(waiting) {
		if math.IsInf(ceiling(p, b), 1) {
			out = append(out, p)
			continue
		}
		s.waiting = append(s.waiting, p)
	}
	byCluster := make(map[string]Pull, len(s.waiting))
	for _, p := range s.waiting {
		byCluster[p.Cluster] = p
	}
	s.admit()
	for _, sl := range s.out.Slots {
		out = append(out, byCluster[sl.Cluster])
	}
	return out
}

// simulation is Plan's state: the time in seconds, the pulls waiting in order, those running
// in the order they started, and the rates reserved.
type simulation struct {
	b          Budget
	now        float64
	waiting    []Pull
	running    []*running
	reserved   float64
	reservedOn map[string]float64
	out        Schedule
}

type running struct {
	Pull
	slot          int
	ceiling, rate float64
	remaining     float64
}

// ceiling is the most a pull can ever hold: its own ceiling, its link's and the registry's
// capacity.
func ceiling(p Pull, b Budget) float64 {
	c := math.Inf(1)
	if p.Rate > 0 {
		c = p.Rate
	}
	if l, ok := b.Links[p.Link]; ok && p.Link != "" && l > 0 {
		c = math.Min(c, l)
	}
	if b.Registry > 0 {
		c = math.Min(c, b.Registry)
	}
	return c
}

// room is what a pull could reserve now, at most its ceiling.
func (s *simulation) room(p Pull, ceiling float64) float64 {
	r := ceiling
	if s.b.Registry > 0 {
		r = math.Min(r, s.b.Registry-s.reserved)
	}
	if l, ok := s.b.Links[p.Link]; ok && p.Link != "" && l > 0 {
		r = math.Min(r, l-s.reservedOn[p.Link])
	}
	return math.Max(r, 0)
}

func (s *simulation) reserve(p Pull, rate float64) {
	s.reserved += rate
	if p.Link != "" {
		s.reservedOn[p.Link] += rate
	}
}

// need is the least rate a pull starts with: MinShare of its ceiling, and what ends it within
// the budget's time, at most its ceiling.
func need(p Pull, ceiling float64, b Budget) float64 {
	n := MinShare * ceiling
	if b.Within > 0 {
		n = math.Max(n, float64(p.Bytes)/b.Within.Seconds())
	}
	return math.Min(n, ceiling)
}

// admit starts, in order, every waiting pull that can hold its need.
func (s *simulation) admit() {
	kept := s.waiting[:0]
	for i, p := range s.waiting {
		if s.b.Registry > 0 && s.reserved >= s.b.Registry*(1-1e-12) {
			// The registry is full: no pull gets any room. (kept ends at or before i.)
			kept = append(kept, s.waiting[i:]...)
			break
		}
		c := ceiling(p, s.b)
		r := s.room(p, c)
		if r < need(p, c, s.b)*(1-1e-9) {
			kept = append(kept, p)
			continue
		}
		s.reserve(p, r)
		s.running = append(s.running, &running{Pull: p, slot: len(s.out.Slots), ceiling: c, rate: r, remaining: float64(p.Bytes)})
		s.out.Slots = append(s.out.Slots, Slot{Cluster: p.Cluster, Start: seconds(s.now)})
	}
	s.waiting = kept
	s.out.PeakRegistry = math.Max(s.out.PeakRegistry, s.reserved)
	for link, r := range s.reservedOn {
		s.out.PeakLinks[link] = math.Max(s.out.PeakLinks[link], r)
	}
}

// advance moves the time on to the next end of a pull, ends the pulls done then and gives
// back what they reserved.
func (s *simulation) advance() {
	var ended []*running
	s.running, ended = step(s.running, &s.now, &s.out)
	for _, r := range ended {
		s.reserve(r.Pull, -r.rate)
	}
}

// step moves the time on to the next end of a running pull at the rates they hold, records
// the end of each pull done then in out, and returns the pulls still running and those that
// ended. With no pull moving, nothing would ever end: every pull ends at once, at the end of
// time.
func step(run []*running, now *float64, out *Schedule) (kept, ended []*running) {
	dt := math.Inf(1)
	for _, r := range run {
		if r.rate > 0 {
			dt = math.Min(dt, r.remaining/r.rate)
		}
	}
	if math.IsInf(dt, 1) {
		out.Makespan = time.Duration(math.MaxInt64)
		return nil, run
	}
	*now += dt
	for _, r := range run {
		r.remaining -= r.rate * dt
		if r.remaining > 1e-6*float64(r.Bytes) && r.remaining > 1e-3 {
			kept = append(kept, r)
			continue
		}
		ended = append(ended, r)
		end := seconds(*now)
		out.Slots[r.slot].End = end
		out.Makespan = max(out.Makespan, end)
	}
	return kept, ended
}

// topUp gives the capacity freed to the running pulls below their ceiling, in the order they
// started.
func (s *simulation) topUp() {
	for _, r := range s.running {
		if more := s.room(r.Pull, r.ceiling-r.rate); more > 0 {
			s.reserve(r.Pull, more)
			r.rate += more
		}
	}
}

// Late is how much later the schedule ends than the time it has, zero when it ends in time.
func (sch Schedule) Late(has time.Duration) time.Duration {
	return max(sch.Makespan-has, 0)
}
