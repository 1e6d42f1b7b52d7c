// Package rollout holds the pure decisions of a rollout: how each cluster of the current batch
// moves through its managed policies and how the ClusterGroupUpgrade moves through its states.
// Facts come in as arguments, time included; the controller applies the outcome.
package rollout

import (
	"slices"
	"time"

	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// Policy is what the next step of a cluster needs to know of one managed policy.
type Policy struct {
	// Compliant is true when the root policy's status shows the cluster Compliant.
	Compliant bool
	// Soak is how long the cluster must stay compliant before it moves on (the policy's
	// ran.openshift.io/soak-seconds annotation); zero moves on at once.
	Soak time.Duration
	// Failed, when not compliant, is the reason the cluster cannot get there (a degraded
	// ManifestWork): a cluster working on it fails with that reason.
	Failed string
	// Intermediate is true for a policy a later one supersedes (an intermediate update of a
	// multi-hop path): a cluster past it need not stay compliant with it.
	Intermediate bool
	// SoftTimeout, when set, makes the policy best effort: a cluster not compliant with it
	// that long moves on to the next policy, noting it (Cluster.SoftTimedOut), rather than
	// waiting for its deadline; nor must it stay compliant for the rollout to complete.
	SoftTimeout time.Duration
}

// SoftTimeoutAnnotation on a managed policy is how many seconds a cluster may work on it
// before moving on without it (Policy.SoftTimeout): a best-effort step, such as adding
// worker capacity before an upgrade. An addition to TALM.
const SoftTimeoutAnnotation = "ran.openshift.io/soft-timeout-seconds"

// SoftTimedOutLimit is the most policies a cluster's record names as soft timed out.
const SoftTimedOutLimit = 64

// PolicyFacts are what one managed policy, or one step (spec.manifestWorkTemplates), says
// of the clusters.
type PolicyFacts struct {
	// Compliance is the root policy's status: each cluster the policy is placed on, with its
	// compliance. A cluster it is not placed on is done with it at once, as in TALM, when
	// another managed policy is placed on the cluster.
	Compliance map[string]policyv1.ComplianceState
	// Soak is how long a cluster the policy is placed on must stay compliant before moving
	// on (the policy's ran.openshift.io/soak-seconds annotation).
	Soak time.Duration
	// Step is true for a step: Done are the clusters whose ManifestWork is done, Failed the
	// reason of those that cannot get there (a degraded ManifestWork).
	Step   bool
	Done   map[string]bool
	Failed map[string]string
	// Intermediate is true for a policy a later managed policy supersedes (the
	// ran.openshift.io/intermediate annotation): a cluster that went past it need not stay
	// compliant with it, as a cluster that took the next update of a path no longer runs
	// the release of the one before.
	Intermediate bool
	// SoftTimeout makes the policy best effort (SoftTimeoutAnnotation, Policy.SoftTimeout).
	SoftTimeout time.Duration
	// Released are, for an intermediate policy, the clusters past it that the hub shows it
	// no longer enforced on (read for the clusters of the current batch only). A cluster
	// past an intermediate policy is enforced on its current one only once released from
	// it: both ask for the same field (spec.desiredUpdate), and a cluster enforced on both
	// would be asked for the older release again (handOff, in Decide).
	Released map[string]bool
}

// policies returns what each managed policy and step says of a cluster, in order. It looks the
// cluster up once in each policy's compliance (Done's rule, in one pass): it runs for every
// cluster of the current batch at every pass.
func (f Facts) policies(cluster string) []Policy {
	out := make([]Policy, len(f.Policies))
	listed := false
	var unlisted []int // policies with a status that does not list the cluster
	for i, p := range f.Policies {
		if p.Step {
			out[i] = Policy{Compliant: p.Done[cluster], Failed: p.Failed[cluster]}
			continue
		}
		out[i].Intermediate = p.Intermediate
		state, placed := p.Compliance[cluster]
		switch {
		case placed:
			listed = true
			out[i].Compliant = state == policyv1.Compliant
			out[i].Soak, out[i].SoftTimeout = p.Soak, p.SoftTimeout
		case len(p.Compliance) > 0:
			unlisted = append(unlisted, i)
		}
	}
	for _, i := range unlisted {
		out[i].Compliant = listed // placed elsewhere: done with it when another lists it
	}
	return out
}

// Done reports whether a cluster has nothing to do for a policy, from the root policy's
// status: the status shows it Compliant, or the status does not list it while another managed
// policy does (placed elsewhere, this policy is not placed on it: TALM skips it too). A
// cluster no policy lists is never done: a deleted or unreachable cluster drops out of the
// statuses, and must not pass for done. A policy whose status lists no cluster at all has not
// been evaluated yet: nothing is done for any cluster.
func Done(compliance map[string]policyv1.ComplianceState, cluster string, listedElsewhere bool) bool {
	if len(compliance) == 0 {
		return false
	}
	state, listed := compliance[cluster]
	if !listed {
		return listedElsewhere
	}
	return state == policyv1.Compliant
}

// Cluster is where one cluster stands. Completed, TimedOut, Failed and Held are terminal: a
// step never leaves them.
type Cluster struct {
	State ranv1alpha1.ClusterState
	// Policy is the index of the managed policy being remediated, while InProgress.
	Policy int
	// Since is when the cluster entered its state or started its current policy.
	Since time.Time
	// CompliantSince is when the current policy was first seen compliant, while it soaks.
	CompliantSince *time.Time
	// Reason says why a Pending cluster waits, or why it timed out without starting.
	Reason string
	// Started is when the cluster started its first policy, in a window batch: its deadline
	// counts from then. Zero in a batch of TALM's, whose clusters share the batch's start.
	Started time.Time
	// Stage is the 1-based stage a cluster of a progressive batch started in; zero before
	// it starts, and in other batches.
	Stage int
	// SoftTimedOut are the indexes of the best-effort policies (Policy.SoftTimeout) the
	// cluster moved past without complying, in order.
	SoftTimedOut []int
}

// Verifying reports whether the cluster completed its policies and waits for the health
// check after its upgrade.
func (c Cluster) Verifying() bool {
	return c.State == ranv1alpha1.ClusterInProgress && c.Reason == ranv1alpha1.ReasonVerifying
}

// Terminal reports whether the cluster is done, one way or another.
func (c Cluster) Terminal() bool {
	switch c.State {
	case ranv1alpha1.ClusterCompleted, ranv1alpha1.ClusterTimedOut, ranv1alpha1.ClusterFailed, ranv1alpha1.ClusterHeld:
		return true
	}
	return false
}

// Step moves a cluster of the current batch as far as the facts allow at now: a Pending
// cluster starts at its first policy, a cluster moves to the next policy once the current
// one is compliant and has soaked (or, for a best-effort policy, once its soft timeout ran
// out), it completes after the last one, and it times out at deadline. It returns the new
// position and when the cluster wants to be looked at again without a new fact (a soak or a
// soft timeout ending, the deadline), or the zero time when only new facts matter.
func Step(c Cluster, policies []Policy, now, deadline time.Time) (Cluster, time.Time) {
	return step(c, policies, now, deadline, false)
}

// step is Step; hold keeps a cluster from starting anything new (a pause): a Pending cluster
// stays Pending and a cluster done with a policy does not start the next one, though it may
// complete.
func step(c Cluster, policies []Policy, now, deadline time.Time, hold bool) (Cluster, time.Time) {
	if c.Terminal() {
		return c, time.Time{}
	}
	if c.State != ranv1alpha1.ClusterInProgress {
		if hold {
			return c, time.Time{}
		}
		c = Cluster{State: ranv1alpha1.ClusterInProgress, Policy: 0, Since: now}
	}
	for c.Policy < len(policies) {
		p := policies[c.Policy]
		if !p.Compliant && p.Failed != "" {
			return Cluster{State: ranv1alpha1.ClusterFailed, Policy: c.Policy, Since: now, Reason: p.Failed, SoftTimedOut: c.SoftTimedOut}, time.Time{}
		}
		if !p.Compliant {
			c.CompliantSince = nil
			next, wake, passed := passOnSoftTimeout(c, p, hold && c.Policy+1 < len(policies), now)
			if !passed {
				return timeOut(c, now, deadline, wake)
			}
			c = next
			continue
		}
		if c.CompliantSince == nil {
			c.CompliantSince = &now
		}
		if soaked := c.CompliantSince.Add(p.Soak); now.Before(soaked) {
			return timeOut(c, now, deadline, soaked)
		}
		if hold && c.Policy+1 < len(policies) {
			return timeOut(c, now, deadline, time.Time{})
		}
		c = Cluster{State: ranv1alpha1.ClusterInProgress, Policy: c.Policy + 1, Since: now, SoftTimedOut: c.SoftTimedOut}
	}
	return Cluster{State: ranv1alpha1.ClusterCompleted, Policy: len(policies), Since: now, SoftTimedOut: c.SoftTimedOut}, time.Time{}
}

// passOnSoftTimeout moves a cluster past the best-effort policy p it does not comply with once
// p's soft timeout ran out, noting the policy in SoftTimedOut; held, it does not move. When
// it does not move, wake is when its soft timeout ends (zero when that is no reason to look
// again: p is not best effort, or the cluster is held).
func passOnSoftTimeout(c Cluster, p Policy, held bool, now time.Time) (next Cluster, wake time.Time, passed bool) {
	if p.SoftTimeout <= 0 {
		return c, time.Time{}, false
	}
	giveUp := c.Since.Add(p.SoftTimeout)
	switch {
	case now.Before(giveUp):
		return c, giveUp, false
	case held:
		return c, time.Time{}, false
	}
	noted := c.SoftTimedOut
	if len(noted) < SoftTimedOutLimit {
		noted = append(slices.Clone(noted), c.Policy)
	}
	return Cluster{State: ranv1alpha1.ClusterInProgress, Policy: c.Policy + 1, Since: now, SoftTimedOut: noted}, time.Time{}, true
}

// timeOut ends a cluster that is not done at its deadline, and otherwise asks to be looked
// at again at the earlier of wake and the deadline.
func timeOut(c Cluster, now, deadline, wake time.Time) (Cluster, time.Time) {
	if !now.Before(deadline) {
		return Cluster{State: ranv1alpha1.ClusterTimedOut, Policy: c.Policy, Since: now, SoftTimedOut: c.SoftTimedOut}, time.Time{}
	}
	if wake.IsZero() || deadline.Before(wake) {
		wake = deadline
	}
	return c, wake
}
