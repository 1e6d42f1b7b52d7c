package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// Action is what one plan step asks of the lifecycle agent on each cluster.
type Action = string

// The actions of a plan, TALM's names.
const (
	// ActionPrep moves the ImageBasedUpgrade to stage Prep: the seed image is pulled and
	// the new stateroot set up, with the OADP content and the pull secret copied over.
	ActionPrep Action = "Prep"
	// ActionUpgrade moves it to stage Upgrade: the cluster pivots to the new stateroot.
	ActionUpgrade Action = "Upgrade"
	// ActionFinalizeUpgrade moves an upgraded cluster back to Idle, which removes the old
	// stateroot: no rollback after it.
	ActionFinalizeUpgrade Action = "FinalizeUpgrade"
	// ActionRollback moves an upgraded cluster to stage Rollback, back to its old stateroot.
	ActionRollback Action = "Rollback"
	// ActionFinalizeRollback moves a rolled-back cluster back to Idle.
	ActionFinalizeRollback Action = "FinalizeRollback"
	// ActionAbort moves the clusters that have not upgraded back to Idle.
	ActionAbort Action = "Abort"
	// ActionAbortOnFailure moves the clusters whose Prep or Upgrade failed back to Idle.
	ActionAbortOnFailure Action = "AbortOnFailure"
)

// ValidPlans are the shapes a plan may have, TALM's: each the actions of its steps in order.
// The CRD's validation rule on spec.plan lists the same shapes (a test checks that they agree).
var ValidPlans = [][][]Action{
	{{ActionPrep}},
	{{ActionPrep}, {ActionUpgrade}},
	{{ActionPrep, ActionUpgrade}},
	{{ActionPrep}, {ActionUpgrade}, {ActionFinalizeUpgrade}},
	{{ActionPrep}, {ActionUpgrade, ActionFinalizeUpgrade}},
	{{ActionPrep, ActionUpgrade}, {ActionFinalizeUpgrade}},
	{{ActionPrep, ActionUpgrade, ActionFinalizeUpgrade}},
	{{ActionRollback}},
	{{ActionRollback}, {ActionFinalizeRollback}},
	{{ActionRollback, ActionFinalizeRollback}},
	{{ActionUpgrade}},
	{{ActionUpgrade}, {ActionFinalizeUpgrade}},
	{{ActionUpgrade, ActionFinalizeUpgrade}},
	{{ActionFinalizeUpgrade}},
	{{ActionFinalizeRollback}},
	{{ActionAbort}},
	{{ActionAbortOnFailure}},
	{{ActionPrep}, {ActionAbort}},
	{{ActionPrep}, {ActionAbortOnFailure}},
	{{ActionPrep}, {ActionAbortOnFailure}, {ActionUpgrade}},
	{{ActionPrep}, {ActionAbortOnFailure}, {ActionUpgrade}, {ActionAbortOnFailure}},
	{{ActionPrep}, {ActionUpgrade}, {ActionAbortOnFailure}},
	{{ActionPrep, ActionUpgrade}, {ActionAbortOnFailure}},
	{{ActionPrep}, {ActionAbortOnFailure}, {ActionUpgrade}, {ActionAbortOnFailure}, {ActionFinalizeUpgrade}},
	{{ActionPrep}, {ActionUpgrade}, {ActionAbortOnFailure}, {ActionFinalizeUpgrade}},
	{{ActionPrep, ActionUpgrade}, {ActionAbortOnFailure}, {ActionFinalizeUpgrade}},
}

