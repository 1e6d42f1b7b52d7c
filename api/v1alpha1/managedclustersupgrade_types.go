package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	workv1 "open-cluster-management.io/api/work/v1"
)

// Conditions of a ManagedClustersUpgrade (seed 003's), besides Reconciled.
const (
	// MCUConditionSelected is True once the selection named at least one cluster.
	MCUConditionSelected = "Selected"
	// MCUConditionApplied is True once the rollout's ClusterGroupUpgrade exists.
	MCUConditionApplied = "Applied"
	// MCUConditionInProgress is True while some cluster upgrades.
	MCUConditionInProgress = "InProgress"
	// MCUConditionComplete is True once every selected cluster runs the target.
	MCUConditionComplete = "Complete"
	// MCUConditionFailed is True once some cluster failed or timed out.
	MCUConditionFailed = "Failed"
)

// ManagedClustersUpgradeSpec names a release and the clusters to take to it; the operator
// writes the policies and the ClusterGroupUpgrade that do it.
// +kubebuilder:validation:XValidation:rule="(has(self.placement) && size(self.placement) > 0) || has(self.clusterSelector)",message="select clusters: spec.placement or spec.clusterSelector"
type ManagedClustersUpgradeSpec struct {
	// Placement names Placements whose decisions select clusters; namespace defaults to the
	// ManagedClustersUpgrade's. The clusters of every Placement and of clusterSelector are
	// upgraded (their union).
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Placement []PlacementReference `json:"placement,omitempty"`
	// ClusterSelector selects ManagedClusters by cluster set and label.
	// +optional
	ClusterSelector *MCUClusterSelector `json:"clusterSelector,omitempty"`
	// ClusterVersion is the release to take the clusters to.
	ClusterVersion MCUClusterVersion `json:"clusterVersion"`
	// OCPOperators chooses the OLM operators, by Subscription, whose pending InstallPlans are
	// approved while a cluster upgrades.
	// +optional
	OCPOperators *OCPOperators `json:"ocpOperators,omitempty"`
	// UpgradeStrategy is the canaries, the batch size and the time budgets.
	// +optional
	UpgradeStrategy MCUUpgradeStrategy `json:"upgradeStrategy,omitempty"`
	// Rollout are the gates, windows and approvals of the ClusterGroupUpgrade that runs the
	// rollout. An addition to the seed.
	// +optional
	Rollout *MCURollout `json:"rollout,omitempty"`
	// PreUpgradeAction is a ManifestWork applied to each cluster when its batch starts; the
	// cluster upgrades once it is Available (and Complete, when its condition rules say so).
	// A Degraded one holds the cluster.
	// +optional
	PreUpgradeAction *UpgradeAction `json:"preUpgradeAction,omitempty"`
	// PostUpgradeAction is a ManifestWork applied to each cluster once it runs the target; the
	// cluster completes once it is Available (and Complete); a Degraded one fails it.
	// +optional
	PostUpgradeAction *UpgradeAction `json:"postUpgradeAction,omitempty"`
	// AcceptedRisks are conditional-update risks accepted for this rollout, each with who
	// accepted it and until when: a cluster whose path crosses an update with only accepted
	// risks takes it; an acceptance past its until holds again.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	AcceptedRisks []AcceptedRisk `json:"acceptedRisks,omitempty"`
}

// PlacementReference names a Placement.
type PlacementReference struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Namespace defaults to the ManagedClustersUpgrade's.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}

// MCUClusterSelector selects ManagedClusters: those of the cluster sets (any set when none
// is named) whose labels match every expression.
// +kubebuilder:validation:XValidation:rule="(has(self.clusterSets) && size(self.clusterSets) > 0) || (has(self.matchExpressions) && size(self.matchExpressions) > 0) || (has(self.matchLabels) && size(self.matchLabels) > 0)",message="spec.clusterSelector selects every cluster: name clusterSets, matchLabels or matchExpressions"
type MCUClusterSelector struct {
	// ClusterSets are the names of ManagedClusterSets.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=63
	ClusterSets []string `json:"clusterSets,omitempty"`
	// MatchLabels are labels a cluster must carry.
	// +optional
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
	// MatchExpressions are label requirements a cluster must meet (key "name" is the
	// cluster's name, as ACM labels it).
	// +optional
	// +kubebuilder:validation:MaxItems=32
	MatchExpressions []ClusterSelectorRequirement `json:"matchExpressions,omitempty"`
}

