package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	workv1 "open-cluster-management.io/api/work/v1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/clusteractions"
	"github.com/cgu-operator/cgu-operator/pkg/hubapi"
	"github.com/cgu-operator/cgu-operator/pkg/ibgu"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
)

// Reasons of the events the ImageBasedGroupUpgrade controller records (TALM records none).
const (
	// EventPlanStepStarted: the ClusterGroupUpgrade of a plan step was created.
	EventPlanStepStarted = "PlanStepStarted"
	// EventPlanStepSkipped: a plan step selected no cluster and was skipped.
	EventPlanStepSkipped = "PlanStepSkipped"
	// EventPlanCompleted: every step of the plan ended.
	EventPlanCompleted = "PlanCompleted"
	// EventMissingContent: the Prep step waits for ConfigMaps or a Secret of its ibuSpec.
	EventMissingContent = "MissingContent"
)

// Reasons of an ImageBasedGroupUpgrade's Progressing condition beyond TALM's InProgress
// and Completed.
const (
	// ReasonMissingContent (Progressing=False): the Prep step waits for the OADP ConfigMaps
	// or the seed image's pull secret its ibuSpec names; the message names them.
	ReasonMissingContent = "MissingContent"
)

// ibguEventAction is the action of the ImageBasedGroupUpgrade controller's events.
const ibguEventAction = "ImageBasedGroupUpgrade"

// contentRetry is how often a Prep step that waits for ConfigMaps or a Secret (which the
// operator does not watch) looks again.
const contentRetry = 10 * time.Second

// lifecycleAgentNamespace is where the lifecycle agent reads the seed image's pull secret.
const lifecycleAgentNamespace = "openshift-lifecycle-agent"

// ImageBasedGroupUpgradeReconciler runs an ImageBasedGroupUpgrade's plan on the rollout
// engine: each step becomes a ClusterGroupUpgrade of ManifestWork templates that move the
// clusters' ImageBasedUpgrade through the step's actions (pkg/ibgu decides). It gathers the
// steps' ClusterGroupUpgrades and their batch records, decides, then writes: the cluster
// labels that say which actions each cluster completed or failed (the next step selects
// by them), the templates and ClusterGroupUpgrade of the next step once those labels are
// in the cache, and the status.
type ImageBasedGroupUpgradeReconciler struct {
	Client   client.Client
	Scheme   *runtime.Scheme
	Clock    clock.PassiveClock
	Recorder events.EventRecorder
	Unserved hubapi.Unserved
}

// ibguScope is what one pass read.
type ibguScope struct {
	ibgu     *lcmv1alpha1.ImageBasedGroupUpgrade
	children map[int]*ibgu.Child
	// steps are the steps' ClusterGroupUpgrades, by index.
	steps map[int]*ranv1alpha1.ClusterGroupUpgrade
	// clusterLabels are the labels of the clusters of the steps, as the cache holds them.
	clusterLabels map[string]map[string]string
}

// +kubebuilder:rbac:groups=lcm.openshift.io,resources=imagebasedgroupupgrades,verbs=get;list;watch
// +kubebuilder:rbac:groups=lcm.openshift.io,resources=imagebasedgroupupgrades/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=lcm.openshift.io,resources=imagebasedgroupupgrades/finalizers,verbs=update
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworkreplicasets,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=list;watch;patch
// +kubebuilder:rbac:groups=ran.openshift.io,resources=clustergroupupgrades,verbs=list;watch;create
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=list;watch;delete

// Reconcile takes an ImageBasedGroupUpgrade a step further.
func (r *ImageBasedGroupUpgradeReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	g := &lcmv1alpha1.ImageBasedGroupUpgrade{}
	if err := r.Client.Get(ctx, req.NamespacedName, g); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !g.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // the garbage collector deletes its steps, whose cleanup stops enforcing
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("imagebasedgroupupgrade", klog.KObj(g)))
	st := g.Status.DeepCopy()
	st.ObservedGeneration = g.Generation
	if r.Unserved.Works {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ibgu.ConditionProgressing, Status: metav1.ConditionFalse,
			Reason: ranv1alpha1.ReasonHubAPINotServed, ObservedGeneration: g.Generation,
			Message: "The hub serves no ManifestWork or ManifestWorkReplicaSet API: image-based upgrades run through ManifestWorks"})
		result, _, err := r.writeStatus(ctx, g, st, ctrl.Result{})
		return result, err
	}
	s, err := r.gather(ctx, g)
	if err != nil {
		return ctrl.Result{}, err
	}
	result, err := r.advance(ctx, s, st)
	if err != nil {
		return ctrl.Result{}, err
	}
	wasCompleted := isCompleted(g)
	result, written, err := r.writeStatus(ctx, g, st, result)
	if c := meta.FindStatusCondition(st.Conditions, ibgu.ConditionProgressing); !wasCompleted && written &&
		c != nil && c.Reason == ibgu.ReasonCompleted {
		// The status now says so: once, whatever passes come after.
		r.Recorder.Eventf(g, nil, corev1.EventTypeNormal, EventPlanCompleted, ibguEventAction, "%s", c.Message)
		ctrl.LoggerFrom(ctx).Info("Plan completed")
	}
	return result, err
}

