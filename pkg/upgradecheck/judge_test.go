package upgradecheck

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
	"github.com/cgu-operator/cgu-operator/tests/world/graphserver"
)

// cluster is a ClusterVersion that completed an update to version in channel, changed by opts.
func cluster(version, channel string, opts ...func(*configv1.ClusterVersion)) *configv1.ClusterVersion {
	cv := &configv1.ClusterVersion{
		ObjectMeta: metav1.ObjectMeta{Name: "version"},
		Spec:       configv1.ClusterVersionSpec{Channel: channel},
		Status: configv1.ClusterVersionStatus{
			Desired: configv1.Release{Version: version, Image: graphserver.Image(version)},
			History: []configv1.UpdateHistory{
				{State: configv1.CompletedUpdate, Version: version, Image: graphserver.Image(version)},
				{State: configv1.CompletedUpdate, Version: "4.14.1", Image: graphserver.Image("4.14.1")},
			},
		},
	}
	for _, o := range opts {
		o(cv)
	}
	return cv
}

func available(versions ...string) func(*configv1.ClusterVersion) {
	return func(cv *configv1.ClusterVersion) {
		for _, v := range versions {
			cv.Status.AvailableUpdates = append(cv.Status.AvailableUpdates,
				configv1.Release{Version: v, Image: graphserver.Image(v)})
		}
	}
}

func conditionalUpdate(version string, status metav1.ConditionStatus, risks ...configv1.ConditionalUpdateRisk) func(*configv1.ClusterVersion) {
	return func(cv *configv1.ClusterVersion) {
		cu := configv1.ConditionalUpdate{Release: configv1.Release{Version: version, Image: graphserver.Image(version)}, Risks: risks}
		if status != "" {
			cu.Conditions = []metav1.Condition{{Type: updategraph.ConditionRecommended, Status: status, Reason: "Test", Message: "Set by the test."}}
		}
		cv.Status.ConditionalUpdates = append(cv.Status.ConditionalUpdates, cu)
		if status == metav1.ConditionTrue {
			available(version)(cv)
		}
	}
}

func notUpgradeableCV(message string) func(*configv1.ClusterVersion) {
	return func(cv *configv1.ClusterVersion) {
		cv.Status.Conditions = append(cv.Status.Conditions, configv1.ClusterOperatorStatusCondition{
			Type: configv1.OperatorUpgradeable, Status: configv1.ConditionFalse, Reason: "AdminAckRequired", Message: message,
		})
	}
}

// updating starts an update to version on top of the completed one.
func updating(version string) func(*configv1.ClusterVersion) {
	return func(cv *configv1.ClusterVersion) {
		cv.Status.Desired = configv1.Release{Version: version, Image: graphserver.Image(version)}
		cv.Status.History = append([]configv1.UpdateHistory{
			{State: configv1.PartialUpdate, Version: version, Image: graphserver.Image(version)}}, cv.Status.History...)
	}
}

func cvTarget(version string) Target {
	return Target{Policy: "platform-upgrade", Kind: KindClusterVersion, Version: version}
}

