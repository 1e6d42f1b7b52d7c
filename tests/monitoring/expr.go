package monitoring

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// CheckExpr parses expr with Prometheus' PromQL parser and checks each of its selectors
// against e: the metric must be exported, each label it matches on must be one the metric
// has, an equality must name a value the metric takes, and a regular expression must match
// one; a regular expression that is only an alternation of plain words must match a value
// with each word. It returns every problem found, joined.
func CheckExpr(expr string, e Exported) error {
	node, err := parser.ParseExpr(expr)
	if err != nil {
		return fmt.Errorf("parsing %q: %w", expr, err)
	}
	var errs []error
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			errs = append(errs, checkSelector(vs, e))
		}
		return nil
	})
	return errors.Join(errs...)
}

// selectorName is the metric a selector names: its Name, or its __name__ equality matcher
// ({__name__="x"}). A selector whose name is a pattern cannot be checked.
func selectorName(vs *parser.VectorSelector) (string, error) {
	if vs.Name != "" {
		return vs.Name, nil
	}
	for _, m := range vs.LabelMatchers {
		if m.Name != model.MetricNameLabel {
			continue
		}
		if m.Type != labels.MatchEqual {
			return "", fmt.Errorf("selector %s: the metric name must be given exactly, not with %s", vs, m.Type)
		}
		return m.Value, nil
	}
	return "", fmt.Errorf("selector %s names no metric", vs)
}

func checkSelector(vs *parser.VectorSelector, e Exported) error {
	name, err := selectorName(vs)
	if err != nil {
		return err
	}
	series, ok := e[name]
	if !ok {
		return fmt.Errorf("selector %s: metric %s is not exported", vs, name)
	}
	var errs []error
	for _, m := range vs.LabelMatchers {
		if m.Name == model.MetricNameLabel {
			continue
		}
		values, ok := series[m.Name]
		if !ok {
			errs = append(errs, fmt.Errorf("selector %s: %s has no label %s", vs, name, m.Name))
			continue
		}
		errs = append(errs, checkMatcher(vs, m, values))
	}
	return errors.Join(errs...)
}

// alternation is a regular expression made only of words separated by |.
var alternation = regexp.MustCompile(`^[A-Za-z0-9_:.+-]+(\|[A-Za-z0-9_:.+-]+)*$`)

func checkMatcher(vs *parser.VectorSelector, m *labels.Matcher, values map[string]bool) error {
	switch m.Type {
	case labels.MatchEqual:
		if !values[m.Value] {
			return fmt.Errorf("selector %s: no series has %s=%q (it takes %s)", vs, m.Name, m.Value, list(values))
		}
	case labels.MatchRegexp:
		if alternation.MatchString(m.Value) {
			var errs []error
			for w := range strings.SplitSeq(m.Value, "|") {
				if !values[w] {
					errs = append(errs, fmt.Errorf("selector %s: no series has %s=%q (it takes %s)", vs, m.Name, w, list(values)))
				}
			}
			return errors.Join(errs...)
		}
		for v := range values {
			if m.Matches(v) {
				return nil
			}
		}
		return fmt.Errorf("selector %s: %s=~%q matches no series (it takes %s)", vs, m.Name, m.Value, list(values))
	}
	return nil
}

func list(values map[string]bool) string {
	out := make([]string, 0, len(values))
	for v := range values {
		out = append(out, fmt.Sprintf("%q", v))
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}
