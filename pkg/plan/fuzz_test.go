package plan

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// FuzzPlan builds plans from hostile inputs (duplicates, empty names, canaries outside the
// selection, negative and huge batch sizes): Build never panics, and a plan holds each
// selected cluster that is not compliant exactly once, canaries first and alone, no batch
// larger than maxConcurrency.
func FuzzPlan(f *testing.F) {
	f.Add("a,b,c,d,e", "c", 2, "b", uint8(0))
	f.Add("a,a,,b", "a,a", -1, "", uint8(1))
	f.Add("a,b", "z", 1, "", uint8(2))
	f.Add("a,b,c", "", 1<<62, "a,b,c", uint8(3))
	f.Add("", "", 0, "", uint8(4))
	f.Add("x", "x", -9223372036854775808, "x", uint8(255))
	f.Add("a,b,c,d,e,f,g,h", "a", 3, "", uint8(7))
	f.Fuzz(func(t *testing.T, clusters, canaries string, maxConcurrency int, compliant string, mode uint8) {
		in := Input{Clusters: split(clusters), Canaries: split(canaries), MaxConcurrency: maxConcurrency, Compliant: map[string]bool{}}
		// mode picks the batches, a window, or stages growing by a factor or through steps.
		switch mode % 4 {
		case 1:
			in.Window = true
		case 2:
			in.Progressive = &Growth{Factor: int(mode>>2) % 5, Stop: mode&0x80 != 0}
		case 3:
			in.Progressive = &Growth{Steps: []Step{{Count: int(mode >> 2)}, {Percent: float64(mode%7) * 10}}}
		}
		for _, c := range split(compliant) {
			in.Compliant[c] = true
		}
		p, err := Build(in)
		if err != nil {
			if !errors.Is(err, ErrCanaryNotSelected) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		checkPlan(t, in, p)
	})
}

// checkPlan checks that a plan holds each selected cluster that is not compliant exactly
// once, canaries first and alone, no batch larger than maxConcurrency.
func checkPlan(t *testing.T, in Input, p Plan) {
	t.Helper()
	maxConcurrency := in.MaxConcurrency
	if in.Window || in.Progressive != nil { // one batch after the canaries
		maxConcurrency = 0
	}
	seen := map[string]bool{}
	canaryPart := true
	for i, b := range p.Batches {
		if !batchFits(b, canaryPart, maxConcurrency) || !stagesFit(b, in.MaxConcurrency) {
			t.Fatalf("batch %d is empty, too large or a canary batch out of place: %+v", i, p)
		}
		canaryPart = canaryPart && b.Canary
		for _, c := range b.Clusters {
			if seen[c] || in.Compliant[c] || !slices.Contains(in.Clusters, c) {
				t.Fatalf("cluster %q misplaced in %+v", c, p)
			}
			seen[c] = true
		}
	}
	for _, c := range in.Clusters {
		if !seen[c] && !in.Compliant[c] {
			t.Fatalf("cluster %q left out of %+v", c, p)
		}
	}
}

// batchFits reports whether a batch holds clusters, a canary batch one and only among the
// leading canary batches, another at most maxConcurrency when that is positive.
func batchFits(b Batch, canaryPart bool, maxConcurrency int) bool {
	if b.Canary {
		return canaryPart && len(b.Clusters) == 1
	}
	return len(b.Clusters) > 0 && (maxConcurrency <= 0 || len(b.Clusters) <= maxConcurrency)
}

// stagesFit reports whether a batch's stage sizes are each at least one and at most
// maxConcurrency (when positive) and the batch, the last the only one to reach that top.
func stagesFit(b Batch, maxConcurrency int) bool {
	top := len(b.Clusters)
	if maxConcurrency > 0 && maxConcurrency < top {
		top = maxConcurrency
	}
	for i, n := range b.Stages {
		if n < 1 || n > top || (n == top && i != len(b.Stages)-1) {
			return false
		}
	}
	return true
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
