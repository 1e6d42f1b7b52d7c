// Package hops plans a release-named rollout whose clusters are on different versions: each
// cluster takes the fewest updates to the target the update graph offers
// (updategraph.Path), and the rollout runs them as stages, the n-th update of every
// cluster in the n-th stage, one stage per version reached. A cluster with no path, or one
// blocked by a risk not accepted, is held with a reason that names the update and the
// risk. It is pure.
package hops

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
)

// Reasons a cluster is held.
const (
	ReasonNoUpdatePath    = "NoUpdatePath"
	ReasonRiskNotAccepted = "RiskNotAccepted"
	ReasonVersionUnknown  = "VersionUnknown"
)

// Stage is the clusters that update to Version as their Index-th update (1-based).
type Stage struct {
	Index    int
	Version  string
	Clusters []string
	// Risks are the names of the accepted risks of the updates of the stage.
	Risks []string
}

// Hold is a cluster the rollout cannot take to the target.
type Hold struct {
	Cluster, Reason, Message string
}

// Input is a rollout to plan.
type Input struct {
	Graph *updategraph.Graph
	// Channel keeps every update to releases of the channel; "" allows any.
	Channel string
	// Target is the release the rollout names.
	Target string
	// Versions are each cluster's version.
	Versions map[string]string
	// Accepted tells whether a conditional-update risk, by name, is accepted.
	Accepted func(risk string) bool
}

// Plan returns the stages, in the order they run (by index, then version), and the clusters
// held, by name. A cluster on the target already is in neither.
func Plan(in Input) ([]Stage, []Hold) {
	type key struct {
		index   int
		version string
	}
	stages := map[key]*Stage{}
	var holds []Hold
	for _, c := range slices.Sorted(maps.Keys(in.Versions)) {
		path, err := in.Graph.Path(updategraph.PathQuery{From: in.Versions[c], To: in.Target, Channel: in.Channel, Accepted: in.Accepted})
		if err != nil {
			holds = append(holds, hold(c, in.Versions[c], in.Target, err))
			continue
		}
		for i, h := range path {
			k := key{i + 1, h.To}
			st, ok := stages[k]
			if !ok {
				st = &Stage{Index: i + 1, Version: h.To}
				stages[k] = st
			}
			st.Clusters = append(st.Clusters, c)
			for _, r := range h.Risks {
				if !slices.Contains(st.Risks, r.Name) {
					st.Risks = append(st.Risks, r.Name)
				}
			}
		}
	}
	out := make([]Stage, 0, len(stages))
	for _, st := range stages {
		slices.Sort(st.Risks)
		out = append(out, *st)
	}
	slices.SortFunc(out, func(a, b Stage) int {
		if a.Index != b.Index {
			return a.Index - b.Index
		}
		return CompareVersions(a.Version, b.Version)
	})
	return out, holds
}

func hold(cluster, from, to string, err error) Hold {
	var blocked *updategraph.BlockedError
	switch {
	case errors.As(err, &blocked):
		return Hold{Cluster: cluster, Reason: ReasonRiskNotAccepted,
			Message: fmt.Sprintf("the update from %s to %s on the way to %s carries the risk %s, not accepted", blocked.From, blocked.To, to,
				strings.Join(blocked.Risks, ", "))}
	case errors.Is(err, updategraph.ErrNoPath):
		return Hold{Cluster: cluster, Reason: ReasonNoUpdatePath, Message: fmt.Sprintf("the update graph offers no path from %s to %s", from, to)}
	}
	return Hold{Cluster: cluster, Reason: ReasonVersionUnknown, Message: err.Error()}
}

// CompareVersions orders release versions by semantic version; one that does not parse
// compares as a string.
func CompareVersions(a, b string) int {
	va, errA := semver.Parse(a)
	vb, errB := semver.Parse(b)
	if errA != nil || errB != nil {
		return strings.Compare(a, b)
	}
	return va.Compare(vb)
}
