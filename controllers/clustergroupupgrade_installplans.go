package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/pkg/installplan"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
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

// installPlansUnserved logs once that InstallPlans cannot be approved on this hub.
var installPlansUnserved sync.Once

// subscriptionOn is a chosen Subscription of a managed policy on a cluster the policy is
// enforced on, with what its views show.
type subscriptionOn struct {
	cluster string
	sub     installplan.Subscription
	// observed and plan are the Subscription and its InstallPlan as viewed, nil while not
	// shown.
	observed, plan *unstructured.Unstructured
}

// applyInstallPlans approves, on each cluster a managed policy is enforced on right now, the
// Manual InstallPlan of each Subscription the policy declares and spec.operatorUpgrades
// chooses, once pkg/installplan finds it is the plan of the upgrade the policy asks for. It
// reads the Subscription and its plan through ManagedClusterViews, approves through a
// ManagedClusterAction, and deletes the views of clusters no longer enforced, so that the
// views grow with the batch, not with the fleet.
func (r *ClusterGroupUpgradeReconciler) applyInstallPlans(ctx context.Context, s *scope) error {
	targets := chosenSubscriptions(ctx, s)
	if r.Unserved.Views || r.Unserved.Actions {
		if len(targets) > 0 {
			installPlansUnserved.Do(func() {
				ctrl.LoggerFrom(ctx).Info("The hub serves no ManagedClusterViews or ManagedClusterActions: Manual InstallPlans are not approved")
			})
		}
		return nil
	}
	existing, err := r.operatorUpgradeViews(ctx, s.owner)
	if err != nil {
		return err
	}
	keep := map[client.ObjectKey]bool{}
	var errs []error
	for i := range targets {
		errs = append(errs, r.observe(ctx, s.owner, &targets[i], existing, keep))
	}
	accepted := progressing(targets)
	for _, t := range targets {
		errs = append(errs, r.approve(ctx, s, t, accepted[t.cluster+"/"+t.sub.Namespace]))
	}
	for key, v := range existing {
		if !keep[key] {
			if err := r.Client.Delete(ctx, v); client.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("deleting view %s/%s: %w", v.Namespace, v.Name, err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("approving InstallPlans: %w", err)
	}
	return nil
}

// chosenSubscriptions are the chosen Subscriptions of each managed policy on each cluster
// the decision enforces the policy on, each cluster and Subscription once.
func chosenSubscriptions(ctx context.Context, s *scope) []subscriptionOn {
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
			ctrl.LoggerFrom(ctx).Info("The Subscriptions of a managed policy cannot be read", "policy", p.Name, "error", err)
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

// operatorUpgradeViews are the rollout's views of Subscriptions and InstallPlans, from the
// cache.
func (r *ClusterGroupUpgradeReconciler) operatorUpgradeViews(ctx context.Context, owner ownership.Owner) (map[client.ObjectKey]*viewv1beta1.ManagedClusterView, error) {
	var list viewv1beta1.ManagedClusterViewList
	if err := r.Client.List(ctx, &list, client.MatchingLabels(owner.Labels()), client.HasLabels{LabelOperatorUpgrade}); err != nil {
		return nil, fmt.Errorf("listing the views of Subscriptions and InstallPlans: %w", err)
	}
	out := make(map[client.ObjectKey]*viewv1beta1.ManagedClusterView, len(list.Items))
	for i := range list.Items {
		out[client.ObjectKeyFromObject(&list.Items[i])] = &list.Items[i]
	}
	return out, nil
}

// observe ensures the view of the Subscription on its cluster and, once it names an
// InstallPlan, the view of the plan, and reads what they show.
func (r *ClusterGroupUpgradeReconciler) observe(ctx context.Context, owner ownership.Owner, t *subscriptionOn,
	existing map[client.ObjectKey]*viewv1beta1.ManagedClusterView, keep map[client.ObjectKey]bool) error {
	subView, err := r.ensureOperatorView(ctx, existing, keep, operatorView(owner, t.cluster, operatorUpgradeSubscription,
		operatorsv1alpha1.SubscriptionKind, installplan.Ref{Namespace: t.sub.Namespace, Name: t.sub.Name}))
	if err != nil {
		return err
	}
	t.observed = installplan.FromView(subView)
	ref, ok := installplan.PlanOf(t.observed)
	if !ok || ref.Namespace != t.sub.Namespace {
		return nil
	}
	planView, err := r.ensureOperatorView(ctx, existing, keep, operatorView(owner, t.cluster, operatorUpgradeInstallPlan,
		operatorsv1alpha1.InstallPlanKind, ref))
	t.plan = installplan.FromView(planView)
	return err
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

// ensureOperatorView creates the view when missing, updates it when its scope differs, and
// returns it as stored (nil when just created).
func (r *ClusterGroupUpgradeReconciler) ensureOperatorView(ctx context.Context, existing map[client.ObjectKey]*viewv1beta1.ManagedClusterView,
	keep map[client.ObjectKey]bool, want *viewv1beta1.ManagedClusterView) (*viewv1beta1.ManagedClusterView, error) {
	key := client.ObjectKeyFromObject(want)
	keep[key] = true
	got, ok := existing[key]
	switch {
	case !ok:
		if err := r.Client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating view %s/%s: %w", want.Namespace, want.Name, err)
		}
		return nil, nil
	case got.Spec.Scope == want.Spec.Scope:
		return got, nil
	}
	updated := got.DeepCopy()
	updated.Spec = want.Spec
	if err := r.Client.Update(ctx, updated); err != nil {
		return nil, fmt.Errorf("updating view %s/%s: %w", want.Namespace, want.Name, err)
	}
	return nil, nil
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

// approve creates the action approving the Subscription's InstallPlan when pkg/installplan
// says so, once per cluster and plan, and marks it with an event when created.
func (r *ClusterGroupUpgradeReconciler) approve(ctx context.Context, s *scope, t subscriptionOn, also []string) error {
	v := installplan.Decide(t.sub, t.observed, t.plan, also)
	log := ctrl.LoggerFrom(ctx).WithValues("cluster", t.cluster, "subscription", t.sub.Key())
	switch v.Outcome {
	case installplan.Mismatch:
		log.Info("The InstallPlan is not approved", "reason", v.Message)
		return nil
	case installplan.Approve:
	default:
		log.V(1).Info("No InstallPlan to approve", "outcome", v.Outcome, "reason", v.Message)
		return nil
	}
	action, err := approvalAction(s.owner, t.cluster, v.Plan, t.plan)
	if err != nil {
		return err
	}
	err = r.Client.Get(ctx, client.ObjectKeyFromObject(action), &actionv1beta1.ManagedClusterAction{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	switch err := r.Client.Create(ctx, action); {
	case apierrors.IsAlreadyExists(err):
		return nil
	case err != nil:
		return fmt.Errorf("creating the action approving InstallPlan %s/%s on %s: %w", v.Plan.Namespace, v.Plan.Name, t.cluster, err)
	}
	log.Info("Approving an InstallPlan", "installPlan", v.Plan.Name, "csv", v.CSV)
	r.relatedEvent(s, managedCluster(t.cluster), corev1.EventTypeNormal, EventInstallPlanApproved,
		"Approved InstallPlan %s/%s (%s) of Subscription %s on cluster %s", v.Plan.Namespace, v.Plan.Name, v.CSV, t.sub.Key(), t.cluster)
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