// ImageBasedGroupUpgradeSpec says which clusters go through which image-based upgrade, and
// the steps that take them there.
type ImageBasedGroupUpgradeSpec struct {
	// IBUSpec is the spec of the ImageBasedUpgrade each cluster gets (its stage is set by
	// each action). It cannot change once written.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="ibuSpec is immutable"
	IBUSpec ImageBasedUpgradeSpec `json:"ibuSpec"`

	// ClusterLabelSelectors selects the clusters: a cluster matching any selector is
	// selected. It cannot change once written.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterLabelSelectors is immutable"
	ClusterLabelSelectors []ranv1alpha1.ClusterLabelSelector `json:"clusterLabelSelectors,omitempty"`

	// Plan is the steps, run one after another: each moves the selected clusters through
	// its actions, in batches of its rollout strategy. Steps may only be appended, and the
	// whole plan must have one of the shapes of ValidPlans.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=6
	// +kubebuilder:validation:XValidation:rule="oldSelf.all(step, step in self)",message="plan is append only"
	// +kubebuilder:validation:XValidation:rule="[[['Prep']], [['Prep'], ['Upgrade']], [['Prep', 'Upgrade']], [['Prep'], ['Upgrade'], ['FinalizeUpgrade']], [['Prep'], ['Upgrade', 'FinalizeUpgrade']], [['Prep', 'Upgrade'], ['FinalizeUpgrade']], [['Prep', 'Upgrade', 'FinalizeUpgrade']], [['Rollback']], [['Rollback'], ['FinalizeRollback']], [['Rollback', 'FinalizeRollback']], [['Upgrade']], [['Upgrade'], ['FinalizeUpgrade']], [['Upgrade', 'FinalizeUpgrade']], [['FinalizeUpgrade']], [['FinalizeRollback']], [['Abort']], [['AbortOnFailure']], [['Prep'], ['Abort']], [['Prep'], ['AbortOnFailure']], [['Prep'], ['AbortOnFailure'], ['Upgrade']], [['Prep'], ['AbortOnFailure'], ['Upgrade'], ['AbortOnFailure']], [['Prep'], ['Upgrade'], ['AbortOnFailure']], [['Prep', 'Upgrade'], ['AbortOnFailure']], [['Prep'], ['AbortOnFailure'], ['Upgrade'], ['AbortOnFailure'], ['FinalizeUpgrade']], [['Prep'], ['Upgrade'], ['AbortOnFailure'], ['FinalizeUpgrade']], [['Prep', 'Upgrade'], ['AbortOnFailure'], ['FinalizeUpgrade']]].exists(shape, shape == self.map(step, step.actions))",message="invalid combinations of actions in the plan"
	Plan []PlanItem `json:"plan"`

	// Rollout holds the rollout engine's options every step's ClusterGroupUpgrade takes:
	// canaries, the failure budget, the batch soak, approvals, maintenance windows, and
	// a pause of the step that runs. An addition to TALM's API.
	// +optional
	Rollout *StepRollout `json:"rollout,omitempty"`
}

// StepRollout are the options of the rollout engine each step takes, as a
// ClusterGroupUpgrade's fields of the same names (docs/api.md).
type StepRollout struct {
	// Canaries are clusters that go first, one batch each, in every step that selects them
	// (the others leave them out).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.all(n, n != '')",message="spec.rollout.canaries must not contain an empty name"
	Canaries []string `json:"canaries,omitempty"`
	// MaxFailures is each step's failure budget: a count or a percentage of its clusters.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 && self <= 2147483647 : self.matches('^0*([0-9]{1,2}|100)%$')",message="spec.rollout.maxFailures must be a non-negative count or a percentage such as 10% (at most 2147483647, or 100%)"
	MaxFailures *intstr.IntOrString `json:"maxFailures,omitempty"`
	// BatchSoak is how long the clusters of a finished batch must stay done before the next
	// batch starts.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|ms|s|m|h))+)$') && duration(self) >= duration('0s')",message="spec.rollout.batchSoak must be a duration such as 90m or 1h30m"
	BatchSoak *metav1.Duration `json:"batchSoak,omitempty"`
	// Approval makes the steps' batches wait for an approval (kubectl cgu approve STEP).
	// +optional
	Approval *ranv1alpha1.ApprovalGates `json:"approval,omitempty"`
	// MaintenanceWindows say when the steps' batches may start.
	// +optional
	MaintenanceWindows *ranv1alpha1.MaintenanceWindows `json:"maintenanceWindows,omitempty"`
	// Paused holds the step that runs: its clusters on an action go on, no new batch starts,
	// and no next step starts, until it is false again.
	// +optional
	Paused bool `json:"paused,omitempty"`
}

