package graphserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
)

// response is what a test reads back from the server.
type response struct {
	status      int
	contentType string
	body        []byte
}

// fetch sends a request to the server; accept is sent as the Accept header unless nil.
func fetch(t *testing.T, method, rawURL string, accept *string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, rawURL, nil)
	if err != nil {
		t.Fatalf("NewRequest: %v", err)
	}
	if accept != nil {
		req.Header.Set("Accept", *accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawURL, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	return response{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: body}
}

// graphURL returns the server's graph URL with the given query parameters.
func graphURL(s *Server, params ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(params); i += 2 {
		q.Set(params[i], params[i+1])
	}
	return s.URL() + "?" + q.Encode()
}

func ptr(s string) *string { return &s }

func stableGraph(t *testing.T) *updategraph.Graph {
	return NewGraph("stable-4.14").
		Chain("4.14.1", "4.14.2", "4.14.3").
		Conditional("4.14.1", "4.14.4", PromQLRisk("AuthProxyLeak", "max(cluster_proxy_enabled)")).
		MustBuild(t)
}

func startServer(t *testing.T, graphs map[string]*updategraph.Graph, opts ...Option) *Server {
	t.Helper()
	s, err := New(graphs, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestServesTheChannelGraph(t *testing.T) {
	want := stableGraph(t)
	s := startServer(t, map[string]*updategraph.Graph{"stable-4.14": want})

	resp := fetch(t, http.MethodGet, graphURL(s, "channel", "stable-4.14", "arch", "amd64", "version", "4.14.1"), ptr(MediaTypeJSON))
	if resp.status != http.StatusOK || resp.contentType != MediaTypeJSON {
		t.Fatalf("status %d, content type %q, body %s", resp.status, resp.contentType, resp.body)
	}
	got, err := updategraph.Parse(resp.body)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("served graph (-want +got):\n%s", diff)
	}
	updates, err := got.Updates(updategraph.Query{Version: "4.14.1", Channel: "stable-4.14"})
	if err != nil {
		t.Fatalf("Updates: %v", err)
	}
	if len(updates.AvailableUpdates) != 1 || updates.AvailableUpdates[0].Image != Image("4.14.2") {
		t.Errorf("available updates %+v, want 4.14.2 only", updates.AvailableUpdates)
	}
}

func TestResponses(t *testing.T) {
	s := startServer(t, map[string]*updategraph.Graph{"stable-4.14": stableGraph(t)}, WithArchitectures("amd64", "multi"))
	emptyGraph := `{"version":1,"nodes":[],"edges":[],"conditionalEdges":[]}`
	cases := map[string]struct {
		method      string
		url         string
		accept      *string
		status      int
		contentType string
		kind        string // of an error body
		value       string // of an error body
		nodes       int    // of a graph body
		exactBody   string
	}{
		"no Accept header":       {url: graphURL(s, "channel", "stable-4.14"), status: 200, contentType: MediaTypeJSON, nodes: 4},
		"versioned media type":   {url: graphURL(s, "channel", "stable-4.14"), accept: ptr(MediaTypeGraphV1), status: 200, contentType: MediaTypeGraphV1, nodes: 4},
		"wildcard Accept":        {url: graphURL(s, "channel", "stable-4.14"), accept: ptr("*/*"), status: 200, contentType: MediaTypeJSON, nodes: 4},
		"application wildcard":   {url: graphURL(s, "channel", "stable-4.14"), accept: ptr("application/*"), status: 200, contentType: MediaTypeJSON, nodes: 4},
		"multi arch":             {url: graphURL(s, "channel", "stable-4.14", "arch", "multi"), status: 200, contentType: MediaTypeJSON, nodes: 4},
		"unversioned path":       {url: s.srv.URL + UnversionedGraphPath + "?channel=stable-4.14", status: 200, contentType: MediaTypeJSON, nodes: 4},
		"unknown channel":        {url: graphURL(s, "channel", "fast-4.14"), status: 200, contentType: MediaTypeJSON, exactBody: emptyGraph},
		"architecture not known": {url: graphURL(s, "channel", "stable-4.14", "arch", "arm64"), status: 200, contentType: MediaTypeJSON, exactBody: emptyGraph},
		"missing channel": {
			url: graphURL(s, "arch", "amd64"), status: 400, contentType: MediaTypeJSON,
			kind: "missing_params", value: "mandatory client parameters missing: channel",
		},
		"empty channel": {
			url: graphURL(s, "channel", ""), status: 400, contentType: MediaTypeJSON,
			kind: "invalid_params", value: `invalid client parameters: channel '' does not match regex '^[0-9a-z\-\.]+$'`,
		},
		"malformed channel": {
			url: graphURL(s, "channel", "Stable_4.14"), status: 400, contentType: MediaTypeJSON,
			kind: "invalid_params", value: `invalid client parameters: channel 'Stable_4.14' does not match regex '^[0-9a-z\-\.]+$'`,
		},
		"malformed arch": {
			url: graphURL(s, "channel", "stable-4.14", "arch", "x86_64"), status: 400, contentType: MediaTypeJSON,
			kind: "invalid_params", value: "invalid client parameters: arch 'x86_64' does not match regex '^[0-9a-z]+$'",
		},
		"unsupported Accept": {
			url: graphURL(s, "channel", "stable-4.14"), accept: ptr("text/html"), status: 406, contentType: MediaTypeJSON,
			kind: "invalid_content_type", value: "invalid Content-Type requested",
		},
		"Accept list": {
			url: graphURL(s, "channel", "stable-4.14"), accept: ptr("application/json, text/plain"), status: 406, contentType: MediaTypeJSON,
			kind: "invalid_content_type", value: "invalid Content-Type requested",
		},
		"other path":   {url: s.srv.URL + "/api/upgrades_info/v2/graph?channel=stable-4.14", status: 404, contentType: "text/plain; charset=utf-8"},
		"other method": {method: http.MethodPost, url: graphURL(s, "channel", "stable-4.14"), status: 405, contentType: "text/plain; charset=utf-8"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			resp := fetch(t, method, tc.url, tc.accept)
			if resp.status != tc.status || resp.contentType != tc.contentType {
				t.Fatalf("status %d, content type %q, want %d, %q; body %s", resp.status, resp.contentType, tc.status, tc.contentType, resp.body)
			}
			checkBody(t, resp.body, tc.kind, tc.value, tc.nodes, tc.exactBody)
		})
	}
}

// checkBody checks an error body against kind and value, a graph body against its node
// count, or the body against exact.
func checkBody(t *testing.T, body []byte, kind, value string, nodes int, exact string) {
	t.Helper()
	switch {
	case exact != "":
		if string(body) != exact {
			t.Errorf("body %s, want %s", body, exact)
		}
	case kind != "":
		var got struct{ Kind, Value string }
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("error body %s: %v", body, err)
		}
		if got.Kind != kind || got.Value != value {
			t.Errorf("error %+v, want kind %q value %q", got, kind, value)
		}
	case nodes > 0:
		g, err := updategraph.Parse(body)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		if len(g.Nodes) != nodes {
			t.Errorf("%d nodes, want %d", len(g.Nodes), nodes)
		}
	}
}

