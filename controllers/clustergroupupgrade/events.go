package clustergroupupgrade

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/metrics"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
)

// The events of a rollout's transitions have TALM's reasons, actions and annotations
// (pkg/talm), and mark each transition once: they are read from what a write changed (the
// status before and after, a batch record before and after), after the write succeeded, so
// that an operator restarted later finds the transition written and emits nothing again.

// Event reasons of the upgrade checks.
const (
	EventRisksAccepted = "UpgradeRisksAccepted"
	EventClusterHeld   = "ClusterHeld"
)

// EventOverridesDeprecated is the reason of the warning that a rollout's pre-caching took
// values from TALM's deprecated overrides ConfigMap.
const EventOverridesDeprecated = "PrecacheOverridesDeprecated"

// Event reasons of the bandwidth plan of pre-caching: the plan turned late for the rollout's
// start, and pulls newly found far below their share.
const (
	EventPrecachingLate   = "PrecachingLate"
	EventPrecachePullSlow = "PrecachePullSlow"
)

// emitEvents marks the transitions of the ClusterGroupUpgrade's status write.
func (r *Reconciler) emitEvents(s *scope) {
	for _, e := range statusEvents(s) {
		r.Events.Emit(s.cgu, e)
		switch e.Reason {
		case talm.ReasonStageStarted:
			r.Metrics.Stage(metrics.StageStarted)
		case talm.ReasonStageUnhealthy:
			r.Metrics.Stage(metrics.StageUnhealthy)
		}
	}
	if p := s.facts.Precache; p != nil && len(p.Overrides) > 0 &&
		turnedTo(s.before.Conditions, s.cgu.Status.Conditions, ranv1alpha1.ConditionPrecacheSpecValid,
			ranv1alpha1.ReasonPrecacheSpecIsWellFormed, ranv1alpha1.ReasonPrecacheSpecIncomplete, ranv1alpha1.ReasonInvalidPlatformImage) != nil {
		r.event(s, corev1.EventTypeWarning, EventOverridesDeprecated,
			"Pre-caching takes %s from ConfigMap %s/%s, which is deprecated: set them in a PreCachingConfig (spec.preCachingConfigRef)",
			strings.Join(p.Overrides, ", "), s.cgu.Namespace, precache.OverridesConfigMap)
	}
	r.emitPlanEvents(s)
}

// emitPlanEvents marks the bandwidth plan turning late, and the pulls it newly names slow.
func (r *Reconciler) emitPlanEvents(s *scope) {
	before, after := planOf(s.before.Precaching), planOf(s.cgu.Status.Precaching)
	if after == nil {
		return
	}
	if after.Late != "" && after.ETA != nil && after.Deadline != nil && (before == nil || before.Late == "") {
		r.event(s, corev1.EventTypeWarning, EventPrecachingLate,
			"The bandwidth plan of pre-caching ends at %s, %s after the rollout's start at %s; it is bound by the %s",
			after.ETA.UTC().Format(time.RFC3339), after.Late, after.Deadline.UTC().Format(time.RFC3339), after.Bound)
	}
	var was []string
	if before != nil {
		for _, p := range before.Slow {
			was = append(was, p.Cluster)
		}
	}
	var newly []string
	for _, p := range after.Slow {
		if !slices.Contains(was, p.Cluster) {
			newly = append(newly, fmt.Sprintf("%s (%d kbit/s of a share of %d)", p.Cluster, p.Kbps, p.ShareKbps))
		}
	}
	if len(newly) > 0 {
		r.event(s, corev1.EventTypeWarning, EventPrecachePullSlow, "Pre-caching pulls at under a quarter of its share on %s; %d pulls are that slow",
			strings.Join(newly, ", "), after.SlowCount)
	}
}

func planOf(p *ranv1alpha1.PrecachingStatus) *ranv1alpha1.PrecachePlan {
	if p == nil {
		return nil
	}
	return p.Plan
}

