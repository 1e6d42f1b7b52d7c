package upgradecheck

import (
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	configv1 "github.com/openshift/api/config/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
)

// ClusterInput is what judging every target of a rollout on one cluster needs.
type ClusterInput struct {
	// Targets are the upgrade targets of the rollout's managed policies, in order.
	Targets []Target
	// Cluster is the cluster's ClusterVersion; nil when it was not read.
	Cluster *configv1.ClusterVersion
	// Graph returns the update graph of a channel, nil when it is not available. It is
	// called only for the targets that need a graph: a y-stream update, or a target named
	// by an image the cluster does not list.
	Graph func(channel string) *updategraph.Graph
	// AcceptRisks and AllowNotRecommended are the rollout's, as in Input.
	AcceptRisks         []string
	AllowNotRecommended bool
}

// severity orders outcomes from the one that lets the cluster go furthest.
var severity = map[Outcome]int{Done: 0, Proceed: 1, Hold: 2, Reject: 3}

// JudgeCluster judges each target on the cluster with Judge and keeps the most severe
// verdict (Reject, then Hold, then Proceed, then Done; the first of equals), with the risks
// accepted for every target. A cluster without targets proceeds: there is no upgrade to
// check.
func JudgeCluster(in ClusterInput) Verdict {
	if len(in.Targets) == 0 {
		return verdict(Proceed, ReasonNoUpgradeTarget, "No managed policy asks the cluster for a platform upgrade")
	}
	var out Verdict
	var accepted []string
	for i, t := range in.Targets {
		v := judgeTarget(in, t)
		accepted = append(accepted, v.Accepted...)
		if i == 0 || severity[v.Outcome] > severity[out.Outcome] {
			out = v
		}
	}
	slices.Sort(accepted)
	out.Accepted = slices.Compact(accepted)
	return out
}

// judgeTarget judges one target, reading the graph only when the verdict without it says
// it is needed.
func judgeTarget(in ClusterInput, t Target) Verdict {
	j := Input{Target: t, Cluster: in.Cluster, AcceptRisks: in.AcceptRisks, AllowNotRecommended: in.AllowNotRecommended}
	v := Judge(j)
	needsGraph := v.Reason == ReasonGraphUnavailable ||
		(v.Reason == ReasonTargetUnknown && t.Image != "" && !t.Templated && in.Cluster != nil)
	if !needsGraph || in.Graph == nil {
		return v
	}
	channel := t.Channel
	if channel == "" {
		channel = in.Cluster.Spec.Channel
	}
	if j.Graph = in.Graph(channel); j.Graph == nil {
		return v
	}
	return Judge(j)
}

// ReasonNoUpgradeTarget is the reason of a Proceed verdict when no managed policy asks for a
// platform upgrade.
const ReasonNoUpgradeTarget = "NoUpgradeTarget"

// Holds reports whether a verdict keeps the cluster from being enforced.
func (v Verdict) Holds() bool {
	return v.Outcome == Hold || v.Outcome == Reject
}

// Summary is the status of the upgrade checks for the clusters, in plan order: the count of
// each outcome, then the clusters held or rejected, then those that proceed only because
// risks were accepted, at most ranv1alpha1.CheckDetailLimit of them.
func Summary(clusters []string, verdicts map[string]Verdict) *ranv1alpha1.UpgradeChecksStatus {
	st := &ranv1alpha1.UpgradeChecksStatus{Counts: map[string]int{}}
	var held, accepted []ranv1alpha1.ClusterCheck
	for _, name := range clusters {
		v, ok := verdicts[name]
		if !ok {
			continue
		}
		st.Counts[string(v.Outcome)]++
		check := ranv1alpha1.ClusterCheck{Name: name, Outcome: string(v.Outcome), Reason: v.Reason,
			Message: rollout.Truncate(v.Message, ranv1alpha1.CheckMessageLimit), AcceptedRisks: firstRisks(v.Accepted)}
		switch {
		case v.Holds():
			held = append(held, check)
		case len(v.Accepted) > 0:
			accepted = append(accepted, check)
		}
	}
	listed := append(held, accepted...)
	if len(listed) > ranv1alpha1.CheckDetailLimit {
		st.ClustersNotShown = len(listed) - ranv1alpha1.CheckDetailLimit
		listed = listed[:ranv1alpha1.CheckDetailLimit]
	}
	st.Clusters = listed
	return st
}

// maxListedRisks bounds the accepted risks status lists per cluster.
const maxListedRisks = 8

func firstRisks(names []string) []string {
	if len(names) > maxListedRisks {
		return names[:maxListedRisks]
	}
	return names
}

// CountsText writes counts of clusters per outcome for people, in the order Proceed, Done,
// Hold, Reject: "4 proceed, 1 hold"; "" when every count is zero.
func CountsText(counts map[string]int) string {
	var parts []string
	for _, o := range []Outcome{Proceed, Done, Hold, Reject} {
		if n := counts[string(o)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, strings.ToLower(string(o))))
		}
	}
	return strings.Join(parts, ", ")
}

// YStream reports whether one of the targets changes the cluster's major or minor version;
// false when the versions cannot be told.
func YStream(targets []Target, cv *configv1.ClusterVersion) bool {
	if cv == nil {
		return false
	}
	for _, t := range targets {
		j, _, decided := start(Input{Target: t, Cluster: cv})
		if decided {
			continue
		}
		cur, errCur := semver.Parse(j.current)
		tgt, errTgt := semver.Parse(j.target)
		if errCur == nil && errTgt == nil && (cur.Major != tgt.Major || cur.Minor != tgt.Minor) {
			return true
		}
	}
	return false
}