// MCUClusterVersion is the release, and where the clusters learn of it.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.clusterVersion is immutable: create another ManagedClustersUpgrade for another release"
type MCUClusterVersion struct {
	// Channel is set on each cluster's ClusterVersion; the update path is found within it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[a-z]+-[0-9]+\.[0-9]+$`
	Channel string `json:"channel"`
	// Version is the target release, such as 4.16.12.
	// +kubebuilder:validation:Pattern=`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`
	// +kubebuilder:validation:MaxLength=64
	Version string `json:"version"`
	// Upstream is the update service's graph API, set on each cluster's ClusterVersion and
	// read by the operator for the path; by default the operator's --update-service.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://`
	Upstream string `json:"upstream,omitempty"`
	// Image is the target's release image (by digest), for clusters that must take exactly
	// it; the intermediate hops of a path are taken by version.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Image string `json:"image,omitempty"`
}

// OCPOperators chooses operators by Subscription. Without approveAllUpgrades only those
// included are approved; an excluded one never is. An operator both included and excluded
// is refused by the Applied condition (InvalidOperators): a CEL rule comparing the two lists
// costs more than the API server allows.
// +kubebuilder:validation:XValidation:rule="!has(self.approveAllUpgrades) || !self.approveAllUpgrades || !has(self.include) || size(self.include) == 0",message="spec.ocpOperators: approveAllUpgrades approves every operator; name the exceptions in exclude, not include"
type OCPOperators struct {
	// ApproveAllUpgrades approves every operator with Manual approval but those excluded.
	// +optional
	ApproveAllUpgrades bool `json:"approveAllUpgrades,omitempty"`
	// Include lists the operators approved.
	// +optional
	// +listType=map
	// +listMapKey=namespace
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Include []OperatorReference `json:"include,omitempty"`
	// Exclude lists the operators never approved.
	// +optional
	// +listType=map
	// +listMapKey=namespace
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Exclude []OperatorReference `json:"exclude,omitempty"`
}

// OperatorReference names an operator by its Subscription.
type OperatorReference struct {
	// Name is the Subscription's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Namespace is the Subscription's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
}

// MCUUpgradeStrategy is how the clusters are batched and how long each may take.
type MCUUpgradeStrategy struct {
	// CanaryClusters selects, among the selected clusters, those upgraded first, one batch
	// each, before the others.
	// +optional
	CanaryClusters *CanaryClusters `json:"canaryClusters,omitempty"`
	// MaxConcurrency is the most clusters upgraded at once; 1 when unset.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxConcurrency int `json:"maxConcurrency,omitempty"`
	// ClusterUpgradeTimeout is how long one update of a cluster may take (2h when unset); a
	// batch whose clusters take two updates to the target has twice that.
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m')",message="spec.upgradeStrategy.clusterUpgradeTimeout must be at least 1m"
	ClusterUpgradeTimeout *metav1.Duration `json:"clusterUpgradeTimeout,omitempty"`
	// OperatorsUpgradeTimeout is added to a batch's time for its operators' upgrades (10m
	// when unset and operators are chosen).
	// +optional
	OperatorsUpgradeTimeout *metav1.Duration `json:"operatorsUpgradeTimeout,omitempty"`
	// WorkerCapacity adds worker machines to each multi-node cluster before its upgrade and
	// removes them once its workers run the target, so that the workloads drained from the
	// nodes rebooting have somewhere to go (the managed-upgrade-operator's capacity
	// reservation). An addition to the seed.
	// +optional
	WorkerCapacity *WorkerCapacity `json:"workerCapacity,omitempty"`
}

// WorkerCapacity is how much worker capacity a multi-node cluster adds while it upgrades, and
// how long it waits for it.
type WorkerCapacity struct {
	// Surge is how many machines each worker MachineSet adds (1 when unset). A MachineSet
	// with no replicas, or one an autoscaler sizes, is left alone.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	Surge int `json:"surge,omitempty"`
	// ScaleTimeout is how long the added machines may take to become ready nodes (20m when
	// unset). Past it the cluster upgrades without them: the rollout reports it
	// (status.workerCapacity.notReady, the cluster's softTimedOut) and does not fail the
	// cluster. The machines are removed after the upgrade all the same.
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('10s')",message="spec.upgradeStrategy.workerCapacity.scaleTimeout must be at least 10s"
	ScaleTimeout *metav1.Duration `json:"scaleTimeout,omitempty"`
}