func TestListensOnLoopback(t *testing.T) {
	s := startServer(t, nil)
	u, err := url.Parse(s.URL())
	if err != nil {
		t.Fatalf("parsing URL: %v", err)
	}
	if u.Hostname() != "127.0.0.1" || u.Path != GraphPath {
		t.Errorf("URL %s, want http://127.0.0.1:<port>%s", s.URL(), GraphPath)
	}
}

func TestReplaceAndRemoveGraphs(t *testing.T) {
	s := startServer(t, map[string]*updategraph.Graph{"stable-4.14": stableGraph(t)})
	nodes := func() int {
		resp := fetch(t, http.MethodGet, graphURL(s, "channel", "stable-4.14"), nil)
		g, err := updategraph.Parse(resp.body)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		return len(g.Nodes)
	}
	if got := nodes(); got != 4 {
		t.Fatalf("%d nodes at start, want 4", got)
	}
	if err := s.SetGraph("stable-4.14", NewGraph("stable-4.14").Chain("4.14.3", "4.14.5").MustBuild(t)); err != nil {
		t.Fatalf("SetGraph: %v", err)
	}
	if got := nodes(); got != 2 {
		t.Errorf("%d nodes after replacing the graph, want 2", got)
	}
	s.RemoveChannel("stable-4.14")
	if got := nodes(); got != 0 {
		t.Errorf("%d nodes after removing the channel, want 0", got)
	}
}

