package cgu

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/pkg/installplan"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/views"
)

// LabelOperatorUpgrade marks the views and actions of InstallPlan approval, besides the
// owner's labels, with what they are about.
const LabelOperatorUpgrade = "ran.openshift.io/operator-upgrade"

// What the views and actions of InstallPlan approval are about (LabelOperatorUpgrade).
const (
	operatorUpgradeSubscription = "subscription"
	operatorUpgradeInstallPlan  = "installplan"
	operatorUpgradeApproval     = "approval"
)

// subscriptionOn is a chosen Subscription of a managed policy on a cluster the policy is
// enforced on, with what its views show.
type subscriptionOn struct {
	cluster string
	sub     installplan.Subscription
	// observed and plan are the Subscription and its InstallPlan as viewed, nil while not
	// shown.
	observed, plan *unstructured.Unstructured
}

// installPlans decides, on each cluster a managed policy is enforced on right now, the
// approval of the Manual InstallPlan of each Subscription the policy declares and
// spec.operatorUpgrades chooses, once pkg/installplan finds it is the plan of the upgrade
// the policy asks for. The Subscription and its plan are read through views (made when
// missing), the approval is an action; the views of clusters no longer enforced go, so that
// the views grow with the batch, not with the fleet.
func (p *pass) installPlans() InstallPlans {
	ou := p.f.OperatorUpgrades
	if ou == nil {
		// The hub serves no views or actions: the operator said so at start, and a rollout
		// asking for InstallPlan approval is not Validated (pkg/hubapi).
		return InstallPlans{}
	}
	owner := ownership.Owner{Namespace: p.cgu.Namespace, Name: p.cgu.Name}
	targets := p.chosenSubscriptions()
	var out InstallPlans
	keep := map[client.ObjectKey]bool{}
	for i := range targets {
		out.Views = append(out.Views, observe(owner, &targets[i], ou, keep)...)
	}
	accepted := progressing(targets)
	for _, t := range targets {
		a, ok, err := p.approval(owner, t, accepted[t.cluster+"/"+t.sub.Namespace])
		switch {
		case err != nil:
			out.Problems = append(out.Problems, err)
		case ok && !ou.Actions[client.ObjectKeyFromObject(a.Action)]:
			out.Approvals = append(out.Approvals, a)
		}
	}
	for key, v := range ou.Views {
		if !keep[key] {
			out.Stale = append(out.Stale, v)
		}
	}
	slices.SortFunc(out.Stale, func(a, b *viewv1beta1.ManagedClusterView) int {
		return cmp.Compare(client.ObjectKeyFromObject(a).String(), client.ObjectKeyFromObject(b).String())
	})
	return out
}

// chosenSubscriptions are the chosen Subscriptions of each managed policy on each cluster
// the decision enforces the policy on, each cluster and Subscription once.
func (p *pass) chosenSubscriptions() []subscriptionOn {
	var out []subscriptionOn
	seen := map[string]bool{}
	for i, root := range p.f.Roots {
		clusters := p.in.Decision.Enforce[i]
		if root == nil || len(clusters) == 0 {
			continue
		}
		subs, err := installplan.Chosen(root, p.cgu.Spec.OperatorUpgrades)
		if err != nil {
			// The spokes cannot evaluate such a policy either; its compliance tells.
			p.note("The Subscriptions of a managed policy cannot be read", "policy", root.Name, "error", err)
			continue
		}
		for _, c := range clusters {
			for _, sub := range subs {
				if key := c + "/" + sub.Key(); !seen[key] {
					seen[key] = true
					out = append(out, subscriptionOn{cluster: c, sub: sub})
				}
			}
		}
	}
	return out
}

// note adds a line for the debug log.
func (p *pass) note(message string, values ...any) {
	p.in.Notes = append(p.in.Notes, Note{Message: message, Values: values})
}

// observe reads what the views of a target show: its Subscription and, once that names an
// InstallPlan, the plan. It returns the views to make or correct first, and marks those to
// keep.
func observe(owner ownership.Owner, t *subscriptionOn, ou *OperatorUpgrades, keep map[client.ObjectKey]bool) []*viewv1beta1.ManagedClusterView {
	var out []*viewv1beta1.ManagedClusterView
	subView, want := shown(ou, keep, operatorView(owner, t.cluster, operatorUpgradeSubscription,
		operatorsv1alpha1.SubscriptionKind, installplan.Ref{Namespace: t.sub.Namespace, Name: t.sub.Name}))
	if want != nil {
		out = append(out, want)
	}
	t.observed = installplan.FromView(subView)
	ref, ok := installplan.PlanOf(t.observed)
	if !ok || ref.Namespace != t.sub.Namespace {
		return out
	}
	planView, want := shown(ou, keep, operatorView(owner, t.cluster, operatorUpgradeInstallPlan, operatorsv1alpha1.InstallPlanKind, ref))
	if want != nil {
		out = append(out, want)
	}
	t.plan = installplan.FromView(planView)
	return out
}

