package upgradecheck

import (
	"fmt"

	"github.com/blang/semver/v4"
	configv1 "github.com/openshift/api/config/v1"

	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
)

// Outcome is what a rollout does with a target on a cluster.
type Outcome string

const (
	// Proceed means the cluster may take the upgrade now.
	Proceed Outcome = "Proceed"

	// Done means the cluster already runs the target; there is nothing to do.
	Done Outcome = "Done"

	// Hold means the upgrade cannot start yet, for a reason that may pass: something is
	// unknown, unavailable or not recommended for now. The rollout asks again later.
	Hold Outcome = "Hold"

	// Reject means the cluster can never take this upgrade as asked: the policy is wrong for
	// this cluster.
	Reject Outcome = "Reject"
)

// The reasons of a Verdict, by outcome.
const (
	// ReasonInAvailableUpdates (Proceed): a z-stream target the cluster lists in
	// status.availableUpdates.
	ReasonInAvailableUpdates = "InAvailableUpdates"
	// ReasonInGraph (Proceed): a y-stream target reached by an unconditional graph edge.
	ReasonInGraph = "InGraph"
	// ReasonRecommended (Proceed): a conditional target that is Recommended=True.
	ReasonRecommended = "Recommended"
	// ReasonRisksAccepted (Proceed): a conditional target not recommended, or not known to
	// be, whose risks the rollout accepts.
	ReasonRisksAccepted = "RisksAccepted"
	// ReasonUpdateInProgress (Proceed): the cluster is already updating to the target.
	ReasonUpdateInProgress = "UpdateInProgress"

	// ReasonAlreadyAtTarget (Done): the cluster runs the target.
	ReasonAlreadyAtTarget = "AlreadyAtTarget"

	// ReasonClusterVersionUnknown (Hold): the cluster's ClusterVersion, or its current
	// version, is not known.
	ReasonClusterVersionUnknown = "ClusterVersionUnknown"
	// ReasonTargetUnknown (Hold): the target is templated, empty, or an image whose version
	// nothing lists.
	ReasonTargetUnknown = "TargetUnknown"
	// ReasonOtherUpdateInProgress (Hold): the cluster is updating to another version.
	ReasonOtherUpdateInProgress = "OtherUpdateInProgress"
	// ReasonGraphUnavailable (Hold): a y-stream target and no update graph.
	ReasonGraphUnavailable = "GraphUnavailable"
	// ReasonUpgradeableFalse (Hold, and unhealthy in Health): a y-stream target and the
	// ClusterVersion condition Upgradeable=False.
	ReasonUpgradeableFalse = "UpgradeableFalse"
	// ReasonNotRecommended (Hold): a conditional target that is Recommended=False.
	ReasonNotRecommended = "NotRecommended"
	// ReasonRiskUnknown (Hold): a conditional target whose Recommended condition is Unknown
	// or missing, because a risk could not be evaluated.
	ReasonRiskUnknown = "RiskUnknown"

	// ReasonInvalidVersion (Reject): the current or target version is not a semantic version.
	ReasonInvalidVersion = "InvalidVersion"
	// ReasonDowngrade (Reject): the target is below the current version.
	ReasonDowngrade = "Downgrade"
	// ReasonNotInAvailableUpdates (Reject): a z-stream target the cluster does not offer.
	ReasonNotInAvailableUpdates = "NotInAvailableUpdates"
	// ReasonNotInGraph (Reject): a y-stream target the graph does not offer from the
	// current version in the channel.
	ReasonNotInGraph = "NotInGraph"
)

// Input is what Judge needs to decide one target on one cluster.
type Input struct {
	// Target is the upgrade a policy asks for.
	Target Target

	// Cluster is the spoke's ClusterVersion as read through a ManagedClusterView
	// (spec.channel, status.desired, status.history, status.availableUpdates,
	// status.conditionalUpdates, status.conditions); nil when it could not be read.
	Cluster *configv1.ClusterVersion

	// Graph is the update service's graph for the target channel (the cluster's channel
	// when the target sets none); nil when unavailable. Only y-stream targets need it.
	Graph *updategraph.Graph

	// AcceptRisks are the names of the risks the rollout accepts: a conditional target
	// that is not recommended proceeds when every one of its risks is named here.
	AcceptRisks []string

	// AllowNotRecommended accepts any conditional target whatever its risks, like
	// oc adm upgrade --allow-not-recommended.
	AllowNotRecommended bool
}

// Risk is a known issue of a conditional update.
type Risk struct {
	// Name is the risk's CamelCase name, such as AuthProxyLeak.
	Name string
	// Message describes the risk, as the update service writes it.
	Message string
	// URL links to the risk's description.
	URL string
}

// Verdict is Judge's decision.
type Verdict struct {
	// Outcome is what the rollout does.
	Outcome Outcome
	// Reason is one of the Reason constants, CamelCase.
	Reason string
	// Message is one sentence, capitalised and without a trailing period, naming the
	// versions and risks.
	Message string
	// Risks are all the risks of a conditional target, nil for any other.
	Risks []Risk
	// Accepted names the risks that were accepted, by name or by AllowNotRecommended, when
	// the outcome is Proceed with ReasonRisksAccepted.
	Accepted []string
}

// Judge decides whether the cluster may take the target now, by the rules of the package
// documentation, applied in order: the ClusterVersion and the target must be known, a
// cluster at the target is Done, an update under way decides, versions must parse and may
// not go down, a z-stream target must be offered by the cluster, a y-stream target must be
// an edge of the graph on an Upgradeable cluster, and a conditional target proceeds when it
// is recommended or its risks are accepted.
func Judge(in Input) Verdict {
	j, v, decided := start(in)
	if decided {
		return v
	}
	for _, step := range []func() (Verdict, bool){j.done, j.inProgress, j.parse, j.downgrade} {
		if v, decided := step(); decided {
			return v
		}
	}
	if j.cur.Major == j.tgt.Major && j.cur.Minor == j.tgt.Minor {
		return j.zStream()
	}
	return j.yStream()
}

