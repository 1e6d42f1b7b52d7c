// Package updategraph models the graph that an OpenShift update service (Cincinnati) serves
// and answers, from it, the questions the cluster-version operator answers: which updates a
// cluster on a given version may take, which of them carry known risks, and whether each
// risky update is recommended for the cluster.
//
// The package is pure: it does no I/O, reads no clock and evaluates no PromQL itself. Risk
// rules are decided by a RiskMatcher supplied by the caller, and condition timestamps come
// from the caller. Outputs use the config.openshift.io/v1 types so that they can be written
// straight into a ClusterVersion status.
package updategraph

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/blang/semver/v4"
	configv1 "github.com/openshift/api/config/v1"
)

const (
	// GraphVersion is the only graph schema version this package knows. Update services
	// that predate schema versioning send no version at all; Parse accepts that too.
	GraphVersion = 1

	// ChannelsMetadataKey is the node metadata key listing, comma-separated, the channels a
	// release belongs to.
	ChannelsMetadataKey = "io.openshift.upgrades.graph.release.channels"

	// URLMetadataKey is the node metadata key holding a link to the release's errata or notes.
	URLMetadataKey = "url"

	// RuleTypeAlways is the matching-rule type that matches every cluster.
	RuleTypeAlways = "Always"

	// RuleTypePromQL is the matching-rule type whose PromQL query decides the match.
	RuleTypePromQL = "PromQL"
)

// ErrInvalidGraph is wrapped by every error Parse and Validate return for a graph that
// decodes but breaks a rule of the format.
var ErrInvalidGraph = errors.New("invalid update graph")

// Graph is the document an update service returns from its graph endpoint
// (/api/upgrades_info/v1/graph), already filtered to one channel and architecture.
type Graph struct {
	// Version is the graph schema version; 0 means the service sent none.
	Version int `json:"version,omitempty"`

	// Nodes are the releases in the graph. Edges refer to them by index.
	Nodes []Node `json:"nodes"`

	// Edges are the updates recommended for every cluster.
	Edges []Edge `json:"edges"`

	// ConditionalEdges are the updates that carry known risks; each entry applies its
	// risks to all of its edges. Services older than conditional updates omit it.
	ConditionalEdges []ConditionalEdges `json:"conditionalEdges"`
}

// Node is one release in the graph.
type Node struct {
	// Version is the release's semantic version, such as 4.14.2.
	Version string `json:"version"`

	// Payload is the release image pull spec.
	Payload string `json:"payload"`

	// Metadata holds string properties of the release, among them ChannelsMetadataKey
	// and URLMetadataKey.
	Metadata map[string]string `json:"metadata"`
}

// Edge is an update from Nodes[From] to Nodes[To]. In JSON it is a two-element array of
// node indexes, [from, to].
type Edge struct {
	// From is the index of the source node.
	From int

	// To is the index of the target node.
	To int
}

// ConditionalEdges groups updates that share the same set of risks.
type ConditionalEdges struct {
	// Edges are the updates, named by version.
	Edges []ConditionalEdge `json:"edges"`

	// Risks are the known issues of these updates. The JSON shape of a risk (url, name,
	// message, matchingRules) is the one ClusterVersion uses, so the openshift/api type
	// serves for both.
	Risks []configv1.ConditionalUpdateRisk `json:"risks"`
}

// ConditionalEdge is one update named by the versions of its two ends.
type ConditionalEdge struct {
	// From is the version the update starts from.
	From string `json:"from"`

	// To is the version the update goes to.
	To string `json:"to"`
}

// MarshalJSON writes the edge as [from, to].
func (e Edge) MarshalJSON() ([]byte, error) {
	return json.Marshal([2]int{e.From, e.To})
}

// UnmarshalJSON reads an edge from a [from, to] array of two integers.
func (e *Edge) UnmarshalJSON(data []byte) error {
	var pair []int
	if err := json.Unmarshal(data, &pair); err != nil {
		return fmt.Errorf("edge must be an array of two node indexes: %w", err)
	}
	if len(pair) != 2 {
		return fmt.Errorf("edge must be an array of two node indexes, got %d elements", len(pair))
	}
	e.From, e.To = pair[0], pair[1]
	return nil
}

// Parse decodes an update service graph response and validates it (see Validate).
func Parse(data []byte) (*Graph, error) {
	var g Graph
	if err := json.Unmarshal(data, &g); err != nil {
		return nil, fmt.Errorf("decoding update graph: %w", err)
	}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	return &g, nil
}

