package updategraph

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	configv1 "github.com/openshift/api/config/v1"
)

// Hop is one update of a path: the version it goes to, and the risks of its conditional
// edge (none for an update recommended for every cluster).
type Hop struct {
	To    string
	Risks []configv1.ConditionalUpdateRisk
}

// PathQuery asks for the updates that take a cluster from one version to another.
type PathQuery struct {
	// From is the cluster's version; To the target. Both compare as semantic versions.
	From, To string
	// Channel keeps the path to releases of the channel; "" allows any.
	Channel string
	// Accepted tells whether a conditional-update risk, by name, is accepted for the
	// rollout; nil accepts none.
	Accepted func(risk string) bool
}

// Errors of Path, wrapped with the versions and, for a blocked path, the edge and its risks.
var (
	// ErrNoPath: the graph offers no sequence of updates from the version to the target.
	ErrNoPath = errors.New("no update path")
	// ErrRiskNotAccepted: every path goes through a conditional update with a risk that is
	// not accepted.
	ErrRiskNotAccepted = errors.New("update path blocked by a risk not accepted")
)

// BlockedError says which update, and which of its risks, block every path.
type BlockedError struct {
	From, To string
	Risks    []string
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("%s: the update from %s to %s carries %s", ErrRiskNotAccepted, e.From, e.To, strings.Join(e.Risks, ", "))
}

func (e *BlockedError) Unwrap() error { return ErrRiskNotAccepted }

// Path returns the fewest updates from q.From to q.To the graph offers, using the updates
// recommended for every cluster and the conditional ones whose risks are all accepted. Of
// the paths of that length it takes, hop by hop, an unconditional update before a
// conditional one, then the highest version: the latest z-stream of an intermediate minor,
// as OpenShift recommends for an EUS-to-EUS update through the odd minor. A target the
// cluster runs already is the empty path. When only paths through risks not accepted
// exist, the error is a *BlockedError naming the first such update on the shortest of
// them; with no path at all it wraps ErrNoPath. Versions not in the graph wrap
// ErrInvalidVersion or ErrVersionNotFound.
func (g *Graph) Path(q PathQuery) ([]Hop, error) {
	from, to, err := g.ends(q)
	if err != nil || from == to {
		return nil, err
	}
	accepted := q.Accepted
	if accepted == nil {
		accepted = func(string) bool { return false }
	}
	adj := g.adjacency(q.Channel)
	if hops, ok := g.walk(adj, from, to, func(e arc) bool { return e.accepted(accepted) }); ok {
		return hops, nil
	}
	hops, ok := g.walk(adj, from, to, func(arc) bool { return true })
	if !ok {
		return nil, fmt.Errorf("%w from %s to %s", ErrNoPath, q.From, q.To)
	}
	prev := g.Nodes[from].Version
	for _, h := range hops {
		var blocking []string
		for _, r := range h.Risks {
			if !accepted(r.Name) {
				blocking = append(blocking, r.Name)
			}
		}
		if len(blocking) > 0 {
			return nil, &BlockedError{From: prev, To: h.To, Risks: blocking}
		}
		prev = h.To
	}
	return nil, fmt.Errorf("%w from %s to %s", ErrNoPath, q.From, q.To) // not reached: a usable path would have been found
}

// ends are the node indexes of the query's versions.
func (g *Graph) ends(q PathQuery) (int, int, error) {
	var idx [2]int
	for i, v := range []string{q.From, q.To} {
		sv, err := semver.Parse(v)
		if err != nil {
			return 0, 0, fmt.Errorf("%w: %q: %w", ErrInvalidVersion, v, err)
		}
		n, ok := g.find(sv, q.Channel)
		if !ok {
			return 0, 0, fmt.Errorf("%w: %s not found in the %q channel", ErrVersionNotFound, v, q.Channel)
		}
		idx[i] = n
	}
	return idx[0], idx[1], nil
}

// arc is an update the graph offers from one node.
type arc struct {
	to    int
	risks []configv1.ConditionalUpdateRisk
}

func (e arc) accepted(accepted func(string) bool) bool {
	for _, r := range e.risks {
		if !accepted(r.Name) {
			return false
		}
	}
	return true
}

// adjacency lists each node's updates within the channel, resolved as the cluster-version
// operator resolves them (outgoing).
func (g *Graph) adjacency(channel string) [][]arc {
	adj := make([][]arc, len(g.Nodes))
	for i := range g.Nodes {
		if !g.inChannel(i, channel) {
			continue
		}
		out := g.outgoing(i, channel)
		for _, to := range out.unconditional {
			adj[i] = append(adj[i], arc{to: to})
		}
		for _, to := range out.conditionalOrder {
			adj[i] = append(adj[i], arc{to: to, risks: pruneRisks(out.conditional[to])})
		}
	}
	return adj
}

// walk finds a shortest path over the arcs usable allows: the distance of every node to
// the target first, then, from the source, the preferred arc one step closer each time.
func (g *Graph) walk(adj [][]arc, from, to int, usable func(arc) bool) ([]Hop, bool) {
	rev := make([][]int, len(adj))
	for i, arcs := range adj {
		for _, e := range arcs {
			if usable(e) {
				rev[e.to] = append(rev[e.to], i)
			}
		}
	}
	dist := make([]int, len(adj))
	for i := range dist {
		dist[i] = -1
	}
	dist[to] = 0
	queue := []int{to}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, p := range rev[n] {
			if dist[p] < 0 {
				dist[p] = dist[n] + 1
				queue = append(queue, p)
			}
		}
	}
	if dist[from] < 0 {
		return nil, false
	}
	var hops []Hop
	for cur := from; cur != to; {
		var next []arc
		for _, e := range adj[cur] {
			if usable(e) && dist[e.to] == dist[cur]-1 {
				next = append(next, e)
			}
		}
		best := slices.MinFunc(next, g.preferred)
		hops = append(hops, Hop{To: g.Nodes[best.to].Version, Risks: best.risks})
		cur = best.to
	}
	return hops, true
}

// preferred orders arcs: unconditional first, then the highest version.
func (g *Graph) preferred(a, b arc) int {
	if (len(a.risks) == 0) != (len(b.risks) == 0) {
		if len(a.risks) == 0 {
			return -1
		}
		return 1
	}
	va, errA := semver.Parse(g.Nodes[a.to].Version)
	vb, errB := semver.Parse(g.Nodes[b.to].Version)
	if errA != nil || errB != nil {
		return strings.Compare(g.Nodes[a.to].Version, g.Nodes[b.to].Version)
	}
	return vb.Compare(va)
}
