package analysis

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ClustersPlaceholder in a gate's query stands for the clusters measured, as the alternation
// of a PromQL regular expression inside a double-quoted string: `cluster=~"{{clusters}}"`.
const ClustersPlaceholder = "{{clusters}}"

// DefaultClusterLabel is the label naming a series' cluster, as ACM Observability labels the
// series it collects.
const DefaultClusterLabel = "cluster"

// Render substitutes the clusters for ClustersPlaceholder in query: each name quoted for a
// regular expression, then for a PromQL double-quoted string. A query without the
// placeholder, or no cluster to measure, is refused: it would measure the whole fleet, or
// nothing.
func Render(query string, clusters []string) (string, error) {
	if !strings.Contains(query, ClustersPlaceholder) {
		return "", fmt.Errorf("the query does not contain %s: it would measure every cluster, not the batch's", ClustersPlaceholder)
	}
	if len(clusters) == 0 {
		return "", fmt.Errorf("no cluster to measure")
	}
	quoted := make([]string, len(clusters))
	for i, c := range clusters {
		quoted[i] = regexp.QuoteMeta(c)
	}
	escaped := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(strings.Join(quoted, "|"))
	return strings.ReplaceAll(query, ClustersPlaceholder, escaped), nil
}

// apiResponse is the part of a Prometheus HTTP API query answer that Series reads.
type apiResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Value  []any             `json:"value"`
		} `json:"result"`
	} `json:"data"`
}

// errNotVector is wrapped by the error of an answer that is not an instant vector.
var errNotVector = errors.New("not an instant vector")

// Sample is one series of an instant query's answer: its labels and its value.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Series reads an instant query's answer (Prometheus HTTP API, /api/v1/query) as its series.
// An error answer, or a result that is not an instant vector, is an error.
func Series(body []byte) ([]Sample, error) {
	var r apiResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("the answer is not the query API's: %w", err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("the query failed (%s): %s", r.ErrorType, r.Error)
	}
	if r.Data.ResultType != "vector" {
		return nil, fmt.Errorf("the query gives a %s, %w", r.Data.ResultType, errNotVector)
	}
	out := make([]Sample, 0, len(r.Data.Result))
	for _, s := range r.Data.Result {
		v, err := sampleValue(s.Value)
		if err != nil {
			if c := s.Metric[DefaultClusterLabel]; c != "" {
				err = fmt.Errorf("cluster %s: %w", c, err)
			}
			return nil, err
		}
		out = append(out, Sample{Labels: s.Metric, Value: v})
	}
	return out, nil
}

// Decode reads an instant query's answer (Prometheus HTTP API, /api/v1/query) as one value
// per cluster, the cluster read from label. An error answer, a result that is not an
// instant vector, a series without the label, or two series of one cluster is an error:
// the measurement is inconclusive.
func Decode(body []byte, label string) (map[string]float64, error) {
	samples, err := Series(body)
	if err != nil {
		if errors.Is(err, errNotVector) {
			err = fmt.Errorf("%w: aggregate it by %s", err, label)
		}
		return nil, err
	}
	out := make(map[string]float64, len(samples))
	for _, s := range samples {
		cluster, ok := s.Labels[label]
		if !ok || cluster == "" {
			return nil, fmt.Errorf("a series has no %s label: aggregate the query by %s", label, label)
		}
		if _, twice := out[cluster]; twice {
			return nil, fmt.Errorf("cluster %s has more than one series: aggregate the query by %s", cluster, label)
		}
		out[cluster] = s.Value
	}
	return out, nil
}

// sampleValue reads a sample, [timestamp, "value"]; the value may be NaN or ±Inf.
func sampleValue(sample []any) (float64, error) {
	if len(sample) != 2 {
		return 0, fmt.Errorf("a sample is not [time, value]")
	}
	text, ok := sample[1].(string)
	if !ok {
		return 0, fmt.Errorf("a sample's value is not a string")
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return 0, fmt.Errorf("a sample's value %q is not a number", text)
	}
	return v, nil
}
