package pipe

import (
	"math"
	"slices"
)

// Shared is how pulls go when nothing plans them against bandwidth: they start in the order
// given, up to concurrency at once (zero: all at once, as TALM starts every site), and the
// pulls running share the links and the registry as TCP flows do, each as much as the others
// on what they share (max-min fairness), up to its own line. A link carrying more pulls than it
// can serve at their lines is oversubscribed: the schedule's PeakLinks and PeakRegistry then
// say the rate the pulls asked for, above the capacity.
func Shared(pulls []Pull, b Budget, concurrency int) Schedule {
	s := &sharing{b: b, out: Schedule{PeakLinks: map[string]float64{}}}
	for _, p := range pulls {
		if c := ceiling(p, b); math.IsInf(c, 1) {
			s.out.Unbounded = append(s.out.Unbounded, p.Cluster)
			s.out.Slots = append(s.out.Slots, Slot{Cluster: p.Cluster})
			continue
		}
		s.waiting = append(s.waiting, p)
	}
	for s.start(concurrency); len(s.running) > 0; s.start(concurrency) {
		s.share()
		s.advance()
	}
	return s.out
}

type sharing struct {
	b       Budget
	now     float64
	waiting []Pull
	running []*running
	out     Schedule
}

// start starts the next waiting pulls while fewer than concurrency run, and records what the
// pulls running ask for.
func (s *sharing) start(concurrency int) {
	for len(s.waiting) > 0 && (concurrency <= 0 || len(s.running) < concurrency) {
		p := s.waiting[0]
		s.waiting = s.waiting[1:]
		c := ceiling(p, s.b)
		s.running = append(s.running, &running{Pull: p, slot: len(s.out.Slots), ceiling: c, remaining: float64(p.Bytes)})
		s.out.Slots = append(s.out.Slots, Slot{Cluster: p.Cluster, Start: seconds(s.now)})
	}
	asked, askedOn := 0.0, map[string]float64{}
	for _, r := range s.running {
		asked += r.ceiling
		if r.Link != "" {
			askedOn[r.Link] += r.ceiling
		}
	}
	s.out.PeakRegistry = math.Max(s.out.PeakRegistry, asked)
	for l, a := range askedOn {
		s.out.PeakLinks[l] = math.Max(s.out.PeakLinks[l], a)
	}
}

// share gives each running pull its max-min fair rate: every pull's rate grows alike until it
// reaches its line or something it goes through is full.
func (s *sharing) share() {
	active := slices.Clone(s.running)
	for _, r := range active {
		r.rate = 0
	}
	for len(active) > 0 {
		inc := math.Inf(1)
		for _, r := range active {
			inc = math.Min(inc, r.ceiling-r.rate)
		}
		perLink, sumLink, total := map[string]int{}, map[string]float64{}, 0.0
		for _, r := range s.running {
			total += r.rate
			sumLink[r.Link] += r.rate
		}
		for _, r := range active {
			perLink[r.Link]++
		}
		for l, n := range perLink {
			if c, ok := s.b.Links[l]; ok && l != "" && c > 0 {
				inc = math.Min(inc, (c-sumLink[l])/float64(n))
			}
		}
		if s.b.Registry > 0 {
			inc = math.Min(inc, (s.b.Registry-total)/float64(len(active)))
		}
		inc = math.Max(inc, 0)
		for _, r := range active {
			r.rate += inc
		}
		active = s.unsaturated(active, inc)
	}
}

// unsaturated are the active pulls that can still grow after a step of inc: below their line,
// on a link with room, under a registry with room.
func (s *sharing) unsaturated(active []*running, inc float64) []*running {
	const eps = 1e-9
	total, sumLink := 0.0, map[string]float64{}
	for _, r := range s.running {
		total += r.rate
		sumLink[r.Link] += r.rate
	}
	if s.b.Registry > 0 && total >= s.b.Registry*(1-eps) {
		return nil
	}
	out := active[:0]
	for _, r := range active {
		full := r.rate >= r.ceiling*(1-eps)
		if c, ok := s.b.Links[r.Link]; ok && r.Link != "" && c > 0 && sumLink[r.Link] >= c*(1-eps) {
			full = true
		}
		if !full {
			out = append(out, r)
		}
	}
	if inc == 0 && len(out) == len(active) {
		return nil // nothing could grow: never loop
	}
	return out
}

// advance moves the time on to the next end of a pull, and ends the pulls done then.
func (s *sharing) advance() {
	s.running, _ = step(s.running, &s.now, &s.out)
}
