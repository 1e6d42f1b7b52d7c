package words

import (
	"strings"
	"unicode/utf8"
)

// Wrap lays items out after prefix and a space, on lines of at most width characters (an
// item longer than a line gets a line of its own); continuation lines are indented by the
// prefix's width. visible is each item's width on screen, for items holding colour escapes;
// nil counts their runes.
func Wrap(prefix string, items []string, visible []int, width int) []string {
	prefix += " "
	indent := strings.Repeat(" ", utf8.RuneCountInString(prefix))
	var lines []string
	line, used := prefix, utf8.RuneCountInString(prefix)
	start := used
	for i, item := range items {
		w := utf8.RuneCountInString(item)
		if visible != nil {
			w = visible[i]
		}
		if used > start && used+1+w > width {
			lines = append(lines, line)
			line, used = indent, start
		}
		if used > start {
			line += " "
			used++
		}
		line += item
		used += w
	}
	return append(lines, line)
}
