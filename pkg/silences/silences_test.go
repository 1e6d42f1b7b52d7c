package silences_test

import (
	"context"
	"testing"
	"time"

	"github.com/cgu-operator/cgu-operator/pkg/silences"
	"github.com/cgu-operator/cgu-operator/tests/prom"
)

// alertmanager starts a real Alertmanager (Debian's prometheus-alertmanager, make
// prometheus) for the test, and returns a client of it.
func alertmanager(t *testing.T) (context.Context, silences.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	am, err := prom.StartAlertmanager(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = am.Stop() })
	return ctx, silences.Client{URL: am.URL()}
}

// upgradingSilence is the silence of an upgrading cluster, for two hours from now.
func upgradingSilence(now time.Time) silences.Silence {
	return silences.Silence{
		Matchers: []silences.Matcher{
			{Name: "cluster", Value: "sno-1", IsEqual: true},
			{Name: "severity", Value: "warning|info", IsRegex: true, IsEqual: true},
		},
		StartsAt: now, EndsAt: now.Add(2 * time.Hour), CreatedBy: "cgu-operator", Comment: "ztp/upgrade upgrades sno-1",
	}
}

func TestSilencesMadeListedAndExpired(t *testing.T) {
	ctx, c := alertmanager(t)
	upgrading := upgradingSilence(time.Now().UTC().Truncate(time.Second))
	id, err := c.Create(ctx, upgrading)
	if err != nil || id == "" {
		t.Fatalf("create: %q %v", id, err)
	}
	other := upgrading
	other.CreatedBy, other.Matchers = "someone", []silences.Matcher{{Name: "cluster", Value: "sno-2", IsEqual: true}}
	if _, err := c.Create(ctx, other); err != nil {
		t.Fatal(err)
	}

	mine, err := c.List(ctx, "cgu-operator")
	if err != nil {
		t.Fatal(err)
	}
	if len(mine) != 1 || mine[0].ID != id || mine[0].State != "active" || len(mine[0].Matchers) != 2 ||
		mine[0].Matchers[1] != upgrading.Matchers[1] || !mine[0].EndsAt.Equal(upgrading.EndsAt) {
		t.Fatalf("listed %+v, want the one active silence made, as made", mine)
	}

	if err := c.Expire(ctx, id); err != nil {
		t.Fatal(err)
	}
	if mine, err = c.List(ctx, "cgu-operator"); err != nil || len(mine) != 0 {
		t.Fatalf("after expiry: %+v %v, want none", mine, err)
	}
	if err := c.Expire(ctx, id); err != nil {
		t.Fatalf("expiring twice: %v, want no error", err)
	}

}

func TestSilencesRefused(t *testing.T) {
	ctx, c := alertmanager(t)
	now := time.Now().UTC().Truncate(time.Second)
	bad := upgradingSilence(now)
	bad.EndsAt = now.Add(-time.Hour) // ends before it starts: the Alertmanager refuses it
	if _, err := c.Create(ctx, bad); err == nil {
		t.Fatal("a silence ending before it starts was accepted")
	}
	if _, err := (silences.Client{URL: "http://127.0.0.1:1"}).List(ctx, "cgu-operator"); err == nil {
		t.Fatal("an Alertmanager that is down answered")
	}
}
