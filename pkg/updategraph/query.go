package updategraph

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ErrInvalidVersion is wrapped by the error of a query whose version is not a semantic
// version (the cluster-version operator's InvalidCurrentVersion).
var ErrInvalidVersion = errors.New("invalid version")

// ErrVersionNotFound is wrapped by the error of a query whose version is not a node of the
// graph, or not in the requested channel (the cluster-version operator's VersionNotFound).
var ErrVersionNotFound = errors.New("version not found")

// Query names the cluster asking for updates and how to decide its risks.
type Query struct {
	// Version is the version the cluster is reconciling.
	Version string

	// Channel, when set, keeps only releases whose ChannelsMetadataKey lists it, as the
	// update service does when it serves one channel. Empty keeps every release.
	Channel string

	// Match decides PromQL matching rules. When nil, every risk that needs PromQL is
	// Unknown and its update is not recommended.
	Match RiskMatcher

	// Now stamps the lastTransitionTime of Recommended conditions that change.
	Now metav1.Time

	// Previous is the conditionalUpdates of the last status written, if any. A Recommended
	// condition whose status did not change keeps its previous lastTransitionTime.
	Previous []configv1.ConditionalUpdate
}

// Updates is what the cluster-version operator writes into a ClusterVersion status from a
// graph, plus what it would only log.
type Updates struct {
	// Current is the release of the queried version.
	Current configv1.Release

	// AvailableUpdates are the recommended updates, newest first: the targets of edges
	// and the conditional updates that are Recommended=True, as the operator lists them.
	AvailableUpdates []configv1.Release

	// ConditionalUpdates are the updates with known risks, newest first, each with the
	// risks and a Recommended condition, whatever its status.
	ConditionalUpdates []configv1.ConditionalUpdate

	// Warnings describe inconsistencies the operator resolves and logs: a target reached
	// by both an edge and a conditional edge (the conditional one wins), and a target
	// listed by several conditional edge groups (all are dropped).
	Warnings []string
}

// EdgeKind says how a graph offers an update from one version to another.
type EdgeKind int

const (
	// EdgeNone means the graph offers no such update.
	EdgeNone EdgeKind = iota

	// EdgeUnconditional means the update is recommended for every cluster.
	EdgeUnconditional

	// EdgeConditional means the update carries risks that each cluster evaluates.
	EdgeConditional
)

// String returns the kind's name.
func (k EdgeKind) String() string {
	switch k {
	case EdgeUnconditional:
		return "Unconditional"
	case EdgeConditional:
		return "Conditional"
	default:
		return "None"
	}
}

// Updates answers, for the cluster described by q, what the cluster-version operator puts
// into status.availableUpdates and status.conditionalUpdates. The error wraps
// ErrInvalidVersion or ErrVersionNotFound.
func (g *Graph) Updates(q Query) (*Updates, error) {
	want, err := semver.Parse(q.Version)
	if err != nil {
		return nil, fmt.Errorf("%w: current version %q: %w", ErrInvalidVersion, q.Version, err)
	}
	cur, ok := g.find(want, q.Channel)
	if !ok {
		return nil, fmt.Errorf("%w: currently reconciling cluster version %s not found in the %q channel",
			ErrVersionNotFound, q.Version, q.Channel)
	}
	out := g.outgoing(cur, q.Channel)
	u := &Updates{Current: g.release(cur), Warnings: out.warnings}
	for _, to := range out.unconditional {
		u.AvailableUpdates = append(u.AvailableUpdates, g.release(to))
	}
	for _, to := range out.conditionalOrder {
		cu := g.conditionalUpdate(to, out.conditional[to], q)
		u.ConditionalUpdates = append(u.ConditionalUpdates, cu)
		if rec := findCondition(cu.Conditions, ConditionRecommended); rec.Status == metav1.ConditionTrue {
			u.AvailableUpdates = append(u.AvailableUpdates, cu.Release)
		}
	}
	sortReleases(u.AvailableUpdates, func(r configv1.Release) string { return r.Version })
	sortReleases(u.ConditionalUpdates, func(c configv1.ConditionalUpdate) string { return c.Release.Version })
	return u, nil
}

