package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LabelUpgradeName labels the objects the operator creates for a ClusterGroupUpgrade with
// the ClusterGroupUpgrade's name.
const LabelUpgradeName = "ran.openshift.io/cgu"

// RecordedPoliciesLimit is the most managed policies a batch record keeps (spec.policies);
// a rollout of more keeps none there.
const RecordedPoliciesLimit = 1000

// ClusterGroupUpgradeBatchSpec is one part of one batch of a frozen remediation plan.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: the plan is frozen once written"
type ClusterGroupUpgradeBatchSpec struct {
	// Upgrade is the name of the ClusterGroupUpgrade, in the same namespace, this plan
	// belongs to.
	// +kubebuilder:validation:MinLength=1
	Upgrade string `json:"upgrade"`
	// Index is the batch's 1-based position in the plan.
	// +kubebuilder:validation:Minimum=1
	Index int `json:"index"`
	// Part is the 0-based part of the batch held by this object: a batch larger than
	// ClusterDetailLimit (250) clusters is split over several objects.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Part int `json:"part,omitempty"`
	// Parts is the number of parts the batch is split into (1 for a batch of at most
	// ClusterDetailLimit clusters), so that a missing part can be told.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Parts int `json:"parts,omitempty"`
	// Batches is the number of batches of the plan, so that a plan whose records were
	// written only in part can be told from a whole one. Absent on records written before
	// this field existed.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Batches int `json:"batches,omitempty"`
	// Canary is true for a canary batch.
	// +optional
	Canary bool `json:"canary,omitempty"`
	// Window, when not zero, makes the batch a sliding window (spec.remediationStrategy.mode
	// Window): at most Window of its clusters are in progress at once, started in plan order.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Window int `json:"window,omitempty"`
	// Stages, when set, make the batch progressive (spec.remediationStrategy.mode
	// Progressive): its clusters start in stages, in plan order, each after the previous one
	// ended; a stage's size is Stages[step-1], the step growing by one after a healthy
	// stage up to the last size, which repeats.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:Minimum=1
	Stages []int `json:"stages,omitempty"`
	// OnUnhealthy is what an unhealthy stage does: Reset or Stop.
	// +optional
	// +kubebuilder:validation:Enum=Reset;Stop
	OnUnhealthy UnhealthyAction `json:"onUnhealthy,omitempty"`
	// Policies are the managed policies with the generations the rollout accepted when it
	// started (status.managedPoliciesForUpgrade then): what a status lost since is read back
	// from, so that a policy changed after the start still waits for an approval. Absent on
	// records written before this field existed.
	// +optional
	// +kubebuilder:validation:MaxItems=1000
	Policies []PolicyReference `json:"policies,omitempty"`
	// Clusters of this part of the batch, in plan order, each once. Atomic, as
	// status.clusters: the record of a set's owners names every value, and stays in the
	// object for every later update to read.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=250
	// +listType=atomic
	Clusters []string `json:"clusters"`
}

// ClusterGroupUpgradeBatchStatus is the progress of the clusters of one part of a batch.
type ClusterGroupUpgradeBatchStatus struct {
	// StartedAt is when the batch started; unset while it waits.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// TimeoutAt is when the batch times out, once started.
	// +optional
	TimeoutAt *metav1.Time `json:"timeoutAt,omitempty"`
	// FinishedAt is when every cluster of the batch completed or timed out, or the
	// rollout ended during the batch.
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// EndsRollout is true on the batch whose end ended the rollout before its last batch
	// (a canary or Abort timeout, the failure budget, the overall timeout).
	// +optional
	EndsRollout bool `json:"endsRollout,omitempty"`
	// PausedBefore is how long the rollout had been paused when the batch started; only
	// later pauses move the batch's deadline.
	// +optional
	PausedBefore *metav1.Duration `json:"pausedBefore,omitempty"`
	// Clusters holds each cluster's progress, once its batch has started, a cluster at most
	// once. The list is one field to the API server (atomic), written whole by the operator
	// alone: tracked item by item, its managed fields were about as large as the list, and
	// every update of the record paid for both (docs/benchmarks.md).
	// +optional
	// +kubebuilder:validation:MaxItems=250
	// +listType=atomic
	Clusters []ClusterProgress `json:"clusters,omitempty"`
	// Analysis is the batch's analysis (spec.analysis), once its clusters ended; on the
	// batch's first part only.
	// +optional
	Analysis *BatchAnalysis `json:"analysis,omitempty"`
}

// ClusterGroupUpgradeBatch is written by the operator: it records one part of one batch of
// a ClusterGroupUpgrade's remediation plan and the progress of its clusters, so that the
// ClusterGroupUpgrade's own status stays small for any fleet size. It is owned by its
// ClusterGroupUpgrade and labelled ran.openshift.io/cgu=<name>.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=clustergroupupgradebatches,shortName=cgub,categories=cgu-operator
// +kubebuilder:printcolumn:name="Upgrade",type=string,JSONPath=`.spec.upgrade`
// +kubebuilder:printcolumn:name="Batch",type=integer,JSONPath=`.spec.index`
// +kubebuilder:printcolumn:name="Part",type=integer,JSONPath=`.spec.part`,priority=1
// +kubebuilder:printcolumn:name="Canary",type=boolean,JSONPath=`.spec.canary`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterGroupUpgradeBatch struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterGroupUpgradeBatchSpec   `json:"spec"`
	Status ClusterGroupUpgradeBatchStatus `json:"status,omitempty"`
}

// ClusterGroupUpgradeBatchList is a list of ClusterGroupUpgradeBatches.
//
// +kubebuilder:object:root=true
type ClusterGroupUpgradeBatchList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterGroupUpgradeBatch `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ClusterGroupUpgradeBatch{}, &ClusterGroupUpgradeBatchList{})
}
