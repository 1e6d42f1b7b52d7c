package upgradecheck

import (
	"fmt"
	"slices"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
)

// zStream decides a patch update: the cluster itself must offer it, unconditionally or as
// a conditional update.
func (j *judgement) zStream() Verdict {
	if cu, ok := j.conditionalEntry(); ok {
		return j.conditional(cu.Risks, recommended(cu.Conditions))
	}
	var offered []string
	for _, r := range j.cv.Status.AvailableUpdates {
		if sameVersion(r.Version, j.target) {
			return verdict(Proceed, ReasonInAvailableUpdates,
				"Update from %s to %s is in the cluster's available updates", j.current, j.target)
		}
		offered = append(offered, r.Version)
	}
	lists := "none"
	if len(offered) > 0 {
		lists = namedList(offered)
	}
	return verdict(Reject, ReasonNotInAvailableUpdates,
		"Update from %s to %s is not in the cluster's available updates (it lists %s)", j.current, j.target, lists)
}

// yStream decides a minor (or major) update: it must be an edge of the graph, the cluster
// must not be Upgradeable=False, and a conditional edge must be recommended or accepted.
func (j *judgement) yStream() Verdict {
	kind, risks, v, ok := j.edge()
	if !ok {
		return v
	}
	if c := upgradeableFalse(j.cv); c != nil {
		return verdict(Hold, ReasonUpgradeableFalse,
			"Update from %s to %s changes the minor version and the cluster is not upgradeable: %q",
			j.current, j.target, clip(c.Message))
	}
	if cu, ok := j.conditionalEntry(); ok {
		return j.conditional(cu.Risks, recommended(cu.Conditions))
	}
	if kind == updategraph.EdgeConditional {
		return j.conditional(risks, updategraph.Recommend(risks, nil, metav1.Time{}))
	}
	return verdict(Proceed, ReasonInGraph, "Update from %s to %s is an edge of the update graph%s",
		j.current, j.target, j.forChannel())
}

// edge returns how the graph offers the update, or the verdict when it does not.
func (j *judgement) edge() (updategraph.EdgeKind, []configv1.ConditionalUpdateRisk, Verdict, bool) {
	g, in := j.in.Graph, j.forChannel()
	if g == nil {
		return 0, nil, verdict(Hold, ReasonGraphUnavailable,
			"Update from %s to %s changes the minor version and the update graph%s is not available",
			j.current, j.target, in), false
	}
	if _, ok := g.Node(j.current); !ok {
		return 0, nil, verdict(Reject, ReasonNotInGraph,
			"Update graph%s does not list the current version %s", in, j.current), false
	}
	node, ok := g.Node(j.target)
	if ch := j.channel(); !ok || (ch != "" && len(node.Channels()) > 0 && !node.InChannel(ch)) {
		return 0, nil, verdict(Reject, ReasonNotInGraph,
			"Update graph%s does not list the target version %s", in, j.target), false
	}
	kind, risks := g.EdgeBetween(j.current, j.target)
	if kind == updategraph.EdgeNone {
		return 0, nil, verdict(Reject, ReasonNotInGraph,
			"Update graph%s has no update from %s to %s", in, j.current, j.target), false
	}
	return kind, risks, Verdict{}, true
}

// channel is the target's channel, else the cluster's.
func (j *judgement) channel() string {
	if j.in.Target.Channel != "" {
		return j.in.Target.Channel
	}
	return j.cv.Spec.Channel
}

// forChannel is " of channel <channel>", or nothing when no channel is known.
func (j *judgement) forChannel() string {
	if ch := j.channel(); ch != "" {
		return " of channel " + ch
	}
	return ""
}

// conditionalEntry returns the cluster's conditional update to the target, if it lists one.
func (j *judgement) conditionalEntry() (configv1.ConditionalUpdate, bool) {
	for _, cu := range j.cv.Status.ConditionalUpdates {
		if sameVersion(cu.Release.Version, j.target) {
			return cu, true
		}
	}
	return configv1.ConditionalUpdate{}, false
}

