// Package plan builds a ClusterGroupUpgrade's remediation plan: which clusters are remediated
// in which batch. It is pure: selection and compliance are gathered by the caller.
package plan

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Input is what the plan depends on.
type Input struct {
	// Clusters are the selected clusters, in selection order.
	Clusters []string
	// Canaries are remediated first, one batch each, in this order.
	Canaries []string
	// MaxConcurrency is the size of the other batches; zero (or less), or more than the
	// number of clusters, makes one batch. With Window, it is the window's size instead.
	MaxConcurrency int
	// Window puts the clusters after the canaries in one batch, a sliding window of at most
	// MaxConcurrency clusters in progress (spec.remediationStrategy.mode Window).
	Window bool
	// Progressive, when set, puts the clusters after the canaries in one batch that starts
	// them in stages growing as it says (spec.remediationStrategy.mode Progressive).
	Progressive *Growth
	// Compliant holds the clusters already compliant with every managed policy; they are
	// left out of the plan.
	Compliant map[string]bool
	// Unplaced holds the clusters no managed policy is placed on (no policy's status lists
	// them); they are left out of the plan too, but are not compliant: nothing is known of
	// them.
	Unplaced map[string]bool
	// Spread bounds, per value of a label, the clusters of a batch after the canaries
	// (spec.remediationStrategy.spread and antiAffinity); Labels holds the clusters' labels
	// it reads. It shapes plain batches only: admission refuses it with Window or
	// Progressive.
	Spread []Spread
	Labels map[string]map[string]string
	// MaxBatches, when not zero, is the most batches the spread may make (the timeout's
	// minutes: a batch gets one at least).
	MaxBatches int
}

// Batch is a set of clusters remediated at the same time.
type Batch struct {
	Canary   bool
	Clusters []string
	// Window, when not zero, makes the batch a sliding window: at most Window of its
	// clusters are in progress at once, and the next one starts, in order, as one is done.
	Window int
	// Stages, when set, make the batch progressive: its clusters start in stages, each after
	// the previous one ended, of Stages[step] clusters, the step growing after a healthy
	// stage up to the last size, which repeats. StopUnhealthy ends the rollout after an
	// unhealthy stage, where otherwise the step goes back to the first size.
	Stages        []int
	StopUnhealthy bool
}

// Plan is the remediation plan.
type Plan struct {
	// Batches in remediation order: the canary batches, then the others.
	Batches []Batch
	// SkippedCompliant are selected clusters left out because they were already compliant,
	// in selection order.
	SkippedCompliant []string
	// Unplaced are selected clusters left out because no managed policy is placed on them,
	// in selection order.
	Unplaced []string
	// Spread says how each spread bounded the batches after the canaries, and SpreadAdded
	// how many batches it added to those maxConcurrency alone makes.
	Spread      []SpreadUse
	SpreadAdded int
}

// Clusters is the number of clusters in the plan's batches.
func (p Plan) Clusters() int {
	n := 0
	for _, b := range p.Batches {
		n += len(b.Clusters)
	}
	return n
}

// CanaryBatches is the number of leading canary batches.
func (p Plan) CanaryBatches() int {
	n := 0
	for _, b := range p.Batches {
		if b.Canary {
			n++
		}
	}
	return n
}

// ErrCanaryNotSelected is wrapped by the error Build returns for canaries that are not among
// the selected clusters.
var ErrCanaryNotSelected = errors.New("canaries are not selected clusters")

// Build makes the plan: each canary its own batch, in canary order, then the remaining
// clusters in selection order, maxConcurrency at a time. Clusters already compliant are left
// out, canaries included.
func Build(in Input) (Plan, error) {
	if err := checkCanaries(in); err != nil {
		return Plan{}, err
	}
	var p Plan
	placed := make(map[string]bool, len(in.Clusters))
	for _, c := range in.Canaries {
		if placed[c] {
			continue
		}
		placed[c] = true
		if in.Compliant[c] || in.Unplaced[c] {
			continue
		}
		p.Batches = append(p.Batches, Batch{Canary: true, Clusters: []string{c}})
	}
	var rest []string
	for _, c := range in.Clusters {
		if placed[c] {
			continue
		}
		placed[c] = true
		if !in.Compliant[c] && !in.Unplaced[c] {
			rest = append(rest, c)
		}
	}
	p.SkippedCompliant, p.Unplaced = leftOut(in)
	switch {
	case in.Window:
		p.Batches = append(p.Batches, window(rest, in.MaxConcurrency)...)
	case in.Progressive != nil:
		p.Batches = append(p.Batches, progressive(rest, *in.Progressive, in.MaxConcurrency)...)
	case len(in.Spread) > 0:
		return spread(p, rest, in)
	default:
		p.Batches = append(p.Batches, chunk(rest, in.MaxConcurrency)...)
	}
	return p, nil
}

// spread ends plan p, its canary batches made, with the rest of the clusters spread as in
// says, or refuses the spread.
func spread(p Plan, rest []string, in Input) (Plan, error) {
	batches := spreadBatches(rest, in.MaxConcurrency, in.Spread, in.Labels)
	plain := 0 // the batches chunk would make
	if len(rest) > 0 {
		size := batchSize(len(rest), in.MaxConcurrency)
		plain = (len(rest) + size - 1) / size
	}
	p.Spread, p.SpreadAdded = spreadUses(rest, in.Spread, in.Labels), len(batches)-plain
	if err := checkSpread(p.Spread, len(p.Batches)+len(batches), len(p.Batches)+plain, in.MaxBatches); err != nil {
		return Plan{}, err
	}
	p.Batches = append(p.Batches, batches...)
	return p, nil
}