// gather reads the steps' ClusterGroupUpgrades, their batch records, the ManifestWorks of
// the clusters that did not complete (for what the spoke said) and the clusters' labels,
// all from the cache.
func (r *ImageBasedGroupUpgradeReconciler) gather(ctx context.Context, g *lcmv1alpha1.ImageBasedGroupUpgrade) (*ibguScope, error) {
	s := &ibguScope{ibgu: g, children: map[int]*ibgu.Child{}, steps: map[int]*ranv1alpha1.ClusterGroupUpgrade{},
		clusterLabels: map[string]map[string]string{}}
	for _, i := range ibgu.SkippedSteps(g.Status) {
		s.children[i] = &ibgu.Child{Skipped: true, Ended: true}
	}
	var cgus ranv1alpha1.ClusterGroupUpgradeList
	if err := r.Client.List(ctx, &cgus, client.InNamespace(g.Namespace), client.MatchingLabels{ibgu.LabelIBGU: names.LabelValue(g.Name)}); err != nil {
		return nil, fmt.Errorf("listing the ClusterGroupUpgrades of the plan: %w", err)
	}
	byName := map[string]*ranv1alpha1.ClusterGroupUpgrade{}
	for i := range cgus.Items {
		if metav1.IsControlledBy(&cgus.Items[i], g) {
			byName[cgus.Items[i].Name] = &cgus.Items[i]
		}
	}
	before := said(g.Status)
	for i, item := range g.Spec.Plan {
		cgu, ok := byName[ibgu.StepName(g.Name, item.Actions, i)]
		if !ok {
			continue
		}
		child, err := r.child(ctx, cgu, func(template, cluster string) string {
			for _, a := range item.Actions {
				if ibgu.TemplateName(g.Name, a) == template {
					return before[cluster][a]
				}
			}
			return ""
		})
		if err != nil {
			return nil, err
		}
		s.children[i], s.steps[i] = child, cgu
	}
	var clusters metav1.PartialObjectMetadataList
	clusters.SetGroupVersionKind(clusteractions.ManagedClusterGVK)
	if err := r.Client.List(ctx, &clusters); err != nil {
		return nil, fmt.Errorf("listing ManagedClusters: %w", err)
	}
	for i := range clusters.Items {
		s.clusterLabels[clusters.Items[i].Name] = clusters.Items[i].Labels
	}
	return s, nil
}

// child reads one step's ClusterGroupUpgrade and its batch records; earlier says what the
// status held of a cluster's action, for the clusters whose work is gone.
func (r *ImageBasedGroupUpgradeReconciler) child(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade,
	earlier func(template, cluster string) string) (*ibgu.Child, error) {
	c := &ibgu.Child{Upgrade: cgu.Name, State: cgu.Status.State, Message: cgu.Status.Message, Counts: cgu.Status.Counts,
		Ended:    meta.FindStatusCondition(cgu.Status.Conditions, ranv1alpha1.ConditionSucceeded) != nil,
		Clusters: map[string]ibgu.Progress{}}
	if cgu.Status.StartedAt != nil {
		c.StartedAt = cgu.Status.StartedAt.Time
	}
	if cgu.Status.CompletedAt != nil && c.Ended {
		c.CompletedAt = cgu.Status.CompletedAt.Time
	}
	var records ranv1alpha1.ClusterGroupUpgradeBatchList
	if err := r.Client.List(ctx, &records, client.InNamespace(cgu.Namespace), client.MatchingLabels{ranv1alpha1.LabelUpgradeName: names.LabelValue(cgu.Name)}); err != nil {
		return nil, fmt.Errorf("listing the batch records of %s: %w", cgu.Name, err)
	}
	for _, rec := range records.Items {
		if !metav1.IsControlledBy(&rec, cgu) {
			continue
		}
		for _, cp := range rec.Status.Clusters {
			p := ibgu.Progress{State: cp.State, Template: cp.CurrentPolicy, Reason: cp.Reason}
			if p.Template != "" && p.State != ranv1alpha1.ClusterCompleted && p.State != ranv1alpha1.ClusterPending {
				p.Message = r.workMessage(ctx, cgu, p.Template, cp.Name)
				if p.Message == "" {
					p.Message = earlier(p.Template, cp.Name)
				}
			}
			c.Clusters[cp.Name] = p
		}
	}
	return c, nil
}