// judgement is what Judge learnt so far about one target on one cluster.
type judgement struct {
	in Input
	cv *configv1.ClusterVersion

	// current and target are the versions as written; cur and tgt once parsed.
	current, target string
	cur, tgt        semver.Version
}

// start holds when the cluster, its current version or the target's version is unknown,
// and otherwise returns the judgement with both versions.
func start(in Input) (*judgement, Verdict, bool) {
	t := in.Target
	switch {
	case in.Cluster == nil:
		return nil, verdict(Hold, ReasonClusterVersionUnknown, "ClusterVersion of the cluster has not been read"), true
	case t.Templated:
		return nil, verdict(Hold, ReasonTargetUnknown,
			"Policy %s sets its %s target through a template, so the release it asks for is unknown", t.Policy, t.Kind), true
	case t.Version == "" && t.Image == "":
		return nil, verdict(Hold, ReasonTargetUnknown,
			"Policy %s sets neither a version nor an image in its %s", t.Policy, t.Kind), true
	}
	j := &judgement{in: in, cv: in.Cluster, current: currentVersion(in.Cluster), target: t.Version}
	if j.current == "" {
		return nil, verdict(Hold, ReasonClusterVersionUnknown,
			"ClusterVersion reports neither a completed update nor a desired version"), true
	}
	if j.target == "" {
		j.target = imageVersion(in, t.Image)
	}
	if j.target == "" {
		return nil, verdict(Hold, ReasonTargetUnknown,
			"Image %s asked for by policy %s is not a release that the cluster or the update graph lists, so its version is unknown",
			t.Image, t.Policy), true
	}
	return j, Verdict{}, false
}

// currentVersion is the version of the newest Completed history entry, else the desired one.
func currentVersion(cv *configv1.ClusterVersion) string {
	for _, h := range cv.Status.History {
		if h.State == configv1.CompletedUpdate && h.Version != "" {
			return h.Version
		}
	}
	return cv.Status.Desired.Version
}

// imageVersion returns the version of the release whose image is image, as the cluster's
// history, desired release, available and conditional updates, or the graph list it.
func imageVersion(in Input, image string) string {
	st := in.Cluster.Status
	for _, h := range st.History {
		if h.Image == image && h.Version != "" {
			return h.Version
		}
	}
	releases := append([]configv1.Release{st.Desired}, st.AvailableUpdates...)
	for _, cu := range st.ConditionalUpdates {
		releases = append(releases, cu.Release)
	}
	for _, r := range releases {
		if r.Image == image && r.Version != "" {
			return r.Version
		}
	}
	if in.Graph != nil {
		for _, n := range in.Graph.Nodes {
			if n.Payload == image {
				return n.Version
			}
		}
	}
	return ""
}

// done is Done when the cluster runs the target version, or reconciled the target image to
// completion.
func (j *judgement) done() (Verdict, bool) {
	st := j.cv.Status
	image := j.in.Target.Image
	byImage := image != "" && st.Desired.Image == image && len(st.History) > 0 &&
		st.History[0].State == configv1.CompletedUpdate
	if sameVersion(j.current, j.target) || byImage {
		return verdict(Done, ReasonAlreadyAtTarget, "Cluster is already at %s", j.target), true
	}
	return Verdict{}, false
}

// inProgress decides when the newest history entry is an update still under way.
func (j *judgement) inProgress() (Verdict, bool) {
	h := j.cv.Status.History
	if len(h) == 0 || h[0].State == configv1.CompletedUpdate {
		return Verdict{}, false
	}
	last := h[0]
	if sameVersion(last.Version, j.target) || (j.in.Target.Image != "" && last.Image == j.in.Target.Image) {
		return verdict(Proceed, ReasonUpdateInProgress, "Cluster is already updating from %s to %s", j.current, j.target), true
	}
	return verdict(Hold, ReasonOtherUpdateInProgress,
		"Cluster is updating from %s to %s, not to %s, and its update recommendations are computed from %s",
		j.current, orImage(last), j.target, orImage(last)), true
}

func orImage(h configv1.UpdateHistory) string {
	if h.Version != "" {
		return h.Version
	}
	return h.Image
}

// parse rejects versions that are not semantic versions.
func (j *judgement) parse() (Verdict, bool) {
	var err error
	if j.cur, err = semver.Parse(j.current); err != nil {
		return verdict(Reject, ReasonInvalidVersion, "Current version %q is not a semantic version", j.current), true
	}
	if j.tgt, err = semver.Parse(j.target); err != nil {
		return verdict(Reject, ReasonInvalidVersion, "Target version %q of policy %s is not a semantic version",
			j.target, j.in.Target.Policy), true
	}
	return Verdict{}, false
}

// downgrade rejects a target below the current version.
func (j *judgement) downgrade() (Verdict, bool) {
	if j.tgt.LT(j.cur) {
		return verdict(Reject, ReasonDowngrade, "Target version %s is lower than the current version %s", j.target, j.current), true
	}
	return Verdict{}, false
}

// verdict builds a Verdict without risks.
func verdict(o Outcome, reason, format string, args ...any) Verdict {
	return Verdict{Outcome: o, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// sameVersion compares two versions as semantic versions when both parse, else as strings.
func sameVersion(a, b string) bool {
	va, errA := semver.Parse(a)
	vb, errB := semver.Parse(b)
	if errA == nil && errB == nil {
		return va.EQ(vb)
	}
	return a != "" && a == b
}
