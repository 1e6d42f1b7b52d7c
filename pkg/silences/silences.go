// Package silences talks to an Alertmanager's v2 API about the silences the operator keeps
// while clusters upgrade (issue 33, "quiet while upgrading"): it makes one, expires one, and
// lists the operator's own. What a silence matches, and for how long, is for the caller.
package silences

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cgu-operator/cgu-operator/pkg/apiclient"
)

// Matcher is one label matcher of a silence.
type Matcher struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	IsRegex bool   `json:"isRegex"`
	// IsEqual is false for a negative matcher (!= or !~).
	IsEqual bool `json:"isEqual"`
}

// Silence is a silence as the v2 API writes it.
type Silence struct {
	// ID is the Alertmanager's; empty for a silence not made yet.
	ID        string    `json:"id,omitempty"`
	Matchers  []Matcher `json:"matchers"`
	StartsAt  time.Time `json:"startsAt"`
	EndsAt    time.Time `json:"endsAt"`
	CreatedBy string    `json:"createdBy"`
	Comment   string    `json:"comment"`
	// State is "active", "pending" or "expired", as the Alertmanager says (read only).
	State string `json:"-"`
}

// Client is an Alertmanager's v2 API. TLS is always verified.
type Client struct {
	// URL is the Alertmanager's base, such as https://alertmanager.open-cluster-management-observability.svc:9095.
	URL string
	// Token, when set, is sent as a bearer token; CA are the PEM certificates the server's is
	// verified against (the system's roots when empty).
	Token string
	CA    []byte
	// Timeout bounds one call (30 seconds when zero).
	Timeout time.Duration
}

// Create makes the silence and returns its ID; a silence with an ID replaces that one (the
// Alertmanager may give the change a new ID).
func (c Client) Create(ctx context.Context, s Silence) (string, error) {
	body, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	var answer struct {
		SilenceID string `json:"silenceID"`
	}
	if err := c.call(ctx, http.MethodPost, "/api/v2/silences", bytes.NewReader(body), &answer); err != nil {
		return "", fmt.Errorf("creating a silence: %w", err)
	}
	return answer.SilenceID, nil
}

// Expire ends the silence id now. One that is already expired or gone is not an error.
func (c Client) Expire(ctx context.Context, id string) error {
	err := c.call(ctx, http.MethodDelete, "/api/v2/silence/"+url.PathEscape(id), nil, nil)
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("expiring silence %s: %w", id, err)
	}
	return nil
}

// List returns the silences created by createdBy that are not expired.
func (c Client) List(ctx context.Context, createdBy string) ([]Silence, error) {
	var all []struct {
		Silence
		Status struct {
			State string `json:"state"`
		} `json:"status"`
	}
	if err := c.call(ctx, http.MethodGet, "/api/v2/silences", nil, &all); err != nil {
		return nil, fmt.Errorf("listing silences: %w", err)
	}
	var out []Silence
	for _, s := range all {
		if s.CreatedBy != createdBy || s.Status.State == "expired" {
			continue
		}
		s.State = s.Status.State
		out = append(out, s.Silence)
	}
	return out, nil
}

// statusError is an answer other than 2xx.
type statusError struct {
	code int
	text string
}

func (e statusError) Error() string {
	return fmt.Sprintf("the Alertmanager answered %d: %s", e.code, e.text)
}

func isNotFound(err error) bool {
	var se statusError
	return errors.As(err, &se) && se.code == http.StatusNotFound
}

// maxAnswer bounds an answer read.
const maxAnswer = 8 << 20

// call sends one request and decodes a 2xx answer into out (nil: ignored).
func (c Client) call(ctx context.Context, method, path string, body io.Reader, out any) error {
	client, err := apiclient.HTTP(c.CA)
	if err != nil {
		return err
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.URL, "/")+path, body)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	apiclient.Authorize(req, c.Token)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return statusError{code: resp.StatusCode, text: strings.TrimSpace(string(data))}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}