// workMessage is what the ManifestWork of a cluster's action says, "" when it is gone.
func (r *ImageBasedGroupUpgradeReconciler) workMessage(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, template, cluster string) string {
	w := &workv1.ManifestWork{}
	key := client.ObjectKey{Namespace: cluster, Name: manifestwork.Name(cgu.Namespace, cgu.Name, manifestwork.RoleStep, template)}
	if err := r.Client.Get(ctx, key, w); err != nil {
		return ""
	}
	return ibgu.WorkMessage(w)
}

// advance decides and writes: cluster labels first; once the cache shows them, the next
// step (its templates, then its ClusterGroupUpgrade) or the end of the plan; st gets the
// status.
func (r *ImageBasedGroupUpgradeReconciler) advance(ctx context.Context, s *ibguScope, st *lcmv1alpha1.ImageBasedGroupUpgradeStatus) (ctrl.Result, error) {
	g := s.ibgu
	log := ctrl.LoggerFrom(ctx)
	clusters := ibgu.Clusters(g, s.children)
	st.Clusters, st.ClustersNotShown = ibgu.Bound(clusters, ibgu.MaxClustersBytes)
	create, running, done := ibgu.Next(g.Spec.Plan, s.children)
	settled := isCompleted(g)
	if !settled {
		changed, err := r.label(ctx, clusters, s.clusterLabels)
		if err != nil {
			return ctrl.Result{}, err
		}
		if changed > 0 && !done {
			// The next step selects by these labels: it waits until the cache has them.
			log.V(1).Info("Waiting for the cache to show the cluster labels written", "clusters", changed)
			r.setStatus(s, st)
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
	}
	left, err := r.clearEnded(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	if left > 0 {
		// The next step's work would fight over the ImageBasedUpgrade with these.
		log.V(1).Info("Waiting for the ManifestWorks of the steps that ended to be deleted", "left", left)
		r.setStatus(s, st)
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	if running >= 0 {
		if err := r.pause(ctx, s.steps[running], paused(g)); err != nil {
			return ctrl.Result{}, err
		}
	}
	if create >= 0 && paused(g) {
		r.setStatus(s, st)
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ibgu.ConditionProgressing, Status: metav1.ConditionTrue,
			Reason: ranv1alpha1.ReasonPaused, Message: fmt.Sprintf("Paused before plan step %d: set spec.rollout.paused to false to go on", create),
			ObservedGeneration: g.Generation})
		return ctrl.Result{}, nil
	}
	if create >= 0 {
		waiting, err := r.startStep(ctx, s, create)
		switch {
		case err != nil:
			return ctrl.Result{}, err
		case waiting != "":
			r.setStatus(s, st)
			meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ibgu.ConditionProgressing, Status: metav1.ConditionFalse,
				Reason: ReasonMissingContent, Message: waiting, ObservedGeneration: g.Generation})
			return ctrl.Result{RequeueAfter: contentRetry}, nil
		}
	}
	r.setStatus(s, st)
	return ctrl.Result{}, nil
}

// said are the messages the status holds, by cluster and action: what the spokes said of
// the actions before their works were deleted.
func said(st lcmv1alpha1.ImageBasedGroupUpgradeStatus) map[string]map[lcmv1alpha1.Action]string {
	out := map[string]map[lcmv1alpha1.Action]string{}
	for _, c := range st.Clusters {
		m := map[lcmv1alpha1.Action]string{}
		for _, a := range c.FailedActions {
			m[a.Action] = a.Message
		}
		if c.CurrentAction != nil {
			m[c.CurrentAction.Action] = c.CurrentAction.Message
		}
		out[c.Name] = m
	}
	return out
}

