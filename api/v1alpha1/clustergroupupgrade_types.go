package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// DefaultTimeoutMinutes is the overall rollout timeout used when
// spec.remediationStrategy.timeout is absent.
const DefaultTimeoutMinutes = 240

// ClusterDetailLimit bounds every per-cluster list the operator writes: the clusters of the
// current batch shown in a ClusterGroupUpgrade's status, and the clusters held by one
// ClusterGroupUpgradeBatch record. It keeps each object small whatever the fleet size.
const ClusterDetailLimit = 250

// ApprovalLimit is how many approvals status keeps, the latest ones.
const ApprovalLimit = 20

// MessageLimit bounds status.message and the message of each condition the operator
// writes; a longer message (say, naming thousands of unknown clusters) is cut and says how
// many items it left out.
const MessageLimit = 1024

// CheckDetailLimit bounds the clusters status.upgradeChecks lists by name; kubectl cgu
// preflight shows every cluster's verdict.
const CheckDetailLimit = 12

// CheckMessageLimit bounds the message of one cluster's verdict in status.
const CheckMessageLimit = 512

// RemediationStrategySpec says how the selected clusters are split into batches and how long
// the rollout may take.
// +kubebuilder:validation:XValidation:rule="!has(self.progressive) || (has(self.mode) && self.mode == 'Progressive')",message="spec.remediationStrategy.progressive is set only with mode Progressive"
// +kubebuilder:validation:XValidation:rule="(!has(self.spread) && !has(self.antiAffinity)) || !has(self.mode) || self.mode == 'Batches'",message="spec.remediationStrategy.spread and antiAffinity shape batches: they are set only with mode Batches"
// +kubebuilder:validation:XValidation:rule="!has(self.spread) || !has(self.antiAffinity) || !self.spread.exists(s, s.labelKey in self.antiAffinity)",message="spec.remediationStrategy.antiAffinity names a label key spread also names: anti-affinity is a spread of one per batch, say it once"
type RemediationStrategySpec struct {
	// Canaries names clusters remediated first, one batch each, before any other cluster.
	// Each must also be selected by clusters, clusterSelector or clusterLabelSelectors.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:XValidation:rule="self.all(n, n != '')",message="spec.remediationStrategy.canaries must not contain an empty name"
	Canaries []string `json:"canaries,omitempty"`

	// MaxConcurrency is the number of clusters remediated at once, that is the size of
	// each non-canary batch. Zero, or more than the number of clusters, makes one batch.
	// +kubebuilder:validation:XValidation:rule="self >= 0",message="spec.remediationStrategy.maxConcurrency must not be negative"
	MaxConcurrency int `json:"maxConcurrency"`

	// Timeout is the time, in minutes, the whole rollout may take. Each batch gets the
	// time left divided by the batches left. Absent means 240. Zero means no time: a
	// running rollout whose timeout is lowered to 0 (or below the time it has run) times
	// out at once, as in TALM.
	// +optional
	// +kubebuilder:default=240
	// +kubebuilder:validation:XValidation:rule="self >= 0",message="spec.remediationStrategy.timeout must not be negative"
	// +kubebuilder:validation:XValidation:rule="self <= 5256000",message="spec.remediationStrategy.timeout must be at most 5256000 minutes (ten years)"
	Timeout int `json:"timeout,omitempty"`

	// Mode says how the clusters after the canaries are remediated. Batches (the default,
	// TALM's): batches of maxConcurrency clusters, each starting when the previous one
	// ended. Window: one sliding window of at most maxConcurrency clusters in progress; when
	// one is done the next planned cluster starts, and each cluster has a deadline of its own.
	// Progressive: stages that grow after each healthy one, as progressive says, up to
	// maxConcurrency; an unhealthy stage starts the growth again, or stops the rollout
	// (docs/state-machine.md). An addition to TALM's API.
	// +optional
	// +kubebuilder:validation:Enum=Batches;Window;Progressive
	Mode RolloutMode `json:"mode,omitempty"`

	// Progressive sizes the stages of the Progressive mode; absent, they are 1%, 5% and 25%
	// of the clusters after the canaries, then maxConcurrency, and an unhealthy stage starts
	// the growth again. Set only with mode Progressive.
	// +optional
	Progressive *ProgressiveSpec `json:"progressive,omitempty"`

	// Spread bounds, for each value of a ManagedCluster label (a site, a region), how many
	// clusters with that value one batch holds; the plan honours it before maxConcurrency,
	// adding batches where it must. A cluster without the label is not bounded by it. Set
	// only with mode Batches; canaries are one per batch anyway. An addition to TALM's API
	// (docs/spread.md).
	// +optional
	// +listType=map
	// +listMapKey=labelKey
	// +kubebuilder:validation:MaxItems=8
	Spread []SpreadConstraint `json:"spread,omitempty"`

	// AntiAffinity names ManagedCluster label keys (a redundancy group) no two clusters of
	// one batch share a value of: a spread of one per batch. An addition to TALM's API.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=317
	// +kubebuilder:validation:XValidation:rule="self.all(k, !format.qualifiedName().validate(k).hasValue())",message="spec.remediationStrategy.antiAffinity: every key must be a valid label key: an optional DNS subdomain prefix and '/', then a name of at most 63 characters, alphanumeric at both ends, with '-', '_' and '.' between"
	AntiAffinity []string `json:"antiAffinity,omitempty"`
}

// SpreadConstraint bounds how many clusters with one value of a label a batch holds.
type SpreadConstraint struct {
	// LabelKey is the ManagedCluster label whose values are spread over the batches.
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:XValidation:rule="!format.qualifiedName().validate(self).hasValue()",message="spec.remediationStrategy.spread[].labelKey must be a valid label key: an optional DNS subdomain prefix and '/', then a name of at most 63 characters, alphanumeric at both ends, with '-', '_' and '.' between"
	LabelKey string `json:"labelKey"`
	// MaxPerBatch is the most clusters with one value of the label in one batch.
	// +kubebuilder:validation:Minimum=1
	MaxPerBatch int32 `json:"maxPerBatch"`
}

