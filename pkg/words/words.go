// Package words writes numbers, durations and lists of names for people, in the one way
// every command, page and message of the operator writes them.
package words

import (
	"fmt"
	"strings"
	"time"
)

// Duration writes d compactly, truncated to its largest units: "45s", "4m", "2h5m",
// "1d6h", "12d". Negative durations count as zero.
func Duration(d time.Duration) string {
	d = max(d, 0)
	const day = 24 * time.Hour
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < day:
		return withUnit(int(d/time.Hour), "h", int(d%time.Hour/time.Minute), "m")
	case d < 10*day:
		return withUnit(int(d/day), "d", int(d%day/time.Hour), "h")
	}
	return fmt.Sprintf("%dd", int(d/day))
}

// withUnit writes "<a><aUnit><b><bUnit>", leaving out a zero b.
func withUnit(a int, aUnit string, b int, bUnit string) string {
	if b == 0 {
		return fmt.Sprintf("%d%s", a, aUnit)
	}
	return fmt.Sprintf("%d%s%d%s", a, aUnit, b, bUnit)
}

// Plural writes "1 cluster", "2 clusters", "2 batches".
func Plural(n int, noun string) string {
	switch {
	case n == 1:
		return fmt.Sprintf("%d %s", n, noun)
	case strings.HasSuffix(noun, "ch"), strings.HasSuffix(noun, "s"):
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
