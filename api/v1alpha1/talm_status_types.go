package v1alpha1

import (
	workv1 "open-cluster-management.io/api/work/v1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The types below give a ClusterGroupUpgrade's status the fields TALM writes, with TALM's JSON
// names, types and meaning, so that what reads a TALM ClusterGroupUpgrade (jsonpath in
// runbooks, Argo CD health checks, TALM's own end-to-end scenarios) reads ours unchanged.
// docs/talm-compatibility.md maps each one to the fields of our own that say the same.

// TALMStatusBudget is how large, in bytes of JSON, a ClusterGroupUpgrade's status may grow
// with TALM's fleet-sized fields (remediationPlan, clusters,
// status.currentBatchRemediationProgress, precaching.status and precaching.clusters,
// backup.status and backup.clusters) written in full. A status that would be larger has them
// shortened by ShortenTALMStatus's rule and says so in status.shortened; the
// ClusterGroupUpgradeBatch objects keep every cluster.
const TALMStatusBudget = 128 * 1024

// Per-cluster remediation states of TALM's status.status.currentBatchRemediationProgress.
const (
	RemediationNotStarted = "NotStarted"
	RemediationInProgress = "InProgress"
	RemediationCompleted  = "Completed"
)

// Final states of a cluster in TALM's status.clusters.
const (
	// TALMClusterComplete: the cluster complied with every managed policy.
	TALMClusterComplete = "complete"
	// TALMClusterTimedOut: the cluster's batch, or the rollout, ran out of time first.
	TALMClusterTimedOut = "timedout"
	// TALMClusterFailed: the cluster cannot complete (deleted, or failed a health check
	// or a post-upgrade action); TALM has no such state.
	TALMClusterFailed = "failed"
	// TALMClusterHeld: the upgrade checks held the cluster; TALM has no such state.
	TALMClusterHeld = "held"
)

// ClusterRemediationProgress is where one cluster of the running batch stands, as TALM
// writes it.
type ClusterRemediationProgress struct {
	// State is NotStarted, InProgress or Completed.
	// +optional
	State string `json:"state,omitempty"`
	// PolicyIndex is the 0-based index, in managedPoliciesForUpgrade, of the policy the
	// cluster works on.
	// +optional
	PolicyIndex *int `json:"policyIndex,omitempty"`
	// ManifestWorkIndex is the 0-based index, in spec.manifestWorkTemplates, of the
	// ManifestWork the cluster works on.
	// +optional
	ManifestWorkIndex *int `json:"manifestWorkIndex,omitempty"`
	// FirstCompliantAt is when the cluster was first seen compliant with its current
	// policy, while it soaks on it.
	// +optional
	FirstCompliantAt *metav1.Time `json:"firstCompliantAt,omitempty"`
}

// UpgradeStatus is TALM's status.status: the rollout's start and end, and its running
// batch.
type UpgradeStatus struct {
	// StartedAt is when the rollout started.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// CompletedAt is when every cluster completed.
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`
	// CurrentBatch is the 1-based batch being remediated; absent once the rollout ended.
	// +optional
	CurrentBatch int `json:"currentBatch,omitempty"`
	// CurrentBatchStartedAt is when the current batch started.
	// +optional
	CurrentBatchStartedAt *metav1.Time `json:"currentBatchStartedAt,omitempty"`
	// CurrentBatchRemediationProgress maps each cluster of the current batch to its
	// progress. It is one field to the API server (atomic), written whole by the operator
	// alone: tracked key by key, its managed fields were as large as the map, and every
	// status update paid for both (docs/benchmarks.md).
	// +optional
	// +mapType=atomic
	CurrentBatchRemediationProgress map[string]*ClusterRemediationProgress `json:"currentBatchRemediationProgress,omitempty"`
}

// PolicyStatus names a policy and a cluster's compliance with it.
type PolicyStatus struct {
	// Name of the managed policy.
	Name string `json:"name"`
	// Status is the cluster's compliance with it (NonCompliant, Pending, Compliant).
	// +optional
	Status string `json:"status,omitempty"`
}

// ManifestWorkStatus names the ManifestWork a cluster was working on.
type ManifestWorkStatus struct {
	// Name of the ManifestWork.
	Name string `json:"name"`
	// Status is the ManifestWork's status.resourceStatus when the cluster stopped on it, as
	// TALM copies it: the conditions and status feedback of each manifest, bounded (see
	// ManifestWorkStatusLimit), kept once the ManifestWork is deleted.
	// +optional
	Status *workv1.ManifestResourceStatus `json:"status,omitempty"`
}

// ManifestWorkStatusLimit bounds the copies of ManifestWork status in status.clusters: the
// first ones of that many clusters, each of at most ManifestWorkManifestLimit manifests.
const (
	ManifestWorkStatusLimit   = 50
	ManifestWorkManifestLimit = 8
)

// ClusterFinalState is a cluster of an ended batch in TALM's status.clusters.
type ClusterFinalState struct {
	// Name of the managed cluster.
	Name string `json:"name"`
	// State is complete or timedout, as in TALM, or failed or held.
	State string `json:"state"`
	// CurrentPolicy is the policy a cluster that did not complete was working on.
	// +optional
	CurrentPolicy *PolicyStatus `json:"currentPolicy,omitempty"`
	// CurrentManifestWork is the ManifestWork a cluster that did not complete was
	// working on.
	// +optional
	CurrentManifestWork *ManifestWorkStatus `json:"currentManifestWork,omitempty"`
}

// BackupStatus is TALM's status.backup: where the backup before the upgrade of each planned
// cluster stands (spec.backup, docs/backup.md).
type BackupStatus struct {
	// StartedAt is when the backups started.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// Status maps a cluster to its backup state: PreparingToStart, Starting, Active,
	// Succeeded, BackupTimeout or UnrecoverableError. Atomic, as currentBatchRemediationProgress.
	// +optional
	// +mapType=atomic
	Status map[string]string `json:"status,omitempty"`
	// Clusters are the clusters backed up.
	// Deprecated: TALM's; read status.
	// +optional
	Clusters []string `json:"clusters,omitempty"`
}

// ShortenedStatus says which of TALM's fleet-sized status fields were shortened to keep the status
// within TALMStatusBudget, and how many entries each left out. Each list keeps at most a limit
// of entries: ClusterDetailLimit (250), halved while the status is still over the budget, down
// to 15. The ClusterGroupUpgradeBatch objects (kubectl cgu status) hold every planned cluster.
type ShortenedStatus struct {
	// RemediationPlanClustersNotShown is how many planned clusters remediationPlan leaves
	// out: it keeps every batch, in place, but lists the clusters of the running batch and
	// the next one only (the first two before the start, the last two after the end), at
	// most the limit each; the other batches are empty lists.
	// +optional
	RemediationPlanClustersNotShown int `json:"remediationPlanClustersNotShown,omitempty"`
	// ClustersNotShown is how many clusters status.clusters leaves out: it keeps those that
	// did not complete first.
	// +optional
	ClustersNotShown int `json:"clustersNotShown,omitempty"`
	// RemediationProgressNotShown is how many clusters of the running batch
	// status.status.currentBatchRemediationProgress leaves out: it keeps those not done
	// first.
	// +optional
	RemediationProgressNotShown int `json:"remediationProgressNotShown,omitempty"`
	// PrecachingClustersNotShown is how many clusters precaching.status and
	// precaching.clusters leave out: they keep those not succeeded first; precaching.counts
	// counts every cluster.
	// +optional
	PrecachingClustersNotShown int `json:"precachingClustersNotShown,omitempty"`
	// BackupClustersNotShown is how many clusters backup.status and backup.clusters leave
	// out: they keep those not succeeded first.
	// +optional
	BackupClustersNotShown int `json:"backupClustersNotShown,omitempty"`
}
