package updateservice_test

import (
	"context"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
	"github.com/cgu-operator/cgu-operator/pkg/updateservice"
	"github.com/cgu-operator/cgu-operator/tests/world/graphserver"
)

func serve(t *testing.T) *graphserver.Server {
	t.Helper()
	g, err := graphserver.NewGraph("stable-4.16").Versions("4.16.10", "4.16.12").Edge("4.16.10", "4.16.12").Build()
	if err != nil {
		t.Fatal(err)
	}
	s, err := graphserver.New(map[string]*updategraph.Graph{"stable-4.16": g})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestGraphIsCachedPerChannel(t *testing.T) {
	s := serve(t)
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC))
	c := &updateservice.Client{TTL: time.Minute, Clock: clk}
	ctx := context.Background()
	for range 3 {
		g, err := c.Graph(ctx, s.URL(), "stable-4.16", "")
		if err != nil {
			t.Fatal(err)
		}
		if kind, _ := g.EdgeBetween("4.16.10", "4.16.12"); kind != updategraph.EdgeUnconditional {
			t.Fatalf("edge %v, want the graph's unconditional edge", kind)
		}
	}
	if n := len(s.Requests()); n != 1 {
		t.Fatalf("%d requests for three reads within the TTL, want 1", n)
	}
	req := s.Requests()[0]
	if req.Channel != "stable-4.16" || req.Arch != "amd64" || req.Accept != "application/json" {
		t.Fatalf("request %+v, want the channel, amd64 and Accept: application/json", req)
	}
	clk.SetTime(clk.Now().Add(time.Minute))
	if _, err := c.Graph(ctx, s.URL(), "stable-4.16", ""); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Requests()); n != 2 {
		t.Fatalf("%d requests after the TTL, want 2", n)
	}
}

func TestErrorsNameTheAnswer(t *testing.T) {
	s := serve(t)
	c := &updateservice.Client{}
	ctx := context.Background()
	cases := map[string]struct{ url, channel, want string }{
		"a malformed channel":   {s.URL(), "not a channel", "the update service answered 400 Bad Request for channel not a channel"},
		"no service":            {"http://127.0.0.1:1/graph", "stable-4.16", "fetching the update graph of stable-4.16"},
		"a URL that cannot be":  {"http://[::1", "stable-4.16", `update service URL "http://[::1"`},
		"an unknown channel is": {s.URL(), "stable-9.99", ""}, // the service answers an empty graph
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := c.Graph(ctx, tc.url, tc.channel, "")
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// A failure is remembered ErrorTTL, then the service is asked again.
func TestErrorsAreKeptAWhile(t *testing.T) {
	s := serve(t)
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC))
	c := &updateservice.Client{Clock: clk}
	ctx := context.Background()
	for range 3 {
		if _, err := c.Graph(ctx, s.URL(), "not a channel", ""); err == nil {
			t.Fatal("no error for a malformed channel")
		}
	}
	if n := len(s.Requests()); n != 1 {
		t.Fatalf("%d requests for three reads within ErrorTTL, want 1", n)
	}
	clk.SetTime(clk.Now().Add(updateservice.ErrorTTL))
	if _, err := c.Graph(ctx, s.URL(), "not a channel", ""); err == nil {
		t.Fatal("no error for a malformed channel")
	}
	if n := len(s.Requests()); n != 2 {
		t.Fatalf("%d requests after ErrorTTL, want 2", n)
	}
}
