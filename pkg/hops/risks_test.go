package hops_test

import (
	"testing"
	"time"

	"github.com/cgu-operator/cgu-operator/pkg/hops"
	"github.com/cgu-operator/cgu-operator/tests/world/graphserver"
)

// Acceptances hold until their end; an expired one blocks the path again.
func TestAcceptance(t *testing.T) {
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	risks := []hops.AcceptedRisk{
		{Name: "EtcdSlow", By: "ops@example.com", Until: now.Add(time.Hour)},
		{Name: "NoPods", By: "ops@example.com", Until: now.Add(-time.Minute)},
		{Name: "Forever", By: "cab"},
		{Name: "Later", By: "cab", Until: now.Add(2 * time.Hour)},
	}
	a := hops.AcceptanceAt(risks, now)
	for risk, want := range map[string]bool{"EtcdSlow": true, "NoPods": false, "Forever": true, "Unknown": false} {
		if got := a.Accepted(risk); got != want {
			t.Errorf("%s accepted %v, want %v", risk, got, want)
		}
	}
	if got := a.NextExpiry(); !got.Equal(now.Add(time.Hour)) {
		t.Errorf("next expiry %s, want in an hour (EtcdSlow)", got)
	}
	if got := hops.AcceptanceAt(risks, now.Add(3*time.Hour)).NextExpiry(); !got.IsZero() {
		t.Errorf("next expiry %s once every bounded acceptance ended, want none", got)
	}

	g := graphserver.NewGraph("stable-4.16").Conditional("4.16.3", "4.16.5", graphserver.AlwaysRisk("EtcdSlow")).MustBuild(t)
	in := hops.Input{Graph: g, Target: "4.16.5", Versions: map[string]string{"sno": "4.16.3"}, Accepted: a.Accepted}
	if stages, held := hops.Plan(in); len(stages) != 1 || len(held) != 0 {
		t.Errorf("within the acceptance: stages %v, held %v", stages, held)
	}
	in.Accepted = hops.AcceptanceAt(risks, now.Add(time.Hour)).Accepted
	if stages, held := hops.Plan(in); len(stages) != 0 || len(held) != 1 || held[0].Reason != hops.ReasonRiskNotAccepted {
		t.Errorf("once the acceptance ended: stages %v, held %v", stages, held)
	}
}
