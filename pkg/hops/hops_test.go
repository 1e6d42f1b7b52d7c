package hops_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cgu-operator/cgu-operator/pkg/hops"
	"github.com/cgu-operator/cgu-operator/tests/world/graphserver"
)

// Clusters on mixed versions take their own paths to one target, the n-th update of each in
// the n-th stage; a cluster without a path, or behind a risk not accepted, is held.
func TestPlan(t *testing.T) {
	g := graphserver.NewGraph("eus-4.16").
		Edge("4.14.10", "4.15.8").Edge("4.15.8", "4.16.5").Edge("4.14.2", "4.14.10").
		Conditional("4.16.3", "4.16.5", graphserver.AlwaysRisk("EtcdSlow")).
		Conditional("4.16.1", "4.16.5", graphserver.AlwaysRisk("NoPods")).
		Versions("4.17.0").
		MustBuild(t)
	in := hops.Input{Graph: g, Target: "4.16.5", Channel: "eus-4.16", Accepted: func(r string) bool { return r == "NoPods" },
		Versions: map[string]string{"old": "4.14.2", "eus": "4.14.10", "odd": "4.15.8", "done": "4.16.5", "risky": "4.16.3",
			"accepted": "4.16.1", "newer": "4.17.0", "unknown": "4.12.9"}}
	stages, held := hops.Plan(in)
	want := []hops.Stage{
		{Index: 1, Version: "4.14.10", Clusters: []string{"old"}},
		{Index: 1, Version: "4.15.8", Clusters: []string{"eus"}},
		{Index: 1, Version: "4.16.5", Clusters: []string{"accepted", "odd"}, Risks: []string{"NoPods"}},
		{Index: 2, Version: "4.15.8", Clusters: []string{"old"}},
		{Index: 2, Version: "4.16.5", Clusters: []string{"eus"}},
		{Index: 3, Version: "4.16.5", Clusters: []string{"old"}},
	}
	if diff := cmp.Diff(want, stages); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
	reasons := map[string]string{}
	for _, h := range held {
		reasons[h.Cluster] = h.Reason
		if h.Message == "" {
			t.Errorf("%s held without a message", h.Cluster)
		}
	}
	if diff := cmp.Diff(map[string]string{"risky": hops.ReasonRiskNotAccepted, "newer": hops.ReasonNoUpdatePath,
		"unknown": hops.ReasonVersionUnknown}, reasons); diff != "" {
		t.Errorf("holds (-want +got):\n%s", diff)
	}
	for _, h := range held {
		if h.Cluster == "risky" && h.Message != "the update from 4.16.3 to 4.16.5 on the way to 4.16.5 carries the risk EtcdSlow, not accepted" {
			t.Errorf("message %q", h.Message)
		}
	}
}
