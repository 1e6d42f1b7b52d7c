package updategraph_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
	"github.com/cgu-operator/cgu-operator/tests/world/graphserver"
)

func versions(hops []updategraph.Hop) []string {
	var out []string
	for _, h := range hops {
		out = append(out, h.To)
	}
	return out
}

func TestPath(t *testing.T) {
	risky := graphserver.AlwaysRisk("EtcdSlow")
	g := graphserver.NewGraph("eus-4.16").
		// EUS to EUS through the odd minor: two 4.15 releases lead on, the later one is taken.
		Edge("4.14.10", "4.15.3", "4.15.8").Edge("4.15.3", "4.16.5").Edge("4.15.8", "4.16.5").
		// An old z-stream reaches 4.15 only through the latest 4.14.
		Edge("4.14.2", "4.14.10").
		// 4.15.9 is higher than 4.15.8 but conditional: the unconditional hop is preferred.
		Conditional("4.14.10", "4.15.9", risky).Edge("4.15.9", "4.16.5").
		// 4.16.9 is reached only through a conditional update.
		Conditional("4.16.5", "4.16.9", risky).
		// A release outside the channel is never a hop.
		Release("4.15.20", "fast-4.15").Edge("4.14.10", "4.15.20").Edge("4.15.20", "4.16.5").
		MustBuild(t)
	for name, tc := range map[string]struct {
		q    updategraph.PathQuery
		want []string
		err  error
	}{
		"one edge":                       {q: updategraph.PathQuery{From: "4.15.8", To: "4.16.5"}, want: []string{"4.16.5"}},
		"EUS to EUS, latest odd minor":   {q: updategraph.PathQuery{From: "4.14.10", To: "4.16.5", Channel: "eus-4.16"}, want: []string{"4.15.8", "4.16.5"}},
		"z-stream first":                 {q: updategraph.PathQuery{From: "4.14.2", To: "4.16.5", Channel: "eus-4.16"}, want: []string{"4.14.10", "4.15.8", "4.16.5"}},
		"the target already":             {q: updategraph.PathQuery{From: "4.16.5", To: "4.16.5"}},
		"backwards":                      {q: updategraph.PathQuery{From: "4.16.5", To: "4.14.10"}, err: updategraph.ErrNoPath},
		"through a risk not accepted":    {q: updategraph.PathQuery{From: "4.15.8", To: "4.16.9"}, err: updategraph.ErrRiskNotAccepted},
		"through an accepted risk":       {q: updategraph.PathQuery{From: "4.15.8", To: "4.16.9", Accepted: func(r string) bool { return r == "EtcdSlow" }}, want: []string{"4.16.5", "4.16.9"}},
		"a version the graph lacks":      {q: updategraph.PathQuery{From: "4.13.1", To: "4.16.5"}, err: updategraph.ErrVersionNotFound},
		"a version that is not a semver": {q: updategraph.PathQuery{From: "4.14", To: "4.16.5"}, err: updategraph.ErrInvalidVersion},
		"a target outside the channel":   {q: updategraph.PathQuery{From: "4.14.10", To: "4.15.20", Channel: "eus-4.16"}, err: updategraph.ErrVersionNotFound},
	} {
		t.Run(name, func(t *testing.T) {
			hops, err := g.Path(tc.q)
			if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if got := versions(hops); !slices.Equal(got, tc.want) {
				t.Errorf("path %v, want %v", got, tc.want)
			}
		})
	}
}

// A path blocked by a risk names the update and the risk; an accepted one carries its risks.
func TestPathRisks(t *testing.T) {
	g := graphserver.NewGraph("stable-4.16").
		Conditional("4.15.8", "4.16.5", graphserver.AlwaysRisk("EtcdSlow"), graphserver.AlwaysRisk("NoPods")).
		MustBuild(t)
	_, err := g.Path(updategraph.PathQuery{From: "4.15.8", To: "4.16.5", Accepted: func(r string) bool { return r == "NoPods" }})
	var blocked *updategraph.BlockedError
	if !errors.As(err, &blocked) || blocked.From != "4.15.8" || blocked.To != "4.16.5" || !slices.Equal(blocked.Risks, []string{"EtcdSlow"}) {
		t.Fatalf("error %v, want the update 4.15.8 to 4.16.5 blocked by EtcdSlow alone", err)
	}
	hops, err := g.Path(updategraph.PathQuery{From: "4.15.8", To: "4.16.5", Accepted: func(string) bool { return true }})
	if err != nil || len(hops) != 1 || len(hops[0].Risks) != 2 {
		t.Fatalf("hops %+v, %v: want the one update with its two risks", hops, err)
	}
}