// Validate checks the rules a graph must follow for the queries of this package to be
// meaningful: a known schema version; nodes with unique semantic versions, an image and a
// parseable url; edge indexes in range and not looping on one node; conditional edges that
// name versions present in the graph, each group with at least one risk, and every risk
// with a unique name, a URL, a message and at least one matching rule of a known type.
// Rules of unknown types are allowed next to known ones and are skipped by evaluation, as
// the cluster-version operator does.
func (g *Graph) Validate() error {
	if g.Version != 0 && g.Version != GraphVersion {
		return fmt.Errorf("%w: graph version %d is not supported (known: %d)", ErrInvalidGraph, g.Version, GraphVersion)
	}
	index, err := validateNodes(g.Nodes)
	if err != nil {
		return err
	}
	if err := validateEdges(g.Edges, g.Nodes); err != nil {
		return err
	}
	for i, ce := range g.ConditionalEdges {
		if err := validateConditionalEdges(ce, index); err != nil {
			return fmt.Errorf("%w: conditionalEdges[%d]: %w", ErrInvalidGraph, i, err)
		}
	}
	return nil
}

func validateNodes(nodes []Node) (map[string]int, error) {
	index := make(map[string]int, len(nodes))
	for i, n := range nodes {
		if err := validateNode(n); err != nil {
			return nil, fmt.Errorf("%w: nodes[%d]: %w", ErrInvalidGraph, i, err)
		}
		if first, dup := index[n.Version]; dup {
			return nil, fmt.Errorf("%w: nodes[%d]: version %q already used by nodes[%d]", ErrInvalidGraph, i, n.Version, first)
		}
		index[n.Version] = i
	}
	return index, nil
}

func validateNode(n Node) error {
	v, err := semver.Parse(n.Version)
	if err != nil {
		return fmt.Errorf("version %q is not a semantic version: %w", n.Version, err)
	}
	if v.String() != n.Version {
		return fmt.Errorf("version %q is not in canonical form %q", n.Version, v.String())
	}
	if strings.TrimSpace(n.Payload) == "" {
		return fmt.Errorf("version %s has an empty payload", n.Version)
	}
	if raw, ok := n.Metadata[URLMetadataKey]; ok {
		if _, err := url.Parse(raw); err != nil {
			return fmt.Errorf("version %s has an invalid url: %w", n.Version, err)
		}
	}
	return nil
}

func validateEdges(edges []Edge, nodes []Node) error {
	for i, e := range edges {
		for _, end := range []int{e.From, e.To} {
			if end < 0 || end >= len(nodes) {
				return fmt.Errorf("%w: edges[%d] [%d, %d]: node index %d out of range [0, %d)",
					ErrInvalidGraph, i, e.From, e.To, end, len(nodes))
			}
		}
		if e.From == e.To {
			return fmt.Errorf("%w: edges[%d] [%d, %d]: update from %s to itself",
				ErrInvalidGraph, i, e.From, e.To, nodes[e.From].Version)
		}
	}
	return nil
}

func validateConditionalEdges(ce ConditionalEdges, index map[string]int) error {
	if len(ce.Edges) == 0 {
		return errors.New("no edges")
	}
	for j, e := range ce.Edges {
		if err := validateConditionalEdge(e, index); err != nil {
			return fmt.Errorf("edges[%d]: %w", j, err)
		}
	}
	if len(ce.Risks) == 0 {
		return errors.New("no risks")
	}
	names := make(map[string]bool, len(ce.Risks))
	for j, r := range ce.Risks {
		if err := validateRisk(r); err != nil {
			return fmt.Errorf("risks[%d]: %w", j, err)
		}
		if names[r.Name] {
			return fmt.Errorf("risks[%d]: risk name %q is used twice", j, r.Name)
		}
		names[r.Name] = true
	}
	return nil
}

func validateConditionalEdge(e ConditionalEdge, index map[string]int) error {
	if _, ok := index[e.From]; !ok {
		return fmt.Errorf("from version %q is not a node of the graph", e.From)
	}
	if _, ok := index[e.To]; !ok {
		return fmt.Errorf("to version %q is not a node of the graph", e.To)
	}
	if e.From == e.To {
		return fmt.Errorf("update from %s to itself", e.From)
	}
	return nil
}

func validateRisk(r configv1.ConditionalUpdateRisk) error {
	switch {
	case r.Name == "":
		return errors.New("risk has no name")
	case r.URL == "":
		return fmt.Errorf("risk %q has no url", r.Name)
	case r.Message == "":
		return fmt.Errorf("risk %q has no message", r.Name)
	}
	known := 0
	for k, rule := range r.MatchingRules {
		switch rule.Type {
		case RuleTypeAlways:
			known++
		case RuleTypePromQL:
			if rule.PromQL == nil || strings.TrimSpace(rule.PromQL.PromQL) == "" {
				return fmt.Errorf("risk %q matchingRules[%d]: type PromQL without a promql query", r.Name, k)
			}
			known++
		}
	}
	if known == 0 {
		return fmt.Errorf("risk %q has no matching rule of a known type (%s, %s)", r.Name, RuleTypeAlways, RuleTypePromQL)
	}
	return nil
}
