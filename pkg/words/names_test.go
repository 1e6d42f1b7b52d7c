package words

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestNaturalCompare(t *testing.T) {
	ordered := []string{"", "a", "sno-1", "sno-01", "sno-2", "sno-9", "sno-10", "sno-10a", "sno-11", "sno-100",
		"sno-99999999999999999999", "sno-100000000000000000000", "snoa", "spoke-2-site-1", "spoke-2-site-10", "spoke-10-site-1"}
	for i := range ordered {
		for j := range ordered {
			want := cmpInts(i, j)
			if got := NaturalCompare(ordered[i], ordered[j]); got != want {
				t.Errorf("NaturalCompare(%q, %q) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}

func TestRunsAndAbbreviate(t *testing.T) {
	numbered := func(format string, from, to int, skip ...int) []string {
		var out []string
		for i := from; i <= to; i++ {
			if !slices.Contains(skip, i) {
				out = append(out, fmt.Sprintf(format, i))
			}
		}
		return out
	}
	cases := []struct {
		name  string
		names []string
		shown int
		want  string
	}{
		{"none", nil, 3, "no clusters"},
		{"one", []string{"sno-7"}, 3, "1 cluster: sno-7"},
		{"two in a row are named, not ranged", []string{"sno-2", "sno-1"}, 3, "2 clusters: sno-1, sno-2"},
		{"unpadded numbers across widths", numbered("sno-%d", 1, 300), 3, "300 clusters: sno-1..sno-300"},
		{"padded numbers", numbered("sno-%03d", 1, 300, 50), 3, "299 clusters: sno-001..sno-049, sno-051..sno-300"},
		{"a padded and an unpadded name do not follow", []string{"sno-09", "sno-10"}, 3, "2 clusters: sno-09, sno-10"},
		{"more runs than shown", append(numbered("a-%d", 1, 10, 3, 6, 9), "hub", "z"), 2,
			"9 clusters: a-1, a-2, a-4, a-5 and 5 more"},
		{"a fleet of thousands, two runs shown", numbered("sno-%04d", 1, 3500, 7, 900), 2,
			"3498 clusters: sno-0001..sno-0006, sno-0008..sno-0899 and 2600 more"},
		{"shown below one shows one run", numbered("sno-%d", 1, 5, 3), 0, "4 clusters: sno-1, sno-2 and 2 more"},
		{"names without numbers, duplicates once", []string{"lab", "edge", "lab"}, 5, "2 clusters: edge, lab"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Abbreviate(tc.names, "cluster", tc.shown); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestRunsCoverEveryNameOnce: on random fleets, the runs stand for each name once, in natural
// order, and each run's names follow one another.
func TestRunsCoverEveryNameOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 33))
	for range 500 {
		seen := map[string]bool{}
		var names []string
		for range r.IntN(60) {
			n := fmt.Sprintf("%s-%d", []string{"sno", "du", "cu"}[r.IntN(3)], r.IntN(40))
			if r.IntN(4) == 0 {
				n = fmt.Sprintf("sno-%03d", r.IntN(40))
			}
			names = append(names, n)
			seen[n] = true
		}
		var expanded []string
		for _, run := range Runs(names) {
			n := run.First
			expanded = append(expanded, n)
			for range run.Count - 1 {
				prefix, number, _ := trailingNumber(n)
				var next string
				for c := range seen {
					if p, num, ok := trailingNumber(c); ok && p == prefix && follows(n, c) && num != number {
						next = c
					}
				}
				if next == "" {
					t.Fatalf("run %+v of %v: no name follows %q", run, names, n)
				}
				n = next
				expanded = append(expanded, n)
			}
			if n != run.Last {
				t.Fatalf("run %+v ends at %q", run, n)
			}
		}
		if len(expanded) != len(seen) || !slices.IsSortedFunc(expanded, NaturalCompare) {
			t.Fatalf("runs of %v stand for %v", names, expanded)
		}
	}
}
