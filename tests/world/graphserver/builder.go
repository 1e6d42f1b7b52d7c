package graphserver

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"

	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
)

// Builder assembles an update graph for a test, naming releases by version. Images and
// release URLs are derived from versions (Image, ReleaseURL), so a test only names what it
// cares about:
//
//	g := graphserver.NewGraph("stable-4.14").
//		Edge("4.14.1", "4.14.2", "4.14.3").
//		Conditional("4.14.1", "4.14.4", graphserver.PromQLRisk("AuthProxyLeak", "max(cluster_proxy_enabled)")).
//		MustBuild(t)
//
// Versions are added on first mention, in that order. Mistakes, such as a malformed
// version or a risk without a name, are reported by Build.
type Builder struct {
	channels    []string
	nodes       []updategraph.Node
	index       map[string]int
	edges       []updategraph.Edge
	conditional []updategraph.ConditionalEdges
}

// NewGraph starts a graph whose releases belong, unless said otherwise, to channels.
func NewGraph(channels ...string) *Builder {
	return &Builder{channels: channels, index: map[string]int{}}
}

// Image is the release image the builder gives a version: a quay.io ocp-release pull spec
// whose digest is derived from the version.
func Image(version string) string {
	sum := sha256.Sum256([]byte(version))
	return "quay.io/openshift-release-dev/ocp-release@sha256:" + hex.EncodeToString(sum[:])
}

// ReleaseURL is the url metadata the builder gives a version.
func ReleaseURL(version string) string {
	return "https://releases.example.com/ocp/" + version
}

// AlwaysRisk returns a risk that matches every cluster, with a URL and message derived
// from its name.
func AlwaysRisk(name string) configv1.ConditionalUpdateRisk {
	return risk(name, configv1.ClusterCondition{Type: updategraph.RuleTypeAlways})
}

// PromQLRisk returns a risk decided by one PromQL query, with a URL and message derived
// from its name.
func PromQLRisk(name, promql string) configv1.ConditionalUpdateRisk {
	return risk(name, configv1.ClusterCondition{
		Type:   updategraph.RuleTypePromQL,
		PromQL: &configv1.PromQLClusterCondition{PromQL: promql},
	})
}

func risk(name string, rule configv1.ClusterCondition) configv1.ConditionalUpdateRisk {
	return configv1.ConditionalUpdateRisk{
		Name:          name,
		URL:           "https://issues.example.com/" + name,
		Message:       name + " affects clusters taking this update.",
		MatchingRules: []configv1.ClusterCondition{rule},
	}
}

// Versions adds releases in the graph's default channels; versions already present are
// left as they are.
func (b *Builder) Versions(versions ...string) *Builder {
	for _, v := range versions {
		b.node(v)
	}
	return b
}

// Release adds a release, or changes an existing one, to belong to exactly channels.
func (b *Builder) Release(version string, channels ...string) *Builder {
	i := b.node(version)
	b.nodes[i].Metadata[updategraph.ChannelsMetadataKey] = strings.Join(channels, ",")
	return b
}

// Edge adds unconditional updates from one version to each of the others.
func (b *Builder) Edge(from string, to ...string) *Builder {
	f := b.node(from)
	for _, v := range to {
		b.edges = append(b.edges, updategraph.Edge{From: f, To: b.node(v)})
	}
	return b
}

// Chain adds unconditional updates from each version to the next.
func (b *Builder) Chain(versions ...string) *Builder {
	for i := 1; i < len(versions); i++ {
		b.Edge(versions[i-1], versions[i])
	}
	return b
}

// Conditional adds an update from one version to another that carries risks. Updates
// given the same risks share one conditional edge group, as the update service groups them.
func (b *Builder) Conditional(from, to string, risks ...configv1.ConditionalUpdateRisk) *Builder {
	b.node(from)
	b.node(to)
	edge := updategraph.ConditionalEdge{From: from, To: to}
	for i := range b.conditional {
		if reflect.DeepEqual(b.conditional[i].Risks, risks) {
			b.conditional[i].Edges = append(b.conditional[i].Edges, edge)
			return b
		}
	}
	b.conditional = append(b.conditional, updategraph.ConditionalEdges{
		Edges: []updategraph.ConditionalEdge{edge},
		Risks: append([]configv1.ConditionalUpdateRisk(nil), risks...),
	})
	return b
}

// Build returns the graph, or what is wrong with it.
func (b *Builder) Build() (*updategraph.Graph, error) {
	g := &updategraph.Graph{
		Version:          updategraph.GraphVersion,
		Nodes:            make([]updategraph.Node, 0, len(b.nodes)),
		Edges:            append([]updategraph.Edge{}, b.edges...),
		ConditionalEdges: make([]updategraph.ConditionalEdges, 0, len(b.conditional)),
	}
	for _, n := range b.nodes {
		n.Metadata = maps.Clone(n.Metadata)
		g.Nodes = append(g.Nodes, n)
	}
	for _, ce := range b.conditional {
		risks := make([]configv1.ConditionalUpdateRisk, 0, len(ce.Risks))
		for _, r := range ce.Risks {
			risks = append(risks, *r.DeepCopy())
		}
		g.ConditionalEdges = append(g.ConditionalEdges, updategraph.ConditionalEdges{
			Edges: append([]updategraph.ConditionalEdge{}, ce.Edges...),
			Risks: risks,
		})
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("building test graph: %w", err)
	}
	return g, nil
}

// MustBuild returns the graph, failing the test when it is invalid.
func (b *Builder) MustBuild(t testing.TB) *updategraph.Graph {
	t.Helper()
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// node returns the index of version, adding it in the default channels when new.
func (b *Builder) node(version string) int {
	if i, ok := b.index[version]; ok {
		return i
	}
	b.index[version] = len(b.nodes)
	b.nodes = append(b.nodes, updategraph.Node{
		Version: version,
		Payload: Image(version),
		Metadata: map[string]string{
			updategraph.ChannelsMetadataKey: strings.Join(b.channels, ","),
			updategraph.URLMetadataKey:      ReleaseURL(version),
		},
	})
	return len(b.nodes) - 1
}