// clearEnded deletes the ManifestWorks of the steps that ended (those of clusters that
// failed or timed out stay otherwise), so that no two works move one ImageBasedUpgrade: what
// they applied stays on the clusters (deleteOption Orphan). It returns how many the cache
// still holds.
func (r *ImageBasedGroupUpgradeReconciler) clearEnded(ctx context.Context, s *ibguScope) (int, error) {
	left := 0
	for _, c := range s.children {
		if !c.Ended || c.Skipped {
			continue
		}
		var works workv1.ManifestWorkList
		owner := ownership.Owner{Namespace: s.ibgu.Namespace, Name: c.Upgrade}
		if err := r.Client.List(ctx, &works, client.MatchingLabels(owner.Labels())); err != nil {
			return 0, fmt.Errorf("listing the ManifestWorks of %s: %w", c.Upgrade, err)
		}
		for i := range works.Items {
			w := &works.Items[i]
			left++
			if !w.DeletionTimestamp.IsZero() {
				continue
			}
			if err := r.Client.Delete(ctx, w); client.IgnoreNotFound(err) != nil {
				return 0, fmt.Errorf("deleting ManifestWork %s/%s: %w", w.Namespace, w.Name, err)
			}
		}
	}
	return left, nil
}

// paused reports whether spec.rollout pauses the plan.
func paused(g *lcmv1alpha1.ImageBasedGroupUpgrade) bool {
	return g.Spec.Rollout != nil && g.Spec.Rollout.Paused
}

// pause sets the running step's spec.paused as spec.rollout says, with a merge patch of
// that field only (a user's own pause of the step is undone only when the IBGU's changes).
func (r *ImageBasedGroupUpgradeReconciler) pause(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, paused bool) error {
	if cgu == nil || cgu.Spec.Paused == paused {
		return nil
	}
	patch := fmt.Sprintf(`{"spec":{"paused":%t}}`, paused)
	if err := r.Client.Patch(ctx, cgu, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return fmt.Errorf("pausing the ClusterGroupUpgrade %s: %w", cgu.Name, err)
	}
	return nil
}

// isCompleted reports whether the status already says that every step of the current
// plan ended and its labels were written: then the labels are no longer this
// ImageBasedGroupUpgrade's to keep (a later one may change them).
func isCompleted(g *lcmv1alpha1.ImageBasedGroupUpgrade) bool {
	c := meta.FindStatusCondition(g.Status.Conditions, ibgu.ConditionProgressing)
	return c != nil && c.Reason == ibgu.ReasonCompleted && g.Status.ObservedGeneration == g.Generation
}

// setStatus writes what the pass decided into st.
func (r *ImageBasedGroupUpgradeReconciler) setStatus(s *ibguScope, st *lcmv1alpha1.ImageBasedGroupUpgradeStatus) {
	g := s.ibgu
	st.Steps = ibgu.Steps(g.Spec.Plan, s.children)
	c := ibgu.Progressing(g.Spec.Plan, s.children)
	c.ObservedGeneration = g.Generation
	meta.SetStatusCondition(&st.Conditions, c)
	now := metav1.NewTime(r.Clock.Now()).Rfc3339Copy()
	if st.StartedAt == nil && len(s.children) > 0 {
		st.StartedAt = &now
	}
	switch {
	case c.Reason != ibgu.ReasonCompleted:
		st.CompletedAt = nil // a step appended to a completed plan runs again
	case st.CompletedAt == nil:
		st.CompletedAt = &now
	}
}

// label writes the cluster labels the status calls for and returns how many clusters it
// changed.
func (r *ImageBasedGroupUpgradeReconciler) label(ctx context.Context, clusters []lcmv1alpha1.ClusterState, current map[string]map[string]string) (int, error) {
	changed := 0
	for _, c := range clusters {
		have, ok := current[c.Name]
		if !ok {
			continue // the cluster is gone
		}
		changes := ibgu.LabelChanges(c, have)
		if changes == nil {
			continue
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": changes}})
		if err != nil {
			return changed, err
		}
		mc := &metav1.PartialObjectMetadata{}
		mc.SetGroupVersionKind(clusteractions.ManagedClusterGVK)
		mc.SetName(c.Name)
		if err := r.Client.Patch(ctx, mc, client.RawPatch(types.MergePatchType, patch)); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return changed, fmt.Errorf("labelling ManagedCluster %s: %w", c.Name, err)
		}
		changed++
	}
	return changed, nil
}