// ProgressiveSpec says how the stages of a Progressive rollout grow, after the canaries: a
// stated schedule, or a growth factor, each size capped at maxConcurrency; the stages after
// the schedule take maxConcurrency clusters. A stage is healthy when its failed and timed-out
// clusters are within its share of spec.maxFailures (none without a budget).
// +kubebuilder:validation:XValidation:rule="!(has(self.steps) && has(self.factor))",message="spec.remediationStrategy.progressive takes steps or a factor, not both"
type ProgressiveSpec struct {
	// Steps are the sizes of the first stages, in order: each a number of clusters, or a
	// percentage of the clusters after the canaries ("5%", rounded up, at least one).
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:XIntOrString
	// +kubebuilder:validation:items:MaxLength=12
	// +kubebuilder:validation:XValidation:rule="self.all(s, type(s) == int ? s >= 1 : s.matches('^(100|[1-9]?[0-9])([.][0-9]+)?%$') && s != '0%')",message="spec.remediationStrategy.progressive.steps must be positive counts or percentages up to 100% such as 5%"
	Steps []intstr.IntOrString `json:"steps,omitempty"`
	// Factor multiplies each stage's size for the next one, starting from one cluster, up to
	// maxConcurrency.
	// +optional
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=100
	Factor *int32 `json:"factor,omitempty"`
	// OnUnhealthy is what an unhealthy stage does: Reset (the default) starts the growth again
	// from the first size; Stop ends the rollout once the stage ended.
	// +optional
	// +kubebuilder:validation:Enum=Reset;Stop
	OnUnhealthy UnhealthyAction `json:"onUnhealthy,omitempty"`
}

// UnhealthyAction is what an unhealthy stage of a Progressive rollout does.
type UnhealthyAction string

const (
	// UnhealthyReset starts the growth again from the first size.
	UnhealthyReset UnhealthyAction = "Reset"
	// UnhealthyStop ends the rollout once the stage ended.
	UnhealthyStop UnhealthyAction = "Stop"
)

// RolloutMode is how the clusters after the canaries are remediated.
type RolloutMode string

const (
	// ModeBatches remediates batches of maxConcurrency clusters, one after the other (TALM's).
	ModeBatches RolloutMode = "Batches"
	// ModeWindow keeps up to maxConcurrency clusters in progress, starting the next planned
	// cluster as soon as one is done.
	ModeWindow RolloutMode = "Window"
	// ModeProgressive runs stages that grow after each healthy one.
	ModeProgressive RolloutMode = "Progressive"
)

// NamespacedCR names a namespaced object.
type NamespacedCR struct {
	// Name of the object.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`
	// Namespace of the object.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}

// BlockingCR names another ClusterGroupUpgrade that must complete before this one starts.
// An empty namespace means the namespace of the ClusterGroupUpgrade that lists it.
// +kubebuilder:validation:XValidation:rule="has(self.name) && size(self.name) > 0",message="spec.blockingCRs[].name must not be empty"
type BlockingCR NamespacedCR

// PreCachingConfigCR refers to a PreCachingConfig. An empty namespace means the namespace of
// the ClusterGroupUpgrade; leaving the reference out (or writing `{}`) refers to none.
// +kubebuilder:validation:XValidation:rule="!has(self.name) || size(self.name) > 0",message="spec.preCachingConfigRef.name must not be empty: name a PreCachingConfig or leave preCachingConfigRef out"
// +kubebuilder:validation:XValidation:rule="has(self.name) || !has(self.__namespace__) || size(self.__namespace__) == 0",message="spec.preCachingConfigRef.namespace needs spec.preCachingConfigRef.name"
type PreCachingConfigCR NamespacedCR

// ClusterLabelSelector selects clusters by label: a Kubernetes label selector (the fields and
// meaning of metav1.LabelSelector), whose operators and values admission checks.
type ClusterLabelSelector struct {
	// MatchLabels selects the clusters with each of these labels and values.
	// +optional
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
	// MatchExpressions selects the clusters that meet each requirement.
	// +optional
	// +listType=atomic
	MatchExpressions []ClusterSelectorRequirement `json:"matchExpressions,omitempty"`
}

// ClusterSelectorRequirement is one requirement on a cluster label (metav1.LabelSelectorRequirement).
// +kubebuilder:validation:XValidation:rule="!(self.operator in ['In', 'NotIn']) || (has(self.values) && size(self.values) > 0)",message="values must not be empty for operator In or NotIn"
// +kubebuilder:validation:XValidation:rule="!(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || size(self.values) == 0",message="values must be empty for operator Exists or DoesNotExist"
type ClusterSelectorRequirement struct {
	// Key is the label key.
	Key string `json:"key"`
	// Operator is In, NotIn, Exists or DoesNotExist.
	// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist
	Operator metav1.LabelSelectorOperator `json:"operator"`
	// Values are the label values In and NotIn compare with; Exists and DoesNotExist take
	// none.
	// +optional
	// +listType=atomic
	Values []string `json:"values,omitempty"`
}

// LabelSelector returns the selector as a metav1.LabelSelector.
func (s ClusterLabelSelector) LabelSelector() metav1.LabelSelector {
	out := metav1.LabelSelector{MatchLabels: s.MatchLabels}
	for _, e := range s.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, metav1.LabelSelectorRequirement{Key: e.Key, Operator: e.Operator, Values: e.Values})
	}
	return out
}

// LabelValue is the value of a Kubernetes label: at most 63 characters, alphanumeric at both
// ends, with '-', '_' and '.' between; empty is allowed.
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
type LabelValue string

// ClusterActions changes labels and annotations of the selected ManagedClusters. Keys must be
// valid label keys and label values valid label values, so that every write the actions call
// for can be made (TALM accepts any string and fails at run time).
type ClusterActions struct {
	// AddClusterLabels adds or updates these labels.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, !format.qualifiedName().validate(k).hasValue())",message="every key must be a valid label key: an optional DNS subdomain prefix and '/', then a name of at most 63 characters, alphanumeric at both ends, with '-', '_' and '.' between"
	AddClusterLabels map[string]LabelValue `json:"addClusterLabels,omitempty"`
	// DeleteClusterLabels removes these labels (only the keys are used).
	// Deprecated: use removeClusterLabels.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, !format.qualifiedName().validate(k).hasValue())",message="every key must be a valid label key: an optional DNS subdomain prefix and '/', then a name of at most 63 characters, alphanumeric at both ends, with '-', '_' and '.' between"
	DeleteClusterLabels map[string]string `json:"deleteClusterLabels,omitempty"`
	// RemoveClusterLabels removes the labels with these keys.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=317
	// +kubebuilder:validation:items:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	RemoveClusterLabels []string `json:"removeClusterLabels,omitempty"`
	// AddClusterAnnotations adds or updates these annotations.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, !format.qualifiedName().validate(k.lowerAscii()).hasValue())",message="every key must be a valid annotation key: an optional DNS subdomain prefix and '/', then a name of at most 63 characters, alphanumeric at both ends, with '-', '_' and '.' between"
	AddClusterAnnotations map[string]string `json:"addClusterAnnotations,omitempty"`
	// RemoveClusterAnnotations removes the annotations with these keys.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=317
	// +kubebuilder:validation:items:Pattern=`^([A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	RemoveClusterAnnotations []string `json:"removeClusterAnnotations,omitempty"`
}

