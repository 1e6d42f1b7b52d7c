package updategraph

import (
	"encoding/json"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
)

// FuzzParse checks that Parse never panics, and that whatever it accepts can be queried
// from every node, re-encoded and parsed again.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		sampleGraph,
		twistedGraph,
		`{}`,
		`{"version": 1, "nodes": [], "edges": []}`,
		`{"nodes": [{"version": "4.14.1", "payload": "a"}, {"version": "4.14.2", "payload": "b"}], "edges": [[0, 1]]}`,
		`{"nodes": [{"version": "4.14.1", "payload": "a"}], "edges": [[0, 5]]}`,
		`{"nodes": [{"version": "4.14.1", "payload": "a"}], "edges": [[0]]}`,
		`{"nodes": [{"version": "1.0.0-rc.1+build.5", "payload": "a", "metadata": {"url": "%zz"}}]}`,
		`{"conditionalEdges": [{"edges": [{"from": "1.0.0", "to": "2.0.0"}], "risks": []}]}`,
		`null`,
		`[]`,
	} {
		f.Add([]byte(seed))
	}
	always := func(configv1.ConditionalUpdateRisk, string) (bool, error) { return true, nil }
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Parse(data)
		if err != nil {
			return
		}
		for _, n := range g.Nodes {
			if _, err := g.Updates(Query{Version: n.Version, Match: always}); err != nil {
				t.Fatalf("Updates from node %s of a valid graph: %v", n.Version, err)
			}
			for _, m := range g.Nodes {
				g.EdgeBetween(n.Version, m.Version)
			}
		}
		again, err := json.Marshal(g)
		if err != nil {
			t.Fatalf("Marshal of a parsed graph: %v", err)
		}
		if _, err := Parse(again); err != nil {
			t.Fatalf("re-parsing %s: %v", again, err)
		}
	})
}
