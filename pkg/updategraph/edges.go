package updategraph

import (
	"fmt"
	"slices"

	configv1 "github.com/openshift/api/config/v1"
)

// targets are the updates a graph offers from one node, as the cluster-version operator
// resolves them.
type targets struct {
	// unconditional are node indexes reached by edges and not by conditional edges.
	unconditional []int

	// conditional maps node indexes reached by exactly one conditional edge group to
	// that group's risks; conditionalOrder lists them in graph order.
	conditional      map[int][]configv1.ConditionalUpdateRisk
	conditionalOrder []int

	warnings []string
}

// outgoing collects the updates from node cur to nodes in channel ("" for any). A target
// reached both ways is kept as conditional only, and a target listed by several conditional
// edge groups is dropped, each with a warning, as the cluster-version operator does.
func (g *Graph) outgoing(cur int, channel string) targets {
	t := targets{conditional: map[int][]configv1.ConditionalUpdateRisk{}}
	groups, order := g.conditionalGroups(cur, channel)
	for _, to := range g.edgeTargets(cur, channel) {
		if _, both := groups[to]; both {
			t.warnings = append(t.warnings, fmt.Sprintf(
				"update to %s is listed as both a conditional and an unconditional update; preferring the conditional update",
				g.Nodes[to].Version))
			continue
		}
		t.unconditional = append(t.unconditional, to)
	}
	for _, to := range order {
		if n := len(groups[to]); n > 1 {
			t.warnings = append(t.warnings, fmt.Sprintf(
				"update service declares %d conditional edge groups for the update to %s; dropping them all",
				n, g.Nodes[to].Version))
			continue
		}
		t.conditional[to] = g.ConditionalEdges[groups[to][0]].Risks
		t.conditionalOrder = append(t.conditionalOrder, to)
	}
	return t
}

// edgeTargets lists, once each and in graph order, the nodes that edges from cur reach.
func (g *Graph) edgeTargets(cur int, channel string) []int {
	var out []int
	for _, e := range g.Edges {
		if e.From != cur || e.To < 0 || e.To >= len(g.Nodes) || e.To == cur {
			continue
		}
		if g.inChannel(e.To, channel) && !slices.Contains(out, e.To) {
			out = append(out, e.To)
		}
	}
	return out
}

// conditionalGroups maps each node that a conditional edge from cur reaches to the indexes
// of the groups listing that edge, and returns the nodes in order of first appearance.
func (g *Graph) conditionalGroups(cur int, channel string) (map[int][]int, []int) {
	groups := map[int][]int{}
	var order []int
	from := g.Nodes[cur].Version
	for gi, ce := range g.ConditionalEdges {
		for _, e := range ce.Edges {
			to, ok := g.indexOf(e.To)
			if e.From != from || !ok || to == cur || !g.inChannel(to, channel) {
				continue
			}
			if _, seen := groups[to]; !seen {
				order = append(order, to)
			}
			if !slices.Contains(groups[to], gi) {
				groups[to] = append(groups[to], gi)
			}
		}
	}
	return groups, order
}

// indexOf returns the index of the node whose version string is exactly version.
func (g *Graph) indexOf(version string) (int, bool) {
	for i, n := range g.Nodes {
		if n.Version == version {
			return i, true
		}
	}
	return 0, false
}