// MCURollout are the ClusterGroupUpgrade's settings a ManagedClustersUpgrade passes on to its
// rollout; each means what the ClusterGroupUpgrade field of the same name means.
type MCURollout struct {
	// MaintenanceWindows say when new batches may start.
	// +optional
	MaintenanceWindows *MaintenanceWindows `json:"maintenanceWindows,omitempty"`
	// Approval makes batches wait for an approval (kubectl cgu approve, on the
	// ClusterGroupUpgrade).
	// +optional
	Approval *ApprovalGates `json:"approval,omitempty"`
	// BatchSoak is how long a finished batch's clusters must stay compliant before the next
	// batch starts.
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="spec.rollout.batchSoak must not be negative"
	BatchSoak *metav1.Duration `json:"batchSoak,omitempty"`
	// MaxFailures is the rollout's failure budget: a count or a percentage such as "10%".
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 && self <= 2147483647 : self.matches('^0*([0-9]{1,2}|100)%$')",message="spec.rollout.maxFailures must be a non-negative count or a percentage such as 10% (at most 2147483647, or 100%)"
	MaxFailures *intstr.IntOrString `json:"maxFailures,omitempty"`
	// Analysis judges each batch by its upgraded clusters' metrics (docs/analysis.md).
	// +optional
	Analysis *Analysis `json:"analysis,omitempty"`
}

// CanaryClusters selects the canaries among the selected clusters.
type CanaryClusters struct {
	// ClusterSelector is matched against the selected clusters' labels.
	ClusterSelector metav1.LabelSelector `json:"clusterSelector"`
}

// UpgradeAction is a ManifestWork applied to each cluster before or after its upgrade.
type UpgradeAction struct {
	// ManifestWork is the work's spec, as a ManifestWork's.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	ManifestWork workv1.ManifestWorkSpec `json:"manifestWork"`
}

// AcceptedRisk accepts a conditional-update risk by the update graph's name.
type AcceptedRisk struct {
	// Name is the risk's name, such as "SRIOVFailedToConfigureVF".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Name string `json:"name"`
	// AcceptedBy says who accepted it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	AcceptedBy string `json:"acceptedBy"`
	// Until is when the acceptance ends; none accepts it for the rollout's life.
	// +optional
	Until *metav1.Time `json:"until,omitempty"`
}

// ClustersSummary counts clusters by where their upgrade stands (seed 003's names).
type ClustersSummary struct {
	// Total is the number of clusters counted.
	Total int `json:"total"`
	// Initialized is the number whose upgrade started.
	Initialized int `json:"initialized"`
	// PartialUpgrade is the number upgrading.
	PartialUpgrade int `json:"partialUpgrade"`
	// Complete is the number running the target.
	Complete int `json:"complete"`
	// Failed is the number that failed or timed out.
	Failed int `json:"failed"`
	// Pending is the number not started.
	Pending int `json:"pending"`
	// Held is the number that will not be upgraded: no update path, a risk not accepted, a
	// version unknown, or a pre-upgrade action degraded. An addition to the seed's summary.
	// +optional
	Held int `json:"held,omitempty"`
}

// CapacitySummary counts the multi-node clusters of a rollout that add worker capacity.
type CapacitySummary struct {
	// Total is the number of clusters adding capacity: the multi-node ones that upgrade.
	Total int `json:"total"`
	// Added is the number whose added machines became ready before their upgrade went on
	// (those since removed included).
	Added int `json:"added"`
	// NotReady is the number whose added machines were not ready within scaleTimeout: they
	// upgraded without them.
	NotReady int `json:"notReady"`
	// Removed is the number whose added machines are removed again.
	Removed int `json:"removed"`
}

// ActionSummary counts the ManifestWorks of a pre- or post-upgrade action by condition.
type ActionSummary struct {
	Total       int `json:"total"`
	Applied     int `json:"applied"`
	Available   int `json:"available"`
	Progressing int `json:"progressing"`
	Degraded    int `json:"degraded"`
}

// MCUStage is the clusters whose n-th update goes to one version.
type MCUStage struct {
	// Index is the update's 1-based position on the clusters' paths.
	Index int `json:"index"`
	// Version is the release the update goes to.
	Version string `json:"version"`
	// Clusters is how many clusters take it.
	Clusters int `json:"clusters"`
	// Policy is the inform policy, in the ManagedClustersUpgrade's namespace, that asks for it.
	Policy string `json:"policy"`
	// Risks are the accepted risks of its updates.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Risks []string `json:"risks,omitempty"`
}

