package updategraph

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	proxyQuery   = `max(cluster_proxy_enabled{type=~"https?"})`
	vsphereQuery = `cluster_infrastructure_provider{type="VSphere"}`
)

// summary is the part of Updates the table tests compare.
type summary struct {
	Available   []string
	Conditional []string // version=status/reason
	Warnings    int
}

func summarize(u *Updates) summary {
	var s summary
	for _, r := range u.AvailableUpdates {
		s.Available = append(s.Available, r.Version)
	}
	for _, c := range u.ConditionalUpdates {
		rec := findCondition(c.Conditions, ConditionRecommended)
		s.Conditional = append(s.Conditional, c.Release.Version+"="+string(rec.Status)+"/"+rec.Reason)
	}
	s.Warnings = len(u.Warnings)
	return s
}

func TestUpdates(t *testing.T) {
	healthy := byQuery(map[string]answer{proxyQuery: {match: false}, vsphereQuery: {match: false}})
	proxied := byQuery(map[string]answer{proxyQuery: {match: true}, vsphereQuery: {match: false}})
	cases := map[string]struct {
		query   Query
		want    summary
		wantErr error
	}{
		"no risk applies": {
			query: Query{Version: "4.14.1", Match: healthy},
			want: summary{
				Available:   []string{"4.14.4", "4.14.3", "4.14.2"},
				Conditional: []string{"4.14.4=True/NotExposedToRisks"},
			},
		},
		"one risk applies": {
			query: Query{Version: "4.14.1", Match: proxied},
			want: summary{
				Available:   []string{"4.14.3", "4.14.2"},
				Conditional: []string{"4.14.4=False/AuthProxyLeak"},
			},
		},
		"no evaluator: unknown PromQL, Always fallback matches": {
			query: Query{Version: "4.14.1"},
			want: summary{
				Available:   []string{"4.14.3", "4.14.2"},
				Conditional: []string{"4.14.4=False/MultipleReasons"},
			},
		},
		"channel filter drops targets outside it": {
			query: Query{Version: "4.14.1", Channel: "stable-4.14", Match: healthy},
			want: summary{
				Available:   []string{"4.14.4", "4.14.2"},
				Conditional: []string{"4.14.4=True/NotExposedToRisks"},
			},
		},
		"from a middle node": {
			query: Query{Version: "4.14.2", Match: proxied},
			want:  summary{Available: []string{"4.14.3"}, Conditional: []string{"4.14.4=False/AuthProxyLeak"}},
		},
		"from the newest node": {query: Query{Version: "4.14.4", Match: healthy}, want: summary{}},
		"current version outside the channel": {
			query: Query{Version: "4.14.3", Channel: "stable-4.14"}, wantErr: ErrVersionNotFound,
		},
		"unknown channel":        {query: Query{Version: "4.14.1", Channel: "eus-4.14"}, wantErr: ErrVersionNotFound},
		"version not in graph":   {query: Query{Version: "4.13.9"}, wantErr: ErrVersionNotFound},
		"version not semver":     {query: Query{Version: "4.14"}, wantErr: ErrInvalidVersion},
		"empty current version":  {query: Query{}, wantErr: ErrInvalidVersion},
		"build metadata ignored": {query: Query{Version: "4.14.2+amd64", Match: proxied}, want: summary{Available: []string{"4.14.3"}, Conditional: []string{"4.14.4=False/AuthProxyLeak"}}},
	}
	g := mustParse(t, sampleGraph)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u, err := g.Updates(tc.query)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Updates error %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Updates: %v", err)
			}
			if diff := cmp.Diff(tc.want, summarize(u)); diff != "" {
				t.Errorf("Updates (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUpdatesReleasesAndRisks(t *testing.T) {
	g := mustParse(t, sampleGraph)
	u, err := g.Updates(Query{Version: "4.14.1", Match: byQuery(map[string]answer{proxyQuery: {match: true}}), Now: now})
	if err != nil {
		t.Fatalf("Updates: %v", err)
	}
	wantCurrent := configv1.Release{
		Version: "4.14.1", Image: "quay.io/openshift-release-dev/ocp-release@sha256:01",
		URL: "https://access.redhat.com/errata/RHBA-2023:0001", Channels: []string{"fast-4.14", "stable-4.14"},
	}
	if diff := cmp.Diff(wantCurrent, u.Current); diff != "" {
		t.Errorf("Current (-want +got):\n%s", diff)
	}
	wantAvailable := []configv1.Release{
		{Version: "4.14.3", Image: "quay.io/openshift-release-dev/ocp-release@sha256:03", Channels: []string{"fast-4.14"}},
		{Version: "4.14.2", Image: "quay.io/openshift-release-dev/ocp-release@sha256:02",
			URL: "https://access.redhat.com/errata/RHBA-2023:0002", Channels: []string{"fast-4.14", "stable-4.14"}},
	}
	if diff := cmp.Diff(wantAvailable, u.AvailableUpdates); diff != "" {
		t.Errorf("AvailableUpdates (-want +got):\n%s", diff)
	}
	wantConditional := []configv1.ConditionalUpdate{{
		Release: configv1.Release{Version: "4.14.4", Image: "quay.io/openshift-release-dev/ocp-release@sha256:04",
			Channels: []string{"fast-4.14", "stable-4.14"}},
		Risks: risksOf(g),
		Conditions: []metav1.Condition{{
			Type: ConditionRecommended, Status: metav1.ConditionFalse, Reason: ReasonMultipleReasons, LastTransitionTime: now,
			Message: "Proxied clusters may leak connections. https://issues.example.com/OCPBUGS-1\n\n" +
				"vSphere clusters may lose node names. https://issues.example.com/OCPBUGS-2",
		}},
	}}
	if diff := cmp.Diff(wantConditional, u.ConditionalUpdates); diff != "" {
		t.Errorf("ConditionalUpdates (-want +got):\n%s", diff)
	}
}

func TestUpdatesDoNotAliasTheGraph(t *testing.T) {
	g := mustParse(t, sampleGraph)
	u, err := g.Updates(Query{Version: "4.14.1"})
	if err != nil {
		t.Fatalf("Updates: %v", err)
	}
	u.ConditionalUpdates[0].Risks[0].MatchingRules[0].PromQL.PromQL = "changed"
	if got := risksOf(g)[0].MatchingRules[0].PromQL.PromQL; got != proxyQuery {
		t.Errorf("graph risk changed through the result: %q", got)
	}
}

func TestUpdatesLastTransitionTime(t *testing.T) {
	earlier := metav1.NewTime(now.Add(-time.Hour))
	previous := func(status metav1.ConditionStatus) []configv1.ConditionalUpdate {
		return []configv1.ConditionalUpdate{{
			Release:    configv1.Release{Version: "4.14.4"},
			Conditions: []metav1.Condition{{Type: ConditionRecommended, Status: status, LastTransitionTime: earlier}},
		}}
	}
	cases := map[string]struct {
		previous []configv1.ConditionalUpdate
		want     metav1.Time
	}{
		"first evaluation":    {want: now},
		"status unchanged":    {previous: previous(metav1.ConditionTrue), want: earlier},
		"status changed":      {previous: previous(metav1.ConditionUnknown), want: now},
		"other release":       {previous: []configv1.ConditionalUpdate{{Release: configv1.Release{Version: "4.14.3"}}}, want: now},
		"previous without it": {previous: []configv1.ConditionalUpdate{{Release: configv1.Release{Version: "4.14.4"}}}, want: now},
	}
	g := mustParse(t, sampleGraph)
	healthy := byQuery(map[string]answer{proxyQuery: {}, vsphereQuery: {}})
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u, err := g.Updates(Query{Version: "4.14.1", Match: healthy, Now: now, Previous: tc.previous})
			if err != nil {
				t.Fatalf("Updates: %v", err)
			}
			got := u.ConditionalUpdates[0].Conditions[0].LastTransitionTime
			if !got.Equal(&tc.want) {
				t.Errorf("lastTransitionTime = %v, want %v", got, tc.want)
			}
		})
	}
}