// startStep starts plan step i: its templates first; once the cache has them, its
// ClusterGroupUpgrade, unless it selects no cluster (then it is skipped). waiting says what
// the step waits for that the user must make.
func (r *ImageBasedGroupUpgradeReconciler) startStep(ctx context.Context, s *ibguScope, i int) (waiting string, err error) {
	g := s.ibgu
	item := g.Spec.Plan[i]
	selectors := ibgu.Selectors(g.Spec.ClusterLabelSelectors, item.Actions[0])
	if !selectsAny(selectors, s.clusterLabels) {
		s.children[i] = &ibgu.Child{Skipped: true, Ended: true}
		r.Recorder.Eventf(g, nil, corev1.EventTypeNormal, EventPlanStepSkipped, ibguEventAction,
			"Plan step %d (%s) selects no cluster: skipped", i, strings.Join(item.Actions, ", "))
		ctrl.LoggerFrom(ctx).Info("Plan step skipped: it selects no cluster", "step", i)
		return "", nil
	}
	ready := true
	for _, action := range item.Actions {
		made, waiting, err := r.ensureTemplate(ctx, g, action)
		if err != nil || waiting != "" {
			return waiting, err
		}
		ready = ready && !made
	}
	if !ready {
		return "", nil // the templates' events bring the next pass, with them in the cache
	}
	cgu := ibgu.Step(g, i, stepCanaries(g, selectors, s.clusterLabels))
	if err := controllerutil.SetControllerReference(g, cgu, r.Scheme); err != nil {
		return "", fmt.Errorf("owning the ClusterGroupUpgrade of step %d: %w", i, err)
	}
	if err := r.Client.Create(ctx, cgu); err != nil {
		if apierrors.IsAlreadyExists(err) { // the cache is behind; its event comes back here
			return "", nil
		}
		return "", fmt.Errorf("creating the ClusterGroupUpgrade of step %d: %w", i, err)
	}
	s.children[i] = &ibgu.Child{Upgrade: cgu.Name, Clusters: map[string]ibgu.Progress{}}
	r.Recorder.Eventf(g, cgu, corev1.EventTypeNormal, EventPlanStepStarted, ibguEventAction,
		"Plan step %d (%s) started: ClusterGroupUpgrade %s", i, strings.Join(item.Actions, ", "), cgu.Name)
	ctrl.LoggerFrom(ctx).Info("Plan step started", "step", i, "clustergroupupgrade", cgu.Name)
	return "", nil
}

// stepCanaries are the canaries of spec.rollout that the step's selectors select.
func stepCanaries(g *lcmv1alpha1.ImageBasedGroupUpgrade, selectors []ranv1alpha1.ClusterLabelSelector, clusters map[string]map[string]string) []string {
	if g.Spec.Rollout == nil {
		return nil
	}
	var out []string
	for _, c := range g.Spec.Rollout.Canaries {
		if l, ok := clusters[c]; ok && selectsAny(selectors, map[string]map[string]string{c: l}) {
			out = append(out, c)
		}
	}
	return out
}

// selectsAny reports whether a cluster matches one of the selectors.
func selectsAny(selectors []ranv1alpha1.ClusterLabelSelector, clusters map[string]map[string]string) bool {
	for _, s := range selectors {
		ls := s.LabelSelector()
		sel, err := metav1.LabelSelectorAsSelector(&ls)
		if err != nil {
			continue // the CRD refuses what cannot be parsed
		}
		for _, l := range clusters {
			if sel.Matches(labels.Set(l)) {
				return true
			}
		}
	}
	return false
}

// ensureTemplate makes the ManifestWorkReplicaSet of an action unless the cache has it;
// made says it was made in this pass. The Prep template carries the OADP ConfigMaps and
// the pull secret of ibuSpec: waiting names those missing on the hub.
func (r *ImageBasedGroupUpgradeReconciler) ensureTemplate(ctx context.Context, g *lcmv1alpha1.ImageBasedGroupUpgrade, action lcmv1alpha1.Action) (made bool, waiting string, err error) {
	name := ibgu.TemplateName(g.Name, action)
	have := &workv1alpha1.ManifestWorkReplicaSet{}
	err = r.Client.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: name}, have)
	switch {
	case err == nil:
		if !metav1.IsControlledBy(have, g) {
			return false, "", fmt.Errorf("ManifestWorkReplicaSet %s/%s exists and is not this ImageBasedGroupUpgrade's", g.Namespace, name)
		}
		return false, "", nil
	case !apierrors.IsNotFound(err):
		return false, "", fmt.Errorf("reading ManifestWorkReplicaSet %s/%s: %w", g.Namespace, name, err)
	}
	var extra []runtime.Object
	if action == lcmv1alpha1.ActionPrep {
		var missing []string
		extra, missing, err = r.prepContent(ctx, g)
		if err != nil {
			return false, "", err
		}
		if len(missing) > 0 {
			msg := fmt.Sprintf("Plan step Prep waits for %s on the hub", strings.Join(missing, ", "))
			r.Recorder.Eventf(g, nil, corev1.EventTypeWarning, EventMissingContent, ibguEventAction, "%s", msg)
			return false, msg, nil
		}
	}
	t, err := ibgu.Template(g, action, extra)
	if err != nil {
		return false, "", err
	}
	if err := controllerutil.SetControllerReference(g, t, r.Scheme); err != nil {
		return false, "", fmt.Errorf("owning ManifestWorkReplicaSet %s: %w", name, err)
	}
	if err := r.Client.Create(ctx, t); err != nil && !apierrors.IsAlreadyExists(err) {
		return false, "", fmt.Errorf("creating ManifestWorkReplicaSet %s/%s: %w", g.Namespace, name, err)
	}
	return true, "", nil
}

