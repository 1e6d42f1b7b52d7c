package upgradecheck

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
	"github.com/cgu-operator/cgu-operator/tests/world/graphserver"
)

func TestJudgeClusterKeepsTheMostSevereVerdict(t *testing.T) {
	cv := cluster("4.14.1", "stable-4.14", available("4.14.2"),
		conditionalUpdate("4.14.3", metav1.ConditionFalse, graphserver.AlwaysRisk("A")))
	cases := []struct {
		name    string
		targets []Target
		want    Outcome
		reason  string
	}{
		{"no target", nil, Proceed, ReasonNoUpgradeTarget},
		{"done and proceed", []Target{{Version: "4.14.1"}, {Version: "4.14.2"}}, Proceed, ReasonInAvailableUpdates},
		{"proceed and hold", []Target{{Version: "4.14.2"}, {Version: "4.14.3"}}, Hold, ReasonNotRecommended},
		{"hold and reject", []Target{{Version: "4.14.3"}, {Version: "4.13.9"}}, Reject, ReasonDowngrade},
		{"done only", []Target{{Version: "4.14.1"}}, Done, ReasonAlreadyAtTarget},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := JudgeCluster(ClusterInput{Targets: tc.targets, Cluster: cv})
			if v.Outcome != tc.want || v.Reason != tc.reason {
				t.Fatalf("got %s/%s %q, want %s/%s", v.Outcome, v.Reason, v.Message, tc.want, tc.reason)
			}
		})
	}
}

// The graph is read only for a y-stream target, once per target, for the target's channel
// (else the cluster's).
func TestJudgeClusterReadsTheGraphOnlyWhenNeeded(t *testing.T) {
	g := graphserver.NewGraph("stable-4.15").Edge("4.14.1", "4.15.0").MustBuild(t)
	var asked []string
	graph := func(ch string) *updategraph.Graph { asked = append(asked, ch); return g }
	cv := cluster("4.14.1", "stable-4.14", available("4.14.2"))

	v := JudgeCluster(ClusterInput{Targets: []Target{{Version: "4.14.2"}}, Cluster: cv, Graph: graph})
	if v.Outcome != Proceed || len(asked) != 0 {
		t.Fatalf("z-stream: got %s, graph asked for %v, want Proceed without the graph", v.Outcome, asked)
	}
	v = JudgeCluster(ClusterInput{Targets: []Target{{Version: "4.15.0", Channel: "stable-4.15"}}, Cluster: cv, Graph: graph})
	if v.Outcome != Proceed || v.Reason != ReasonInGraph || fmt.Sprint(asked) != "[stable-4.15]" {
		t.Fatalf("y-stream: got %s/%s, graph asked for %v, want InGraph from stable-4.15", v.Outcome, v.Reason, asked)
	}
	v = JudgeCluster(ClusterInput{Targets: []Target{{Version: "4.15.0"}}, Cluster: cv,
		Graph: func(string) *updategraph.Graph { return nil }})
	if v.Outcome != Hold || v.Reason != ReasonGraphUnavailable {
		t.Fatalf("no graph: got %s/%s, want Hold, GraphUnavailable", v.Outcome, v.Reason)
	}
}

// Accepted risks of every target are kept, each once.
func TestJudgeClusterCollectsAcceptedRisks(t *testing.T) {
	cv := cluster("4.14.1", "stable-4.14",
		conditionalUpdate("4.14.3", metav1.ConditionFalse, graphserver.AlwaysRisk("B"), graphserver.AlwaysRisk("A")))
	v := JudgeCluster(ClusterInput{Targets: []Target{{Version: "4.14.3"}, {Image: graphserver.Image("4.14.3")}},
		Cluster: cv, AcceptRisks: []string{"A", "B"}})
	if v.Outcome != Proceed || v.Reason != ReasonRisksAccepted || fmt.Sprint(v.Accepted) != "[A B]" {
		t.Fatalf("got %s/%s accepted %v, want Proceed with A and B accepted", v.Outcome, v.Reason, v.Accepted)
	}
}

func TestSummary(t *testing.T) {
	verdicts := map[string]Verdict{
		"p":  {Outcome: Proceed, Reason: ReasonInAvailableUpdates},
		"d":  {Outcome: Done, Reason: ReasonAlreadyAtTarget},
		"a":  {Outcome: Proceed, Reason: ReasonRisksAccepted, Accepted: []string{"R"}},
		"h":  {Outcome: Hold, Reason: ReasonNotRecommended, Message: strings.Repeat("m", 2000)},
		"r":  {Outcome: Reject, Reason: ReasonDowngrade},
		"no": {Outcome: Proceed},
	}
	st := Summary([]string{"a", "p", "d", "h", "r", "unjudged"}, verdicts)
	if fmt.Sprint(st.Counts) != "map[Done:1 Hold:1 Proceed:2 Reject:1]" {
		t.Fatalf("counts %v", st.Counts)
	}
	var listed []string
	for _, c := range st.Clusters {
		listed = append(listed, c.Name)
	}
	if fmt.Sprint(listed) != "[h r a]" || len(st.Clusters[0].Message) != ranv1alpha1.CheckMessageLimit {
		t.Fatalf("listed %v (first message %d bytes), want held and rejected first, then accepted, messages bounded", listed, len(st.Clusters[0].Message))
	}

	many := map[string]Verdict{}
	var order []string
	for i := range 40 {
		name := fmt.Sprintf("c%d", i)
		order = append(order, name)
		many[name] = Verdict{Outcome: Hold, Reason: ReasonRiskUnknown}
	}
	st = Summary(order, many)
	if len(st.Clusters) != ranv1alpha1.CheckDetailLimit || st.ClustersNotShown != 40-ranv1alpha1.CheckDetailLimit {
		t.Fatalf("listed %d, not shown %d, want the status bounded", len(st.Clusters), st.ClustersNotShown)
	}
}

func TestYStream(t *testing.T) {
	cv := cluster("4.14.1", "stable-4.14", available("4.14.2"))
	cases := map[string]struct {
		targets []Target
		want    bool
	}{
		"a z-stream":                 {[]Target{{Version: "4.14.2"}}, false},
		"a y-stream":                 {[]Target{{Version: "4.15.0"}}, true},
		"a z-stream and a y-stream":  {[]Target{{Version: "4.14.2"}, {Version: "4.15.3"}}, true},
		"a template":                 {[]Target{{Templated: true}}, false},
		"an image the cluster lists": {[]Target{{Image: graphserver.Image("4.14.2")}}, false},
		"no target":                  {nil, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := YStream(tc.targets, cv); got != tc.want {
				t.Fatalf("YStream = %v, want %v", got, tc.want)
			}
		})
	}
	if YStream([]Target{{Version: "4.15.0"}}, nil) {
		t.Fatal("YStream without a ClusterVersion = true, want false")
	}
}
