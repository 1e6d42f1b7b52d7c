package analysis

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/cgu-operator/cgu-operator/pkg/apiclient"
)

// Endpoint is a Prometheus-compatible query API: ACM Observability's Thanos querier on a hub,
// or any Prometheus. TLS is always verified: against CA when set, else the system's roots.
type Endpoint struct {
	// URL is the API's base, such as https://rbac-query-proxy.open-cluster-management-observability.svc:8443;
	// the query goes to URL + /api/v1/query.
	URL string
	// Token, when set, is sent as a bearer token.
	Token string
	// CA is a PEM bundle of the certificates the server's is checked against.
	CA []byte
	// Timeout bounds one query (30 seconds when zero).
	Timeout time.Duration
}

// maxAnswer bounds the answer read: a batch's clusters' values are far smaller.
const maxAnswer = 8 << 20

// Query runs an instant query, evaluated at the server's own time (the operator's clock may
// differ from the metrics' source), and returns the answer's body, whatever its status:
// Decode and Series read the API's own error answers. A transport error (unreachable, TLS, a
// timeout) is returned as is.
func (e Endpoint) Query(ctx context.Context, query string) ([]byte, error) {
	client, err := apiclient.HTTP(e.CA)
	if err != nil {
		return nil, err
	}
	timeout := e.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	form := url.Values{"query": {query}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(e.URL, "/")+"/api/v1/query", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("the endpoint %q: %w", e.URL, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	apiclient.Authorize(req, e.Token)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return nil, fmt.Errorf("the endpoint refused the credentials: %s", resp.Status)
	}
	if resp.StatusCode >= 300 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return nil, fmt.Errorf("the endpoint answered %s", resp.Status)
	}
	return body, nil
}

// Measure runs a gate's query once, the measurement dated at: for the upgraded clusters and,
// for a Comparison, for the baseline's. Whatever keeps it from a value per cluster (the endpoint, the query,
// its answer) is the measurement's Err: it is inconclusive.
func (e Endpoint) Measure(ctx context.Context, g Gate, query, label string, upgraded, baseline []string, at time.Time) Measurement {
	m := Measurement{At: at}
	var err error
	if m.Values, err = e.values(ctx, query, label, upgraded); err != nil {
		m.Err, m.Values = err.Error(), nil
		return m
	}
	if g.Mode == Comparison {
		if m.Baseline, err = e.values(ctx, query, label, baseline); err != nil {
			m.Err, m.Values, m.Baseline = "the baseline: "+err.Error(), nil, nil
		}
	}
	return m
}

func (e Endpoint) values(ctx context.Context, query, label string, clusters []string) (map[string]float64, error) {
	if len(clusters) == 0 {
		return map[string]float64{}, nil
	}
	q, err := Render(query, clusters)
	if err != nil {
		return nil, err
	}
	body, err := e.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	return Decode(body, label)
}

// CheckQuery tells whether a gate's query can run: it holds ClustersPlaceholder, parses as
// PromQL once the clusters are put in, and gives an instant vector (one value per series,
// which Decode reads by cluster). The error says what is wrong and where.
func CheckQuery(query string) error {
	rendered, err := Render(query, []string{"cluster-a", "cluster-b"})
	if err != nil {
		return err
	}
	return CheckInstant(rendered)
}

// CheckInstant tells whether query parses as PromQL and gives an instant vector.
func CheckInstant(query string) error {
	expr, err := parser.ParseExpr(query)
	if err != nil {
		return fmt.Errorf("the query does not parse as PromQL: %w", err)
	}
	if t := expr.Type(); t != parser.ValueTypeVector {
		kind := map[parser.ValueType]string{parser.ValueTypeMatrix: "range vector", parser.ValueTypeScalar: "scalar", parser.ValueTypeString: "string"}[t]
		return fmt.Errorf("the query gives a %s, not an instant vector (one value per cluster)", kind)
	}
	return nil
}
