package clustergroupupgrade

import (
	"fmt"
	"time"

	"github.com/go-logr/logr"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
)

// scope is what one reconcile of a ClusterGroupUpgrade gathers and decides.
type scope struct {
	cgu    *ranv1alpha1.ClusterGroupUpgrade
	before ranv1alpha1.ClusterGroupUpgradeStatus
	owner  ownership.Owner
	now    time.Time
	// done is set by a phase that finished the reconcile (a Completed rollout).
	done bool
	// wait is set by a phase that found what it reads not up to date yet (the cache behind
	// the operator's own writes): the reconcile ends there, nothing decided or written, and
	// looks again once the cache catches up.
	wait *expectedWait
	// log is the reconcile's logger, with the ClusterGroupUpgrade.
	log logr.Logger
	// flush is how long until a deferred write is due (progressInterval,
	// enforcementInterval); zero when nothing was deferred.
	flush time.Duration

	records []ranv1alpha1.ClusterGroupUpgradeBatch
	// foreign are records named for this rollout that an earlier ClusterGroupUpgrade of the
	// same name left.
	foreign []ranv1alpha1.ClusterGroupUpgradeBatch
	// started is true once the rollout started: the plan and policies are frozen.
	started bool

	blocked *rollout.Problem

	selected      []string
	selectProblem *rollout.Problem

	// roots are the managed root policies in order; after the start an entry is nil when
	// its policy was deleted.
	roots   []*policyv1.Policy
	invalid *rollout.Problem
	// precacheFailed is set when pre-caching failed or timed out on every planned cluster:
	// the rollout cannot start, while its spec stays valid (as in TALM, Validated stays True).
	precacheFailed *rollout.Problem
	// backup is where the backup before the upgrade stands, nil when there is none to run
	// yet; backupFailed is set when it failed on every planned cluster.
	backup       *backupState
	backupFailed *rollout.Problem
	// compliantBefore are, before the start, the managed policies every selected cluster
	// already complies with: left out of roots, read by pre-caching.
	compliantBefore []*policyv1.Policy
	// busy maps the clusters other rollouts have InProgress to them; capacity is the room
	// left under the hub-wide cap, nil without one (gatherOthers).
	busy     map[string]string
	capacity *int

	plan     plan.Plan
	progress rollout.Progress
	// approvals are the recorded approvals and a new one from the annotations.
	approvals  []ranv1alpha1.BatchApproval
	decision   rollout.Decision
	decided    bool
	startedNow bool
	// verdicts are the upgrade checks' verdicts on the clusters that have not started,
	// nil without spec.upgradeChecks.pathValidation.
	verdicts map[string]upgradecheck.Verdict
	// targets are the upgrade targets of the managed policies, read once by gatherChecks.
	targets []upgradecheck.Target
	// healthBefore and healthAfter are the health checks' verdicts on the clusters of the
	// running batch about to start, and on those verifying; nil without them.
	healthBefore, healthAfter map[string]healthVerdict
	// healthPreview are the verdicts of the health check before the rollout starts, shown
	// in status only.
	healthPreview map[string]healthVerdict
	// precache is what pre-caching found before the start, nil without spec.preCaching or
	// once started.
	precache *precacheState
	// works are the rollout's ManifestWorks and their templates, nil when the spec names no
	// template.
	works *works
	// spoke are the spoke-side objects the decision calls for (applySpoke makes them).
	spoke spokeIntents
	// operatorUpgrades are the views and actions of InstallPlan approval; nil on a hub that
	// does not serve both.
	operatorUpgrades *operatorUpgrades
	// viewsNeeded is true when the upgrade checks read ClusterVersions through views, which
	// the hub serves.
	viewsNeeded bool
	// mode is how the rollout enforces its policies (enforcement), known once the records
	// are read.
	mode ranv1alpha1.EnforcementMode
}

func newScope(cgu *ranv1alpha1.ClusterGroupUpgrade, now time.Time, log logr.Logger) *scope {
	return &scope{cgu: cgu, before: *cgu.Status.DeepCopy(), owner: ownership.Owner{Namespace: cgu.Namespace, Name: cgu.Name}, now: now, log: log}
}

// expectedWait is a wait that is part of normal operation: why, and when to look again
// at the latest (a watch event usually comes first).
type expectedWait struct {
	reason string
	after  time.Duration
}

// waitFor ends the reconcile with an expected wait.
func (s *scope) waitFor(after time.Duration, format string, args ...any) {
	s.wait, s.done = &expectedWait{reason: fmt.Sprintf(format, args...), after: after}, true
}

// policyNames are the managed policies' names, in order, then the names of the steps
// (spec.manifestWorkTemplates), which the rollout goes through after them.
func (s *scope) policyNames() []string {
	out := make([]string, len(s.roots), len(s.roots)+len(s.cgu.Spec.ManifestWorkTemplates))
	for i, p := range s.roots {
		if p != nil {
			out[i] = p.Name
		} else if i < len(s.cgu.Status.ManagedPoliciesForUpgrade) {
			out[i] = s.cgu.Status.ManagedPoliciesForUpgrade[i].Name
		}
	}
	return append(out, s.cgu.Spec.ManifestWorkTemplates...)
}

// deferWrite reports whether a paced write (progress, or enforcement inside a batch) waits,
// due being when it may be written; it keeps the earliest such time for the requeue.
func (s *scope) deferWrite(due, now time.Time) bool {
	if !now.Before(due) {
		return false
	}
	if wait := due.Sub(now); s.flush == 0 || wait < s.flush {
		s.flush = wait
	}
	return true
}
