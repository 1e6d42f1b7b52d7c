package pipe

import (
	"math"
	"slices"
	"sort"
)

// Fair is the rate each pull gets when the pulls run together and nothing but the network
// shares them out, as TCP flows share what they go through: max-min fairness, each pull as
// much as the others on what it shares, up to its own line. A pull goes through its link and
// then the registry, so the bounds nest: a link's pulls rise together until the link is full
// or each reaches its line, and the links' pulls rise together until the registry is full.
// A pull no capacity bounds gets +Inf.
func Fair(pulls []Pull, b Budget) []float64 {
	links := map[string]*linkShare{}
	var order []string
	for i, p := range pulls {
		l := links[p.Link]
		if l == nil {
			l = &linkShare{capacity: math.Inf(1)}
			if c, ok := b.Links[p.Link]; ok && p.Link != "" && c > 0 {
				l.capacity = c
			}
			links[p.Link] = l
			order = append(order, p.Link)
		}
		line := math.Inf(1)
		if p.Rate > 0 {
			line = p.Rate
		}
		l.lines = append(l.lines, line)
		l.members = append(l.members, i)
	}
	for _, l := range links {
		l.prepare()
	}
	level := math.Inf(1) // the registry's water level
	if b.Registry > 0 {
		total := func(w float64) float64 {
			sum := 0.0
			for _, name := range order {
				sum += links[name].carried(w)
			}
			return sum
		}
		if total(math.Inf(1)) > b.Registry {
			level = solve(total, b.Registry)
		}
	}
	out := make([]float64, len(pulls))
	for _, name := range order {
		l := links[name]
		w := math.Min(level, l.level)
		for k, i := range l.members {
			out[i] = math.Min(l.lines[k], w)
		}
	}
	return out
}

// linkShare is the pulls through one link: their lines, sorted with their running sums,
// and the water level at which the link is full (+Inf when their lines never fill it).
type linkShare struct {
	capacity float64
	lines    []float64
	members  []int
	sorted   []float64
	prefix   []float64
	level    float64
}

func (l *linkShare) prepare() {
	l.sorted = slices.Clone(l.lines)
	slices.Sort(l.sorted)
	l.prefix = make([]float64, len(l.sorted)+1)
	for i, v := range l.sorted {
		l.prefix[i+1] = l.prefix[i] + v
	}
	l.level = math.Inf(1)
	if l.demand(math.Inf(1)) > l.capacity {
		l.level = solve(l.demand, l.capacity)
	}
}

// demand is what the link's pulls take at water level w, the link's capacity aside: each
// min(line, w).
func (l *linkShare) demand(w float64) float64 {
	if math.IsInf(w, 1) {
		return l.prefix[len(l.sorted)]
	}
	k := sort.SearchFloat64s(l.sorted, w) // the lines below w
	return l.prefix[k] + float64(len(l.sorted)-k)*w
}

// carried is what the link carries at the registry's water level w.
func (l *linkShare) carried(w float64) float64 {
	return l.demand(math.Min(w, l.level))
}

// solve finds the level w at which f(w) reaches target, for f rising and continuous from
// f(0) = 0 and known to pass target.
func solve(f func(float64) float64, target float64) float64 {
	lo, hi := 0.0, 1.0
	for f(hi) < target {
		lo, hi = hi, hi*2
	}
	for range 100 {
		mid := (lo + hi) / 2
		if f(mid) < target {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-9*hi {
			break
		}
	}
	return hi
}
