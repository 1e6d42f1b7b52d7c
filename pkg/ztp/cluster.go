package ztp

import (
	"strings"
	"time"

	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// Labels of the hub itself, which the ZTP flow leaves alone.
const (
	// HubLabel is the label (value "true") ACM puts on the hub's own ManagedCluster.
	HubLabel = "local-cluster"
	// HubName is the usual name of the hub's own ManagedCluster.
	HubName = "local-cluster"
)

// Cluster is what the ZTP flow knows of a ManagedCluster.
type Cluster struct {
	Name   string
	Labels map[string]string
	// Available is true while the cluster's Available condition is True; AvailableSince is
	// that condition's lastTransitionTime.
	Available      bool
	AvailableSince time.Time
}

// Step is what the controller does next for a cluster.
type Step int

const (
	// Idle is nothing to do (the hub, a cluster not Available, done, or with its
	// ClusterGroupUpgrade running or being deleted).
	Idle Step = iota
	// Settle is for a cluster that became Available less than the settle period ago: its
	// policies may not all be propagated yet. Look again after the returned wait.
	Settle
	// Start reads the cluster's policies, creates its ClusterGroupUpgrade, or labels it
	// DoneLabel when it has no wave policy.
	Start
	// Rerun is for a cluster whose ClusterGroupUpgrade completed and whose labels were removed
	// to run it again: delete the ClusterGroupUpgrade (Start follows once it is gone).
	Rerun
	// Skipped is for a cluster whose ClusterGroupUpgrade completed without it in its plan
	// (already compliant with every wave policy): label the cluster DoneLabel (its
	// afterCompletion actions may have done so already) and delete the ClusterGroupUpgrade,
	// which did nothing else.
	Skipped
)

func (s Step) String() string {
	switch s {
	case Settle:
		return "Settle"
	case Start:
		return "Start"
	case Rerun:
		return "Rerun"
	case Skipped:
		return "Skipped"
	default:
		return "Idle"
	}
}

// IsHub reports whether the cluster is the hub itself.
func IsHub(name string, labels map[string]string) bool {
	return name == HubName || labels[HubLabel] == "true"
}

// Next decides the next step for a cluster, given its ZTP ClusterGroupUpgrade (nil when
// it has none), the time and the settle period; for Settle it also returns how long to
// wait. The settle period counts from the Available condition's last transition; a
// transition later than now (clock skew) counts from now, so the wait never exceeds the
// settle period.
func Next(c Cluster, cgu *ranv1alpha1.ClusterGroupUpgrade, now time.Time, settle time.Duration) (Step, time.Duration) {
	_, done := c.Labels[DoneLabel]
	_, running := c.Labels[RunningLabel]
	switch {
	case done && cgu != nil && cgu.DeletionTimestamp.IsZero() && cgu.Status.State == ranv1alpha1.StateCompleted && cgu.Status.Counts.Total == 0:
		// Its ClusterGroupUpgrade did nothing but label it done (afterCompletion runs on
		// clusters compliant at the start, as in TALM): delete it.
		return Skipped, 0
	case IsHub(c.Name, c.Labels), !c.Available, done:
		return Idle, 0
	case cgu != nil:
		return existing(cgu, running), 0
	}
	if wait := SettleLeft(now, c.AvailableSince, settle); wait > 0 {
		return Settle, wait
	}
	return Start, 0
}

// existing decides for a cluster without DoneLabel that has a ClusterGroupUpgrade.
func existing(cgu *ranv1alpha1.ClusterGroupUpgrade, running bool) Step {
	switch {
	case !cgu.DeletionTimestamp.IsZero(), cgu.Status.State != ranv1alpha1.StateCompleted, running:
		// Running, or being deleted (its deletion wakes the controller), or completed
		// but the afterCompletion labels are not seen yet.
		return Idle
	case cgu.Status.Counts.Total == 0:
		return Skipped
	default:
		return Rerun
	}
}

// SettleLeft is what remains of the settle period that began at since.
func SettleLeft(now, since time.Time, settle time.Duration) time.Duration {
	elapsed := max(now.Sub(since), 0)
	if elapsed >= settle {
		return 0
	}
	return settle - elapsed
}

// RootPolicyLabel is the label of a replicated policy naming its root policy,
// "<namespace>.<name>".
const RootPolicyLabel = "policy.open-cluster-management.io/root-policy"

// FromReplicated is the Policy of a policy the propagator replicated into a cluster
// namespace: its root policy's name and namespace (from RootPolicyLabel), its annotations
// (copied from the root) and its remediation action. ok is false without a valid
// RootPolicyLabel.
func FromReplicated(p *policyv1.Policy) (Policy, bool) {
	namespace, name, ok := RootPolicy(p.Labels[RootPolicyLabel])
	if !ok {
		return Policy{}, false
	}
	return Policy{
		Name: name, Namespace: namespace, Annotations: p.Annotations,
		Inform: strings.EqualFold(string(p.Spec.RemediationAction), string(policyv1.Inform)),
	}, true
}

// RootPolicy splits the root-policy label of a replicated policy, "<namespace>.<name>"
// (a namespace has no dot), into the root policy's namespace and name.
func RootPolicy(label string) (namespace, name string, ok bool) {
	namespace, name, ok = strings.Cut(label, ".")
	if !ok || namespace == "" || name == "" {
		return "", "", false
	}
	return namespace, name, true
}