// PlanItem is one step of the plan.
type PlanItem struct {
	// Actions are run on each cluster in order: Prep, Upgrade, FinalizeUpgrade, Rollback,
	// FinalizeRollback, Abort or AbortOnFailure.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:Enum=Prep;Upgrade;FinalizeUpgrade;Rollback;FinalizeRollback;Abort;AbortOnFailure
	Actions []Action `json:"actions"`
	// RolloutStrategy is how many clusters run the step at once, and how long it may take.
	RolloutStrategy RolloutStrategy `json:"rolloutStrategy"`
}

// RolloutStrategy is the batch size and timeout of a step, as a ClusterGroupUpgrade's
// remediation strategy.
type RolloutStrategy struct {
	// MaxConcurrency is the number of clusters that run the step at once; zero, or more
	// than the clusters, runs them all at once.
	// +kubebuilder:validation:XValidation:rule="self >= 0",message="maxConcurrency must not be negative"
	MaxConcurrency int `json:"maxConcurrency"`
	// Timeout is how long the step may take, in minutes; each batch gets the time left
	// divided by the batches left.
	// +optional
	// +kubebuilder:default=240
	// +kubebuilder:validation:XValidation:rule="self >= 0",message="timeout must not be negative"
	Timeout int `json:"timeout,omitempty"`
}

// ImageBasedUpgradeSpec is the spec of the lifecycle agent's ImageBasedUpgrade
// (lca.openshift.io/v1), with the agent's field names.
type ImageBasedUpgradeSpec struct {
	// Stage is set by each action; a value written here is not used.
	// +optional
	// +kubebuilder:validation:Enum=Idle;Prep;Upgrade;Rollback
	Stage string `json:"stage,omitempty"`
	// SeedImageRef is the seed image the clusters upgrade to.
	// +optional
	SeedImageRef SeedImageRef `json:"seedImageRef,omitempty"`
	// OADPContent are the ConfigMaps, on the hub, of the OADP Backup and Restore CRs; Prep
	// copies them to each cluster.
	// +optional
	OADPContent []ConfigMapRef `json:"oadpContent,omitempty"`
	// ExtraManifests are ConfigMaps of extra manifests the agent applies after the pivot.
	// +optional
	ExtraManifests []ConfigMapRef `json:"extraManifests,omitempty"`
	// AutoRollbackOnFailure configures the agent's automatic rollback after a failed
	// upgrade.
	// +optional
	AutoRollbackOnFailure *AutoRollbackOnFailure `json:"autoRollbackOnFailure,omitempty"`
}

// SeedImageRef names the seed image.
type SeedImageRef struct {
	// Version is the OpenShift version the seed image holds.
	// +optional
	Version string `json:"version,omitempty"`
	// Image is the seed image's pull spec.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^([a-z0-9]+://)?[\S]+$`
	Image string `json:"image,omitempty"`
	// PullSecretRef names the Secret, in the ImageBasedGroupUpgrade's namespace on the hub,
	// to pull the seed image with; Prep copies it to each cluster.
	// +optional
	PullSecretRef *PullSecretRef `json:"pullSecretRef,omitempty"`
}

// PullSecretRef names a Secret.
type PullSecretRef struct {
	Name string `json:"name"`
}

// ConfigMapRef names a ConfigMap.
type ConfigMapRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// AutoRollbackOnFailure configures the agent's automatic rollback.
type AutoRollbackOnFailure struct {
	// InitMonitorTimeoutSeconds is how long the agent waits for the upgraded cluster to
	// come up before it rolls back; zero is the agent's default (30 minutes).
	// +optional
	// +kubebuilder:validation:Minimum=0
	InitMonitorTimeoutSeconds int `json:"initMonitorTimeoutSeconds,omitempty"`
}