// testGraph is the stable-4.15 graph the y-stream cases use: from 4.14.9, 4.15.2 is
// recommended, 4.15.3 always carries EtcdLeak, 4.15.5 carries two PromQL risks, and 4.15.7
// is only in fast-4.15.
func testGraph(t *testing.T) *updategraph.Graph {
	t.Helper()
	g, err := graphserver.NewGraph("stable-4.15").
		Versions("4.14.8", "4.14.9", "4.15.2", "4.15.3", "4.15.5", "4.15.6").
		Release("4.15.7", "fast-4.15").
		Edge("4.14.9", "4.15.2", "4.15.7").
		Edge("4.14.8", "4.14.9").
		Conditional("4.14.9", "4.15.3", graphserver.AlwaysRisk("EtcdLeak")).
		Conditional("4.14.9", "4.15.5",
			graphserver.PromQLRisk("AuthProxyLeak", `max(cluster_proxy_enabled{type=~"https?"})`),
			graphserver.PromQLRisk("VSphereNodeNames", `cluster_infrastructure_provider{type="VSphere"}`)).
		Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestJudge(t *testing.T) {
	g := testGraph(t)
	etcd := graphserver.AlwaysRisk("EtcdLeak")
	proxy := graphserver.PromQLRisk("AuthProxyLeak", "max(cluster_proxy_enabled)")
	type want struct {
		outcome  Outcome
		reason   string
		message  []string // substrings
		risks    []string // risk names
		accepted []string
	}
	cases := map[string]struct {
		in   Input
		want want
	}{
		// Unknowns.
		"no ClusterVersion holds": {
			in:   Input{Target: cvTarget("4.14.9")},
			want: want{outcome: Hold, reason: ReasonClusterVersionUnknown, message: []string{"ClusterVersion of the cluster has not been read"}},
		},
		"a ClusterVersion without history or desired version holds": {
			in:   Input{Target: cvTarget("4.14.9"), Cluster: &configv1.ClusterVersion{}},
			want: want{outcome: Hold, reason: ReasonClusterVersionUnknown, message: []string{"neither a completed update nor a desired version"}},
		},
		"a templated target holds": {
			in:   Input{Target: Target{Policy: "p", Kind: KindClusterVersion, Channel: "stable-4.14", Templated: true}, Cluster: cluster("4.14.8", "stable-4.14")},
			want: want{outcome: Hold, reason: ReasonTargetUnknown, message: []string{"Policy p sets its ClusterVersion target through a template"}},
		},
		"a templated UpgradeConfig target holds even with a version": {
			in:   Input{Target: Target{Policy: "p", Kind: KindUpgradeConfig, Version: "4.14.9", Templated: true}, Cluster: cluster("4.14.8", "stable-4.14")},
			want: want{outcome: Hold, reason: ReasonTargetUnknown, message: []string{"UpgradeConfig target through a template"}},
		},
		"a target without version or image holds": {
			in:   Input{Target: Target{Policy: "p", Kind: KindUpgradeConfig, Channel: "stable-4.14"}, Cluster: cluster("4.14.8", "stable-4.14")},
			want: want{outcome: Hold, reason: ReasonTargetUnknown, message: []string{"Policy p sets neither a version nor an image in its UpgradeConfig"}},
		},
		"an image nothing lists holds": {
			in:   Input{Target: Target{Policy: "p", Kind: KindClusterVersion, Image: "quay.io/x@sha256:00"}, Cluster: cluster("4.14.8", "stable-4.14"), Graph: g},
			want: want{outcome: Hold, reason: ReasonTargetUnknown, message: []string{"Image quay.io/x@sha256:00 asked for by policy p is not a release"}},
		},

		// Done and updates under way.
		"already at the target version": {
			in:   Input{Target: cvTarget("4.14.9"), Cluster: cluster("4.14.9", "stable-4.14")},
			want: want{outcome: Done, reason: ReasonAlreadyAtTarget, message: []string{"Cluster is already at 4.14.9"}},
		},
		"already at the target image": {
			in:   Input{Target: Target{Policy: "p", Kind: KindClusterVersion, Image: graphserver.Image("4.14.9")}, Cluster: cluster("4.14.9", "stable-4.14")},
			want: want{outcome: Done, reason: ReasonAlreadyAtTarget, message: []string{"already at 4.14.9"}},
		},
		"the current version is the newest completed one, not a partial one": {
			in:   Input{Target: cvTarget("4.14.8"), Cluster: cluster("4.14.8", "stable-4.14", updating("4.14.9"))},
			want: want{outcome: Done, reason: ReasonAlreadyAtTarget},
		},
		"already updating to the target proceeds": {
			in:   Input{Target: cvTarget("4.14.9"), Cluster: cluster("4.14.8", "stable-4.14", updating("4.14.9"))},
			want: want{outcome: Proceed, reason: ReasonUpdateInProgress, message: []string{"Cluster is already updating from 4.14.8 to 4.14.9"}},
		},
		"updating to another version holds": {
			in: Input{Target: cvTarget("4.14.10"), Cluster: cluster("4.14.8", "stable-4.14", updating("4.14.9"), available("4.14.10"))},
			want: want{outcome: Hold, reason: ReasonOtherUpdateInProgress,
				message: []string{"Cluster is updating from 4.14.8 to 4.14.9, not to 4.14.10"}},
		},

		// Versions.
		"an invalid target version is rejected": {
			in:   Input{Target: cvTarget("4.14"), Cluster: cluster("4.14.8", "stable-4.14")},
			want: want{outcome: Reject, reason: ReasonInvalidVersion, message: []string{`Target version "4.14" of policy platform-upgrade is not a semantic version`}},
		},
		"an invalid current version is rejected": {
			in:   Input{Target: cvTarget("4.14.9"), Cluster: cluster("4.14.x", "stable-4.14")},
			want: want{outcome: Reject, reason: ReasonInvalidVersion, message: []string{`Current version "4.14.x"`}},
		},
		"a downgrade is rejected": {
			in:   Input{Target: cvTarget("4.14.2"), Cluster: cluster("4.14.8", "stable-4.14", available("4.14.9"))},
			want: want{outcome: Reject, reason: ReasonDowngrade, message: []string{"Target version 4.14.2 is lower than the current version 4.14.8"}},
		},
		"a minor downgrade is rejected before the graph is asked": {
			in:   Input{Target: cvTarget("4.13.30"), Cluster: cluster("4.14.8", "stable-4.14")},
			want: want{outcome: Reject, reason: ReasonDowngrade},
		},

		// z-stream.
		"a z-stream in availableUpdates proceeds": {
			in:   Input{Target: cvTarget("4.14.9"), Cluster: cluster("4.14.8", "stable-4.14", available("4.14.10", "4.14.9"))},
			want: want{outcome: Proceed, reason: ReasonInAvailableUpdates, message: []string{"Update from 4.14.8 to 4.14.9 is in the cluster's available updates"}},
		},
		"a z-stream given by image resolves its version from availableUpdates": {
			in:   Input{Target: Target{Policy: "p", Kind: KindClusterVersion, Image: graphserver.Image("4.14.9")}, Cluster: cluster("4.14.8", "stable-4.14", available("4.14.9"))},
			want: want{outcome: Proceed, reason: ReasonInAvailableUpdates, message: []string{"to 4.14.9"}},
		},
		"a z-stream not available is rejected, naming what is": {
			in: Input{Target: cvTarget("4.14.12"), Cluster: cluster("4.14.8", "stable-4.14", available("4.14.9", "4.14.10"))},
			want: want{outcome: Reject, reason: ReasonNotInAvailableUpdates,
				message: []string{"Update from 4.14.8 to 4.14.12 is not in the cluster's available updates (it lists 4.14.9, 4.14.10)"}},
		},
		"a z-stream on a cluster offering nothing is rejected": {
			in:   Input{Target: cvTarget("4.14.9"), Cluster: cluster("4.14.8", "stable-4.14")},
			want: want{outcome: Reject, reason: ReasonNotInAvailableUpdates, message: []string{"(it lists none)"}},
		},
		"a z-stream conditional update that is recommended proceeds with its risks": {
			in:   Input{Target: cvTarget("4.14.9"), Cluster: cluster("4.14.8", "stable-4.14", conditionalUpdate("4.14.9", metav1.ConditionTrue, proxy))},
			want: want{outcome: Proceed, reason: ReasonRecommended, risks: []string{"AuthProxyLeak"}, message: []string{"none of its risks (AuthProxyLeak) applies"}},
		},
		"a z-stream conditional update not recommended holds, naming each risk": {
			in: Input{Target: cvTarget("4.14.9"), Cluster: cluster("4.14.8", "stable-4.14", conditionalUpdate("4.14.9", metav1.ConditionFalse, proxy, etcd))},
			want: want{outcome: Hold, reason: ReasonNotRecommended, risks: []string{"AuthProxyLeak", "EtcdLeak"},
				message: []string{"Update from 4.14.8 to 4.14.9 is not recommended: AuthProxyLeak: AuthProxyLeak affects clusters taking this update (https://issues.example.com/AuthProxyLeak); EtcdLeak: "}},
		},
		"a z-stream conditional update with some risks accepted holds, naming the others": {
			in: Input{Target: cvTarget("4.14.9"), Cluster: cluster("4.14.8", "stable-4.14", conditionalUpdate("4.14.9", metav1.ConditionFalse, proxy, etcd)),
				AcceptRisks: []string{"EtcdLeak"}},
			want: want{outcome: Hold, reason: ReasonNotRecommended, risks: []string{"AuthProxyLeak", "EtcdLeak"}, message: []string{"(not accepted: AuthProxyLeak)"}},
		},
		"a z-stream conditional update whose risks are all accepted proceeds": {
			in: Input{Target: cvTarget("4.14.9"), Cluster: cluster("4.14.8", "stable-4.14", conditionalUpdate("4.14.9", metav1.ConditionFalse, proxy, etcd)),
				AcceptRisks: []string{"EtcdLeak", "AuthProxyLeak", "Other"}},
			want: want{outcome: Proceed, reason: ReasonRisksAccepted, risks: []string{"AuthProxyLeak", "EtcdLeak"}, accepted: []string{"AuthProxyLeak", "EtcdLeak"},
				message: []string{"is not recommended and proceeds because the rollout accepts its risks: AuthProxyLeak"}},
		},
		"a z-stream conditional update that is Unknown fails closed": {
			in: Input{Target: cvTarget("4.14.9"), Cluster: cluster("4.14.8", "stable-4.14", conditionalUpdate("4.14.9", metav1.ConditionUnknown, proxy))},
			want: want{outcome: Hold, reason: ReasonRiskUnknown, risks: []string{"AuthProxyLeak"},
				message: []string{"Update from 4.14.8 to 4.14.9 has risks that could not be evaluated: AuthProxyLeak"}},
		},
		"a z-stream conditional update without a Recommended condition fails closed": {
			in:   Input{Target: cvTarget("4.14.9"), Cluster: cluster("4.14.8", "stable-4.14", conditionalUpdate("4.14.9", "", proxy))},
			want: want{outcome: Hold, reason: ReasonRiskUnknown, risks: []string{"AuthProxyLeak"}},
		},
		"a z-stream conditional update that is Unknown proceeds when not recommended updates are allowed": {
			in: Input{Target: cvTarget("4.14.9"), Cluster: cluster("4.14.8", "stable-4.14", conditionalUpdate("4.14.9", metav1.ConditionUnknown, proxy)),
				AllowNotRecommended: true},
			want: want{outcome: Proceed, reason: ReasonRisksAccepted, risks: []string{"AuthProxyLeak"}, accepted: []string{"AuthProxyLeak"},
				message: []string{"proceeds because the rollout allows not recommended updates"}},
		},
		"a z-stream conditional update without risks is not accepted by an empty list": {
			in:   Input{Target: cvTarget("4.14.9"), Cluster: cluster("4.14.8", "stable-4.14", conditionalUpdate("4.14.9", metav1.ConditionFalse))},
			want: want{outcome: Hold, reason: ReasonNotRecommended, message: []string{`is not recommended: "Set by the test"`}},
		},

		// y-stream.
		"a y-stream edge proceeds": {
			in:   Input{Target: cvTarget("4.15.2"), Cluster: cluster("4.14.9", "stable-4.15"), Graph: g},
			want: want{outcome: Proceed, reason: ReasonInGraph, message: []string{"Update from 4.14.9 to 4.15.2 is an edge of the update graph of channel stable-4.15"}},
		},
		"a y-stream given by image resolves its version from the graph": {
			in:   Input{Target: Target{Policy: "p", Kind: KindClusterVersion, Image: graphserver.Image("4.15.2")}, Cluster: cluster("4.14.9", "stable-4.15"), Graph: g},
			want: want{outcome: Proceed, reason: ReasonInGraph},
		},
		"a y-stream without a graph holds": {
			in: Input{Target: cvTarget("4.15.2"), Cluster: cluster("4.14.9", "stable-4.14")},
			want: want{outcome: Hold, reason: ReasonGraphUnavailable,
				message: []string{"Update from 4.14.9 to 4.15.2 changes the minor version and the update graph of channel stable-4.14 is not available"}},
		},
		"a y-stream without an edge is rejected": {
			in:   Input{Target: cvTarget("4.15.6"), Cluster: cluster("4.14.9", "stable-4.15"), Graph: g},
			want: want{outcome: Reject, reason: ReasonNotInGraph, message: []string{"Update graph of channel stable-4.15 has no update from 4.14.9 to 4.15.6"}},
		},
		"a y-stream from a version the graph does not list is rejected": {
			in:   Input{Target: cvTarget("4.15.2"), Cluster: cluster("4.14.7", "stable-4.15"), Graph: g},
			want: want{outcome: Reject, reason: ReasonNotInGraph, message: []string{"does not list the current version 4.14.7"}},
		},
		"a y-stream to a version the graph does not list is rejected": {
			in:   Input{Target: cvTarget("4.15.9"), Cluster: cluster("4.14.9", "stable-4.15"), Graph: g},
			want: want{outcome: Reject, reason: ReasonNotInGraph, message: []string{"does not list the target version 4.15.9"}},
		},
		"a y-stream to a release outside the target's channel is rejected": {
			in: Input{Target: Target{Policy: "p", Kind: KindUpgradeConfig, Version: "4.15.7", Channel: "stable-4.15"}, Cluster: cluster("4.14.9", "fast-4.15"), Graph: g},
			want: want{outcome: Reject, reason: ReasonNotInGraph,
				message: []string{"Update graph of channel stable-4.15 does not list the target version 4.15.7"}},
		},
		"a y-stream on a cluster that is Upgradeable=False holds, quoting it": {
			in: Input{Target: cvTarget("4.15.2"), Cluster: cluster("4.14.9", "stable-4.15",
				notUpgradeableCV("Kubernetes 1.28 removes APIs.\nAcknowledge with admin-acks.")), Graph: g},
			want: want{outcome: Hold, reason: ReasonUpgradeableFalse,
				message: []string{`changes the minor version and the cluster is not upgradeable: "Kubernetes 1.28 removes APIs. Acknowledge with admin-acks"`}},
		},
		"a z-stream ignores Upgradeable=False": {
			in:   Input{Target: cvTarget("4.14.9"), Cluster: cluster("4.14.8", "stable-4.14", available("4.14.9"), notUpgradeableCV("No."))},
			want: want{outcome: Proceed, reason: ReasonInAvailableUpdates},
		},
		"a y-stream conditional edge with an Always risk is not recommended": {
			in: Input{Target: cvTarget("4.15.3"), Cluster: cluster("4.14.9", "stable-4.15"), Graph: g},
			want: want{outcome: Hold, reason: ReasonNotRecommended, risks: []string{"EtcdLeak"},
				message: []string{"Update from 4.14.9 to 4.15.3 is not recommended: EtcdLeak: EtcdLeak affects clusters taking this update (https://issues.example.com/EtcdLeak)"}},
		},
		"a y-stream conditional edge with PromQL risks fails closed": {
			in: Input{Target: cvTarget("4.15.5"), Cluster: cluster("4.14.9", "stable-4.15"), Graph: g},
			want: want{outcome: Hold, reason: ReasonRiskUnknown, risks: []string{"AuthProxyLeak", "VSphereNodeNames"},
				message: []string{"has risks that could not be evaluated: AuthProxyLeak: ", "; VSphereNodeNames: "}},
		},
		"a y-stream conditional edge whose risks are accepted proceeds": {
			in: Input{Target: cvTarget("4.15.5"), Cluster: cluster("4.14.9", "stable-4.15"), Graph: g,
				AcceptRisks: []string{"VSphereNodeNames", "AuthProxyLeak"}},
			want: want{outcome: Proceed, reason: ReasonRisksAccepted, risks: []string{"AuthProxyLeak", "VSphereNodeNames"},
				accepted: []string{"AuthProxyLeak", "VSphereNodeNames"}},
		},
		"a y-stream conditional edge proceeds when not recommended updates are allowed": {
			in:   Input{Target: cvTarget("4.15.3"), Cluster: cluster("4.14.9", "stable-4.15"), Graph: g, AllowNotRecommended: true},
			want: want{outcome: Proceed, reason: ReasonRisksAccepted, risks: []string{"EtcdLeak"}, accepted: []string{"EtcdLeak"}},
		},
		"a y-stream conditional edge the cluster evaluated as recommended proceeds": {
			in: Input{Target: cvTarget("4.15.5"), Cluster: cluster("4.14.9", "stable-4.15",
				conditionalUpdate("4.15.5", metav1.ConditionTrue, proxy)), Graph: g},
			want: want{outcome: Proceed, reason: ReasonRecommended, risks: []string{"AuthProxyLeak"}},
		},
		"a y-stream the cluster evaluated as not recommended holds even on an unconditional edge": {
			in: Input{Target: cvTarget("4.15.2"), Cluster: cluster("4.14.9", "stable-4.15",
				conditionalUpdate("4.15.2", metav1.ConditionFalse, etcd)), Graph: g},
			want: want{outcome: Hold, reason: ReasonNotRecommended, risks: []string{"EtcdLeak"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := Judge(tc.in)
			if v.Outcome != tc.want.outcome || v.Reason != tc.want.reason {
				t.Fatalf("verdict %s/%s (%s), want %s/%s", v.Outcome, v.Reason, v.Message, tc.want.outcome, tc.want.reason)
			}
			for _, s := range tc.want.message {
				if !strings.Contains(v.Message, s) {
					t.Errorf("message %q does not contain %q", v.Message, s)
				}
			}
			checkMessageShape(t, v.Message)
			var risks []string
			for _, r := range v.Risks {
				risks = append(risks, r.Name)
				if r.Message == "" || r.URL == "" {
					t.Errorf("risk %s without message or URL", r.Name)
				}
			}
			if diff := cmp.Diff(tc.want.risks, risks); diff != "" {
				t.Errorf("risks (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want.accepted, v.Accepted); diff != "" {
				t.Errorf("accepted (-want +got):\n%s", diff)
			}
		})
	}
}

// checkMessageShape checks the message convention: capitalised, one line, no trailing period.
func checkMessageShape(t *testing.T, msg string) {
	t.Helper()
	switch {
	case msg == "":
		t.Error("empty message")
	case strings.ToUpper(msg[:1]) != msg[:1]:
		t.Errorf("message %q does not start with a capital letter", msg)
	case strings.HasSuffix(msg, "."):
		t.Errorf("message %q ends with a period", msg)
	case strings.Contains(msg, "\n"):
		t.Errorf("message %q spans lines", msg)
	}
}

func TestJudgeBoundsRiskList(t *testing.T) {
	var risks []configv1.ConditionalUpdateRisk
	for _, n := range []string{"A", "B", "C", "D", "E", "F", "G"} {
		r := graphserver.AlwaysRisk("Risk" + n)
		r.Message = strings.Repeat("long ", 100)
		risks = append(risks, r)
	}
	v := Judge(Input{Target: cvTarget("4.14.9"),
		Cluster: cluster("4.14.8", "stable-4.14", conditionalUpdate("4.14.9", metav1.ConditionFalse, risks...))})
	if v.Reason != ReasonNotRecommended || len(v.Risks) != 7 {
		t.Fatalf("verdict %s with %d risks, want NotRecommended with 7", v.Reason, len(v.Risks))
	}
	if !strings.Contains(v.Message, "RiskE: ") || strings.Contains(v.Message, "RiskF") || !strings.HasSuffix(v.Message, " and 2 more") {
		t.Errorf("message %q should name five risks then \"and 2 more\"", v.Message)
	}
	if len(v.Message) > 1500 {
		t.Errorf("message is %d bytes long", len(v.Message))
	}
}