// EdgeBetween says how the graph offers the update from one version to another, resolving
// inconsistencies as Updates does, and returns the risks of a conditional update. Versions
// compare as semantic versions; the channel is not considered.
func (g *Graph) EdgeBetween(from, to string) (EdgeKind, []configv1.ConditionalUpdateRisk) {
	fromVersion, err := semver.Parse(from)
	if err != nil {
		return EdgeNone, nil
	}
	cur, ok := g.find(fromVersion, "")
	if !ok {
		return EdgeNone, nil
	}
	target, ok := g.Node(to)
	if !ok {
		return EdgeNone, nil
	}
	out := g.outgoing(cur, "")
	for _, i := range out.unconditional {
		if g.Nodes[i].Version == target.Version {
			return EdgeUnconditional, nil
		}
	}
	for i, risks := range out.conditional {
		if g.Nodes[i].Version == target.Version {
			return EdgeConditional, pruneRisks(risks)
		}
	}
	return EdgeNone, nil
}

// Node returns the node of a version, compared as semantic versions.
func (g *Graph) Node(version string) (Node, bool) {
	v, err := semver.Parse(version)
	if err != nil {
		return Node{}, false
	}
	i, ok := g.find(v, "")
	if !ok {
		return Node{}, false
	}
	return g.Nodes[i], true
}

// Release returns the release of a version as ClusterVersion lists it: version, image,
// url and sorted channels.
func (g *Graph) Release(version string) (configv1.Release, bool) {
	n, ok := g.Node(version)
	if !ok {
		return configv1.Release{}, false
	}
	return nodeRelease(n), true
}

// Channels returns the channels a node's metadata lists, sorted, without blanks.
func (n Node) Channels() []string {
	var out []string
	for _, c := range strings.Split(n.Metadata[ChannelsMetadataKey], ",") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

// InChannel reports whether a node's metadata lists the channel.
func (n Node) InChannel(channel string) bool {
	return slices.Contains(n.Channels(), channel)
}

// find returns the index of the first node equal to v that is in the channel, if any.
func (g *Graph) find(v semver.Version, channel string) (int, bool) {
	for i, n := range g.Nodes {
		nv, err := semver.Parse(n.Version)
		if err == nil && nv.EQ(v) && g.inChannel(i, channel) {
			return i, true
		}
	}
	return 0, false
}

func (g *Graph) inChannel(i int, channel string) bool {
	return channel == "" || g.Nodes[i].InChannel(channel)
}

func (g *Graph) release(i int) configv1.Release {
	return nodeRelease(g.Nodes[i])
}

func nodeRelease(n Node) configv1.Release {
	return configv1.Release{
		Version:  n.Version,
		Image:    n.Payload,
		URL:      configv1.URL(n.Metadata[URLMetadataKey]),
		Channels: n.Channels(),
	}
}

func (g *Graph) conditionalUpdate(to int, risks []configv1.ConditionalUpdateRisk, q Query) configv1.ConditionalUpdate {
	cu := configv1.ConditionalUpdate{Release: g.release(to), Risks: pruneRisks(risks)}
	cond := Recommend(cu.Risks, q.Match, q.Now)
	for _, prev := range q.Previous {
		if prev.Release.Version != cu.Release.Version {
			continue
		}
		if old := findCondition(prev.Conditions, ConditionRecommended); old.Status == cond.Status {
			cond.LastTransitionTime = old.LastTransitionTime
		}
	}
	cu.Conditions = []metav1.Condition{cond}
	return cu
}

// pruneRisks deep-copies risks keeping only the matching rules of known types, since the
// ClusterVersion API rejects other rule types.
func pruneRisks(risks []configv1.ConditionalUpdateRisk) []configv1.ConditionalUpdateRisk {
	out := make([]configv1.ConditionalUpdateRisk, 0, len(risks))
	for _, r := range risks {
		c := *r.DeepCopy()
		c.MatchingRules = slices.DeleteFunc(c.MatchingRules, func(rule configv1.ClusterCondition) bool {
			return rule.Type != RuleTypeAlways && rule.Type != RuleTypePromQL
		})
		out = append(out, c)
	}
	return out
}

func findCondition(conds []metav1.Condition, condType string) metav1.Condition {
	for _, c := range conds {
		if c.Type == condType {
			return c
		}
	}
	return metav1.Condition{}
}

// sortReleases orders items by decreasing semantic version, as the cluster-version operator
// does to keep status stable.
func sortReleases[T any](items []T, version func(T) string) {
	sort.SliceStable(items, func(i, j int) bool {
		vi, erri := semver.Parse(version(items[i]))
		vj, errj := semver.Parse(version(items[j]))
		if erri != nil || errj != nil {
			return version(items[i]) > version(items[j])
		}
		return vi.GT(vj)
	})
}