// BeforeEnable holds the actions applied to every selected cluster when the rollout starts.
type BeforeEnable struct {
	ClusterActions `json:",inline"`
}

// AfterCompletion holds the actions applied to each cluster as it completes, and the cleanup
// done when the whole rollout completes.
type AfterCompletion struct {
	ClusterActions `json:",inline"`
	// DeleteObjects removes the objects the rollout created (enforce copies of the policies,
	// Placements, PlacementBindings, ManagedClusterViews and ManagedClusterActions) once the
	// rollout completes. Absent means true.
	// +optional
	// +kubebuilder:default=true
	DeleteObjects *bool `json:"deleteObjects,omitempty"`
}

// Actions are done before the rollout starts and after it completes.
type Actions struct {
	// BeforeEnable is applied to every selected cluster when the rollout starts.
	// +optional
	BeforeEnable *BeforeEnable `json:"beforeEnable,omitempty"`
	// AfterCompletion is applied to each cluster as it completes.
	// +optional
	AfterCompletion *AfterCompletion `json:"afterCompletion,omitempty"`
}

// OperatorUpgrades chooses Subscriptions by name and namespace.
type OperatorUpgrades struct {
	// Include lists the only Subscriptions chosen; empty chooses all.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	Include []SubscriptionRef `json:"include,omitempty"`
	// Exclude lists Subscriptions never chosen; it wins over include.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	Exclude []SubscriptionRef `json:"exclude,omitempty"`
}

// SubscriptionRef names an OLM Subscription on the managed clusters.
type SubscriptionRef struct {
	// Name is the Subscription's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Namespace is the Subscription's namespace; empty matches any.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}

// BatchTimeoutAction says what happens when a non-canary batch times out.
// +kubebuilder:validation:XValidation:rule="size(self) == 0 || self in ['Continue', 'Abort']",message="spec.batchTimeoutAction must be Continue or Abort"
type BatchTimeoutAction string

const (
	// BatchTimeoutContinue stops remediating the timed-out clusters and starts the next batch.
	BatchTimeoutContinue BatchTimeoutAction = "Continue"
	// BatchTimeoutAbort ends the rollout in the TimedOut state.
	BatchTimeoutAbort BatchTimeoutAction = "Abort"
)

// EnforcementMode is how managed policies are enforced.
// +kubebuilder:validation:Enum=Copy;Override
type EnforcementMode string

// Enforcement modes.
const (
	// EnforcementCopy enforces an enforce copy of each managed policy (TALM's design).
	EnforcementCopy EnforcementMode = "Copy"
	// EnforcementOverride enforces the policy itself with ACM's binding override.
	EnforcementOverride EnforcementMode = "Override"
)

// MaintenanceWindows say when new batches may start: not before StartAt, and, when Windows
// are given, only inside one of them.
type MaintenanceWindows struct {
	// StartAt is when the first batch may start at the earliest.
	// +optional
	StartAt *metav1.Time `json:"startAt,omitempty"`
	// Windows are recurring windows; a batch may start inside any of them.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	Windows []MaintenanceWindow `json:"windows,omitempty"`
}

// MaintenanceWindow is a recurring window of time.
type MaintenanceWindow struct {
	// Days the window starts on (Monday to Sunday, or Mon to Sun); empty means every day.
	// +optional
	// +kubebuilder:validation:MaxItems=7
	Days []string `json:"days,omitempty"`
	// Start is the time of day the window opens, "HH:MM" in TimeZone.
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	Start string `json:"start"`
	// Duration is how long the window stays open, for example "4h" (at most a week).
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|ms|s|m|h))+)$') && duration(self) >= duration('0s')",message="spec.maintenanceWindows.windows[].duration must be a duration such as 90m or 1h30m"
	Duration metav1.Duration `json:"duration"`
	// TimeZone is an IANA time zone name such as "Europe/Paris"; empty means UTC.
	// +optional
	TimeZone string `json:"timeZone,omitempty"`
}

// ApprovalGates say which batches wait for an approval.
type ApprovalGates struct {
	// AfterCanaries makes the first batch after the canaries wait for an approval.
	// +optional
	AfterCanaries bool `json:"afterCanaries,omitempty"`
	// EveryBatch makes every batch but the first wait for an approval.
	// +optional
	EveryBatch bool `json:"everyBatch,omitempty"`
}