// twistedGraph has the inconsistencies the cluster-version operator resolves: 4.14.1 reaches
// 4.14.2 both ways, and 4.14.3 through two conditional edge groups. Its risks also carry a
// rule type the ClusterVersion API would reject.
const twistedGraph = `{
  "nodes": [
    {"version": "4.14.1", "payload": "img:1", "metadata": {}},
    {"version": "4.14.2", "payload": "img:2", "metadata": {}},
    {"version": "4.14.3", "payload": "img:3", "metadata": {}},
    {"version": "4.14.4", "payload": "img:4", "metadata": {}}
  ],
  "edges": [[0, 1], [0, 3], [0, 3]],
  "conditionalEdges": [
    {"edges": [{"from": "4.14.1", "to": "4.14.2"}, {"from": "4.14.1", "to": "4.14.3"}],
     "risks": [{"url": "https://u/a", "name": "A", "message": "A.", "matchingRules": [{"type": "Future"}, {"type": "Always"}]}]},
    {"edges": [{"from": "4.14.1", "to": "4.14.3"}],
     "risks": [{"url": "https://u/b", "name": "B", "message": "B.", "matchingRules": [{"type": "Always"}]}]}
  ]
}`

func TestUpdatesResolvesInconsistencies(t *testing.T) {
	g := mustParse(t, twistedGraph)
	u, err := g.Updates(Query{Version: "4.14.1"})
	if err != nil {
		t.Fatalf("Updates: %v", err)
	}
	want := summary{Available: []string{"4.14.4"}, Conditional: []string{"4.14.2=False/A"}, Warnings: 2}
	if diff := cmp.Diff(want, summarize(u)); diff != "" {
		t.Errorf("Updates (-want +got):\n%s", diff)
	}
	for i, fragment := range []string{"update to 4.14.2 is listed as both", "2 conditional edge groups for the update to 4.14.3"} {
		if !strings.Contains(u.Warnings[i], fragment) {
			t.Errorf("warning %d %q does not contain %q", i, u.Warnings[i], fragment)
		}
	}
	rules := u.ConditionalUpdates[0].Risks[0].MatchingRules
	if diff := cmp.Diff([]configv1.ClusterCondition{{Type: RuleTypeAlways}}, rules); diff != "" {
		t.Errorf("pruned rules (-want +got):\n%s", diff)
	}
}