// checkCanaries refuses canaries that are not selected clusters.
func checkCanaries(in Input) error {
	selected := make(map[string]bool, len(in.Clusters))
	for _, c := range in.Clusters {
		selected[c] = true
	}
	var notSelected []string
	for _, c := range in.Canaries {
		if !selected[c] {
			notSelected = append(notSelected, c)
		}
	}
	if len(notSelected) > 0 {
		return fmt.Errorf("%w: %s", ErrCanaryNotSelected, strings.Join(notSelected, ", "))
	}
	return nil
}

// leftOut are the selected clusters the plan leaves out, in selection order: those already
// compliant, and those no policy is placed on.
func leftOut(in Input) (compliant, unplaced []string) {
	for _, c := range in.Clusters {
		switch {
		case in.Compliant[c]:
			compliant = append(compliant, c)
		case in.Unplaced[c]:
			unplaced = append(unplaced, c)
		}
	}
	return compliant, unplaced
}

func chunk(clusters []string, size int) []Batch {
	if len(clusters) == 0 {
		return nil
	}
	size = batchSize(len(clusters), size)
	batches := make([]Batch, 0, (len(clusters)+size-1)/size)
	for start := 0; start < len(clusters); start += size {
		end := min(start+size, len(clusters))
		batches = append(batches, Batch{Clusters: clusters[start:end:end]})
	}
	return batches
}

// batchSize is the size of the batches of n clusters (at least one) with maxConcurrency:
// all of them for zero or less, or more than n.
func batchSize(n, maxConcurrency int) int {
	if maxConcurrency <= 0 || maxConcurrency > n {
		return n
	}
	return maxConcurrency
}

// window puts clusters in one batch that keeps at most size of them in progress; a size of
// zero (or less), or of at least the number of clusters, starts them all, as one batch.
func window(clusters []string, size int) []Batch {
	if len(clusters) == 0 {
		return nil
	}
	b := Batch{Clusters: clusters[:len(clusters):len(clusters)]}
	if size > 0 && size < len(clusters) {
		b.Window = size
	}
	return []Batch{b}
}

// progressive puts clusters in one batch that starts them in stages growing as g says; when
// the first stage would take them all, it is a plain batch.
func progressive(clusters []string, g Growth, maxConcurrency int) []Batch {
	if len(clusters) == 0 {
		return nil
	}
	b := Batch{Clusters: clusters[:len(clusters):len(clusters)]}
	if sizes := g.Sizes(len(clusters), maxConcurrency); sizes[0] < len(clusters) {
		b.Stages, b.StopUnhealthy = sizes, g.Stop
	}
	return []Batch{b}
}

// Growth is how the stages of a Progressive batch grow: through Steps, or from one cluster
// times Factor each stage, up to maxConcurrency. Stop ends the rollout after an unhealthy
// stage instead of starting the growth again.
type Growth struct {
	Steps  []Step
	Factor int
	Stop   bool
}

// Step is one stated stage size: Count clusters, or Percent of the clusters to stage.
type Step struct {
	Count   int
	Percent float64
}

// DefaultGrowth is the growth of a Progressive rollout that states none: 1%, 5% and 25% of
// its clusters, then maxConcurrency.
var DefaultGrowth = Growth{Steps: []Step{{Percent: 1}, {Percent: 5}, {Percent: 25}}}

// Sizes returns the stage sizes, by step, for n clusters: each stated step, or each power of
// the factor below the top, then the top, which the last stages repeat. The top is
// maxConcurrency, or n when maxConcurrency is zero (or less) or more than n; every size is
// at least one and at most the top, and the sizes end at the first that reaches it.
func (g Growth) Sizes(n, maxConcurrency int) []int {
	top := n
	if maxConcurrency > 0 && maxConcurrency < n {
		top = maxConcurrency
	}
	top = max(top, 1)
	var sizes []int
	add := func(size int) bool {
		size = min(max(size, 1), top)
		sizes = append(sizes, size)
		return size < top
	}
	if g.Factor > 1 {
		for size := 1; size < top && add(size); size *= g.Factor {
		}
	}
	for _, s := range g.Steps {
		size := s.Count
		if size == 0 {
			size = int(math.Ceil(s.Percent * float64(n) / 100))
		}
		if !add(size) {
			return sizes
		}
	}
	if len(sizes) == 0 || sizes[len(sizes)-1] < top {
		sizes = append(sizes, top)
	}
	return sizes
}

// StagesFor is how many stages n clusters of a progressive batch with these stage sizes
// take from step on, every stage healthy (the growth going up a step each time); one for a
// batch without stages, or with no clusters left.
func StagesFor(sizes []int, step, n int) int {
	stages := 0
	for ; n > 0 && len(sizes) > 0; step++ {
		n -= sizes[min(step, len(sizes)-1)]
		stages++
	}
	return max(stages, 1)
}

// Without returns the plan less the dropped clusters: each batch keeps its other clusters,
// in order, and a batch left empty goes. Clusters that failed to pre-cache leave a plan
// this way before it is frozen.
func (p Plan) Without(drop map[string]bool) Plan {
	out := Plan{SkippedCompliant: p.SkippedCompliant, Unplaced: p.Unplaced, Spread: p.Spread, SpreadAdded: p.SpreadAdded}
	for _, b := range p.Batches {
		var kept []string
		for _, c := range b.Clusters {
			if !drop[c] {
				kept = append(kept, c)
			}
		}
		if len(kept) > 0 {
			w := b.Window
			if w >= len(kept) {
				w = 0
			}
			out.Batches = append(out.Batches, Batch{Canary: b.Canary, Clusters: kept, Window: w, Stages: b.Stages, StopUnhealthy: b.StopUnhealthy})
		}
	}
	return out
}