// LocalPlacementReference names a Placement in the ClusterGroupUpgrade's namespace.
type LocalPlacementReference struct {
	// Name of the Placement.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// ClusterGroupUpgradeSpec is the desired rollout: which clusters, which policies, in which
// batches.
type ClusterGroupUpgradeSpec struct {
	// Clusters names managed clusters to remediate, in the order the plan takes them.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:XValidation:rule="self.all(n, n != '')",message="spec.clusters must not contain an empty name"
	Clusters []string `json:"clusters,omitempty"`

	// ClusterSelector selects clusters by label, one selector an item: "key=value" matches
	// that value, "key" (like "key=") the label with the empty value. Items are ORed.
	// Deprecated: use clusterLabelSelectors.
	// +optional
	ClusterSelector []string `json:"clusterSelector,omitempty"`

	// ClusterLabelSelectors selects clusters by label. A cluster is selected when any of
	// the selectors matches it. Clusters matched only by a selector follow those listed in
	// clusters, sorted by name.
	// +optional
	ClusterLabelSelectors []ClusterLabelSelector `json:"clusterLabelSelectors,omitempty"`

	// ManagedPolicies names the inform policies to remediate, in order. Each name is looked
	// up among the policies propagated to the selected clusters, in any namespace.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:XValidation:rule="self.all(n, n != '')",message="spec.managedPolicies must not contain an empty name"
	ManagedPolicies []string `json:"managedPolicies,omitempty"`

	// ManifestWorkTemplates names ManifestWorkReplicaSets in the CGU's namespace used as
	// templates for ManifestWorks rolled out per batch, in order.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.all(n, n != '')",message="spec.manifestWorkTemplates must not contain an empty name"
	ManifestWorkTemplates []string `json:"manifestWorkTemplates,omitempty"`

	// PreUpgradeActions names ManifestWorkReplicaSets in the CGU's namespace used as
	// templates of ManifestWorks applied to each cluster when its batch starts: the cluster
	// starts once every one is Available (and Complete, when its condition rules set
	// Complete). A Degraded one holds the cluster, which ends Held.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(n, n != '')",message="spec.preUpgradeActions must not contain an empty name"
	PreUpgradeActions []string `json:"preUpgradeActions,omitempty"`

	// PostUpgradeActions names ManifestWorkReplicaSets in the CGU's namespace used as
	// templates of ManifestWorks applied to each cluster once it completed its policies: the
	// cluster completes once every one is Available (and Complete, when its condition rules
	// set Complete); a Degraded one fails it.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(n, n != '')",message="spec.postUpgradeActions must not contain an empty name"
	PostUpgradeActions []string `json:"postUpgradeActions,omitempty"`

	// OperatorUpgrades chooses the Subscriptions with Manual InstallPlan approval, among
	// those of the managed policies, whose InstallPlans the operator approves on a cluster
	// while it enforces the policy there. Without it every such Subscription is chosen.
	// +optional
	OperatorUpgrades *OperatorUpgrades `json:"operatorUpgrades,omitempty"`

	// RemediationStrategy says how the clusters are split into batches and how long the
	// rollout may take.
	RemediationStrategy *RemediationStrategySpec `json:"remediationStrategy"`

	// Enable starts the rollout. While false the plan is computed and shown, and nothing is
	// enforced.
	// +optional
	// +kubebuilder:default=true
	Enable *bool `json:"enable,omitempty"`

	// PreCaching pulls the images the managed policies need onto every selected cluster,
	// whatever enable says.
	// +optional
	// +kubebuilder:default=false
	PreCaching bool `json:"preCaching,omitempty"`

	// PreCachingConfigRef refers to a PreCachingConfig that refines what is pre-cached.
	// +optional
	PreCachingConfigRef PreCachingConfigCR `json:"preCachingConfigRef,omitempty"`

	// Backup backs each planned cluster up before the upgrade (into /var/recovery on the
	// node), as TALM: the rollout starts once every backup ended, and a cluster whose backup
	// failed is not upgraded. Deprecated in TALM, which points to image-based upgrades.
	// +optional
	// +kubebuilder:default=false
	Backup bool `json:"backup,omitempty"`

	// BlockingCRs names ClusterGroupUpgrades that must complete before this one starts.
	// At most 10,000: the API server budgets the cost of the rule that refuses a
	// ClusterGroupUpgrade blocking on itself by the list's largest size.
	// +optional
	// +kubebuilder:validation:MaxItems=10000
	BlockingCRs []BlockingCR `json:"blockingCRs,omitempty"`

	// Actions are done before the rollout starts and after it completes.
	// +optional
	Actions Actions `json:"actions,omitempty"`

	// BatchTimeoutAction says what happens when a non-canary batch times out: Continue (the
	// default) or Abort.
	// +optional
	BatchTimeoutAction BatchTimeoutAction `json:"batchTimeoutAction,omitempty"`

	// Enforcement says how a managed policy is enforced on the clusters working on it:
	// Copy creates an enforce copy of the policy in the CGU's namespace bound to those
	// clusters (TALM 4.15 and older); Override binds the original policy to them with ACM's
	// binding override (subFilter restricted, remediationAction enforce), as TALM 4.16 and
	// later do, which needs ACM 2.9 or later. Absent, the operator's default: Override
	// where the hub's PlacementBindings have binding overrides, Copy otherwise
	// (status.enforcement says which). An addition to TALM's API.
	// +optional
	Enforcement EnforcementMode `json:"enforcement,omitempty"`

	// PlacementRef names a Placement in the CGU's namespace whose decisions add clusters
	// to the selection, after those of the other selection fields. An addition to TALM's
	// API.
	// +optional
	PlacementRef *LocalPlacementReference `json:"placementRef,omitempty"`

	// Paused holds a running rollout: clusters working on a policy go on, no new batch,
	// cluster or policy starts, and the time paused does not count against the timeouts.
	// An addition to TALM's API.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// MaintenanceWindows say when new batches may start; a running batch is never
	// interrupted. An addition to TALM's API.
	// +optional
	MaintenanceWindows *MaintenanceWindows `json:"maintenanceWindows,omitempty"`

	// Approval makes batches wait for an approval (kubectl cgu approve). An addition to
	// TALM's API.
	// +optional
	Approval *ApprovalGates `json:"approval,omitempty"`

	// BatchSoak is how long every cluster of a finished batch must stay compliant before the
	// batch counts as done and the next may start, for example "30m". An addition to TALM's
	// API.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|ms|s|m|h))+)$') && duration(self) >= duration('0s')",message="spec.batchSoak must be a duration such as 90m or 1h30m"
	BatchSoak *metav1.Duration `json:"batchSoak,omitempty"`

	// MaxFailures is the failure budget: a count (3) or a percentage of the planned clusters
	// ("10%") of failed and timed-out clusters; once exceeded no new batch starts and the
	// rollout ends. Absent means no budget. An addition to TALM's API.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 && self <= 2147483647 : self.matches('^0*([0-9]{1,2}|100)%$')",message="spec.maxFailures must be a non-negative count or a percentage such as 10% (at most 2147483647, or 100%)"
	MaxFailures *intstr.IntOrString `json:"maxFailures,omitempty"`

	// ClusterProgressDeadline is how long a cluster may take from the start of its batch
	// before it times out, whatever the batch's share of the timeout, for example "90m". An
	// addition to TALM's API.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|ms|s|m|h))+)$') && duration(self) >= duration('0s')",message="spec.clusterProgressDeadline must be a duration such as 90m or 1h30m"
	ClusterProgressDeadline *metav1.Duration `json:"clusterProgressDeadline,omitempty"`

	// UpgradeChecks judge, per cluster, the platform upgrade the managed policies ask for
	// (ClusterVersion spec.desiredUpdate or an UpgradeConfig) before the cluster is
	// enforced: no downgrade, a z-stream target the cluster offers, a y-stream target that
	// is an edge of the update graph, and conditional-update risks accepted. A cluster that
	// fails them is held: not enforced, not counted as failed. An addition to TALM's API.
	// +optional
	UpgradeChecks *UpgradeChecks `json:"upgradeChecks,omitempty"`

	// Analysis judges each batch by its upgraded clusters' metrics before the batch ends:
	// PromQL queries against a Prometheus-compatible API (docs/analysis.md). A failed gate
	// fails the clusters it names. An addition to TALM's API.
	// +optional
	Analysis *Analysis `json:"analysis,omitempty"`

	// SilenceAlerts silences, on the Alertmanager the operator is given, each cluster's
	// alerts of the severities an upgrade is expected to raise while the cluster upgrades; a
	// silence ends at the cluster's deadline and is expired once the cluster completes or
	// fails (docs/silences.md). An addition to TALM's API.
	// +optional
	SilenceAlerts *SilenceAlerts `json:"silenceAlerts,omitempty"`
}

// UpgradeChecks configures the checks of the upgrade each cluster is asked to take.
// +kubebuilder:validation:XValidation:rule="(has(self.pathValidation) && self.pathValidation) || ((!has(self.acceptRisks) || size(self.acceptRisks) == 0) && (!has(self.allowNotRecommended) || !self.allowNotRecommended))",message="spec.upgradeChecks.acceptRisks and allowNotRecommended need pathValidation: true"
type UpgradeChecks struct {
	// PathValidation reads each selected cluster's ClusterVersion through a
	// ManagedClusterView and judges the upgrade the managed policies ask of it; the
	// verdicts are in status.upgradeChecks before the rollout is enabled.
	// +optional
	PathValidation bool `json:"pathValidation,omitempty"`
	// AcceptRisks names the conditional-update risks (the update graph's risk names, such
	// as "SRIOVFailedToConfigureVF") the rollout accepts: a cluster whose target is not
	// recommended only because of accepted risks proceeds, and the acceptance is recorded.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=128
	AcceptRisks []string `json:"acceptRisks,omitempty"`
	// AllowNotRecommended lets clusters proceed to targets that are not recommended for
	// them, whatever their risks, as "oc adm upgrade --allow-not-recommended" does.
	// +optional
	AllowNotRecommended bool `json:"allowNotRecommended,omitempty"`
	// UpdateService is the URL of the update service's graph API used for y-stream
	// targets, for example an OpenShift Update Service on the hub; by default each
	// cluster's ClusterVersion spec.upstream, else the operator's --update-service.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://`
	UpdateService string `json:"updateService,omitempty"`
	// Health runs a health check on each cluster, on the cluster itself (a Job the operator
	// starts through ManagedClusterActions and reads back through a ManagedClusterView): no
	// ClusterOperator Degraded or not Available, no critical alert firing, and, for a
	// y-stream upgrade (known with pathValidation), the ClusterVersion not
	// Upgradeable=False.
	// +optional
	Health *HealthChecks `json:"health,omitempty"`
}

// HealthChecks says when the health check runs.
type HealthChecks struct {
	// BeforeUpgrade checks each cluster right before it starts; a cluster that is not
	// healthy is held, not enforced.
	// +optional
	BeforeUpgrade bool `json:"beforeUpgrade,omitempty"`
	// AfterUpgrade checks each cluster once it complied with every managed policy; a
	// cluster that is not healthy fails.
	// +optional
	AfterUpgrade bool `json:"afterUpgrade,omitempty"`
}

// UpgradeState is the state of a rollout.
// +kubebuilder:validation:Enum=NotStarted;CannotStart;NotCompleted;TimedOut;Completed
type UpgradeState string

const (
	// StateNotStarted means the plan is known and the rollout is not enabled yet.
	StateNotStarted UpgradeState = "NotStarted"
	// StateCannotStart means the rollout is enabled and something (a blocking CR, an invalid
	// spec) keeps it from starting.
	StateCannotStart UpgradeState = "CannotStart"
	// StateNotCompleted means the rollout is enforcing policies, batch by batch.
	StateNotCompleted UpgradeState = "NotCompleted"
	// StateTimedOut means the rollout ran out of time; it still turns Completed if every
	// cluster becomes compliant.
	StateTimedOut UpgradeState = "TimedOut"
	// StateCompleted means every selected cluster is compliant with every managed policy.
	StateCompleted UpgradeState = "Completed"
)

// ClusterState is the state of one cluster in a rollout. Completed, TimedOut, Failed and Held
// are terminal.
// +kubebuilder:validation:Enum=Pending;InProgress;Completed;TimedOut;Failed;Held
type ClusterState string

const (
	// ClusterPending means the cluster's batch has not started.
	ClusterPending ClusterState = "Pending"
	// ClusterInProgress means the cluster is working through its policies.
	ClusterInProgress ClusterState = "InProgress"
	// ClusterCompleted means the cluster is compliant with every managed policy.
	ClusterCompleted ClusterState = "Completed"
	// ClusterTimedOut means the cluster's batch timed out before it completed.
	ClusterTimedOut ClusterState = "TimedOut"
	// ClusterFailed means the cluster cannot complete (for example it was deleted).
	ClusterFailed ClusterState = "Failed"
	// ClusterHeld means the upgrade checks held the cluster until its batch ended: it was
	// not enforced, and it does not count as failed. Reason says why.
	ClusterHeld ClusterState = "Held"
)

// ClusterProgress is where one cluster stands.
type ClusterProgress struct {
	// Name of the managed cluster.
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// State of the cluster in the rollout.
	State ClusterState `json:"state"`
	// CurrentPolicy is the managed policy the cluster is working on, while InProgress.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	CurrentPolicy string `json:"currentPolicy,omitempty"`
	// Since is when the cluster entered its state, or started its current policy.
	// +optional
	Since *metav1.Time `json:"since,omitempty"`
	// StartedAt is when the cluster started its first policy, in a Window or Progressive
	// rollout, where each cluster's deadline counts from its own start or its stage's.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// Stage is the 1-based stage of a Progressive rollout the cluster started in; unset
	// before it starts.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Stage int `json:"stage,omitempty"`
	// CompliantSince is when the current policy was first seen compliant, while the
	// cluster soaks on it (the policy's ran.openshift.io/soak-seconds annotation).
	// +optional
	CompliantSince *metav1.Time `json:"compliantSince,omitempty"`
	// Reason is a CamelCase word saying why the cluster is in its state, when that is
	// not obvious (for example why it failed).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Reason string `json:"reason,omitempty"`
	// SoftTimedOut names the best-effort managed policies (annotated
	// ran.openshift.io/soft-timeout-seconds) the cluster moved past without complying, once
	// their time ran out. An addition to TALM.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	SoftTimedOut []string `json:"softTimedOut,omitempty"`
}

// ClusterCounts counts the selected clusters by state.
type ClusterCounts struct {
	// Total is the number of clusters in the plan.
	Total int `json:"total"`
	// Pending clusters are in a batch that has not started.
	Pending int `json:"pending"`
	// InProgress clusters are in the current batch and not done.
	InProgress int `json:"inProgress"`
	// Completed clusters are compliant with every managed policy.
	Completed int `json:"completed"`
	// TimedOut clusters were in a batch that timed out.
	TimedOut int `json:"timedOut"`
	// Failed clusters cannot complete.
	Failed int `json:"failed"`
	// Held clusters were held by the upgrade checks and not enforced.
	// +optional
	Held int `json:"held,omitempty"`
}

// Add counts one more cluster in state s; an unknown state is not counted.
func (c *ClusterCounts) Add(s ClusterState) {
	switch s {
	case ClusterPending:
		c.Pending++
	case ClusterInProgress:
		c.InProgress++
	case ClusterCompleted:
		c.Completed++
	case ClusterTimedOut:
		c.TimedOut++
	case ClusterFailed:
		c.Failed++
	case ClusterHeld:
		c.Held++
	}
}

// Progress holds the printer-column strings, written with the counts they summarize.
type Progress struct {
	// Batch is "current/total", for example "2/5"; "0/5" before the rollout starts.
	// +optional
	Batch string `json:"batch,omitempty"`
	// Clusters is "done/total", done counting completed, timed-out, failed and held clusters.
	// +optional
	Clusters string `json:"clusters,omitempty"`
}

// PlanSummary describes the frozen remediation plan. The plan itself lives in
// ClusterGroupUpgradeBatch objects owned by the ClusterGroupUpgrade.
type PlanSummary struct {
	// Batches is the number of batches, canary batches included.
	Batches int `json:"batches"`
	// CanaryBatches is the number of leading batches that hold one canary each.
	// +optional
	CanaryBatches int `json:"canaryBatches,omitempty"`
	// Clusters is the number of clusters in the plan.
	Clusters int `json:"clusters"`
	// SkippedCompliant is the number of selected clusters left out of the plan because
	// they were already compliant with every managed policy.
	// +optional
	SkippedCompliant int `json:"skippedCompliant,omitempty"`
	// FrozenAt is when the rollout started and the plan stopped following the spec.
	// +optional
	FrozenAt *metav1.Time `json:"frozenAt,omitempty"`
	// Spread says how spec.remediationStrategy.spread and antiAffinity shaped the plan, one
	// entry per label key, as it was when the plan froze.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Spread []SpreadSummary `json:"spread,omitempty"`
	// SpreadAddedBatches is how many batches the spread added to those maxConcurrency
	// alone makes.
	// +optional
	SpreadAddedBatches int `json:"spreadAddedBatches,omitempty"`
}

// SpreadSummary is how one label key spread the plan's batches.
type SpreadSummary struct {
	// LabelKey is the label.
	LabelKey string `json:"labelKey"`
	// MaxPerBatch is the most clusters with one of its values in a batch.
	MaxPerBatch int `json:"maxPerBatch"`
	// Values is how many values of the label the planned clusters carry.
	Values int `json:"values"`
	// Largest is how many planned clusters the most common value has.
	Largest int `json:"largest"`
	// Unlabeled is how many planned clusters do not carry the label.
	// +optional
	Unlabeled int `json:"unlabeled,omitempty"`
}

// BatchStatus is the state of the batch being remediated.
type BatchStatus struct {
	// Index is the batch's 1-based position in the plan.
	Index int `json:"index"`
	// Canary is true for a canary batch.
	// +optional
	Canary bool `json:"canary,omitempty"`
	// StartedAt is when the batch started.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// TimeoutAt is when the batch times out.
	// +optional
	TimeoutAt *metav1.Time `json:"timeoutAt,omitempty"`
	// Clusters shows the batch's clusters, clusters not done first, at most
	// ClusterDetailLimit (250) of them; the batch's ClusterGroupUpgradeBatch objects hold
	// them all.
	// +optional
	// +kubebuilder:validation:MaxItems=250
	Clusters []ClusterProgress `json:"clusters,omitempty"`
	// ClustersNotShown is how many of the batch's clusters did not fit in clusters.
	// +optional
	ClustersNotShown int `json:"clustersNotShown,omitempty"`
	// Stage is the running stage of a Progressive batch.
	// +optional
	Stage *StageStatus `json:"stage,omitempty"`
	// Analysis is the batch's analysis (spec.analysis), once its clusters ended.
	// +optional
	Analysis *BatchAnalysis `json:"analysis,omitempty"`
}

// StageStatus is where a Progressive batch stands: the stage that runs, or ran last.
type StageStatus struct {
	// Number is the stage's 1-based position in the batch.
	Number int `json:"number"`
	// Size is how many clusters the stage takes.
	Size int `json:"size"`
	// Step is the 1-based position of the stage's size in the growth: 1 after a reset.
	Step int `json:"step"`
	// StartedAt is when the stage's first cluster started.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// TimeoutAt is when the stage's clusters time out.
	// +optional
	TimeoutAt *metav1.Time `json:"timeoutAt,omitempty"`
	// Resets is how many unhealthy stages started the growth again so far.
	// +optional
	Resets int `json:"resets,omitempty"`
	// Unhealthy describes the last unhealthy stage, when one was.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Unhealthy string `json:"unhealthy,omitempty"`
}

// PolicyReference names a policy.
type PolicyReference struct {
	// Name of the policy.
	Name string `json:"name"`
	// Namespace of the policy.
	Namespace string `json:"namespace"`
	// Generation is the policy's metadata.generation the rollout last accepted: when it
	// started, or when a batch was approved after the policy changed.
	// +optional
	Generation int64 `json:"generation,omitempty"`
}

// PrecachingSpec is what is pre-cached on each cluster: derived from the managed policies,
// refined by a PreCachingConfig (pkg/precache bounds it to this schema).
type PrecachingSpec struct {
	// PlatformImage is the OpenShift release image to pull.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	PlatformImage string `json:"platformImage,omitempty"`
	// OperatorsIndexes are the catalog index images operators come from.
	// +optional
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:items:MaxLength=512
	OperatorsIndexes []string `json:"operatorsIndexes,omitempty"`
	// OperatorsPackagesAndChannels lists "package:channel" entries to pull.
	// +optional
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:MaxLength=128
	OperatorsPackagesAndChannels []string `json:"operatorsPackagesAndChannels,omitempty"`
	// ExcludePrecachePatterns drops matching images.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=128
	ExcludePrecachePatterns []string `json:"excludePrecachePatterns,omitempty"`
	// SpaceRequired is the free space the image store needs, in whole GiB as TALM writes
	// it ("35", TALM's default when the PreCachingConfig sets none).
	// +optional
	// +kubebuilder:validation:MaxLength=32
	SpaceRequired string `json:"spaceRequired,omitempty"`
	// AdditionalImages are pulled as well.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=512
	AdditionalImages []string `json:"additionalImages,omitempty"`
}

// PrecachingStatus is the pre-caching state: its spec and how many clusters are in each
// precache state. Per-cluster precache states live in the ClusterGroupUpgradeBatch objects.
type PrecachingStatus struct {
	// Spec is what is pre-cached.
	// +optional
	Spec *PrecachingSpec `json:"spec,omitempty"`
	// Counts maps a precache state (NotStarted, Starting, Active, Succeeded, Timeout,
	// Failed) to the number of clusters in it.
	// +optional
	Counts map[string]int `json:"counts,omitempty"`
	// Status maps each cluster to its precache state, in TALM's words (TALM's). Past
	// TALMStatusBudget it is shortened: see status.shortened. Atomic, as
	// currentBatchRemediationProgress.
	// +optional
	// +mapType=atomic
	Status map[string]string `json:"status,omitempty"`
	// Clusters are the clusters pre-caching runs on (TALM's).
	// Deprecated: TALM's; read status.
	// +optional
	Clusters []string `json:"clusters,omitempty"`
	// Plan is the bandwidth plan of the pulls left, with a PreCachingConfig's bandwidth.
	// +optional
	Plan *PrecachePlan `json:"plan,omitempty"`
}

// PrecachePlan is when the pre-caching of the clusters left ends under the bandwidth budget.
type PrecachePlan struct {
	// ETA is when the plan ends, from the last time it was made; unset while what the
	// clusters pull is unknown (no payloadSize and no report yet).
	// +optional
	ETA *metav1.Time `json:"eta,omitempty"`
	// Deadline is when pre-caching should have ended: when spec.maintenanceWindows next let
	// the rollout start (startAt, the next window's opening, or the last pass while one is
	// open).
	// +optional
	Deadline *metav1.Time `json:"deadline,omitempty"`
	// Late is how much later than the deadline the plan ends ("1h20m0s"); empty when in time.
	// +optional
	Late string `json:"late,omitempty"`
	// Bytes is what the clusters left still pull, in all.
	// +optional
	Bytes int64 `json:"bytes,omitempty"`
	// Bound is what bounds the plan: "registry", "link <name>", "line of <cluster>".
	// +optional
	Bound string `json:"bound,omitempty"`
	// Unbounded counts the clusters no capacity bounds: the plan gives them no time.
	// +optional
	Unbounded int `json:"unbounded,omitempty"`
	// Slow are the slowest of the pulls under way that pull at less than a quarter of the
	// share the network gives them, at most 10; SlowCount counts them all.
	// +optional
	// +kubebuilder:validation:MaxItems=10
	Slow      []SlowPull `json:"slow,omitempty"`
	SlowCount int        `json:"slowCount,omitempty"`
}

// SlowPull is a pull that falls far below its share.
type SlowPull struct {
	Cluster string `json:"cluster"`
	// Kbps is the rate it pulled at since its Job started, in kbit/s.
	Kbps int64 `json:"kbps"`
	// ShareKbps is what the pulls under way and the budget leave it (pipe.Fair), in kbit/s.
	ShareKbps int64 `json:"shareKbps"`
}

// WaitingStatus is what a rollout waits for between two batches.
type WaitingStatus struct {
	// Reason is Paused, FleetFrozen, WaitingForApproval, ManagedPolicyChanged,
	// OutsideMaintenanceWindow, BatchSoaking, BatchAnalysis or AnalysisInconclusive.
	Reason string `json:"reason"`
	// Batch is the 1-based batch that waits.
	Batch int `json:"batch"`
	// Until is when the wait ends by itself (a window opening, a soak ending), if known.
	// +optional
	Until *metav1.Time `json:"until,omitempty"`
}

// BatchApproval records the approval of a batch.
type BatchApproval struct {
	// Batch is the 1-based batch approved.
	Batch int `json:"batch"`
	// By is who approved, as kubectl cgu approve read it from the API server
	// (SelfSubjectReview); the annotation it writes can be written by anyone allowed to
	// patch the ClusterGroupUpgrade, so RBAC decides who may approve.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	By string `json:"by,omitempty"`
	// At is when the operator saw the approval.
	At metav1.Time `json:"at"`
}

// ClusterGroupUpgradeStatus is the observed state of a rollout. It stays small whatever the
// fleet size: per-cluster detail is bounded by ClusterDetailLimit.
type ClusterGroupUpgradeStatus struct {
	// ObservedGeneration is the spec generation this status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Enforcement is how the rollout enforces its managed policies: spec.enforcement, or
	// the operator's default when the spec says nothing (Override on a hub whose
	// PlacementBindings have binding overrides, unless --default-enforcement says
	// otherwise). Frozen when the rollout starts. An addition to TALM's status.
	// +optional
	Enforcement EnforcementMode `json:"enforcement,omitempty"`
	// State is the state of the rollout.
	// +optional
	State UpgradeState `json:"state,omitempty"`
	// Message says in one line what the rollout is doing or waiting for.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
	// Progress holds the strings of the Batch and Clusters printer columns.
	// +optional
	Progress Progress `json:"progress,omitempty"`
	// Conditions: TALM's ClustersSelected, Validated, PrecacheSpecValid, PrecachingSuceeded
	// and BackupSuceeded (TALM's spelling), Progressing and Succeeded, and ours
	// (UpgradeChecked, Reconciled). The order is TALM's, which `oc get cgu` and scripts read
	// the last one of: a new condition is appended, one whose status changes moves to the end
	// (unless last already), and ours never stand last.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Counts counts the clusters of the plan by state.
	// +optional
	Counts ClusterCounts `json:"counts,omitempty"`
	// Plan describes the remediation plan.
	// +optional
	Plan *PlanSummary `json:"plan,omitempty"`
	// CurrentBatch is the batch being remediated.
	// +optional
	CurrentBatch *BatchStatus `json:"currentBatch,omitempty"`
	// StartedAt is when the rollout started.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// CompletedAt is when the rollout completed.
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`
	// ManagedPoliciesForUpgrade are the managed policies some selected cluster does not
	// comply with, resolved to their namespaces, in spec order (TALM's): the policies the
	// rollout enforces. Frozen when the rollout starts.
	// +optional
	ManagedPoliciesForUpgrade []PolicyReference `json:"managedPoliciesForUpgrade,omitempty"`
	// ManagedPoliciesCompliantBeforeUpgrade are managed policies every selected cluster
	// already complied with (TALM's); they are not enforced.
	// +optional
	ManagedPoliciesCompliantBeforeUpgrade []string `json:"managedPoliciesCompliantBeforeUpgrade,omitempty"`
	// ManagedPoliciesNs maps each managed policy's name to its namespace (TALM's).
	// +optional
	ManagedPoliciesNs map[string]string `json:"managedPoliciesNs,omitempty"`
	// ManagedPoliciesContent maps a managed policy to the objects of its templates that
	// pre-caching and the InstallPlan approval read, as JSON (TALM's).
	// +optional
	ManagedPoliciesContent map[string]string `json:"managedPoliciesContent,omitempty"`
	// Placements are the Placements the rollout binds its enforcement with (TALM's).
	// +optional
	Placements []string `json:"placements,omitempty"`
	// PlacementBindings are the PlacementBindings the rollout made (TALM's).
	// +optional
	PlacementBindings []string `json:"placementBindings,omitempty"`
	// CopiedPolicies are the enforce copies of the managed policies, in Copy mode (TALM's).
	// +optional
	CopiedPolicies []string `json:"copiedPolicies,omitempty"`
	// SafeResourceNames maps the name an object would have if names had no length limit
	// to the name it has (TALM's).
	// +optional
	SafeResourceNames map[string]string `json:"safeResourceNames,omitempty"`
	// NameSuffix is TALM's name-suffix annotation (AnnotationNameSuffix) as the rollout
	// found it when it started: set, its Placements, PlacementBindings and step
	// ManifestWorks are named as TALM names them, with this suffix. Frozen, so that a
	// changed annotation never leaves objects behind under the old names.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	NameSuffix string `json:"nameSuffix,omitempty"`
	// RemediationPlan is the plan, one list of cluster names a batch, canaries first
	// (TALM's). Past TALMStatusBudget it is shortened: see status.shortened.
	// +optional
	RemediationPlan [][]string `json:"remediationPlan,omitempty"`
	// ComputedMaxConcurrency is the size of the non-canary batches (TALM's).
	// +optional
	ComputedMaxConcurrency int `json:"computedMaxConcurrency,omitempty"`
	// Status is TALM's status.status: start, end and the running batch's progress.
	// +optional
	Status UpgradeStatus `json:"status,omitempty"`
	// Clusters are the clusters of the ended batches and their final state (TALM's).
	// Past TALMStatusBudget it is shortened: see status.shortened.
	// +optional
	Clusters []ClusterFinalState `json:"clusters,omitempty"`
	// Backup is TALM's backup status, written when spec.backup is true.
	// +optional
	Backup *BackupStatus `json:"backup,omitempty"`
	// Shortened says which of TALM's fleet-sized fields were shortened to keep the status
	// within TALMStatusBudget; absent when every one is written in full.
	// +optional
	Shortened *ShortenedStatus `json:"shortened,omitempty"`
	// Precaching is the pre-caching state, when spec.preCaching is true.
	// +optional
	Precaching *PrecachingStatus `json:"precaching,omitempty"`

	// Waiting says what the rollout waits for between two batches, while it does.
	// +optional
	Waiting *WaitingStatus `json:"waiting,omitempty"`
	// Approvals record the approved batches, the latest ApprovalLimit of them: which, by
	// whom, when (each one is also an event).
	// +optional
	// +kubebuilder:validation:MaxItems=20
	Approvals []BatchApproval `json:"approvals,omitempty"`
	// PausedAt is when the current pause began, while spec.paused holds the rollout.
	// +optional
	PausedAt *metav1.Time `json:"pausedAt,omitempty"`
	// PausedFor is the time spent paused in pauses that ended; it moves the deadlines.
	// +optional
	PausedFor *metav1.Duration `json:"pausedFor,omitempty"`
	// UpgradeChecks are the verdicts of spec.upgradeChecks on the clusters that have not
	// started, while pathValidation is on.
	// +optional
	UpgradeChecks *UpgradeChecksStatus `json:"upgradeChecks,omitempty"`
	// Silences are the silences of the clusters upgrading now (spec.silenceAlerts).
	// +optional
	Silences *SilencesStatus `json:"silences,omitempty"`
}

// UpgradeChecksStatus counts the clusters that have not started by verdict and names those
// that need attention.
type UpgradeChecksStatus struct {
	// Counts maps an outcome to its number of clusters: Proceed (may be enforced), Done
	// (already at the target), Hold (not enforced, for a reason that may pass: a risk not
	// accepted, an unreadable ClusterVersion, the graph unavailable) and Reject (never
	// enforced: a downgrade, a target not offered or not in the graph).
	// +optional
	Counts map[string]int `json:"counts,omitempty"`
	// Clusters are the clusters held or rejected, then those that proceed only because
	// risks were accepted, at most CheckDetailLimit (12); kubectl cgu preflight lists all.
	// +optional
	// +kubebuilder:validation:MaxItems=12
	Clusters []ClusterCheck `json:"clusters,omitempty"`
	// ClustersNotShown is how many such clusters did not fit in clusters.
	// +optional
	ClustersNotShown int `json:"clustersNotShown,omitempty"`
}

// ClusterCheck is the verdict of the upgrade checks on one cluster.
type ClusterCheck struct {
	// Name of the managed cluster.
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Outcome is Proceed, Done, Hold or Reject.
	// +kubebuilder:validation:Enum=Proceed;Done;Hold;Reject
	Outcome string `json:"outcome"`
	// Reason is a CamelCase word, for example NotRecommended or Downgrade.
	// +kubebuilder:validation:MaxLength=64
	Reason string `json:"reason"`
	// Message explains the verdict, naming versions and risks.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`
	// AcceptedRisks are the risks the rollout accepted for this cluster.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=128
	AcceptedRisks []string `json:"acceptedRisks,omitempty"`
}

// ClusterGroupUpgrade rolls inform policies out to a group of managed clusters, batch by
// batch, by enforcing them on one batch at a time.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=clustergroupupgrades,shortName=cgu;cgus,categories=cgu-operator
// TALM's columns, in TALM's order and meaning (the reason and message of the last
// condition), then ours, shown with -o wide:
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[-1:].reason`
// +kubebuilder:printcolumn:name="Details",type=string,JSONPath=`.status.conditions[-1:].message`
// +kubebuilder:printcolumn:name="Rollout",type=string,JSONPath=`.status.state`,priority=1
// +kubebuilder:printcolumn:name="Batch",type=string,JSONPath=`.status.progress.batch`,priority=1
// +kubebuilder:printcolumn:name="Clusters",type=string,JSONPath=`.status.progress.clusters`,priority=1
// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(self.spec.blockingCRs) || !self.spec.blockingCRs.exists(b, b.name == self.metadata.name && (!has(b.__namespace__) || size(b.__namespace__) == 0))",message="spec.blockingCRs must not name the ClusterGroupUpgrade itself"
// Once the rollout started, status.enforcement is the mode it runs in: spec.enforcement may
// be kept, removed or set to that mode, never changed to the other one (whose objects would
// enforce beside the first mode's).
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.startedAt) || !has(self.spec) || !has(self.spec.enforcement) || (has(oldSelf.spec) && has(oldSelf.spec.enforcement) && self.spec.enforcement == oldSelf.spec.enforcement) || (has(oldSelf.status.enforcement) && self.spec.enforcement == oldSelf.status.enforcement)",message="spec.enforcement cannot change once the rollout started: status.enforcement is the mode it runs in"
type ClusterGroupUpgrade struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterGroupUpgradeSpec   `json:"spec,omitempty"`
	Status ClusterGroupUpgradeStatus `json:"status,omitempty"`
}

// ClusterGroupUpgradeList is a list of ClusterGroupUpgrades.
//
// +kubebuilder:object:root=true
type ClusterGroupUpgradeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterGroupUpgrade `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ClusterGroupUpgrade{}, &ClusterGroupUpgradeList{})
}