func TestSetGraphCopiesTheGraph(t *testing.T) {
	g := stableGraph(t)
	s := startServer(t, map[string]*updategraph.Graph{"stable-4.14": g})
	g.Nodes[0].Payload = "changed"
	resp := fetch(t, http.MethodGet, graphURL(s, "channel", "stable-4.14"), nil)
	if strings.Contains(string(resp.body), "changed") {
		t.Errorf("a change to the graph after SetGraph was served: %s", resp.body)
	}
}

func TestSetGraphRejects(t *testing.T) {
	broken := stableGraph(t)
	broken.Edges = append(broken.Edges, updategraph.Edge{From: 0, To: 42})
	cases := map[string]struct {
		channel string
		graph   *updategraph.Graph
		want    string
	}{
		"malformed channel": {channel: "Stable", graph: stableGraph(t), want: `channel "Stable" does not match`},
		"nil graph":         {channel: "stable-4.14", want: `nil graph for channel "stable-4.14"`},
		"invalid graph":     {channel: "stable-4.14", graph: broken, want: "node index 42 out of range"},
	}
	s := startServer(t, nil)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := s.SetGraph(tc.channel, tc.graph)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("SetGraph error %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := New(map[string]*updategraph.Graph{"stable-4.14": broken}); !errors.Is(err, updategraph.ErrInvalidGraph) {
		t.Errorf("New with an invalid graph: %v, want ErrInvalidGraph", err)
	}
}

func TestSetRawGraph(t *testing.T) {
	s := startServer(t, nil)
	s.SetRawGraph("stable-4.14", []byte(`{"nodes": [`))
	resp := fetch(t, http.MethodGet, graphURL(s, "channel", "stable-4.14"), nil)
	if resp.status != http.StatusOK || string(resp.body) != `{"nodes": [` {
		t.Errorf("status %d, body %s", resp.status, resp.body)
	}
}

func TestRecordsRequests(t *testing.T) {
	s := startServer(t, map[string]*updategraph.Graph{"stable-4.14": stableGraph(t)})
	fetch(t, http.MethodGet, graphURL(s, "channel", "stable-4.14", "arch", "amd64", "version", "4.14.1", "id", "c1"), ptr(MediaTypeJSON))
	fetch(t, http.MethodGet, graphURL(s, "arch", "amd64"), nil)
	want := []Request{
		{Channel: "stable-4.14", Arch: "amd64", Version: "4.14.1", ID: "c1", Accept: MediaTypeJSON, Status: 200},
		{Arch: "amd64", Status: 400},
	}
	if diff := cmp.Diff(want, s.Requests()); diff != "" {
		t.Errorf("Requests (-want +got):\n%s", diff)
	}
}

// TestConcurrentUse replaces graphs while clients read them; run with -race.
func TestConcurrentUse(t *testing.T) {
	s := startServer(t, map[string]*updategraph.Graph{"stable-4.14": stableGraph(t)})
	graphs := []*updategraph.Graph{stableGraph(t), NewGraph("stable-4.14").Chain("4.14.3", "4.14.5").MustBuild(t)}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 20 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if err := s.SetGraph("stable-4.14", graphs[i%2]); err != nil {
				errs <- err
			}
		}()
		go func() {
			defer wg.Done()
			if err := getGraph(t, graphURL(s, "channel", "stable-4.14")); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := len(s.Requests()); got != 20 {
		t.Errorf("%d requests recorded, want 20", got)
	}
}

// getGraph fetches and parses a graph, returning an error rather than failing the test so
// that it can run on other goroutines.
func getGraph(t *testing.T, rawURL string) error {
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, rawURL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %s", resp.StatusCode, body)
	}
	_, err = updategraph.Parse(body)
	return err
}

func TestWritesEmptyListsAndMetadata(t *testing.T) {
	bare := &updategraph.Graph{Nodes: []updategraph.Node{{Version: "4.14.1", Payload: Image("4.14.1")}}}
	s := startServer(t, map[string]*updategraph.Graph{"stable-4.14": bare})
	resp := fetch(t, http.MethodGet, graphURL(s, "channel", "stable-4.14"), nil)
	want := `{"version":1,"nodes":[{"version":"4.14.1","payload":"` + Image("4.14.1") + `","metadata":{}}],"edges":[],"conditionalEdges":[]}`
	if string(resp.body) != want {
		t.Errorf("body %s, want %s", resp.body, want)
	}
}
