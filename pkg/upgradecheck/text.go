package upgradecheck

import (
	"fmt"
	"strings"
)

const (
	// maxNamed is how many items of a list a message names before "and N more".
	maxNamed = 5

	// maxQuoted is how many characters of a quoted message a message keeps.
	maxQuoted = 200
)

// namedList joins at most maxNamed items with commas, then says how many were left out.
func namedList(items []string) string {
	return boundedList(items, ", ")
}

// boundedList joins at most maxNamed items with sep, then says how many were left out.
func boundedList(items []string, sep string) string {
	if len(items) <= maxNamed {
		return strings.Join(items, sep)
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:maxNamed], sep), len(items)-maxNamed)
}

// clip collapses whitespace in a message quoted from elsewhere, drops its trailing period and
// keeps at most maxQuoted characters.
func clip(msg string) string {
	msg = strings.TrimRight(strings.Join(strings.Fields(msg), " "), ".")
	if r := []rune(msg); len(r) > maxQuoted {
		return string(r[:maxQuoted]) + "..."
	}
	return msg
}

// plural returns one when n is 1 and many otherwise.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
