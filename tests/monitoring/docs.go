package monitoring

import (
	"fmt"
	"os"
	"strings"
)

// DocQueries returns the queries of the ```promql blocks of a Markdown file: in a block,
// queries are separated by blank lines, and lines starting with # are comments.
func DocQueries(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var queries, query []string
	in := false
	flush := func() {
		if len(query) > 0 {
			queries = append(queries, strings.Join(query, "\n"))
			query = nil
		}
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case !in:
			in = trimmed == "```promql"
		case trimmed == "```":
			flush()
			in = false
		case trimmed == "":
			flush()
		case !strings.HasPrefix(trimmed, "#"):
			query = append(query, line)
		}
	}
	if in {
		return nil, fmt.Errorf("%s: a promql block is not closed", path)
	}
	return queries, nil
}
