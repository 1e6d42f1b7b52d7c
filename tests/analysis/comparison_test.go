// Package analysis_test runs the analysis gates' measurement and judgement (pkg/analysis)
// against a real Prometheus: the values a gate judges are the ones Prometheus answers for
// the clusters it names.
package analysis_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/cgu-operator/cgu-operator/pkg/analysis"
	"github.com/cgu-operator/cgu-operator/tests/prom"
)

// fleetMetrics serves an error ratio per cluster, in the Prometheus text format, as ACM
// Observability labels them; the values can change while Prometheus scrapes.
type fleetMetrics struct {
	mu     sync.Mutex
	values map[string]float64
}

func (f *fleetMetrics) set(values map[string]float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.values = values
}

func (f *fleetMetrics) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintln(w, "# TYPE cluster:apiserver_request_error_ratio:rate5m gauge")
	for c, v := range f.values {
		fmt.Fprintf(w, "cluster:apiserver_request_error_ratio:rate5m{cluster=%q} %g\n", c, v)
	}
}

// sides are eight upgraded clusters, up-1..8, and eight not upgraded yet, base-1..8.
func sides() (upgraded, baseline []string) {
	for i := 1; i <= 8; i++ {
		upgraded = append(upgraded, fmt.Sprintf("up-%d", i))
		baseline = append(baseline, fmt.Sprintf("base-%d", i))
	}
	return upgraded, baseline
}

// ratios gives the upgraded clusters up + i/1000 and the baseline 0.010 + i/1000.
func ratios(up float64, baselineShown int) map[string]float64 {
	out := map[string]float64{}
	for i := 1; i <= 8; i++ {
		out[fmt.Sprintf("up-%d", i)] = up + float64(i)/1000
		if i <= baselineShown {
			out[fmt.Sprintf("base-%d", i)] = 0.010 + float64(i)/1000
		}
	}
	return out
}

func TestComparisonOnARealPrometheus(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	metrics := &fleetMetrics{}
	srv := httptest.NewServer(metrics)
	t.Cleanup(srv.Close)
	p, err := prom.StartPrometheus(ctx, prom.PrometheusOptions{Dir: t.TempDir(), Targets: []string{srv.Listener.Addr().String()}})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = p.Stop() })

	upgraded, baseline := sides()
	const query = `cluster:apiserver_request_error_ratio:rate5m{cluster=~"{{clusters}}"}`
	gate := analysis.Gate{Name: "vs-baseline", Mode: analysis.Comparison, Measurements: 1, HigherIsWorse: true, Tolerance: 0.005}
	endpoint := analysis.Endpoint{URL: p.URL(), Timeout: 10 * time.Second}
	// judged waits until Prometheus shows want series, then measures once and judges.
	judged := func(values map[string]float64) analysis.Verdict {
		metrics.set(values)
		g.Eventually(func() (int, error) {
			got, err := prom.Values(ctx, p.URL(), `cluster:apiserver_request_error_ratio:rate5m`, "cluster")
			for c, v := range values {
				if got[c] != v {
					return 0, err
				}
			}
			return len(got), err
		}).WithTimeout(30 * time.Second).Should(Equal(len(values)))
		m := endpoint.Measure(ctx, gate, query, analysis.DefaultClusterLabel, upgraded, baseline, time.Now())
		return analysis.Judge(gate, upgraded, []analysis.Measurement{m})
	}

	// Every upgraded cluster 0.020 worse than its baseline twin: beyond the tolerance of 0.005.
	v := judged(ratios(0.030, 8))
	g.Expect(v.Phase).To(Equal(analysis.Failed), v.Message)
	g.Expect(v.Message).To(ContainSubstring("the upgraded clusters are worse than the baseline"))

	// 0.002 worse: within the tolerance.
	v = judged(ratios(0.012, 8))
	g.Expect(v.Phase).To(Equal(analysis.Passed), v.Message)

	// Three baseline clusters stop reporting (their series go stale): too few samples to
	// compare, inconclusive, never a pass.
	v = judged(ratios(0.012, 5))
	g.Expect(v.Phase).To(Equal(analysis.Inconclusive), v.Message)
	g.Expect(v.Message).To(ContainSubstring("too few samples: 8 upgraded and 5 baseline values, 8 each needed"))

	// An upgraded cluster missing is inconclusive too: a cluster the query does not see is
	// not a cluster that passed.
	values := ratios(0.012, 8)
	delete(values, "up-3")
	v = judged(values)
	g.Expect(v.Phase).To(Equal(analysis.Inconclusive), v.Message)
	g.Expect(strings.Contains(v.Message, "no value for up-3")).To(BeTrue(), v.Message)
}
