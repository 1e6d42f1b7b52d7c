package story

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
	"github.com/cgu-operator/cgu-operator/pkg/words"
)

// reasonWords say in plain words the reasons the rollout gives a cluster's state: why a
// cluster waits to start, why the upgrade checks hold it, why it failed.
var reasonWords = map[string]string{
	ranv1alpha1.ReasonHubCapacityReached:     "the hub-wide cap on clusters under remediation (--max-clusters-in-progress) is reached: it starts once another cluster ends",
	ranv1alpha1.ReasonWaitingForOtherUpgrade: "another ClusterGroupUpgrade is remediating this cluster: it starts once that one is done with it",
	ranv1alpha1.ReasonFleetFrozen:            "a FleetFreeze holds every rollout on the hub: no cluster starts until it lifts",
	ranv1alpha1.ReasonVerifying:              "it complied with every policy and waits for the health check after its upgrade",
	ranv1alpha1.ReasonRecordRebuilt:          "its batch record was lost and made again: its final state was read from its compliance then",
	ranv1alpha1.ReasonAnalysisFailed:         "an analysis gate of its batch measured it out of bounds",

	manifestwork.ReasonManifestWorkDegraded:      "its ManifestWork step reports Degraded",
	manifestwork.ReasonPreUpgradeActionPending:   "its pre-upgrade action has not completed yet",
	manifestwork.ReasonPreUpgradeActionDegraded:  "its pre-upgrade action reports Degraded",
	manifestwork.ReasonPostUpgradeActionDegraded: "its post-upgrade action reports Degraded",

	upgradecheck.ReasonClusterVersionUnknown: "the upgrade checks could not read its ClusterVersion yet",
	upgradecheck.ReasonTargetUnknown:         "the upgrade checks cannot tell the version the policies ask for",
	upgradecheck.ReasonOtherUpdateInProgress: "it is already updating to another version",
	upgradecheck.ReasonGraphUnavailable:      "the update graph, needed for a new minor version, could not be read",
	upgradecheck.ReasonUpgradeableFalse:      "its ClusterVersion says Upgradeable=False, which blocks a new minor version",
	upgradecheck.ReasonNotRecommended:        "the update service does not recommend the target for it (a conditional-update risk applies)",
	upgradecheck.ReasonRiskUnknown:           "a conditional-update risk of the target could not be evaluated on it",
	upgradecheck.ReasonInvalidVersion:        "its version or the target is not a semantic version",
	upgradecheck.ReasonDowngrade:             "the target is older than the version it runs",
	upgradecheck.ReasonNotInAvailableUpdates: "it does not offer the target among its available updates",
	upgradecheck.ReasonNotInGraph:            "the update graph of its channel offers no path from its version to the target",

	upgradecheck.ReasonHealthUnknown:             "the health check could not read what it checks, which counts as unhealthy",
	upgradecheck.ReasonClusterOperatorsUnhealthy: "ClusterOperators are Degraded or not Available",
	upgradecheck.ReasonCriticalAlertsFiring:      "critical alerts are firing",
	upgradecheck.ReasonMultipleProblems:          "the health check found more than one kind of problem",
	upgradecheck.ReasonHealthCheckPending:        "the health check has not answered yet",
	upgradecheck.ReasonHealthCheckFailed:         "the health check could not run",
}

// explain says a cluster's reason in plain words, with what the rollout's status adds about
// it: the upgrade checks' verdict on the cluster, or the Progressing condition's message when
// it is about the same reason.
func explain(cgu *ranv1alpha1.ClusterGroupUpgrade, cluster, reason string) string {
	if reason == "" {
		return ""
	}
	text, ok := reasonWords[reason]
	if !ok {
		text = reason
	}
	st := cgu.Status
	if uc := st.UpgradeChecks; uc != nil {
		for _, c := range uc.Clusters {
			if c.Name == cluster && c.Reason == reason && c.Message != "" {
				return text + ": " + c.Message
			}
		}
	}
	if p := meta.FindStatusCondition(st.Conditions, ranv1alpha1.ConditionProgressing); p != nil && p.Reason == reason && p.Message != "" {
		return text + ": " + p.Message
	}
	return text
}

// rolloutWaits say what the rollout as a whole waits for, by the reason of status.waiting
// or of the Progressing condition.
var rolloutWaits = map[string]string{
	ranv1alpha1.ReasonPaused:                   "the rollout to be resumed (spec.paused)",
	ranv1alpha1.ReasonFleetFrozen:              "a FleetFreeze to lift",
	ranv1alpha1.ReasonWaitingForApproval:       "an approval of the next batch (kubectl cgu approve)",
	ranv1alpha1.ReasonManagedPolicyChanged:     "an approval of a changed managed policy (kubectl cgu approve)",
	ranv1alpha1.ReasonOutsideMaintenanceWindow: "a maintenance window to open",
	ranv1alpha1.ReasonBatchSoaking:             "the current batch to finish soaking",
	ranv1alpha1.ReasonBatchAnalysis:            "the analysis gates of the current batch",
	ranv1alpha1.ReasonAnalysisInconclusive:     "an answer to the analysis gates of the current batch",
	ranv1alpha1.ReasonNotEnabled:               "spec.enable to be true",
	ranv1alpha1.ReasonMissingBlockingCR:        "a blocking ClusterGroupUpgrade",
	ranv1alpha1.ReasonIncompleteBlockingCR:     "a blocking ClusterGroupUpgrade",
	ranv1alpha1.ReasonBlockingCRCycle:          "a blocking ClusterGroupUpgrade",
	ranv1alpha1.ReasonPrecachingInProgress:     "pre-caching to end on every cluster",
	ranv1alpha1.ReasonNotStarted:               "what must happen before its first batch (the backup)",
}

