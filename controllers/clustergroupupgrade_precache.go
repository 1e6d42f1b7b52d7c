package controllers

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/spokecheck"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
)

// precacheState is what the pre-caching of a rollout found this reconcile.
type precacheState struct {
	// result is the derived spec and its validity.
	result precache.Result
	// states are each planned cluster's precache state; reasons say why a cluster failed.
	states  map[string]precache.State
	reasons map[string]string
	// overrides are the keys of TALM's deprecated overrides ConfigMap the spec took.
	overrides []string
	// order is the planned clusters in plan order, those that leave it included.
	order []string
	// jobs are each planned cluster's precache Job; running counts the clusters
	// pre-caching here and elsewhere on the hub, for the fleet-wide cap.
	jobs    map[string]spokejob.Job
	running int
}

// gatherPrecache reads, before the rollout starts and whatever spec.enable says, where the
// pre-caching of what the upgrade needs stands on every planned cluster: it derives the
// spec and reads each cluster's precache Job. precacheJobs says which Jobs to start.
func (r *ClusterGroupUpgradeReconciler) gatherPrecache(ctx context.Context, s *scope) error {
	if !s.cgu.Spec.PreCaching || s.started || s.selectProblem != nil || s.invalid != nil || len(allClusters(s.plan)) == 0 {
		return nil // as in TALM, nothing is pre-cached for a plan whose clusters all comply
	}
	cfg, err := r.precachingConfig(ctx, s.cgu)
	if err != nil {
		return err
	}
	st := &precacheState{states: map[string]precache.State{}, reasons: map[string]string{}, overrides: cfg.overrides}
	s.precache = st
	if cfg.missing != "" {
		st.result = precache.Result{Reason: ranv1alpha1.ReasonPrecacheSpecIncomplete, Message: cfg.missing}
		return nil
	}
	st.result = precache.Derive(precache.Input{Policies: slices.Concat(s.roots, s.compliantBefore), Config: cfg.spec, Graph: r.precacheGraph(ctx, s)})
	if !st.result.Valid {
		return nil
	}
	order := allClusters(s.plan)
	st.order = order
	if err := r.precacheClusters(ctx, s, st, order); err != nil {
		return err
	}
	leavePlan(s, st, order)
	return nil
}

// leavePlan takes the clusters whose pre-caching failed or timed out out of the plan once
// every cluster's pre-caching ended; when none is left, the rollout cannot start.
func leavePlan(s *scope, st *precacheState, order []string) {
	if _, reason, _ := precache.Condition(st.states); reason == ranv1alpha1.ReasonInProgress {
		return
	}
	leaving := precache.Leaving(order, st.states)
	if len(leaving) == 0 {
		return
	}
	if len(leaving) == len(order) {
		s.precacheFailed = &rollout.Problem{Reason: ranv1alpha1.ReasonPrecachingFailedEverywhere,
			Message: fmt.Sprintf("Pre-caching failed or timed out on all %d clusters; none is left to upgrade", len(order))}
		return
	}
	drop := make(map[string]bool, len(leaving))
	for _, c := range leaving {
		drop[c] = true
	}
	s.plan = s.plan.Without(drop)
}

// precacheClusters reads each planned cluster's state, and how many clusters pre-cache on
// the hub.
func (r *ClusterGroupUpgradeReconciler) precacheClusters(ctx context.Context, s *scope, st *precacheState, order []string) error {
	runner := spokejob.Runner{Client: r.Client}
	st.jobs = make(map[string]spokejob.Job, len(order))
	for _, c := range order {
		st.jobs[c] = spokecheck.PrecacheJob(s.cgu, c, st.result.Spec, r.SpokeImage, r.PrecacheTimeout)
		obs, err := spokecheck.PrecacheObservation(ctx, runner, st.jobs[c])
		if err != nil {
			return err
		}
		st.states[c], st.reasons[c] = precache.Of(obs)
		if st.states[c] == precache.Starting || st.states[c] == precache.Active {
			st.running++
		}
	}
	elsewhere, err := r.precachingElsewhere(ctx, s.cgu)
	st.running += elsewhere
	return err
}

// precacheJobs are the precache Jobs to start: the clusters the fleet-wide cap lets start
// now (precache.ToStart), shown Starting, and those already starting (a Job already running
// costs nothing more).
func precacheJobs(s *scope, maxConcurrent int) []spokejob.Job {
	st := s.precache
	if st == nil || st.jobs == nil {
		return nil
	}
	for _, c := range precache.ToStart(st.order, st.states, st.running, maxConcurrent) {
		st.states[c] = precache.Starting
	}
	var out []spokejob.Job
	for _, c := range st.order {
		if st.states[c] == precache.Starting {
			out = append(out, st.jobs[c])
		}
	}
	return out
}

// precachingElsewhere counts the clusters other rollouts of the hub are pre-caching, as
// their status shows, for the fleet-wide cap.
func (r *ClusterGroupUpgradeReconciler) precachingElsewhere(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) (int, error) {
	if r.MaxConcurrentPrecaching <= 0 {
		return 0, nil
	}
	var list ranv1alpha1.ClusterGroupUpgradeList
	if err := r.Client.List(ctx, &list); err != nil {
		return 0, fmt.Errorf("listing rollouts for the precache cap: %w", err)
	}
	n := 0
	for _, other := range list.Items {
		if other.UID == cgu.UID || other.Status.Precaching == nil {
			continue
		}
		n += other.Status.Precaching.Counts[string(precache.Starting)] + other.Status.Precaching.Counts[string(precache.Active)]
	}
	return n, nil
}