// MCUHold is a selected cluster the rollout does not upgrade, and why.
type MCUHold struct {
	// +kubebuilder:validation:MaxLength=253
	Cluster string `json:"cluster"`
	// Reason is NoUpdatePath, RiskNotAccepted or VersionUnknown.
	Reason string `json:"reason"`
	// Message names the version, the update and the risk.
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message"`
}

// ManagedClustersUpgradeStatus is where the rollout stands. It stays small whatever the
// fleet size.
type ManagedClustersUpgradeStatus struct {
	// ObservedGeneration is the spec generation this status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Upgrade is the ClusterGroupUpgrade, in the same namespace, that runs the rollout.
	// +optional
	Upgrade string `json:"upgrade,omitempty"`
	// Stages are the updates of the plan, in order: a cluster on the target's minor takes
	// one, a cluster two minors behind takes two (through the odd minor). Frozen once the
	// ClusterGroupUpgrade exists.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Stages []MCUStage `json:"stages,omitempty"`
	// Held are selected clusters the rollout does not upgrade, at most ClusterDetailLimit
	// (250); HeldNotShown counts the others.
	// +optional
	// +kubebuilder:validation:MaxItems=250
	Held []MCUHold `json:"held,omitempty"`
	// HeldNotShown is how many held clusters did not fit in held.
	// +optional
	HeldNotShown int `json:"heldNotShown,omitempty"`
	// PreUpgradeActionSummary counts the pre-upgrade action's ManifestWorks.
	// +optional
	PreUpgradeActionSummary *ActionSummary `json:"preUpgradeActionSummary,omitempty"`
	// CanaryClustersSummary counts the canaries (the seed spells it canaryClustersSummery).
	// +optional
	CanaryClustersSummary *ClustersSummary `json:"canaryClustersSummary,omitempty"`
	// ClustersSummary counts every selected cluster, canaries included (the seed spells it
	// clustersSummery).
	// +optional
	ClustersSummary *ClustersSummary `json:"clustersSummary,omitempty"`
	// PostUpgradeActionSummary counts the post-upgrade action's ManifestWorks.
	// +optional
	PostUpgradeActionSummary *ActionSummary `json:"postUpgradeActionSummary,omitempty"`
	// WorkerCapacity counts the clusters adding worker capacity while they upgrade
	// (spec.upgradeStrategy.workerCapacity).
	// +optional
	WorkerCapacity *CapacitySummary `json:"workerCapacity,omitempty"`
	// CurrentBatch is the running batch of the ClusterGroupUpgrade, its clusters bounded as
	// there.
	// +optional
	CurrentBatch *BatchStatus `json:"currentBatch,omitempty"`
	// Conditions are Selected, Applied, InProgress, Complete and Failed (seed 003's), and
	// Reconciled=False when a pass failed.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ManagedClustersUpgrade takes the clusters it selects to a named release: the operator
// plans each cluster's path over the update graph and writes the inform policies, their
// placements and the ClusterGroupUpgrade that roll it out. An addition to TALM's API, after
// the Managed Cluster Upgrade proposal of Open Cluster Management (seed 003), in this
// project's group.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=managedclustersupgrades,shortName=mcu,categories=cgu-operator
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.clusterVersion.version`
// +kubebuilder:printcolumn:name="Selected",type=integer,JSONPath=`.status.clustersSummary.total`
// +kubebuilder:printcolumn:name="Complete",type=integer,JSONPath=`.status.clustersSummary.complete`
// +kubebuilder:printcolumn:name="Failed",type=integer,JSONPath=`.status.clustersSummary.failed`
// +kubebuilder:printcolumn:name="Held",type=integer,JSONPath=`.status.clustersSummary.held`
// +kubebuilder:printcolumn:name="Upgrade",type=string,JSONPath=`.status.upgrade`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ManagedClustersUpgrade struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ManagedClustersUpgradeSpec   `json:"spec"`
	Status ManagedClustersUpgradeStatus `json:"status,omitempty"`
}

// ManagedClustersUpgradeList is a list of ManagedClustersUpgrades.
//
// +kubebuilder:object:root=true
type ManagedClustersUpgradeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ManagedClustersUpgrade `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ManagedClustersUpgrade{}, &ManagedClustersUpgradeList{})
}