// conditional decides a conditional update from its risks and Recommended condition.
func (j *judgement) conditional(risks []configv1.ConditionalUpdateRisk, rec metav1.Condition) Verdict {
	names := make([]string, 0, len(risks))
	var out []Risk
	for _, r := range risks {
		names = append(names, r.Name)
		out = append(out, Risk{Name: r.Name, Message: r.Message, URL: r.URL})
	}
	update := fmt.Sprintf("Update from %s to %s", j.current, j.target)
	standing := "is not known to be recommended"
	if rec.Status == metav1.ConditionFalse {
		standing = "is not recommended"
	}
	v := Verdict{Outcome: Proceed, Risks: out}
	switch {
	case rec.Status == metav1.ConditionTrue:
		v.Reason = ReasonRecommended
		v.Message = update + " is recommended for this cluster"
		if len(names) > 0 {
			v.Message = fmt.Sprintf("%s is recommended: none of its risks (%s) applies to this cluster", update, namedList(names))
		}
	case j.in.AllowNotRecommended:
		v.Reason, v.Accepted = ReasonRisksAccepted, names
		v.Message = fmt.Sprintf("%s %s and proceeds because the rollout allows not recommended updates: %s",
			update, standing, riskList(risks, rec))
	case len(names) > 0 && j.notAccepted(names) == nil:
		v.Reason, v.Accepted = ReasonRisksAccepted, names
		v.Message = fmt.Sprintf("%s %s and proceeds because the rollout accepts its risks: %s",
			update, standing, riskList(risks, rec))
	default:
		v.Outcome, v.Reason = Hold, ReasonRiskUnknown
		v.Message = fmt.Sprintf("%s has risks that could not be evaluated: %s%s", update, riskList(risks, rec), j.refused(names))
		if rec.Status == metav1.ConditionFalse {
			v.Reason = ReasonNotRecommended
			v.Message = fmt.Sprintf("%s is not recommended: %s%s", update, riskList(risks, rec), j.refused(names))
		}
	}
	return v
}

// notAccepted returns the names that AcceptRisks does not list.
func (j *judgement) notAccepted(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(j.in.AcceptRisks, n) {
			out = append(out, n)
		}
	}
	return out
}

// refused names the risks that are not accepted when some others are.
func (j *judgement) refused(names []string) string {
	missing := j.notAccepted(names)
	if len(missing) == 0 || len(missing) == len(names) {
		return ""
	}
	return fmt.Sprintf(" (not accepted: %s)", namedList(missing))
}

// riskList describes each risk as "name: message (url)", or quotes the condition's message
// when there are no risks.
func riskList(risks []configv1.ConditionalUpdateRisk, rec metav1.Condition) string {
	if len(risks) == 0 {
		if rec.Message == "" {
			return "no risk is listed"
		}
		return fmt.Sprintf("%q", clip(rec.Message))
	}
	items := make([]string, 0, len(risks))
	for _, r := range risks {
		items = append(items, fmt.Sprintf("%s: %s (%s)", r.Name, clip(r.Message), r.URL))
	}
	return boundedList(items, "; ")
}

// recommended returns the Recommended condition, Unknown when it is missing.
func recommended(conds []metav1.Condition) metav1.Condition {
	for _, c := range conds {
		if c.Type == updategraph.ConditionRecommended {
			return c
		}
	}
	return metav1.Condition{Type: updategraph.ConditionRecommended, Status: metav1.ConditionUnknown}
}

// upgradeableFalse returns the ClusterVersion's Upgradeable condition when it is False.
func upgradeableFalse(cv *configv1.ClusterVersion) *configv1.ClusterOperatorStatusCondition {
	for i, c := range cv.Status.Conditions {
		if c.Type == configv1.OperatorUpgradeable && c.Status == configv1.ConditionFalse {
			return &cv.Status.Conditions[i]
		}
	}
	return nil
}
