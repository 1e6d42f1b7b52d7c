package updategraph

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
)

// sampleGraph is shaped like a response of api.openshift.com for one channel: 4.14.1 may go
// to 4.14.2 and 4.14.3 unconditionally, and to 4.14.4 only with two risks.
const sampleGraph = `{
  "version": 1,
  "nodes": [
    {"version": "4.14.1", "payload": "quay.io/openshift-release-dev/ocp-release@sha256:01",
     "metadata": {"io.openshift.upgrades.graph.release.channels": "fast-4.14,stable-4.14",
                  "url": "https://access.redhat.com/errata/RHBA-2023:0001"}},
    {"version": "4.14.2", "payload": "quay.io/openshift-release-dev/ocp-release@sha256:02",
     "metadata": {"io.openshift.upgrades.graph.release.channels": "stable-4.14,fast-4.14",
                  "url": "https://access.redhat.com/errata/RHBA-2023:0002"}},
    {"version": "4.14.3", "payload": "quay.io/openshift-release-dev/ocp-release@sha256:03",
     "metadata": {"io.openshift.upgrades.graph.release.channels": "fast-4.14"}},
    {"version": "4.14.4", "payload": "quay.io/openshift-release-dev/ocp-release@sha256:04",
     "metadata": {"io.openshift.upgrades.graph.release.channels": "fast-4.14,stable-4.14"}}
  ],
  "edges": [[0, 1], [0, 2], [1, 2]],
  "conditionalEdges": [
    {
      "edges": [{"from": "4.14.1", "to": "4.14.4"}, {"from": "4.14.2", "to": "4.14.4"}],
      "risks": [
        {"url": "https://issues.example.com/OCPBUGS-1", "name": "AuthProxyLeak",
         "message": "Proxied clusters may leak connections.",
         "matchingRules": [{"type": "PromQL", "promql": {"promql": "max(cluster_proxy_enabled{type=~\"https?\"})"}}]},
        {"url": "https://issues.example.com/OCPBUGS-2", "name": "VSphereNodeNames",
         "message": "vSphere clusters may lose node names.",
         "matchingRules": [{"type": "PromQL", "promql": {"promql": "cluster_infrastructure_provider{type=\"VSphere\"}"}},
                           {"type": "Always"}]}
      ]
    }
  ]
}`

func mustParse(t *testing.T, data string) *Graph {
	t.Helper()
	g, err := Parse([]byte(data))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return g
}

func TestParseSample(t *testing.T) {
	g := mustParse(t, sampleGraph)
	if g.Version != 1 || len(g.Nodes) != 4 || len(g.Edges) != 3 || len(g.ConditionalEdges) != 1 {
		t.Fatalf("unexpected shape: version %d, %d nodes, %d edges, %d conditional groups",
			g.Version, len(g.Nodes), len(g.Edges), len(g.ConditionalEdges))
	}
	if diff := cmp.Diff(Edge{From: 0, To: 2}, g.Edges[1]); diff != "" {
		t.Errorf("edge 1 (-want +got):\n%s", diff)
	}
	rule := g.ConditionalEdges[0].Risks[1].MatchingRules[0]
	if rule.Type != RuleTypePromQL || rule.PromQL == nil || !strings.Contains(rule.PromQL.PromQL, "VSphere") {
		t.Errorf("matching rule not decoded: %+v", rule)
	}
}

func TestGraphJSONRoundTrip(t *testing.T) {
	g := mustParse(t, sampleGraph)
	data, err := json.Marshal(g)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	if !strings.Contains(string(data), `"edges":[[0,1],[0,2],[1,2]]`) {
		t.Errorf("edges not written as index pairs: %s", data)
	}
	again := mustParse(t, string(data))
	if diff := cmp.Diff(g, again); diff != "" {
		t.Errorf("round trip changed the graph (-want +got):\n%s", diff)
	}
}