// precacheConfig is the referenced PreCachingConfig's spec, or why it is missing.
type precacheConfig struct {
	spec    *ranv1alpha1.PreCachingConfigSpec
	missing string
	// overrides are the keys of TALM's deprecated overrides ConfigMap that were used.
	overrides []string
}

// precachingConfig reads the PreCachingConfig the spec names, merged with TALM's deprecated
// overrides ConfigMap of the ClusterGroupUpgrade's namespace (precache.WithOverrides).
func (r *ClusterGroupUpgradeReconciler) precachingConfig(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) (precacheConfig, error) {
	cfg, err := r.preCachingConfigRef(ctx, cgu)
	if err != nil || cfg.missing != "" {
		return cfg, err
	}
	cm := &corev1.ConfigMap{}
	err = r.Reader.Get(ctx, client.ObjectKey{Namespace: cgu.Namespace, Name: precache.OverridesConfigMap}, cm)
	switch {
	case apierrors.IsNotFound(err):
		return cfg, nil
	case err != nil:
		return cfg, fmt.Errorf("reading ConfigMap %s/%s: %w", cgu.Namespace, precache.OverridesConfigMap, err)
	}
	cfg.spec, cfg.overrides = precache.WithOverrides(cfg.spec, cm.Data)
	return cfg, nil
}

func (r *ClusterGroupUpgradeReconciler) preCachingConfigRef(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) (precacheConfig, error) {
	ref := cgu.Spec.PreCachingConfigRef
	if ref.Name == "" {
		return precacheConfig{}, nil
	}
	namespace := ref.Namespace
	if namespace == "" {
		namespace = cgu.Namespace
	}
	pc := &ranv1alpha1.PreCachingConfig{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, pc)
	switch {
	case apierrors.IsNotFound(err):
		return precacheConfig{missing: fmt.Sprintf("PreCachingConfig %s/%s named by spec.preCachingConfigRef does not exist", namespace, ref.Name)}, nil
	case err != nil:
		return precacheConfig{}, fmt.Errorf("reading PreCachingConfig %s/%s: %w", namespace, ref.Name, err)
	}
	return precacheConfig{spec: &pc.Spec}, nil
}

// precacheGraph resolves a release version to its image through the update service the
// upgrade checks use.
func (r *ClusterGroupUpgradeReconciler) precacheGraph(ctx context.Context, s *scope) func(string) *updategraph.Graph {
	url := r.UpdateService
	if uc := s.cgu.Spec.UpgradeChecks; uc != nil && uc.UpdateService != "" {
		url = uc.UpdateService
	}
	return func(channel string) *updategraph.Graph {
		g, err := r.Graphs.Graph(ctx, url, channel, "")
		if err != nil {
			return nil
		}
		return g
	}
}

// precacheGate is what the start waits for while pre-caching has not ended, "" otherwise.
func precacheGate(s *scope) string {
	st := s.precache
	if st == nil {
		return ""
	}
	if !st.result.Valid {
		return "the precache spec is not valid: " + st.result.Message
	}
	_, reason, message := precache.Condition(st.states)
	if reason == ranv1alpha1.ReasonInProgress {
		return message
	}
	return ""
}

// setPrecacheStatus writes status.precaching and the PrecacheSpecValid and
// PrecachingSucceeded conditions; once the rollout started they keep what they showed.
func setPrecacheStatus(st *ranv1alpha1.ClusterGroupUpgradeStatus, s *scope) {
	if !s.cgu.Spec.PreCaching {
		st.Precaching = nil
		meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionPrecacheSpecValid)
		meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionPrecachingSucceeded)
		return
	}
	p := s.precache
	if p == nil {
		if !s.started && s.selectProblem == nil && s.invalid == nil && len(allClusters(s.plan)) == 0 {
			st.Precaching = nil // nothing to pre-cache: every planned cluster complies
			meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionPrecacheSpecValid)
			meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionPrecachingSucceeded)
		}
		return
	}
	gen := s.cgu.Generation
	spec := p.result.Spec
	st.Precaching = &ranv1alpha1.PrecachingStatus{Spec: &spec}
	if !p.result.Valid {
		setCondition(st, gen, ranv1alpha1.ConditionPrecacheSpecValid, metav1.ConditionFalse, p.result.Reason, p.result.Message)
		meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionPrecachingSucceeded)
		return
	}
	setCondition(st, gen, ranv1alpha1.ConditionPrecacheSpecValid, metav1.ConditionTrue, p.result.Reason, p.result.Message)
	st.Precaching.Counts = precache.Counts(p.states)
	st.Precaching.Status, st.Precaching.Clusters = talm.Precaching(p.order, p.states)
	status, reason, message := precache.Condition(p.states)
	setCondition(st, gen, ranv1alpha1.ConditionPrecachingSucceeded, status, reason, message)
}
