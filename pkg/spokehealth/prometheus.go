package spokehealth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

const (
	// maxAnswerBytes bounds how much of Prometheus's answer is read: a cluster has at most
	// a few thousand alerts, far below it.
	maxAnswerBytes = 16 << 20
	// maxQuotedBytes bounds how much of an answer an error quotes.
	maxQuotedBytes = 200
	// defaultTimeout bounds a read when Prometheus has no HTTP client of its own.
	defaultTimeout = 30 * time.Second
	// alertsPath is the path of the alerts API under the Prometheus URL.
	alertsPath = "/api/v1/alerts"
)

// Prometheus reads firing and pending alerts from a Prometheus-compatible API. On OpenShift
// it is the thanos-querier of openshift-monitoring, read with the bearer token of a service
// account bound to cluster-monitoring-view.
type Prometheus struct {
	// URL is the API's base URL, without /api/v1.
	URL string
	// Token is the bearer token sent with each request; none is sent when it is empty.
	Token string
	// HTTP is the client of the requests; nil means a client with a 30-second timeout.
	HTTP *http.Client
}

// alertsAnswer is the part of the answer of GET /api/v1/alerts the health check reads.
type alertsAnswer struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		Alerts []struct {
			Labels map[string]string `json:"labels"`
			State  string            `json:"state"`
		} `json:"alerts"`
	} `json:"data"`
}

// Alerts returns the firing and pending alerts, with the alertname and severity labels as
// Name and Severity. An answer other than 200, a status other than success, JSON that does
// not decode, or an answer over 16 MiB is an error naming the URL and quoting the answer.
func (p *Prometheus) Alerts(ctx context.Context) ([]Alert, error) {
	url := strings.TrimSuffix(p.URL, "/") + alertsPath
	body, err := p.get(ctx, url)
	if err != nil {
		return nil, err
	}
	return decodeAlerts(url, body)
}

// get reads the answer of GET url; an answer other than 200 is an error.
func (p *Prometheus) get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("reading alerts from %s: %w", url, err)
	}
	req.Header.Set("Accept", "application/json")
	if p.Token != "" {
		req.Header.Set("Authorization", "Bearer "+p.Token)
	}
	resp, err := p.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading alerts from %s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading alerts from %s: reading the answer: %w", url, err)
	}
	if len(body) > maxAnswerBytes {
		return nil, fmt.Errorf("reading alerts from %s: the answer is larger than %d bytes", url, maxAnswerBytes)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading alerts from %s: answer %s: %s", url, resp.Status, quote(body))
	}
	return body, nil
}

func (p *Prometheus) client() *http.Client {
	if p.HTTP != nil {
		return p.HTTP
	}
	return &http.Client{Timeout: defaultTimeout}
}

// decodeAlerts decodes an answer of the alerts API read from url.
func decodeAlerts(url string, body []byte) ([]Alert, error) {
	var answer alertsAnswer
	if err := json.Unmarshal(body, &answer); err != nil {
		return nil, fmt.Errorf("reading alerts from %s: decoding the answer %s: %w", url, quote(body), err)
	}
	if answer.Status != "success" {
		return nil, fmt.Errorf("reading alerts from %s: status %q, error type %q: %s", url, answer.Status, answer.ErrorType, clip(answer.Error))
	}
	alerts := make([]Alert, 0, len(answer.Data.Alerts))
	for _, a := range answer.Data.Alerts {
		alerts = append(alerts, Alert{Name: a.Labels["alertname"], Severity: a.Labels["severity"], State: a.State})
	}
	return alerts, nil
}

// quote quotes at most maxQuotedBytes of an answer.
func quote(body []byte) string {
	return fmt.Sprintf("%q", clip(string(body)))
}

// clip cuts s to maxQuotedBytes, marking the cut.
func clip(s string) string {
	if len(s) <= maxQuotedBytes {
		return s
	}
	return s[:maxQuotedBytes] + "..."
}