// edit decodes sampleGraph into a generic document, lets change alter it and re-encodes it.
func edit(t *testing.T, change func(doc map[string]any)) string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(sampleGraph), &doc); err != nil {
		t.Fatalf("decoding sample: %v", err)
	}
	change(doc)
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatalf("encoding sample: %v", err)
	}
	return string(data)
}

func node(doc map[string]any, i int) map[string]any {
	return doc["nodes"].([]any)[i].(map[string]any)
}

func risk(doc map[string]any, i int) map[string]any {
	ce := doc["conditionalEdges"].([]any)[0].(map[string]any)
	return ce["risks"].([]any)[i].(map[string]any)
}

func TestParseErrors(t *testing.T) {
	cases := map[string]struct {
		change  func(doc map[string]any)
		raw     string
		want    string
		invalid bool
	}{
		"not JSON":           {raw: `{"nodes": [`, want: "decoding update graph"},
		"edge with one end":  {raw: `{"nodes": [], "edges": [[0]]}`, want: "got 1 elements"},
		"edge not an array":  {raw: `{"nodes": [], "edges": [{"from": 0}]}`, want: "edge must be an array of two node indexes"},
		"fractional index":   {raw: `{"nodes": [], "edges": [[0, 1.5]]}`, want: "edge must be an array"},
		"unknown version":    {change: func(d map[string]any) { d["version"] = 2 }, want: "graph version 2 is not supported (known: 1)", invalid: true},
		"bad node version":   {change: func(d map[string]any) { node(d, 2)["version"] = "4.14" }, want: `nodes[2]: version "4.14" is not a semantic version`, invalid: true},
		"v-prefixed version": {change: func(d map[string]any) { node(d, 0)["version"] = "v4.14.1" }, want: `nodes[0]: version "v4.14.1" is not a semantic version`, invalid: true},
		"duplicate version":  {change: func(d map[string]any) { node(d, 3)["version"] = "4.14.2" }, want: `nodes[3]: version "4.14.2" already used by nodes[1]`, invalid: true},
		"empty payload":      {change: func(d map[string]any) { node(d, 1)["payload"] = " " }, want: "nodes[1]: version 4.14.2 has an empty payload", invalid: true},
		"bad url":            {change: func(d map[string]any) { node(d, 0)["metadata"].(map[string]any)["url"] = "http://[::1" }, want: "nodes[0]: version 4.14.1 has an invalid url", invalid: true},
		"edge out of range": {
			change: func(d map[string]any) { d["edges"] = []any{[]any{0, 1}, []any{3, 4}} },
			want:   "edges[1] [3, 4]: node index 4 out of range [0, 4)", invalid: true,
		},
		"negative edge index": {
			change: func(d map[string]any) { d["edges"] = []any{[]any{-1, 1}} },
			want:   "edges[0] [-1, 1]: node index -1 out of range [0, 4)", invalid: true,
		},
		"self edge": {
			change: func(d map[string]any) { d["edges"] = []any{[]any{2, 2}} },
			want:   "edges[0] [2, 2]: update from 4.14.3 to itself", invalid: true,
		},
		"conditional from unknown version": {
			change: func(d map[string]any) {
				ce := d["conditionalEdges"].([]any)[0].(map[string]any)
				ce["edges"] = []any{map[string]any{"from": "4.13.9", "to": "4.14.4"}}
			},
			want: `conditionalEdges[0]: edges[0]: from version "4.13.9" is not a node of the graph`, invalid: true,
		},
		"conditional to unknown version": {
			change: func(d map[string]any) {
				ce := d["conditionalEdges"].([]any)[0].(map[string]any)
				ce["edges"].([]any)[1].(map[string]any)["to"] = "4.15.0"
			},
			want: `conditionalEdges[0]: edges[1]: to version "4.15.0" is not a node of the graph`, invalid: true,
		},
		"conditional without edges": {
			change: func(d map[string]any) { d["conditionalEdges"].([]any)[0].(map[string]any)["edges"] = []any{} },
			want:   "conditionalEdges[0]: no edges", invalid: true,
		},
		"conditional without risks": {
			change: func(d map[string]any) { d["conditionalEdges"].([]any)[0].(map[string]any)["risks"] = nil },
			want:   "conditionalEdges[0]: no risks", invalid: true,
		},
		"risk without name":    {change: func(d map[string]any) { delete(risk(d, 0), "name") }, want: "conditionalEdges[0]: risks[0]: risk has no name", invalid: true},
		"risk without url":     {change: func(d map[string]any) { risk(d, 1)["url"] = "" }, want: `risks[1]: risk "VSphereNodeNames" has no url`, invalid: true},
		"risk without message": {change: func(d map[string]any) { delete(risk(d, 1), "message") }, want: `risks[1]: risk "VSphereNodeNames" has no message`, invalid: true},
		"duplicate risk name":  {change: func(d map[string]any) { risk(d, 1)["name"] = "AuthProxyLeak" }, want: `risks[1]: risk name "AuthProxyLeak" is used twice`, invalid: true},
		"PromQL rule without query": {
			change: func(d map[string]any) { risk(d, 0)["matchingRules"] = []any{map[string]any{"type": "PromQL"}} },
			want:   `risk "AuthProxyLeak" matchingRules[0]: type PromQL without a promql query`, invalid: true,
		},
		"only unknown rule types": {
			change: func(d map[string]any) { risk(d, 0)["matchingRules"] = []any{map[string]any{"type": "Insights"}} },
			want:   `risk "AuthProxyLeak" has no matching rule of a known type (Always, PromQL)`, invalid: true,
		},
		"no matching rules": {
			change: func(d map[string]any) { risk(d, 0)["matchingRules"] = []any{} },
			want:   `risk "AuthProxyLeak" has no matching rule of a known type`, invalid: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			data := tc.raw
			if tc.change != nil {
				data = edit(t, tc.change)
			}
			_, err := Parse([]byte(data))
			if err == nil {
				t.Fatalf("Parse succeeded, want error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if got := errors.Is(err, ErrInvalidGraph); got != tc.invalid {
				t.Errorf("errors.Is(err, ErrInvalidGraph) = %v, want %v", got, tc.invalid)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	cases := map[string]func(doc map[string]any){
		"unversioned graph":    func(d map[string]any) { delete(d, "version") },
		"no conditional edges": func(d map[string]any) { delete(d, "conditionalEdges") },
		"empty graph":          func(d map[string]any) { d["nodes"], d["edges"], d["conditionalEdges"] = []any{}, []any{}, []any{} },
		"prerelease and build": func(d map[string]any) { node(d, 2)["version"] = "4.15.0-rc.1+amd64" },
		"unknown rule next to known": func(d map[string]any) {
			risk(d, 0)["matchingRules"] = []any{map[string]any{"type": "Insights"}, map[string]any{"type": "Always"}}
		},
		"unknown fields":        func(d map[string]any) { d["extra"] = true; node(d, 0)["extra"] = "x" },
		"node without metadata": func(d map[string]any) { delete(node(d, 2), "metadata") },
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse([]byte(edit(t, change))); err != nil {
				t.Errorf("Parse: %v", err)
			}
		})
	}
}

func TestNodeChannels(t *testing.T) {
	cases := map[string]struct {
		value string
		want  []string
	}{
		"sorted":         {value: "stable-4.14,fast-4.14", want: []string{"fast-4.14", "stable-4.14"}},
		"spaces, blanks": {value: " fast-4.14 , ,eus-4.14", want: []string{"eus-4.14", "fast-4.14"}},
		"none":           {value: "", want: nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n := Node{Metadata: map[string]string{ChannelsMetadataKey: tc.value}}
			if diff := cmp.Diff(tc.want, n.Channels()); diff != "" {
				t.Errorf("Channels (-want +got):\n%s", diff)
			}
		})
	}
}

// risksOf returns the risks of the sample's only conditional edge group.
func risksOf(g *Graph) []configv1.ConditionalUpdateRisk {
	return g.ConditionalEdges[0].Risks
}
