// Package graphserver is an OpenShift update service (Cincinnati) for tests: it serves
// update graphs, one per channel, on the graph API a cluster-version operator polls, and
// lets a test change them while it runs.
//
// It answers the way the openshift/cincinnati policy engine does:
//
//   - GET /api/upgrades_info/v1/graph (and the unversioned /api/upgrades_info/graph)
//     returns the channel's graph as JSON with "version": 1.
//   - A missing channel parameter is 400 {"kind":"missing_params",...}; a channel or arch
//     that does not match the service's patterns is 400 {"kind":"invalid_params",...}.
//   - A well-formed channel the server has no graph for, or an architecture it does not
//     serve, is 200 with an empty graph, as the service's filters leave nothing.
//   - A missing arch means amd64. A missing Accept header is served as application/json;
//     an Accept header other than application/json,
//     application/vnd.redhat.cincinnati.v1+json, application/*, */* or * is 406
//     {"kind":"invalid_content_type",...}.
//   - Other paths are 404 and methods other than GET are 405 (choices of this server).
//
// Error bodies are {"kind": ..., "value": ...}, the service's GraphError shape.
package graphserver

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"regexp"
	"slices"
	"sync"

	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
)

const (
	// GraphPath is the graph endpoint; URL returns the server's address with this path.
	GraphPath = "/api/upgrades_info/v1/graph"

	// UnversionedGraphPath is the graph endpoint without the version segment, which the
	// service also serves.
	UnversionedGraphPath = "/api/upgrades_info/graph"

	// MediaTypeJSON is the default media type of graph responses.
	MediaTypeJSON = "application/json"

	// MediaTypeGraphV1 is the versioned media type a client may ask for instead.
	MediaTypeGraphV1 = "application/vnd.redhat.cincinnati.v1+json"

	// DefaultArch is the architecture assumed when a request names none.
	DefaultArch = "amd64"
)

var (
	channelPattern = regexp.MustCompile(`^[0-9a-z\-\.]+$`)
	archPattern    = regexp.MustCompile(`^[0-9a-z]+$`)
)

// Request records one request made to the graph endpoint.
type Request struct {
	// Channel, Arch, Version and ID are the query parameters as sent ("" when absent).
	Channel, Arch, Version, ID string

	// Accept is the request's Accept header.
	Accept string

	// Status is the HTTP status the server answered with.
	Status int
}

// Server serves update graphs on 127.0.0.1. It is safe for concurrent use.
type Server struct {
	srv *httptest.Server

	mu       sync.RWMutex
	graphs   map[string][]byte
	arches   []string
	requests []Request
}

// Option configures a Server.
type Option func(*Server)

// WithArchitectures restricts the architectures the server has graphs for; requests for
// others get an empty graph. By default every well-formed architecture gets the graph.
func WithArchitectures(arches ...string) Option {
	return func(s *Server) { s.arches = slices.Clone(arches) }
}

// New starts a server serving graphs, keyed by channel. Close it when done.
func New(graphs map[string]*updategraph.Graph, opts ...Option) (*Server, error) {
	s := &Server{graphs: map[string][]byte{}}
	for _, opt := range opts {
		opt(s)
	}
	for channel, g := range graphs {
		if err := s.SetGraph(channel, g); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening on 127.0.0.1: %w", err)
	}
	s.srv = httptest.NewUnstartedServer(s)
	if err := s.srv.Listener.Close(); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("closing the default listener: %w", err)
	}
	s.srv.Listener = ln
	s.srv.Start()
	return s, nil
}

// URL returns the graph endpoint, the value for a ClusterVersion's spec.upstream.
func (s *Server) URL() string {
	return s.srv.URL + GraphPath
}

// Close stops the server and waits for requests in flight.
func (s *Server) Close() {
	s.srv.Close()
}

// SetGraph serves g for channel from now on, replacing any graph it had. The graph is
// copied, so later changes to g do not show. It must be valid and the channel well formed.
func (s *Server) SetGraph(channel string, g *updategraph.Graph) error {
	if !channelPattern.MatchString(channel) {
		return fmt.Errorf("channel %q does not match %s, so no client could ask for it", channel, channelPattern)
	}
	if g == nil {
		return fmt.Errorf("nil graph for channel %q", channel)
	}
	if err := g.Validate(); err != nil {
		return fmt.Errorf("graph for channel %q: %w", channel, err)
	}
	body, err := encodeGraph(*g)
	if err != nil {
		return fmt.Errorf("encoding graph for channel %q: %w", channel, err)
	}
	s.SetRawGraph(channel, body)
	return nil
}

// SetRawGraph serves body, unchecked, for channel from now on: a way to send a client a
// malformed graph.
func (s *Server) SetRawGraph(channel string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.graphs[channel] = slices.Clone(body)
}

// RemoveChannel stops serving a graph for channel; it then gets an empty graph.
func (s *Server) RemoveChannel(channel string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.graphs, channel)
}

// Requests returns the graph requests received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.requests)
}

// encodeGraph writes a graph as the service does: versioned, with empty lists rather
// than nulls.
func encodeGraph(g updategraph.Graph) ([]byte, error) {
	g.Version = updategraph.GraphVersion
	if g.Edges == nil {
		g.Edges = []updategraph.Edge{}
	}
	if g.ConditionalEdges == nil {
		g.ConditionalEdges = []updategraph.ConditionalEdges{}
	}
	nodes := make([]updategraph.Node, len(g.Nodes))
	for i, n := range g.Nodes {
		if n.Metadata == nil {
			n.Metadata = map[string]string{}
		}
		nodes[i] = n
	}
	g.Nodes = nodes
	return json.Marshal(g)
}