// ImageBasedGroupUpgradeStatus is where the clusters stand.
type ImageBasedGroupUpgradeStatus struct {
	// ObservedGeneration is the generation the status was written for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// StartedAt is when the first step started.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// CompletedAt is when the last step of the plan ended.
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`
	// Conditions: Progressing (True InProgress while a step runs, False Completed once
	// every step of the plan ended), as TALM.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Clusters are the clusters that started a step, by name: the actions each completed,
	// failed and is running. The list is bounded (docs/ibgu.md): on a fleet too large for
	// it, the clusters with a failed action come first, then those running an action, then
	// the others, and ClustersNotShown counts those left out.
	// +optional
	Clusters []ClusterState `json:"clusters,omitempty"`
	// ClustersNotShown is the number of clusters left out of Clusters to bound the
	// status. An addition to TALM's status.
	// +optional
	ClustersNotShown int `json:"clustersNotShown,omitempty"`
	// Steps say where each step of the plan that started stands, in plan order. An
	// addition to TALM's status.
	// +optional
	// +kubebuilder:validation:MaxItems=6
	Steps []StepStatus `json:"steps,omitempty"`
}

// StepState is the state of a plan step: its ClusterGroupUpgrade's state, or Skipped.
type StepState string

// StepSkipped is the state of a step that selected no cluster when its turn came: it
// ends without a ClusterGroupUpgrade (TALM's ClusterGroupUpgrade for it completes at once).
const StepSkipped StepState = "Skipped"

// StepStatus is where one step of the plan stands.
type StepStatus struct {
	// Index is the step's index in spec.plan.
	// +kubebuilder:validation:Minimum=0
	Index int `json:"index"`
	// Upgrade names the ClusterGroupUpgrade that runs the step, in the namespace of the
	// ImageBasedGroupUpgrade; empty for a skipped step.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Upgrade string `json:"upgrade,omitempty"`
	// State is the ClusterGroupUpgrade's state (NotStarted, CannotStart, NotCompleted,
	// TimedOut, Completed), or Skipped.
	// +optional
	State StepState `json:"state,omitempty"`
	// Ended is true once the step ended: its ClusterGroupUpgrade wrote its Succeeded
	// condition, or the step was skipped. The next step starts then.
	// +optional
	Ended bool `json:"ended,omitempty"`
	// Message says what the step does or waits for, as its ClusterGroupUpgrade says it.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
	// StartedAt is when the step's rollout started.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// CompletedAt is when the step ended.
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`
	// Counts count the step's clusters by state.
	// +optional
	Counts *ranv1alpha1.ClusterCounts `json:"counts,omitempty"`
}

// ClusterState is where one cluster stands.
type ClusterState struct {
	Name string `json:"name"`
	// +optional
	CompletedActions []ActionMessage `json:"completedActions,omitempty"`
	// +optional
	FailedActions []ActionMessage `json:"failedActions,omitempty"`
	// +optional
	CurrentAction *ActionMessage `json:"currentAction,omitempty"`
}

// ActionMessage is an action, with what the cluster said of it.
type ActionMessage struct {
	Action Action `json:"action"`
	// +optional
	Message string `json:"message,omitempty"`
}

// ImageBasedGroupUpgrade takes the clusters it selects through an image-based upgrade, one
// plan step after another.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ibgu,categories=cgu-operator
// +kubebuilder:printcolumn:name="Progressing",type=string,JSONPath=`.status.conditions[?(@.type=="Progressing")].reason`
// +kubebuilder:printcolumn:name="Details",type=string,JSONPath=`.status.conditions[?(@.type=="Progressing")].message`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) < 230",message="the name of an ImageBasedGroupUpgrade must be shorter than 230 characters"
type ImageBasedGroupUpgrade struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ImageBasedGroupUpgradeSpec   `json:"spec,omitempty"`
	Status ImageBasedGroupUpgradeStatus `json:"status,omitempty"`
}

// ImageBasedGroupUpgradeList is a list of ImageBasedGroupUpgrades.
// +kubebuilder:object:root=true
type ImageBasedGroupUpgradeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ImageBasedGroupUpgrade `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ImageBasedGroupUpgrade{}, &ImageBasedGroupUpgradeList{})
}
