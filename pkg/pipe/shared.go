package pipe

import "math"

// Shared is how pulls go when nothing plans them against bandwidth: they start in the order
// given, up to concurrency at once (zero: all at once, as TALM starts every site), and the
// pulls running share the links and the registry as TCP flows do (Fair). A link carrying more pulls than it
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

// share gives each running pull its Fair rate.
func (s *sharing) share() {
	pulls := make([]Pull, len(s.running))
	for i, r := range s.running {
		pulls[i] = r.Pull
	}
	for i, rate := range Fair(pulls, s.b) {
		s.running[i].rate = rate
	}
}

// advance moves the time on to the next end of a pull, and ends the pulls done then.
func (s *sharing) advance() {
	s.running, _ = step(s.running, &s.now, &s.out)
}
