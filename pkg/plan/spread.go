package plan

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Spread bounds how many clusters with one value of a label a batch holds.
type Spread struct {
	// Key is the label.
	Key string
	// MaxPerBatch is the most clusters with one value of it in a batch; at least one.
	MaxPerBatch int
}

// SpreadUse is how one spread shaped a plan.
type SpreadUse struct {
	Spread
	// Values is how many values of the label the spread clusters carry.
	Values int
	// Largest is how many of them the most common value has.
	Largest int
	// Unlabeled is how many spread clusters do not carry the label: it does not bound them.
	Unlabeled int
}

// Errors Build wraps when the spread cannot be honoured.
var (
	// ErrSpreadUnlabeled: no cluster to spread carries a label the spread names (a mistyped
	// key spreads nothing).
	ErrSpreadUnlabeled = errors.New("no cluster to spread carries the label")
	// ErrSpreadTooManyBatches: the spread needs more batches than Input.MaxBatches.
	ErrSpreadTooManyBatches = errors.New("the spread needs more batches than the rollout can time")
)

// spreadBatches puts clusters, in selection order, in batches of at most size (all of them
// for zero or less) that hold at most MaxPerBatch clusters of each value of each spread key.
//
// The plan aims at the fewest batches the bounds allow, the largest of the number of
// clusters over size and, for every value, its clusters over its bound. Batches are filled
// one at a time: first with the clusters of the values that would not fit in the batches
// left otherwise (their surplus over what those batches can take), then in selection order
// with any cluster that fits. With one spread key this reaches that fewest number; with
// several it may take more, and ends with every cluster placed whatever the count. A cluster
// without a label is not bounded by it.
func spreadBatches(clusters []string, size int, spreads []Spread, labels map[string]map[string]string) []Batch {
	if len(clusters) == 0 {
		return nil
	}
	size = batchSize(len(clusters), size)
	s := newSpreader(clusters, spreads, labels)
	target := (len(clusters) + size - 1) / size
	for k, sp := range spreads {
		for _, n := range s.remaining[k] {
			target = max(target, (n+sp.MaxPerBatch-1)/sp.MaxPerBatch)
		}
	}
	open := make([]int, len(clusters)) // the clusters not placed yet, in selection order
	for i := range open {
		open[i] = i
	}
	var batches []Batch
	for b := 0; len(open) > 0; b++ {
		batch := s.fill(open, size, max(target-b-1, 0))
		open = slices.DeleteFunc(open, func(i int) bool { return s.placed[i] })
		names := make([]string, len(batch))
		for j, i := range batch {
			names[j] = clusters[i]
		}
		batches = append(batches, Batch{Clusters: names})
	}
	return batches
}

// spreader is the state of spreadBatches: each cluster's value of each key, how many
// clusters of each value are not placed yet, and which clusters are.
type spreader struct {
	spreads   []Spread
	values    [][]string       // values[i][k]: cluster i's value of key k, "" for none
	remaining []map[string]int // remaining[k][v]: the clusters of value v of key k not placed
	placed    []bool
}

func newSpreader(clusters []string, spreads []Spread, labels map[string]map[string]string) *spreader {
	s := &spreader{spreads: spreads, values: make([][]string, len(clusters)), remaining: make([]map[string]int, len(spreads)),
		placed: make([]bool, len(clusters))}
	for k := range spreads {
		s.remaining[k] = map[string]int{}
	}
	for i, c := range clusters {
		s.values[i] = make([]string, len(spreads))
		for k, sp := range spreads {
			if v, ok := labels[c][sp.Key]; ok {
				s.values[i][k] = "=" + v // never "", so that "" means unlabeled
				s.remaining[k][s.values[i][k]]++
			}
		}
	}
	return s
}

// fill makes the next batch of at most size of the open clusters, after which the target
// leaves after batches: the urgent clusters first (those of a value with more left than
// the batches after can take), then any that fits, in selection order. It returns the
// batch's clusters in selection order.
func (s *spreader) fill(open []int, size, after int) []int {
	taken := make([]map[string]int, len(s.spreads))
	for k := range s.spreads {
		taken[k] = map[string]int{}
	}
	var batch []int
	for _, urgentOnly := range []bool{true, false} {
		for _, i := range open {
			if len(batch) == size {
				break
			}
			if !s.placed[i] && s.fits(i, taken) && (!urgentOnly || s.urgent(i, taken, after)) {
				s.placed[i] = true
				batch = append(batch, i)
				s.count(i, taken, 1)
			}
		}
	}
	for _, i := range batch {
		s.count(i, s.remaining, -1)
	}
	slices.Sort(batch) // selection order, the urgent clusters among the others
	return batch
}

// fits tells whether cluster i leaves every value within its bound in the batch.
func (s *spreader) fits(i int, taken []map[string]int) bool {
	for k, sp := range s.spreads {
		if v := s.values[i][k]; v != "" && taken[k][v] >= sp.MaxPerBatch {
			return false
		}
	}
	return true
}

// urgent tells whether one of cluster i's values has more clusters left than the batches
// after this one can take.
func (s *spreader) urgent(i int, taken []map[string]int, after int) bool {
	for k, sp := range s.spreads {
		if v := s.values[i][k]; v != "" && s.remaining[k][v]-taken[k][v] > sp.MaxPerBatch*after {
			return true
		}
	}
	return false
}

// count adds delta to the counts of cluster i's values.
func (s *spreader) count(i int, counts []map[string]int, delta int) {
	for k := range s.spreads {
		if v := s.values[i][k]; v != "" {
			counts[k][v] += delta
		}
	}
}

// spreadUses says how each spread bounds the clusters: how many values, the most common
// value's count and the clusters without the label.
func spreadUses(clusters []string, spreads []Spread, labels map[string]map[string]string) []SpreadUse {
	uses := make([]SpreadUse, 0, len(spreads))
	for _, s := range spreads {
		u := SpreadUse{Spread: s}
		count := map[string]int{}
		for _, c := range clusters {
			v, ok := labels[c][s.Key]
			if !ok {
				u.Unlabeled++
				continue
			}
			count[v]++
			u.Largest = max(u.Largest, count[v])
		}
		u.Values = len(count)
		uses = append(uses, u)
	}
	return uses
}

// checkSpread refuses a spread no cluster to spread carries the label of, and one that needs
// more than maxBatches batches (zero: no bound), plain the batches without it.
func checkSpread(uses []SpreadUse, batches, plain, maxBatches int) error {
	var unlabeled []string
	for _, u := range uses {
		if u.Values == 0 && u.Unlabeled > 0 {
			unlabeled = append(unlabeled, u.Key)
		}
	}
	if len(unlabeled) > 0 {
		return fmt.Errorf("%w: %s (the spread bounds nothing; is the key mistyped?)", ErrSpreadUnlabeled, quoteAll(unlabeled))
	}
	if maxBatches > 0 && batches > maxBatches {
		return fmt.Errorf("%w: it needs %d batches (maxConcurrency alone makes %d) and spec.remediationStrategy.timeout gives %d minutes, less than one a batch; "+
			"raise the timeout, maxConcurrency or the spread's maxPerBatch", ErrSpreadTooManyBatches, batches, plain, maxBatches)
	}
	return nil
}

func quoteAll(keys []string) string {
	q := slices.Clone(keys)
	for i, k := range q {
		q[i] = fmt.Sprintf("%q", k)
	}
	return strings.Join(q, ", ")
}
