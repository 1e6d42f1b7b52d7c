package graphserver

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"

	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
)

func TestBuilderGraph(t *testing.T) {
	leak := PromQLRisk("AuthProxyLeak", "max(cluster_proxy_enabled)")
	g := NewGraph("fast-4.14", "stable-4.14").
		Versions("4.14.0").
		Chain("4.14.0", "4.14.1", "4.14.2").
		Edge("4.14.0", "4.14.2").
		Release("4.14.2", "fast-4.14").
		Conditional("4.14.0", "4.14.3", leak).
		Conditional("4.14.1", "4.14.3", leak).
		Conditional("4.14.2", "4.14.3", AlwaysRisk("PreRelease")).
		MustBuild(t)

	var versions []string
	for _, n := range g.Nodes {
		versions = append(versions, n.Version)
	}
	if diff := cmp.Diff([]string{"4.14.0", "4.14.1", "4.14.2", "4.14.3"}, versions); diff != "" {
		t.Errorf("node order (-want +got):\n%s", diff)
	}
	wantNode := updategraph.Node{
		Version: "4.14.1",
		Payload: Image("4.14.1"),
		Metadata: map[string]string{
			updategraph.ChannelsMetadataKey: "fast-4.14,stable-4.14",
			updategraph.URLMetadataKey:      ReleaseURL("4.14.1"),
		},
	}
	if diff := cmp.Diff(wantNode, g.Nodes[1]); diff != "" {
		t.Errorf("node 4.14.1 (-want +got):\n%s", diff)
	}
	if got := g.Nodes[2].Channels(); !cmp.Equal(got, []string{"fast-4.14"}) {
		t.Errorf("4.14.2 channels %v, want [fast-4.14]", got)
	}
	if diff := cmp.Diff([]updategraph.Edge{{From: 0, To: 1}, {From: 1, To: 2}, {From: 0, To: 2}}, g.Edges); diff != "" {
		t.Errorf("edges (-want +got):\n%s", diff)
	}
	wantGroups := []updategraph.ConditionalEdges{
		{Edges: []updategraph.ConditionalEdge{{From: "4.14.0", To: "4.14.3"}, {From: "4.14.1", To: "4.14.3"}}, Risks: []configv1.ConditionalUpdateRisk{leak}},
		{Edges: []updategraph.ConditionalEdge{{From: "4.14.2", To: "4.14.3"}}, Risks: []configv1.ConditionalUpdateRisk{AlwaysRisk("PreRelease")}},
	}
	if diff := cmp.Diff(wantGroups, g.ConditionalEdges); diff != "" {
		t.Errorf("conditional edges (-want +got):\n%s", diff)
	}
}

func TestBuilderErrors(t *testing.T) {
	cases := map[string]struct {
		builder *Builder
		want    string
	}{
		"malformed version": {builder: NewGraph().Edge("4.14.1", "4.14"), want: `version "4.14" is not a semantic version`},
		"risk without name": {builder: NewGraph().Conditional("4.14.1", "4.14.2", AlwaysRisk("")), want: "risk has no name"},
		"conditional without risks": {
			builder: NewGraph().Conditional("4.14.1", "4.14.2"), want: "conditionalEdges[0]: no risks",
		},
		"edge to itself": {builder: NewGraph().Edge("4.14.1", "4.14.1"), want: "update from 4.14.1 to itself"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := tc.builder.Build()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Build error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestBuildReturnsIndependentGraphs(t *testing.T) {
	b := NewGraph("stable-4.14").Edge("4.14.1", "4.14.2").Conditional("4.14.1", "4.14.3", AlwaysRisk("R"))
	first := b.MustBuild(t)
	first.Nodes[0].Metadata["url"] = "changed"
	first.ConditionalEdges[0].Risks[0].MatchingRules[0].Type = "changed"
	first.Edges[0].To = 2
	second := b.MustBuild(t)
	if second.Nodes[0].Metadata["url"] != ReleaseURL("4.14.1") ||
		second.ConditionalEdges[0].Risks[0].MatchingRules[0].Type != updategraph.RuleTypeAlways ||
		second.Edges[0].To != 1 {
		t.Errorf("changing one built graph changed the next: %+v", second)
	}
}

func TestImageIsStablePerVersion(t *testing.T) {
	first, again, other := Image("4.14.1"), Image("4.14.1"), Image("4.14.2")
	if first != again || first == other {
		t.Error("Image must be a function of the version alone")
	}
	const prefix = "quay.io/openshift-release-dev/ocp-release@sha256:"
	if !strings.HasPrefix(first, prefix) || len(first) != len(prefix)+64 {
		t.Errorf("Image %q is not an ocp-release digest pull spec", first)
	}
}