// prepContent reads what Prep sends with the ImageBasedUpgrade: the OADP ConfigMaps of
// ibuSpec, at their own namespace, and the seed image's pull secret, from the
// ImageBasedGroupUpgrade's namespace to the lifecycle agent's; missing names those not
// found.
func (r *ImageBasedGroupUpgradeReconciler) prepContent(ctx context.Context, g *lcmv1alpha1.ImageBasedGroupUpgrade) (out []runtime.Object, missing []string, err error) {
	for _, ref := range g.Spec.IBUSpec.OADPContent {
		cm := &corev1.ConfigMap{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, cm); err != nil {
			if apierrors.IsNotFound(err) {
				missing = append(missing, fmt.Sprintf("ConfigMap %s/%s", ref.Namespace, ref.Name))
				continue
			}
			return nil, nil, fmt.Errorf("reading ConfigMap %s/%s: %w", ref.Namespace, ref.Name, err)
		}
		out = append(out, &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name, Labels: cm.Labels, Annotations: cm.Annotations},
			Data:       cm.Data, BinaryData: cm.BinaryData})
	}
	if ref := g.Spec.IBUSpec.SeedImageRef.PullSecretRef; ref != nil {
		secret := &corev1.Secret{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: ref.Name}, secret); err != nil {
			if !apierrors.IsNotFound(err) {
				return nil, nil, fmt.Errorf("reading Secret %s/%s: %w", g.Namespace, ref.Name, err)
			}
			missing = append(missing, fmt.Sprintf("Secret %s/%s", g.Namespace, ref.Name))
		} else {
			out = append(out, &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
				ObjectMeta: metav1.ObjectMeta{Namespace: lifecycleAgentNamespace, Name: secret.Name},
				Type:       secret.Type, Data: secret.Data})
		}
	}
	slices.Sort(missing)
	return out, missing, nil
}

// writeStatus writes st when it differs from the status read (written says it did), and
// ends the pass with result; a write conflict (a newer object is on its way to the cache)
// ends it with a short requeue.
func (r *ImageBasedGroupUpgradeReconciler) writeStatus(ctx context.Context, g *lcmv1alpha1.ImageBasedGroupUpgrade,
	st *lcmv1alpha1.ImageBasedGroupUpgradeStatus, result ctrl.Result) (_ ctrl.Result, written bool, _ error) {
	if equalJSON(g.Status, *st) {
		return result, false, nil
	}
	out := g.DeepCopy()
	out.Status = *st
	if err := r.Client.Status().Update(ctx, out); err != nil {
		if apierrors.IsConflict(err) {
			ctrl.LoggerFrom(ctx).V(1).Info("Status write conflict: reading again")
			return ctrl.Result{RequeueAfter: time.Second}, false, nil
		}
		return ctrl.Result{}, false, fmt.Errorf("writing the status: %w", err)
	}
	return result, true, nil
}

func equalJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(x) == string(y)
}

// SetupWithManager registers the controller: an ImageBasedGroupUpgrade is reconciled when
// its spec changes (a step appended) and when one of its ClusterGroupUpgrades or templates
// changes.
func (r *ImageBasedGroupUpgradeReconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named("imagebasedgroupupgrade").
		For(&lcmv1alpha1.ImageBasedGroupUpgrade{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&ranv1alpha1.ClusterGroupUpgrade{})
	if !r.Unserved.Works {
		b = b.Owns(&workv1alpha1.ManifestWorkReplicaSet{})
	}
	return b.Complete(r)
}
