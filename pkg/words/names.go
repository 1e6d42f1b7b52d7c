package words

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// NaturalCompare orders names as a person reads them: runs of digits by their value, so that
// sno-9 comes before sno-10; equal values by the shorter run first (sno-1 before sno-01), then
// byte by byte. It returns -1, 0 or +1.
func NaturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da == 0 || db == 0 {
			if a[0] != b[0] {
				return cmpBytes(a[0], b[0])
			}
			a, b = a[1:], b[1:]
			continue
		}
		if c := compareNumbers(a[:da], b[:db]); c != 0 {
			return c
		}
		if da != db {
			return cmpInts(da, db)
		}
		a, b = a[da:], b[db:]
	}
	return cmpInts(len(a), len(b))
}

// SortNatural sorts names in place by NaturalCompare.
func SortNatural(names []string) { slices.SortFunc(names, NaturalCompare) }

// digits is the length of the run of ASCII digits s starts with.
func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// compareNumbers compares two runs of digits by value, however long.
func compareNumbers(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return cmpInts(len(a), len(b))
	}
	return strings.Compare(a, b)
}

func cmpInts(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpBytes(a, b byte) int { return cmpInts(int(a), int(b)) }

// Run is one item of a compact list of names: a name, or a range of names that differ only in
// a trailing number, each one more than the one before ("sno-1..sno-40").
type Run struct {
	First, Last string
	// Count is how many names the run stands for.
	Count int
}

// String writes the run: the name, "a, b" for two, "first..last" for more.
func (r Run) String() string {
	switch r.Count {
	case 1:
		return r.First
	case 2:
		return r.First + ", " + r.Last
	}
	return r.First + ".." + r.Last
}

// Runs sorts a copy of names naturally, drops duplicates, and folds the names that follow
// one another (the same prefix, a trailing number one more, padded to the same width or not
// padded at all) into runs.
func Runs(names []string) []Run {
	sorted := slices.Clone(names)
	SortNatural(sorted)
	sorted = slices.Compact(sorted)
	var out []Run
	for _, n := range sorted {
		if k := len(out) - 1; k >= 0 && follows(out[k].Last, n) {
			out[k].Last = n
			out[k].Count++
			continue
		}
		out = append(out, Run{First: n, Last: n, Count: 1})
	}
	return out
}

// follows reports whether b is the name after a: the same prefix, and a trailing number one
// more, written with the same width or without leading zeros in either.
func follows(a, b string) bool {
	pa, na, ok := trailingNumber(a)
	if !ok {
		return false
	}
	pb, nb, ok := trailingNumber(b)
	if !ok || pa != pb {
		return false
	}
	va, errA := strconv.ParseUint(na, 10, 64)
	vb, errB := strconv.ParseUint(nb, 10, 64)
	if errA != nil || errB != nil || vb != va+1 {
		return false
	}
	padded := func(s string) bool { return len(s) > 1 && s[0] == '0' }
	return len(na) == len(nb) || (!padded(na) && !padded(nb))
}

// trailingNumber splits a name into its prefix and the run of digits it ends with.
func trailingNumber(s string) (prefix, number string, ok bool) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	return s[:i], s[i:], i < len(s)
}

// Abbreviate writes names for a line of text: their count and, when they fit in at most
// shown runs, all of them ("3 clusters: sno-1..sno-3"); otherwise the first shown runs and
// how many more ("300 clusters: sno-1..sno-49, sno-51..sno-120, ... and 180 more").
func Abbreviate(names []string, noun string, shown int) string {
	runs := Runs(names)
	total := 0
	for _, r := range runs {
		total += r.Count
	}
	if total == 0 {
		return "no " + noun + "s"
	}
	parts := make([]string, 0, min(len(runs), shown))
	listed := 0
	for _, r := range runs[:min(len(runs), max(shown, 1))] {
		parts = append(parts, r.String())
		listed += r.Count
	}
	out := fmt.Sprintf("%s: %s", Plural(total, noun), strings.Join(parts, ", "))
	if rest := total - listed; rest > 0 {
		out += fmt.Sprintf(" and %d more", rest)
	}
	return out
}
