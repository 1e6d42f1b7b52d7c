package bench_test

import (
	"fmt"
	"slices"
	"testing"
)

// The floor driver runs a Progressive rollout's stages, and the report times the operator's
// by the same split of its plan: both must be the stages the operator starts when every
// stage is healthy.
func TestStagesSplitEachBatchAsTheOperatorGrowsIt(t *testing.T) {
	names := func(prefix string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s-c%04d", prefix, i)
		}
		return out
	}
	sizes := func(groups [][]string) []int {
		var out []int
		for _, g := range groups {
			out = append(out, len(g))
		}
		return out
	}
	cases := []struct {
		batches        []int
		maxConcurrency int
		want           []int
	}{
		// 1%, 5% and 25% of 1,000, then maxConcurrency until none is left.
		{batches: []int{1000}, maxConcurrency: 250, want: []int{10, 50, 250, 250, 250, 190}},
		// Each batch grows from its own first stage.
		{batches: []int{200, 100}, maxConcurrency: 40, want: []int{2, 10, 40, 40, 40, 40, 28, 1, 5, 25, 40, 29}},
		// No stage is larger than maxConcurrency: 10, then 20 until the 1,000 are split.
		{batches: []int{1000}, maxConcurrency: 20, want: slices.Concat([]int{10}, slices.Repeat([]int{20}, 49), []int{10})},
	}
	for _, c := range cases {
		var batches [][]string
		var all []string
		for _, n := range c.batches {
			b := names(fmt.Sprintf("b%d", len(batches)), n)
			batches = append(batches, b)
			all = append(all, b...)
		}
		got := stages(batches, c.maxConcurrency)
		if !slices.Equal(sizes(got), c.want) {
			t.Errorf("stages of %v at maxConcurrency %d: sizes %v, want %v", c.batches, c.maxConcurrency, sizes(got), c.want)
		}
		if flat := slices.Concat(got...); !slices.Equal(flat, all) {
			t.Errorf("stages of %v: the clusters are not the plan's, in its order", c.batches)
		}
	}
}
