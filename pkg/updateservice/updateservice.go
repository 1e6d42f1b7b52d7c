// Package updateservice fetches update graphs from an OpenShift update service (the graph
// API of Cincinnati, as a ClusterVersion's spec.upstream names it), keeping each channel's
// graph a while so that a rollout over thousands of clusters asks once per channel.
package updateservice

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
)

// DefaultURL is the public update service's graph endpoint.
const DefaultURL = "https://api.openshift.com/api/upgrades_info/v1/graph"

// DefaultTTL is how long a fetched graph is used before it is fetched again: the service
// changes its graphs a few times a day.
const DefaultTTL = 5 * time.Minute

// ErrorTTL is how long a failure to fetch a graph is returned before the service is asked
// again.
const ErrorTTL = 30 * time.Second

// maxBody bounds the graph read from the service: the public graph of a channel is a few
// hundred kilobytes.
const maxBody = 32 << 20

// Client fetches graphs; safe for concurrent use. The zero value uses http.DefaultClient,
// DefaultTTL and the real clock.
type Client struct {
	HTTP  *http.Client
	TTL   time.Duration
	Clock clock.PassiveClock

	mu    sync.Mutex
	cache map[key]entry
}

type key struct{ url, channel, arch string }

type entry struct {
	graph   *updategraph.Graph
	err     error
	fetched time.Time
}

// Graph returns the graph the service at graphURL serves for channel and architecture
// arch ("amd64" when empty), from the cache while it is fresh. Errors name the service's
// answer; an error is kept ErrorTTL, so that a service that is down is not asked again by
// every reconcile.
func (c *Client) Graph(ctx context.Context, graphURL, channel, arch string) (*updategraph.Graph, error) {
	if arch == "" {
		arch = "amd64"
	}
	k := key{graphURL, channel, arch}
	now := c.now()
	c.mu.Lock()
	if e, ok := c.cache[k]; ok && now.Sub(e.fetched) < c.keep(e.err) {
		c.mu.Unlock()
		return e.graph, e.err
	}
	c.mu.Unlock()
	g, err := Fetch(ctx, c.http(), graphURL, channel, arch)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cache == nil {
		c.cache = map[key]entry{}
	}
	c.cache[k] = entry{graph: g, err: err, fetched: now}
	return g, err
}

func (c *Client) now() time.Time {
	if c.Clock == nil {
		return time.Now()
	}
	return c.Clock.Now()
}

// keep is how long an entry is used: TTL for a graph, ErrorTTL for an error.
func (c *Client) keep(err error) time.Duration {
	if err != nil {
		return ErrorTTL
	}
	return c.ttl()
}

func (c *Client) ttl() time.Duration {
	if c.TTL <= 0 {
		return DefaultTTL
	}
	return c.TTL
}

func (c *Client) http() *http.Client {
	if c.HTTP == nil {
		return http.DefaultClient
	}
	return c.HTTP
}

// Fetch asks the service at graphURL for the graph of channel and arch, as the
// cluster-version operator does (the channel and arch query parameters, Accept:
// application/json), and parses it.
func Fetch(ctx context.Context, hc *http.Client, graphURL, channel, arch string) (*updategraph.Graph, error) {
	u, err := url.Parse(graphURL)
	if err != nil {
		return nil, fmt.Errorf("update service URL %q: %w", graphURL, err)
	}
	query := u.Query()
	query.Set("channel", channel)
	query.Set("arch", arch)
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching the update graph of %s: %w", channel, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("reading the update graph of %s: %w", channel, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the update service answered %s for channel %s: %s", resp.Status, channel, body)
	}
	g, err := updategraph.Parse(body)
	if err != nil {
		return nil, fmt.Errorf("the update graph of %s: %w", channel, err)
	}
	return g, nil
}