// statusEvents are the events of the transitions from s.before to the written status.
func statusEvents(s *scope) []talm.Event {
	before, after, name := s.before, s.cgu.Status, s.cgu.Name
	var out []talm.Event
	for _, kind := range []string{ranv1alpha1.ConditionClustersSelected, ranv1alpha1.ConditionValidated} {
		if c := turnedFalse(before.Conditions, after.Conditions, kind); c != nil {
			out = append(out, talm.ValidationFailed(name, failureOf(s, c.Reason), c.Message))
		}
	}
	if c := turnedTo(before.Conditions, after.Conditions, ranv1alpha1.ConditionProgressing, blockingReasons...); c != nil {
		out = append(out, talm.Blocked(name, c.Reason, c.Message))
	}
	if after.State == ranv1alpha1.StateCannotStart && before.State != after.State &&
		s.in.Decision.Reason == ranv1alpha1.ReasonPrecachingFailedEverywhere {
		out = append(out, talm.CannotStart(name, s.in.Decision.Reason, after.Message))
	}
	if before.StartedAt == nil && after.StartedAt != nil {
		out = append(out, talm.RolloutStarted(name, after.Counts.Total, len(s.in.Plan.Batches)))
	}
	out = append(out, gateEvents(name, before, after)...)
	out = append(out, stageEvents(name, before, after, s.in.Decision)...)
	if before.State != after.State {
		switch after.State {
		case ranv1alpha1.StateCompleted:
			out = append(out, talm.RolloutCompleted(name, after.Counts.Total))
		case ranv1alpha1.StateTimedOut:
			out = append(out, talm.RolloutTimedOut(name, after.Counts.Total, notCompleted(after.Clusters), after.Message))
		}
	}
	return out
}

// stageEvents are the events of a Progressive batch's stages: one starting while the
// rollout runs, and one ended unhealthy, that sent the growth back or (as the rollout ends)
// stopped it. The decision has the stage; the status before holds the stage it last showed.
func stageEvents(name string, before, after ranv1alpha1.ClusterGroupUpgradeStatus, d rollout.Decision) []talm.Event {
	stage := d.Stage
	if stage == nil {
		return nil
	}
	var was *ranv1alpha1.StageStatus
	if before.CurrentBatch != nil {
		was = before.CurrentBatch.Stage
	}
	index := d.Progress.Batch + 1
	running := after.State == ranv1alpha1.StateNotCompleted
	var out []talm.Event
	if stage.Unhealthy != "" && (was == nil || was.Unhealthy != stage.Unhealthy || was.Resets != stage.Resets) &&
		(running || before.State != after.State) {
		out = append(out, talm.StageUnhealthy(name, index, stage.Unhealthy))
	}
	if running && !stage.Started.IsZero() && (was == nil || was.Number != stage.Number) {
		out = append(out, talm.StageStarted(name, index, stage.Number, stage.Size, stage.Step+1))
	}
	return out
}

// blockingReasons are the Progressing reasons of a rollout blocked by other rollouts.
var blockingReasons = []string{ranv1alpha1.ReasonMissingBlockingCR, ranv1alpha1.ReasonIncompleteBlockingCR, ranv1alpha1.ReasonBlockingCRCycle}

// gateEvents are the events of our gates: a pause beginning or ending, a batch starting to
// wait (for an approval, a window, a soak), a batch approved.
func gateEvents(name string, before, after ranv1alpha1.ClusterGroupUpgradeStatus) []talm.Event {
	var out []talm.Event
	switch {
	case before.PausedAt == nil && after.PausedAt != nil:
		out = append(out, talm.Paused(name))
	case before.PausedAt != nil && after.PausedAt == nil:
		out = append(out, talm.Resumed(name))
	}
	if w := after.Waiting; w != nil && w.Reason != ranv1alpha1.ReasonPaused &&
		(before.Waiting == nil || before.Waiting.Reason != w.Reason || before.Waiting.Batch != w.Batch) {
		out = append(out, talm.Waiting(name, w.Batch, w.Reason, after.Message))
	}
	approved := map[int]bool{}
	for _, a := range before.Approvals {
		approved[a.Batch] = true
	}
	for _, a := range after.Approvals {
		if !approved[a.Batch] {
			out = append(out, talm.Approved(name, a.Batch, a.By))
		}
	}
	return out
}

// failureOf says what a validation failure is about, in TALM's words, with the names the
// problem lists.
func failureOf(s *scope, reason string) talm.Failure {
	var names []string
	invalid := false
	for _, p := range []*rollout.Problem{s.facts.Start.SelectProblem, s.in.Invalid} {
		if p != nil && p.Reason == reason {
			names, invalid = p.Names, p.Invalid
		}
	}
	switch reason {
	case ranv1alpha1.ReasonClusterNotFound:
		return talm.Failure{Kind: talm.FailureMissingClusters, Names: names}
	case ranv1alpha1.ReasonNotAllManagedPoliciesExist:
		if invalid {
			return talm.Failure{Kind: talm.FailureInvalidPolicies, Names: names}
		}
		return talm.Failure{Kind: talm.FailureMissingPolicies, Names: names}
	case ranv1alpha1.ReasonAmbiguousManagedPoliciesNames:
		return talm.Failure{Kind: talm.FailureAmbiguousPolicies, Names: names}
	}
	return talm.Failure{Kind: talm.FailureInvalid}
}

