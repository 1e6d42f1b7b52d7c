package clustergroupupgrade

import (
	"fmt"
	"time"

	"github.com/go-logr/logr"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/cgu"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
)

// scope carries one reconcile of a ClusterGroupUpgrade through its steps: gather fills
// facts, cgu.Decide turns them into intents, apply writes them. The decision's inputs and
// outputs are typed values; what scope adds is the reconcile's own bookkeeping.
type scope struct {
	cgu    *ranv1alpha1.ClusterGroupUpgrade
	before ranv1alpha1.ClusterGroupUpgradeStatus
	owner  ownership.Owner
	now    time.Time
	log    logr.Logger

	facts cgu.Facts
	// foreign are records named for this rollout that an earlier ClusterGroupUpgrade of the
	// same name left: apply deletes them before it records the plan.
	foreign []ranv1alpha1.ClusterGroupUpgradeBatch
	in      cgu.Intents
	decided bool
	// records are the batch records as apply last wrote them.
	records []ranv1alpha1.ClusterGroupUpgradeBatch

	// done is set by a step that ended the reconcile (a wait).
	done bool
	// wait is set by a step that found what it reads not up to date yet (the cache behind
	// the operator's own writes): the reconcile ends there and looks again once the cache
	// catches up.
	wait *expectedWait
	// flush is how long until a deferred write is due (the object's pace,
	// enforcementInterval), or until a step asked to look again (lookAgain); zero when
	// nothing was deferred.
	flush time.Duration
	// progressDue is when a status that changed only by progress may be written, as the
	// gather read it (cgu.Facts.ProgressPaced).
	progressDue time.Time
}

func newScope(upgrade *ranv1alpha1.ClusterGroupUpgrade, now time.Time, log logr.Logger) *scope {
	return &scope{cgu: upgrade, before: *upgrade.Status.DeepCopy(), owner: ownership.OwnerOf(upgrade),
		now: now, log: log, facts: cgu.Facts{Upgrade: upgrade}}
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

// lookAgain asks for another pass within after, without ending this one.
func (s *scope) lookAgain(after time.Duration) {
	if s.flush == 0 || after < s.flush {
		s.flush = after
	}
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
