package bench_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/rest"
)

// requestTimes is the time the kube-apiserver spent serving each kind of request ("VERB
// resource/subresource"), and how many it served, as its apiserver_request_duration_seconds
// histogram counts them: who made them does not matter, so that a phase's figures say what
// the hub served, the propagator's and the spokes' requests included.
type requestTimes map[string]requestTime

type requestTime struct {
	count   uint64
	seconds float64
}

// readRequestTimes reads the kube-apiserver's request times so far from its /metrics.
func readRequestTimes(ctx context.Context, cfg *rest.Config) (requestTimes, error) {
	body, err := hubGet(ctx, cfg, "/metrics")
	if err != nil {
		return nil, fmt.Errorf("reading the kube-apiserver's metrics: %w", err)
	}
	defer body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(body)
	if err != nil {
		return nil, fmt.Errorf("parsing the kube-apiserver's metrics: %w", err)
	}
	out := requestTimes{}
	fam := families["apiserver_request_duration_seconds"]
	if fam == nil {
		return out, nil
	}
	for _, m := range fam.GetMetric() {
		verb := labelValue(m, "verb")
		if verb == "WATCH" || verb == "CONNECT" {
			continue // their duration is how long they stayed open
		}
		k := verb + " " + labelValue(m, "resource")
		if sub := labelValue(m, "subresource"); sub != "" {
			k += "/" + sub
		}
		h := m.GetHistogram()
		t := out[k]
		t.count += h.GetSampleCount()
		t.seconds += h.GetSampleSum()
		out[k] = t
	}
	return out, nil
}

// since is what was served between before and t.
func (t requestTimes) since(before requestTimes) requestTimes {
	out := requestTimes{}
	for k, v := range t {
		b := before[k]
		if d := (requestTime{count: v.count - b.count, seconds: v.seconds - b.seconds}); d.count > 0 {
			out[k] = d
		}
	}
	return out
}

// top are the n kinds of request that took the most time, most first.
func (t requestTimes) top(n int) []string {
	keys := slices.Collect(maps.Keys(t))
	slices.SortFunc(keys, func(a, b string) int {
		if t[a].seconds != t[b].seconds {
			if t[a].seconds > t[b].seconds {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return keys[:min(n, len(keys))]
}

// total is the time spent serving every request.
func (t requestTimes) total() time.Duration {
	var s float64
	for _, v := range t {
		s += v.seconds
	}
	return time.Duration(s * float64(time.Second))
}