// operatorView is the rollout's view of an OLM object of kind on a cluster.
func operatorView(owner ownership.Owner, cluster, what, kind string, ref installplan.Ref) *viewv1beta1.ManagedClusterView {
	labels := owner.ObjectLabels()
	labels[LabelOperatorUpgrade] = what
	return &viewv1beta1.ManagedClusterView{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: operatorObjectName(owner, what, ref), Labels: labels},
		Spec: viewv1beta1.ViewSpec{Scope: viewv1beta1.ViewScope{
			Group: operatorsv1alpha1.GroupName, Version: operatorsv1alpha1.GroupVersion, Kind: kind,
			Namespace: ref.Namespace, Name: ref.Name, UpdateIntervalSeconds: views.RefreshSeconds,
		}},
	}
}

// operatorObjectName names a view or action of the rollout about the object ref of a cluster
// namespace; "." cannot appear in a namespace, so no two refs share a name unless shortened.
func operatorObjectName(owner ownership.Owner, what string, ref installplan.Ref) string {
	return names.Safe(253, "cgu", owner.Namespace, owner.Name, what, ref.Namespace+"."+ref.Name)
}

// shown returns the view as stored when it exists with the scope wanted; otherwise nil and
// the view to make (or to correct): it shows nothing yet.
func shown(ou *OperatorUpgrades, keep map[client.ObjectKey]bool, want *viewv1beta1.ManagedClusterView) (got, fix *viewv1beta1.ManagedClusterView) {
	key := client.ObjectKeyFromObject(want)
	keep[key] = true
	got, ok := ou.Views[key]
	switch {
	case !ok:
		return nil, want
	case got.Spec.Scope == want.Spec.Scope:
		return got, nil
	}
	updated := got.DeepCopy()
	updated.Spec = want.Spec
	return nil, updated
}

// progressing are, per cluster and namespace, the CSVs the chosen Subscriptions there are
// moving to: a plan OLM shares between them may be approved for any of them.
func progressing(targets []subscriptionOn) map[string][]string {
	out := map[string][]string{}
	for _, t := range targets {
		key := t.cluster + "/" + t.sub.Namespace
		out[key] = append(out[key], installplan.Progressing(t.sub, t.observed)...)
	}
	return out
}

// approval says whether to approve the Subscription's InstallPlan (pkg/installplan), and
// with which action; why not goes to the debug log.
func (p *pass) approval(owner ownership.Owner, t subscriptionOn, also []string) (Approval, bool, error) {
	v := installplan.Decide(t.sub, t.observed, t.plan, also)
	switch v.Outcome {
	case installplan.Approve:
	case installplan.Mismatch:
		p.note("The InstallPlan is not approved", "cluster", t.cluster, "subscription", t.sub.Key(), "reason", v.Message)
		return Approval{}, false, nil
	default:
		p.note("No InstallPlan to approve", "cluster", t.cluster, "subscription", t.sub.Key(), "outcome", v.Outcome, "reason", v.Message)
		return Approval{}, false, nil
	}
	action, err := approvalAction(owner, t.cluster, v.Plan, t.plan)
	if err != nil {
		return Approval{}, false, fmt.Errorf("approving InstallPlan %s/%s on %s: %w", v.Plan.Namespace, v.Plan.Name, t.cluster, err)
	}
	return Approval{Action: action, Cluster: t.cluster, Subscription: t.sub.Key(), Verdict: v}, true, nil
}

// approvalAction is the action that updates the plan on the cluster with spec.approved true.
func approvalAction(owner ownership.Owner, cluster string, ref installplan.Ref, plan *unstructured.Unstructured) (*actionv1beta1.ManagedClusterAction, error) {
	raw, err := json.Marshal(installplan.ApprovalTemplate(plan).Object)
	if err != nil {
		return nil, fmt.Errorf("encoding the approval of InstallPlan %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	labels := owner.ObjectLabels()
	labels[LabelOperatorUpgrade] = operatorUpgradeApproval
	return &actionv1beta1.ManagedClusterAction{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: operatorObjectName(owner, operatorUpgradeApproval, ref), Labels: labels},
		Spec: actionv1beta1.ActionSpec{ActionType: actionv1beta1.UpdateActionType, KubeWork: &actionv1beta1.KubeWorkSpec{
			Namespace: ref.Namespace, ObjectTemplate: runtime.RawExtension{Raw: raw},
		}},
	}, nil
}
