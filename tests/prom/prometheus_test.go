package prom_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/cgu-operator/cgu-operator/tests/prom"
)

// settle bounds every wait for a scrape, a rule evaluation or a notification.
const settle = 30 * time.Second

// target serves metrics in the Prometheus text format at /metrics until the test ends, and
// returns its host:port.
func target(t *testing.T, metrics string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = fmt.Fprint(w, metrics)
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// startPrometheus starts Prometheus for the test and stops it when the test ends.
func startPrometheus(ctx context.Context, t *testing.T, opts prom.PrometheusOptions) *prom.Prometheus {
	t.Helper()
	opts.Dir = t.TempDir()
	p, err := prom.StartPrometheus(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Error(err)
		}
	})
	return p
}

// byCluster returns the value of each series an instant query selects, by its cluster label.
func byCluster(ctx context.Context, url, promql string) (map[string]float64, error) {
	return prom.Values(ctx, url, promql, "cluster")
}

func TestPrometheusScrapesTargetsKeepingTheirLabels(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	addr := target(t, `# TYPE cluster:apiserver_request_error_ratio:rate5m gauge
cluster:apiserver_request_error_ratio:rate5m{cluster="spoke-1",job="observability"} 0.012
cluster:apiserver_request_error_ratio:rate5m{cluster="spoke-2",job="observability"} 0.25
`)
	p := startPrometheus(ctx, t, prom.PrometheusOptions{Targets: []string{addr}})
	g.Expect(p.URL()).To(MatchRegexp(`^http://127\.0\.0\.1:\d+$`))

	// The job label is the target's, not the scrape job's: honor_labels keeps what it serves.
	g.Eventually(func() (map[string]float64, error) {
		return byCluster(ctx, p.URL(), `cluster:apiserver_request_error_ratio:rate5m{job="observability"}`)
	}).WithTimeout(settle).Should(Equal(map[string]float64{"spoke-1": 0.012, "spoke-2": 0.25}))
}

func TestPrometheusFiresAlertsAndSendsThemToAlertmanager(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	am := startAlertmanager(ctx, t)
	addr := target(t, `test_error_ratio{cluster="spoke-1"} 0.012
test_error_ratio{cluster="spoke-2"} 0.25
`)
	p := startPrometheus(ctx, t, prom.PrometheusOptions{
		Targets:      []string{addr},
		Alertmanager: am.URL(),
		Rules: `groups:
  - name: errors
    rules:
      - alert: ClusterErrorRatioHigh
        expr: test_error_ratio > 0.1
        labels:
          severity: critical
`,
	})

	g.Eventually(func() (map[string]float64, error) {
		return byCluster(ctx, p.URL(), `ALERTS{alertname="ClusterErrorRatioHigh",alertstate="firing",severity="critical"}`)
	}).WithTimeout(settle).Should(Equal(map[string]float64{"spoke-2": 1}))

	g.Eventually(func() ([]map[string]string, error) {
		var alerts []struct {
			Labels map[string]string `json:"labels"`
		}
		err := getJSON(ctx, am.URL()+"/api/v2/alerts", &alerts)
		out := make([]map[string]string, len(alerts))
		for i, a := range alerts {
			out[i] = a.Labels
		}
		return out, err
	}).WithTimeout(settle).Should(ConsistOf(And(
		HaveKeyWithValue("alertname", "ClusterErrorRatioHigh"),
		HaveKeyWithValue("cluster", "spoke-2"),
		HaveKeyWithValue("severity", "critical"),
	)))
}

func TestPrometheusDownThenUp(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	addr := target(t, `test_error_ratio{cluster="spoke-1"} 0.012
`)
	p := startPrometheus(ctx, t, prom.PrometheusOptions{Targets: []string{addr}})
	samples := func() (map[string]float64, error) {
		return byCluster(ctx, p.URL(), `count_over_time(test_error_ratio[1h])`)
	}
	g.Eventually(samples).WithTimeout(settle).Should(HaveKeyWithValue("spoke-1", BeNumerically(">=", 3)))
	url := p.URL()

	g.Expect(p.Down()).To(Succeed())
	_, err := samples()
	g.Expect(err).To(MatchError(ContainSubstring("connection refused")), "a query to a Prometheus that is down fails")

	g.Expect(p.Up(ctx)).To(Succeed())
	g.Expect(p.URL()).To(Equal(url), "Up listens on the same port")
	// A new storage could not hold three samples a moment after the start.
	g.Expect(samples()).To(HaveKeyWithValue("spoke-1", BeNumerically(">=", 3)),
		"the samples scraped before Down are still in the storage")
	g.Eventually(func() (map[string]float64, error) {
		return byCluster(ctx, p.URL(), `test_error_ratio`)
	}).WithTimeout(settle).Should(Equal(map[string]float64{"spoke-1": 0.012}))
}

func TestStartPrometheusFailsWithItsOutput(t *testing.T) {
	_, err := prom.StartPrometheus(t.Context(), prom.PrometheusOptions{Dir: t.TempDir(), Rules: "groups: [{name: broken, rules: [{alert: A, expr: 'rate('}]}]\n"})
	NewWithT(t).Expect(err).To(MatchError(And(
		ContainSubstring("prometheus exited before it was ready"),
		ContainSubstring("rules.yml"),
	)))
}

func TestStartWithoutTheBinariesSaysHowToInstallThem(t *testing.T) {
	g := NewWithT(t)
	t.Setenv("PATH", t.TempDir())
	t.Setenv("PROMETHEUS", "")
	t.Setenv("ALERTMANAGER", "")
	_, err := prom.StartPrometheus(t.Context(), prom.PrometheusOptions{Dir: t.TempDir()})
	g.Expect(err).To(MatchError(ContainSubstring("`make prometheus`")))
	_, err = prom.StartAlertmanager(t.Context(), t.TempDir())
	g.Expect(err).To(MatchError(And(ContainSubstring("prometheus-alertmanager or alertmanager"), ContainSubstring("`make prometheus`"))))
}

// getJSON decodes the JSON answer of GET url into out; an answer other than 200 is an error.
func getJSON(ctx context.Context, url string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	return doJSON(req, out)
}

// doJSON sends req and decodes its JSON answer into out; an answer other than 200 is an error.
func doJSON(req *http.Request, out any) error {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s %s: %s: %s", req.Method, req.URL, resp.Status, body)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