// turnedTo returns the condition of the given type when it now has one of the reasons and
// had another before (or was absent).
func turnedTo(before, after []metav1.Condition, kind string, reasons ...string) *metav1.Condition {
	c := meta.FindStatusCondition(after, kind)
	if c == nil || !slices.Contains(reasons, c.Reason) {
		return nil
	}
	if old := meta.FindStatusCondition(before, kind); old != nil && old.Reason == c.Reason {
		return nil
	}
	return c
}

// notCompleted are the clusters TALM's status lists as not complete.
func notCompleted(clusters []ranv1alpha1.ClusterFinalState) []string {
	var out []string
	for _, c := range clusters {
		if c.State != ranv1alpha1.TALMClusterComplete {
			out = append(out, c.Name)
		}
	}
	return out
}

// turnedFalse returns the condition of the given type when it is False now and was not,
// or was False for another reason.
func turnedFalse(before, after []metav1.Condition, kind string) *metav1.Condition {
	c := meta.FindStatusCondition(after, kind)
	if c == nil || c.Status != metav1.ConditionFalse {
		return nil
	}
	if old := meta.FindStatusCondition(before, kind); old != nil && old.Status == c.Status && old.Reason == c.Reason {
		return nil
	}
	return c
}

// recordEvents marks the transitions one record write carried: its batch starting or
// ending (on the batch's first part, naming every cluster of the batch), and each of its
// clusters starting, completing, timing out or failing.
func (r *Reconciler) recordEvents(s *scope, b *ranv1alpha1.ClusterGroupUpgradeBatch, old ranv1alpha1.ClusterGroupUpgradeBatchStatus) {
	st, name := b.Status, s.cgu.Name
	total := s.in.Plan.Clusters()
	batch := s.in.Plan.Batches[b.Spec.Index-1]
	if b.Spec.Part == 0 && old.StartedAt == nil && st.StartedAt != nil {
		r.Events.Emit(s.cgu, talm.BatchStarted(name, b.Spec.Index, batch.Clusters, total))
	}
	r.clusterEvents(s, st, old)
	if b.Spec.Part == 0 {
		r.analysisEvents(s, b.Spec.Index, st.Analysis, old.Analysis)
	}
	if old.FinishedAt != nil || st.FinishedAt == nil || b.Spec.Part != 0 {
		return
	}
	ended := s.in.BatchEnded(b.Spec.Index)
	outcome := metrics.OutcomeCompleted
	if len(ended[ranv1alpha1.ClusterTimedOut]) > 0 {
		outcome = metrics.OutcomeTimedOut
	}
	r.Events.Emit(s.cgu, talm.BatchEnded(name, b.Spec.Index, batch.Clusters, ended[ranv1alpha1.ClusterTimedOut], total))
	if st.StartedAt != nil {
		r.Metrics.BatchEnded(outcome, st.FinishedAt.Sub(st.StartedAt.Time))
	}
}

// clusterEvents marks each cluster of a record that started, completed, timed out or failed,
// or went past a best-effort policy on its soft timeout.
func (r *Reconciler) clusterEvents(s *scope, st, old ranv1alpha1.ClusterGroupUpgradeBatchStatus) {
	was := map[string]ranv1alpha1.ClusterState{}
	passed := map[string][]string{}
	for _, c := range old.Clusters {
		was[c.Name] = c.State
		passed[c.Name] = c.SoftTimedOut
	}
	name := s.cgu.Name
	for _, c := range st.Clusters {
		r.softTimeoutEvents(s, c, passed[c.Name])
		before := was[c.Name]
		if before == c.State {
			continue
		}
		r.checkEvents(s, c, before)
		pending := before == "" || before == ranv1alpha1.ClusterPending
		if pending && (c.State == ranv1alpha1.ClusterInProgress || c.State == ranv1alpha1.ClusterCompleted) {
			r.Events.Emit(s.cgu, talm.ClusterStarted(name, c.Name))
		}
		switch c.State {
		case ranv1alpha1.ClusterCompleted:
			r.Events.Emit(s.cgu, talm.ClusterCompleted(name, c.Name))
		case ranv1alpha1.ClusterTimedOut:
			r.Events.Emit(s.cgu, talm.ClusterTimedOut(name, c.Name, c.CurrentPolicy))
		case ranv1alpha1.ClusterFailed:
			r.Events.Emit(s.cgu, talm.ClusterFailed(name, c.Name, c.Reason))
		default:
			continue
		}
		// A cluster of a window counts from its own start, one of a batch from the batch's.
		started := st.StartedAt
		if c.StartedAt != nil {
			started = c.StartedAt
		}
		if started != nil && c.Since != nil {
			r.Metrics.ClusterEnded(c.State, c.Since.Sub(started.Time))
		}
	}
}

