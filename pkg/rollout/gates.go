package rollout

import (
	"fmt"
	"slices"
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

// Gates hold a rollout back between its steps, whatever its clusters do: a pause, the
// maintenance windows, approvals, the failure budget and the soak of a finished batch, and
// hold clusters back: other rollouts, the hub-wide cap, the checks before and after each
// cluster's upgrade. They are plain values the controller gathered (pkg/gates builds them);
// the zero value holds nothing back.
type Gates struct {
	// Paused stops the rollout from starting anything new: no batch, no cluster, no next
	// policy; clusters working on a policy go on. Paused time does not count against the
	// timeouts.
	Paused bool
	// PausedFor is how long the rollout has been paused in all, the current pause included;
	// the time the fleet was frozen counts as paused.
	PausedFor time.Duration
	// Frozen says, while a FleetFreeze freezes the fleet, which one and why: no batch and no
	// cluster starts; clusters already working go on through their policies. "" when the
	// fleet is not frozen.
	Frozen string
	// WindowClosed is true when no maintenance window is open now; WindowOpens says when the
	// next one opens (zero: unknown).
	WindowClosed bool
	WindowOpens  time.Time
	// Approval says which batches start only once approved, and which were.
	Approval Approval
	// BatchSoak is how long every cluster of a finished batch must stay compliant before the
	// batch counts as done.
	BatchSoak time.Duration
	// MaxFailures is how many clusters may fail or time out before no new batch starts and
	// the rollout ends; nil means no budget.
	MaxFailures *int
	// ClusterDeadline is how long a cluster may take from the start of its batch (paused
	// time aside) before it times out, whatever the batch's deadline; zero means none.
	ClusterDeadline time.Duration
	// PolicyChanged names a managed policy that changed since the rollout accepted it, with
	// its old and new generation; "" when none did. The next batch waits until approved.
	PolicyChanged string
	// Busy maps each cluster another ClusterGroupUpgrade is remediating to that rollout
	// ("namespace/name"): the cluster does not start meanwhile, so that no cluster is
	// enforced twice.
	Busy map[string]string
	// Capacity is how many more clusters may start now under the hub-wide cap on clusters
	// under remediation; nil means no cap.
	Capacity *int
	// Precaching says, while pre-caching has not ended on every cluster, how far it got: the
	// rollout does not start meanwhile. "" when there is nothing to wait for.
	Precaching string
	// Backup says, while the backup before the upgrade has not ended on every cluster, how
	// far it got: the rollout does not start meanwhile (after pre-caching, as in TALM).
	Backup string
	// BackupDeadline is when the backups time out (the rollout looks again then).
	BackupDeadline time.Time
	// Verify is true when a cluster that completed its policies is verified after its
	// upgrade (a health check, post-upgrade actions): it stays InProgress (reason Verifying)
	// until its entry in Verifications is Done; healthy completes it, unhealthy fails it. At
	// its deadline it times out. A cluster without an entry has no answer yet.
	Verify        bool
	Verifications map[string]Verification
	// Holds are the clusters that may not start, by name, with why (the upgrade checks, the
	// health check before the upgrade, pre-upgrade actions); a cluster without an entry may
	// start. A held cluster does not start and does not keep its batch from ending: once
	// the batch's other clusters are done, or at its deadline, it ends Held. A Pending hold
	// (the check has not answered) keeps the batch waiting until the deadline.
	Holds map[string]Hold
	// Analysis judges each batch by its clusters' metrics before it ends; nil without
	// spec.analysis.
	Analysis *Analysis
	// StartsPaced is true while the operator's last write of starting clusters is more
	// recent than its pace (the operator's write pacing, in real time): a window
	// whose clusters started leaves its freed slots empty meanwhile, to fill them together.
	StartsPaced bool
}

// Approval says which batches (0-based) start only once approved: every one but the first
// with EveryBatch, else Batch (never the first; zero needs none).
type Approval struct {
	EveryBatch bool
	Batch      int
	// Approved are the batches approved.
	Approved []int
}

// needed reports whether batch b may only start once approved.
func (a Approval) needed(b int) bool { return b > 0 && (a.EveryBatch || b == a.Batch) }

// approved reports whether batch b was approved.
func (a Approval) approved(b int) bool { return slices.Contains(a.Approved, b) }

// Verification is what the health check after a cluster's upgrade says.
type Verification struct {
	// Done is false while the check has not answered.
	Done bool
	// Healthy completes the cluster; otherwise it fails with Reason and Message.
	Healthy         bool
	Reason, Message string
}

// Hold is a cluster of the current batch that could start but waits.
type Hold struct {
	Cluster string
	// Reason is WaitingForOtherUpgrade, HubCapacityReached, or the reason of the upgrade
	// check that holds the cluster.
	Reason, Message string
	// Checked is true for a hold of the upgrade checks.
	Checked bool
	// Pending is true for a check that has not answered yet (a ClusterVersion not read, a
	// health check running): the batch waits for it, up to its deadline.
	Pending bool
}

// held returns why a cluster that would start now must wait, if it must.
func held(g Gates, cluster string, capacity *int) *Hold {
	if g.Frozen != "" {
		return &Hold{Cluster: cluster, Reason: ranv1alpha1.ReasonFleetFrozen,
			Message: fmt.Sprintf("cluster %s waits: %s", cluster, g.Frozen)}
	}
	if other := g.Busy[cluster]; other != "" {
		return &Hold{Cluster: cluster, Reason: ranv1alpha1.ReasonWaitingForOtherUpgrade,
			Message: fmt.Sprintf("cluster %s waits for %s, which is remediating it", cluster, other)}
	}
	if capacity != nil && *capacity <= 0 {
		return &Hold{Cluster: cluster, Reason: ranv1alpha1.ReasonHubCapacityReached,
			Message: fmt.Sprintf("cluster %s waits for room under the hub-wide cap on clusters under remediation", cluster)}
	}
	return nil
}

// Wait says what a rollout between two batches waits for.
type Wait struct {
	// Reason is a condition reason: Paused, WaitingForApproval, OutsideMaintenanceWindow or
	// BatchSoaking.
	Reason, Message string
	// Batch is the 1-based batch that waits to start (or, for a soak, to count as done).
	Batch int
}

// shift is how far the pauses move the overall deadline and the current batch's one (the
// pauses since it started).
func (g Gates) shift(p Progress) (overall, batch time.Duration) {
	return g.PausedFor, max(g.PausedFor-p.PausedBeforeBatch, 0)
}

// soakUntil returns when the ended batch's soak ends, or the zero time when it needs none or
// a cluster relapsed (then it waits for a new fact).
func soakUntil(f Facts, batch plan.Batch, clusters map[string]Cluster) (time.Time, bool) {
	if f.Gates.BatchSoak <= 0 {
		return time.Time{}, true
	}
	var last time.Time
	for _, name := range batch.Clusters {
		c := clusters[name]
		if c.State != ranv1alpha1.ClusterCompleted {
			continue
		}
		if !compliesWithAll(f.policies(name)) {
			return time.Time{}, false
		}
		if c.Since.After(last) {
			last = c.Since
		}
	}
	if last.IsZero() {
		return time.Time{}, true
	}
	return last.Add(f.Gates.BatchSoak), true
}

// overBudget reports whether the failed and timed-out clusters exceed the failure budget.
func overBudget(g Gates, done ranv1alpha1.ClusterCounts) bool {
	return g.MaxFailures != nil && done.Failed+done.TimedOut > *g.MaxFailures
}

// gate returns what keeps the next batch (0-based index next) from starting, if anything,
// and when to look again without a new fact.
func gate(f Facts, next int) (*Wait, time.Time) {
	g := f.Gates
	n := next + 1
	switch {
	case next == 0 && g.Precaching != "":
		return &Wait{Reason: ranv1alpha1.ReasonPrecachingInProgress, Batch: 1,
			Message: "Waits for pre-caching to end before it starts: " + g.Precaching}, time.Time{}
	case next == 0 && g.Backup != "":
		// TALM's reason while the clusters are backed up.
		return &Wait{Reason: ranv1alpha1.ReasonNotStarted, Batch: 1,
			Message: "Waits for the backup of the clusters to end before it starts: " + g.Backup}, g.BackupDeadline
	case g.Paused:
		return &Wait{Reason: ranv1alpha1.ReasonPaused, Batch: n,
			Message: fmt.Sprintf("Paused before batch %d: set spec.paused to false to resume", n)}, time.Time{}
	case g.Frozen != "":
		return &Wait{Reason: ranv1alpha1.ReasonFleetFrozen, Batch: n,
			Message: fmt.Sprintf("Batch %d waits: %s", n, g.Frozen)}, time.Time{}
	case g.PolicyChanged != "" && !g.Approval.approved(next):
		return &Wait{Reason: ranv1alpha1.ReasonManagedPolicyChanged, Batch: n,
			Message: fmt.Sprintf("%s; batch %d waits for an approval to go on with it (kubectl cgu approve)", g.PolicyChanged, n)}, time.Time{}
	case g.Approval.needed(next) && !g.Approval.approved(next):
		return &Wait{Reason: ranv1alpha1.ReasonWaitingForApproval, Batch: n,
			Message: fmt.Sprintf("Batch %d waits for approval (kubectl cgu approve)", n)}, time.Time{}
	case g.WindowClosed:
		msg := fmt.Sprintf("Batch %d waits for a maintenance window", n)
		if !g.WindowOpens.IsZero() {
			msg += " opening at " + g.WindowOpens.UTC().Format(time.RFC3339)
		}
		return &Wait{Reason: ranv1alpha1.ReasonOutsideMaintenanceWindow, Batch: n, Message: msg}, g.WindowOpens
	}
	return nil, time.Time{}
}
