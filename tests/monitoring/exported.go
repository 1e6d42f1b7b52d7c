// Package monitoring checks the monitoring assets of config/monitoring (the PrometheusRule and
// the Grafana dashboard) against what the operator's metrics endpoint serves: every
// expression must parse with Prometheus' own PromQL parser, and every metric, label and label
// value it selects must be one the endpoint exports. The list of what is exported comes from
// a scrape, so no name is typed twice.
package monitoring

import (
	"fmt"
	"io"
	"maps"
	"slices"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Exported is what a metrics endpoint serves: for each series name as PromQL selects it (a
// histogram family x gives x_bucket, x_sum and x_count), the values each label takes.
type Exported map[string]map[string]map[string]bool

// ParseExposition reads a scrape in the Prometheus text format.
func ParseExposition(r io.Reader) (Exported, error) {
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parsing the exposition: %w", err)
	}
	return FromFamilies(slices.Collect(maps.Values(families))), nil
}

// FromFamilies returns what the metric families serve, as a registry's Gather returns them.
func FromFamilies(families []*dto.MetricFamily) Exported {
	e := Exported{}
	for _, mf := range families {
		name := mf.GetName()
		for _, m := range mf.GetMetric() {
			switch mf.GetType() {
			case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
				e.add(name+"_sum", m, "", "")
				e.add(name+"_count", m, "", "")
				for _, b := range m.GetHistogram().GetBucket() {
					e.add(name+"_bucket", m, model.BucketLabel, fmt.Sprint(b.GetUpperBound()))
				}
				e.add(name+"_bucket", m, model.BucketLabel, "+Inf")
			case dto.MetricType_SUMMARY:
				e.add(name, m, "", "")
				e.add(name+"_sum", m, "", "")
				e.add(name+"_count", m, "", "")
			default:
				e.add(name, m, "", "")
			}
		}
	}
	return e
}

// add records the series name with the labels of m, and the label extra=value when extra is
// not empty.
func (e Exported) add(name string, m *dto.Metric, extra, value string) {
	labels := e[name]
	if labels == nil {
		labels = map[string]map[string]bool{}
		e[name] = labels
	}
	set := func(label, value string) {
		if labels[label] == nil {
			labels[label] = map[string]bool{}
		}
		labels[label][value] = true
	}
	for _, l := range m.GetLabel() {
		set(l.GetName(), l.GetValue())
	}
	if extra != "" {
		set(extra, value)
	}
}