// Event reasons of the analysis gates, one when a gate of a batch turns to a phase.
const (
	EventAnalysisPassed       = "AnalysisPassed"
	EventAnalysisFailed       = "AnalysisFailed"
	EventAnalysisInconclusive = "AnalysisInconclusive"
	EventAnalysisSkipped      = "AnalysisSkipped"
)

// analysisEvents marks each gate of batch index that turned Passed, Failed, Inconclusive or
// Skipped since old, naming its query.
func (r *Reconciler) analysisEvents(s *scope, index int, cur, old *ranv1alpha1.BatchAnalysis) {
	if cur == nil {
		return
	}
	was := map[string]ranv1alpha1.AnalysisPhase{}
	if old != nil {
		for _, g := range old.Gates {
			was[g.Name] = g.Phase
		}
	}
	queries := map[string]string{}
	if a := s.cgu.Spec.Analysis; a != nil {
		for _, g := range a.Gates {
			queries[g.Name] = g.Query
		}
	}
	for _, g := range cur.Gates {
		if g.Phase == was[g.Name] {
			continue
		}
		kind, reason := corev1.EventTypeNormal, ""
		switch g.Phase {
		case ranv1alpha1.AnalysisPassed:
			reason = EventAnalysisPassed
		case ranv1alpha1.AnalysisSkipped:
			reason = EventAnalysisSkipped
		case ranv1alpha1.AnalysisFailed:
			kind, reason = corev1.EventTypeWarning, EventAnalysisFailed
		case ranv1alpha1.AnalysisInconclusive:
			kind, reason = corev1.EventTypeWarning, EventAnalysisInconclusive
		default:
			continue
		}
		r.event(s, kind, reason, "Batch %d: %s (query %s)", index, g.Message, rollout.Truncate(queries[g.Name], 512))
	}
}

// softTimeoutEvents marks each best-effort policy a cluster went past since its record named
// those in before.
func (r *Reconciler) softTimeoutEvents(s *scope, c ranv1alpha1.ClusterProgress, before []string) {
	for _, p := range c.SoftTimedOut {
		if !slices.Contains(before, p) {
			r.Events.Emit(s.cgu, talm.ClusterSoftTimedOut(s.cgu.Name, c.Name, p))
		}
	}
}

// checkEvents marks, per cluster, a start with accepted risks and an end held.
func (r *Reconciler) checkEvents(s *scope, c ranv1alpha1.ClusterProgress, was ranv1alpha1.ClusterState) {
	switch {
	case c.State == ranv1alpha1.ClusterHeld:
		msg := c.Reason
		if v, ok := verdictOf(s, c.Name); ok && v.Holds() {
			msg = v.Message
		} else if h, ok := s.facts.Health.Before[c.Name]; ok {
			msg = h.Message
		}
		r.relatedEvent(s, managedCluster(c.Name), corev1.EventTypeWarning, EventClusterHeld,
			"Cluster %s was held by the upgrade checks and not enforced: %s", c.Name, rollout.Truncate(msg, ranv1alpha1.MessageLimit))
	case c.State == ranv1alpha1.ClusterInProgress && (was == "" || was == ranv1alpha1.ClusterPending):
		if v, ok := verdictOf(s, c.Name); ok && len(v.Accepted) > 0 {
			r.relatedEvent(s, managedCluster(c.Name), corev1.EventTypeNormal, EventRisksAccepted,
				"Cluster %s started with accepted risks %s: %s", c.Name, strings.Join(v.Accepted, ", "),
				rollout.Truncate(v.Message, ranv1alpha1.MessageLimit))
		}
	}
}

// verdictOf is the upgrade checks' verdict on a cluster, if they judged it.
func verdictOf(s *scope, cluster string) (upgradecheck.Verdict, bool) {
	if s.facts.Checks == nil {
		return upgradecheck.Verdict{}, false
	}
	v, ok := s.facts.Checks.Verdicts[cluster]
	return v, ok
}