func TestEdgeBetween(t *testing.T) {
	sample := mustParse(t, sampleGraph)
	twisted := mustParse(t, twistedGraph)
	cases := map[string]struct {
		graph     *Graph
		from, to  string
		kind      EdgeKind
		riskNames []string
	}{
		"unconditional":            {graph: sample, from: "4.14.1", to: "4.14.2", kind: EdgeUnconditional},
		"conditional":              {graph: sample, from: "4.14.2", to: "4.14.4", kind: EdgeConditional, riskNames: []string{"AuthProxyLeak", "VSphereNodeNames"}},
		"no edge":                  {graph: sample, from: "4.14.3", to: "4.14.4", kind: EdgeNone},
		"backwards":                {graph: sample, from: "4.14.2", to: "4.14.1", kind: EdgeNone},
		"unknown from":             {graph: sample, from: "4.13.0", to: "4.14.1", kind: EdgeNone},
		"unknown to":               {graph: sample, from: "4.14.1", to: "4.15.0", kind: EdgeNone},
		"invalid from":             {graph: sample, from: "four", to: "4.14.1", kind: EdgeNone},
		"both ways is conditional": {graph: twisted, from: "4.14.1", to: "4.14.2", kind: EdgeConditional, riskNames: []string{"A"}},
		"ambiguous is dropped":     {graph: twisted, from: "4.14.1", to: "4.14.3", kind: EdgeNone},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kind, risks := tc.graph.EdgeBetween(tc.from, tc.to)
			if kind != tc.kind {
				t.Errorf("EdgeBetween kind = %s, want %s", kind, tc.kind)
			}
			var names []string
			for _, r := range risks {
				names = append(names, r.Name)
			}
			if diff := cmp.Diff(tc.riskNames, names); diff != "" {
				t.Errorf("risk names (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodeAndRelease(t *testing.T) {
	g := mustParse(t, sampleGraph)
	cases := map[string]struct {
		version string
		image   string
		found   bool
	}{
		"present":        {version: "4.14.3", image: "quay.io/openshift-release-dev/ocp-release@sha256:03", found: true},
		"build metadata": {version: "4.14.3+amd64", image: "quay.io/openshift-release-dev/ocp-release@sha256:03", found: true},
		"absent":         {version: "4.14.9"},
		"not semver":     {version: "latest"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n, ok := g.Node(tc.version)
			r, rok := g.Release(tc.version)
			if ok != tc.found || rok != tc.found {
				t.Fatalf("Node found = %v, Release found = %v, want %v", ok, rok, tc.found)
			}
			if n.Payload != tc.image || r.Image != tc.image {
				t.Errorf("Node payload %q, Release image %q, want %q", n.Payload, r.Image, tc.image)
			}
		})
	}
}

func TestEdgeKindString(t *testing.T) {
	for kind, want := range map[EdgeKind]string{EdgeNone: "None", EdgeUnconditional: "Unconditional", EdgeConditional: "Conditional", 7: "None"} {
		if got := kind.String(); got != want {
			t.Errorf("EdgeKind(%d).String() = %q, want %q", int(kind), got, want)
		}
	}
}

// TestQueriesOnUnvalidatedGraph checks that a graph built by hand with broken references
// gives answers rather than panics.
func TestQueriesOnUnvalidatedGraph(t *testing.T) {
	g := &Graph{
		Nodes:            []Node{{Version: "4.14.1", Payload: "a"}, {Version: "bad"}},
		Edges:            []Edge{{From: 0, To: 9}, {From: 0, To: -1}, {From: 0, To: 0}, {From: 0, To: 1}},
		ConditionalEdges: []ConditionalEdges{{Edges: []ConditionalEdge{{From: "4.14.1", To: "missing"}}}},
	}
	u, err := g.Updates(Query{Version: "4.14.1"})
	if err != nil {
		t.Fatalf("Updates: %v", err)
	}
	if len(u.AvailableUpdates) != 1 || len(u.ConditionalUpdates) != 0 {
		t.Errorf("Updates = %+v", summarize(u))
	}
	if kind, _ := g.EdgeBetween("4.14.1", "bad"); kind != EdgeNone {
		t.Errorf("EdgeBetween to an unparseable node = %s, want None", kind)
	}
}