// holds are the rollout's waits that keep any cluster from starting anything new.
var holds = []string{ranv1alpha1.ReasonPaused, ranv1alpha1.ReasonFleetFrozen}

// rolloutWait is what the rollout waits for, with the reason it gives, "" when it waits for
// nothing but its clusters.
func rolloutWait(cgu *ranv1alpha1.ClusterGroupUpgrade) (reason, text string) {
	st := cgu.Status
	progressing := meta.FindStatusCondition(st.Conditions, ranv1alpha1.ConditionProgressing)
	message := st.Message
	if progressing != nil {
		reason = progressing.Reason
		if progressing.Message != "" {
			message = progressing.Message
		}
	}
	if st.Waiting != nil {
		reason = st.Waiting.Reason
	}
	text, ok := rolloutWaits[reason]
	if !ok {
		return "", ""
	}
	if message != "" {
		text += " (" + message + ")"
	}
	return reason, text
}

// waitsFor says in one sentence what the cluster waits for.
func waitsFor(f Facts, at place, policies []Policy) string {
	c := at.progress
	switch c.State {
	case ranv1alpha1.ClusterCompleted:
		return "nothing: it completed"
	case ranv1alpha1.ClusterTimedOut:
		if neverStarted(c) || c.CurrentPolicy == "" {
			return "nothing: it timed out before it started"
		}
		return fmt.Sprintf("nothing: it timed out working on %s", c.CurrentPolicy)
	case ranv1alpha1.ClusterFailed:
		return "nothing: it failed"
	case ranv1alpha1.ClusterHeld:
		return "nothing: the upgrade checks held it, and it was never enforced"
	case ranv1alpha1.ClusterInProgress:
		return workWait(f, c, policies)
	}
	return startWait(f, at)
}

// workWait is what a cluster working on its policies waits for.
func workWait(f Facts, c ranv1alpha1.ClusterProgress, policies []Policy) string {
	if c.Reason == ranv1alpha1.ReasonVerifying {
		return "the health check after its upgrade to answer"
	}
	i := slices.IndexFunc(policies, func(p Policy) bool { return p.Current })
	if i < 0 {
		return "the operator to record its current policy"
	}
	p := policies[i]
	var text string
	switch {
	case p.Step:
		text = fmt.Sprintf("step %s: its ManifestWork to be done", p.Name)
	case c.CompliantSince != nil:
		text = fmt.Sprintf("%s to finish its soak (compliant for %s)", p.Name, words.Duration(f.Now.Sub(c.CompliantSince.Time)))
	case !p.Placed:
		text = fmt.Sprintf("%s to reach the cluster (no replica in its namespace)", p.Name)
	case p.Enforced:
		text = fmt.Sprintf("%s to become Compliant (%s, enforced)", p.Name, orWord(p.Compliance, "no compliance reported"))
	default:
		text = fmt.Sprintf("%s to become Compliant (%s, not enforced on the cluster yet)", p.Name, orWord(p.Compliance, "no compliance reported"))
	}
	if reason, wait := rolloutWait(f.Upgrade); slices.Contains(holds, reason) && i < len(policies)-1 {
		text += "; then " + wait + " before its next policy"
	}
	return text
}

// startWait is what a cluster that has not started waits for: the rollout or its batch to
// start, else what keeps it from starting in its batch.
func startWait(f Facts, at place) string {
	if text := batchWait(f.Upgrade, at); text != "" {
		return text
	}
	cgu := f.Upgrade
	if at.progress.Reason != "" {
		return explain(cgu, f.Cluster, at.progress.Reason)
	}
	if reason, wait := rolloutWait(cgu); slices.Contains(holds, reason) {
		return wait
	}
	rs := cgu.Spec.RemediationStrategy
	switch {
	case rs != nil && rs.Mode == ranv1alpha1.ModeWindow:
		return fmt.Sprintf("a place in the window of %d clusters in progress at once", rs.MaxConcurrency)
	case rs != nil && rs.Mode == ranv1alpha1.ModeProgressive:
		return "its stage of the batch to start"
	}
	return "its turn to start"
}

// batchWait is what a cluster waits for while the rollout or its batch has not started, ""
// once its batch started.
func batchWait(cgu *ranv1alpha1.ClusterGroupUpgrade, at place) string {
	_, wait := rolloutWait(cgu)
	st := cgu.Status.State
	switch {
	case at.batch.Current == 0 && wait != "":
		return wait
	case at.batch.Current == 0 && st == ranv1alpha1.StateCannotStart:
		return "nothing: the rollout cannot start (" + cgu.Status.Message + ")"
	case at.batch.Current == 0:
		return "the rollout to start"
	case at.batch.StartedAt != nil:
		return ""
	case st == ranv1alpha1.StateCompleted || st == ranv1alpha1.StateTimedOut:
		return fmt.Sprintf("nothing: the rollout ended %s before batch %d started", st, at.batch.Index)
	case wait != "":
		return fmt.Sprintf("batch %d to start (the rollout is on batch %d); the rollout waits for %s", at.batch.Index, at.batch.Current, wait)
	}
	return fmt.Sprintf("batch %d to start (the rollout is on batch %d)", at.batch.Index, at.batch.Current)
}

func orWord(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}
