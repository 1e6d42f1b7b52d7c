package clustergroupupgrade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/pkg/installplan"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/spokeobjects"
	"github.com/cgu-operator/cgu-operator/pkg/views"
)

// EventInstallPlanApproved marks the approval of a Manual InstallPlan on a cluster.
const EventInstallPlanApproved = "InstallPlanApproved"

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

// operatorUpgrades is what InstallPlan approval reads of the hub: the rollout's views of
// Subscriptions and InstallPlans, and its approval actions, by key.
type operatorUpgrades struct {
	views   map[client.ObjectKey]*viewv1beta1.ManagedClusterView
	actions map[client.ObjectKey]bool
}

// installPlanIntents are the writes of InstallPlan approval the decision calls for: the
// views to make or correct, the approvals to make, and the views of clusters no longer
// enforced, to delete.
type installPlanIntents struct {
	views     []*viewv1beta1.ManagedClusterView
	approvals []approval
	stale     []*viewv1beta1.ManagedClusterView
	// problems are approvals that could not be made: the pass reports them.
	problems []error
}

// approval is the action approving one InstallPlan, with what the event about it says.
type approval struct {
	action  *actionv1beta1.ManagedClusterAction
	cluster string
	sub     string
	verdict installplan.Verdict
}

// gatherInstallPlans reads, from the cache, the rollout's views of Subscriptions and
// InstallPlans and its approval actions, on a hub that serves them.
func (r *Reconciler) gatherInstallPlans(ctx context.Context, s *scope) error {
	if r.Unserved.Views || r.Unserved.Actions {
		return nil
	}
	selector := []client.ListOption{client.MatchingLabels(s.owner.Labels()), client.HasLabels{LabelOperatorUpgrade}}
	var views viewv1beta1.ManagedClusterViewList
	if err := r.Client.List(ctx, &views, selector...); err != nil {
		return fmt.Errorf("listing the views of Subscriptions and InstallPlans: %w", err)
	}
	var actions actionv1beta1.ManagedClusterActionList
	if err := r.Client.List(ctx, &actions, selector...); err != nil {
		return fmt.Errorf("listing the actions approving InstallPlans: %w", err)
	}
	ou := &operatorUpgrades{views: make(map[client.ObjectKey]*viewv1beta1.ManagedClusterView, len(views.Items)),
		actions: make(map[client.ObjectKey]bool, len(actions.Items))}
	for i := range views.Items {
		ou.views[client.ObjectKeyFromObject(&views.Items[i])] = &views.Items[i]
	}
	for i := range actions.Items {
		ou.actions[client.ObjectKeyFromObject(&actions.Items[i])] = true
	}
	s.operatorUpgrades = ou
	return nil
}

// decideInstallPlans decides, on each cluster a managed policy is enforced on right now,
// the approval of the Manual InstallPlan of each Subscription the policy declares and
// spec.operatorUpgrades chooses, once pkg/installplan finds it is the plan of the upgrade
// the policy asks for. The Subscription and its plan are read through views (made here when
// missing), the approval is an action; the views of clusters no longer enforced go, so that
// the views grow with the batch, not with the fleet.
func decideInstallPlans(s *scope) installPlanIntents {
	ou := s.operatorUpgrades
	if ou == nil {
		// The hub serves no views or actions: the operator said so at start, and a rollout
		// asking for InstallPlan approval is not Validated (pkg/hubapi).
		return installPlanIntents{}
	}
	targets := chosenSubscriptions(s)
	var out installPlanIntents
	keep := map[client.ObjectKey]bool{}
	for i := range targets {
		out.views = append(out.views, observe(s.owner, &targets[i], ou, keep)...)
	}
	accepted := progressing(targets)
	for _, t := range targets {
		a, ok, err := decideApproval(s, t, accepted[t.cluster+"/"+t.sub.Namespace])
		switch {
		case err != nil:
			out.problems = append(out.problems, err)
		case ok && !ou.actions[client.ObjectKeyFromObject(a.action)]:
			out.approvals = append(out.approvals, a)
		}
	}
	for key, v := range ou.views {
		if !keep[key] {
			out.stale = append(out.stale, v)
		}
	}
	return out
}

// chosenSubscriptions are the chosen Subscriptions of each managed policy on each cluster
// the decision enforces the policy on, each cluster and Subscription once.
func chosenSubscriptions(s *scope) []subscriptionOn {
	var out []subscriptionOn
	seen := map[string]bool{}
	for i, p := range s.roots {
		clusters := s.decision.Enforce[i]
		if p == nil || len(clusters) == 0 {
			continue
		}
		subs, err := installplan.Chosen(p, s.cgu.Spec.OperatorUpgrades)
		if err != nil {
			// The spokes cannot evaluate such a policy either; its compliance tells.
			s.log.Info("The Subscriptions of a managed policy cannot be read", "policy", p.Name, "error", err)
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

// observe reads what the views of a target show: its Subscription and, once that names an
// InstallPlan, the plan. It returns the views to make or correct first, and marks those to
// keep.
func observe(owner ownership.Owner, t *subscriptionOn, ou *operatorUpgrades, keep map[client.ObjectKey]bool) []*viewv1beta1.ManagedClusterView {
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
	labels := owner.Labels()
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
func shown(ou *operatorUpgrades, keep map[client.ObjectKey]bool, want *viewv1beta1.ManagedClusterView) (got, fix *viewv1beta1.ManagedClusterView) {
	key := client.ObjectKeyFromObject(want)
	keep[key] = true
	got, ok := ou.views[key]
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

// applyInstallPlans makes the writes of InstallPlan approval the decision called for.
func (r *Reconciler) applyInstallPlans(ctx context.Context, s *scope) error {
	in := s.spoke.installPlans
	var errs []error
	w := spokeobjects.Writer{Client: r.Client}
	errs = append(errs, in.problems...)
	for _, v := range in.views {
		_, err := w.EnsureView(ctx, v)
		errs = append(errs, err)
	}
	for _, a := range in.approvals {
		errs = append(errs, r.makeApproval(ctx, s, w, a))
	}
	for _, v := range in.stale {
		errs = append(errs, w.Delete(ctx, v))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("approving InstallPlans: %w", err)
	}
	return nil
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

// decideApproval says whether to approve the Subscription's InstallPlan (pkg/installplan),
// and with which action; it logs why not when the plan is not the one asked for.
func decideApproval(s *scope, t subscriptionOn, also []string) (approval, bool, error) {
	v := installplan.Decide(t.sub, t.observed, t.plan, also)
	log := s.log.WithValues("cluster", t.cluster, "subscription", t.sub.Key())
	switch v.Outcome {
	case installplan.Mismatch:
		log.Info("The InstallPlan is not approved", "reason", v.Message)
		return approval{}, false, nil
	case installplan.Approve:
	default:
		log.V(1).Info("No InstallPlan to approve", "outcome", v.Outcome, "reason", v.Message)
		return approval{}, false, nil
	}
	action, err := approvalAction(s.owner, t.cluster, v.Plan, t.plan)
	if err != nil {
		return approval{}, false, fmt.Errorf("approving InstallPlan %s/%s on %s: %w", v.Plan.Namespace, v.Plan.Name, t.cluster, err)
	}
	return approval{action: action, cluster: t.cluster, sub: t.sub.Key(), verdict: v}, true, nil
}

// makeApproval creates the action approving an InstallPlan, once per cluster and plan, and
// marks it with an event when created.
func (r *Reconciler) makeApproval(ctx context.Context, s *scope, w spokeobjects.Writer, a approval) error {
	made, err := w.CreateAction(ctx, a.action)
	if err != nil || !made {
		return err
	}
	s.log.Info("Approving an InstallPlan", "cluster", a.cluster, "subscription", a.sub, "installPlan", a.verdict.Plan.Name, "csv", a.verdict.CSV)
	r.relatedEvent(s, managedCluster(a.cluster), corev1.EventTypeNormal, EventInstallPlanApproved,
		"Approved InstallPlan %s/%s (%s) of Subscription %s on cluster %s", a.verdict.Plan.Namespace, a.verdict.Plan.Name, a.verdict.CSV, a.sub, a.cluster)
	return nil
}

// approvalAction is the action that updates the plan on the cluster with spec.approved true.
func approvalAction(owner ownership.Owner, cluster string, ref installplan.Ref, plan *unstructured.Unstructured) (*actionv1beta1.ManagedClusterAction, error) {
	raw, err := json.Marshal(installplan.ApprovalTemplate(plan).Object)
	if err != nil {
		return nil, fmt.Errorf("encoding the approval of InstallPlan %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	labels := owner.Labels()
	labels[LabelOperatorUpgrade] = operatorUpgradeApproval
	return &actionv1beta1.ManagedClusterAction{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: operatorObjectName(owner, operatorUpgradeApproval, ref), Labels: labels},
		Spec: actionv1beta1.ActionSpec{ActionType: actionv1beta1.UpdateActionType, KubeWork: &actionv1beta1.KubeWorkSpec{
			Namespace: ref.Namespace, ObjectTemplate: runtime.RawExtension{Raw: raw},
		}},
	}, nil
}
