package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Bounds of a ReleaseTrain's spec and status.
const (
	// TrainRingLimit is the most rings a train has.
	TrainRingLimit = 16
	// TrainLedgerLimit is the most releases the ledger keeps: the oldest ended ones leave
	// first.
	TrainLedgerLimit = 16
	// TrainHubLimit is the most regional hubs a ring names.
	TrainHubLimit = 64
)

// Conditions of a ReleaseTrain, besides Reconciled.
const (
	// TrainConditionSourceRead is True once the releases were read: the channel's graph
	// fetched, or the versions named by hand.
	TrainConditionSourceRead = "SourceRead"
	// TrainConditionProgressing is True while some ring runs a release.
	TrainConditionProgressing = "Progressing"
	// TrainConditionHubsReporting is False while a regional hub of a running ring does not
	// report: its ring is held until it does.
	TrainConditionHubsReporting = "HubsReporting"
)

// Reasons of a ReleaseTrain's conditions.
const (
	// TrainReasonGraphRead (SourceRead=True): the channel's graph was fetched.
	TrainReasonGraphRead = "GraphRead"
	// TrainReasonVersionsNamed (SourceRead=True): the releases are named by hand.
	TrainReasonVersionsNamed = "VersionsNamed"
	// TrainReasonGraphUnavailable (SourceRead=False): the update service did not answer or
	// the channel has no release; the train goes on with the releases it has.
	TrainReasonGraphUnavailable = "GraphUnavailable"
	// TrainReasonRolling (Progressing=True): some ring runs a release.
	TrainReasonRolling = "Rolling"
	// TrainReasonAwaitingApproval (Progressing=False): the newest release waits for an
	// approval (spec.approval.approved).
	TrainReasonAwaitingApproval = "AwaitingApproval"
	// TrainReasonIdle (Progressing=False): every release the train knows has ended.
	TrainReasonIdle = "Idle"
	// TrainReasonPaused (Progressing=False): spec.paused; running rollouts go on, no release
	// enters a ring.
	TrainReasonPaused = "Paused"
	// TrainReasonAllReporting (HubsReporting=True): every regional hub of a running ring
	// reports.
	TrainReasonAllReporting = "AllReporting"
	// TrainReasonHubUnreachable (HubsReporting=False): a regional hub is not available on
	// this hub, or its ManifestWork does not report; the message names the hubs.
	TrainReasonHubUnreachable = "HubUnreachable"
)

// ReleaseState is where a release stands on the train.
// +kubebuilder:validation:Enum=AwaitingApproval;Waiting;Rolling;Delivered;Stopped;Superseded
type ReleaseState string

// The states of a release.
const (
	// ReleaseAwaitingApproval: found, not approved yet.
	ReleaseAwaitingApproval ReleaseState = "AwaitingApproval"
	// ReleaseWaiting: ready for its next ring, which still runs an older release.
	ReleaseWaiting ReleaseState = "Waiting"
	// ReleaseRolling: a ring runs it.
	ReleaseRolling ReleaseState = "Rolling"
	// ReleaseDelivered: qualified in the last ring.
	ReleaseDelivered ReleaseState = "Delivered"
	// ReleaseStopped: it failed a ring; no later ring is offered it.
	ReleaseStopped ReleaseState = "Stopped"
	// ReleaseSuperseded: a newer release took its place before its next ring.
	ReleaseSuperseded ReleaseState = "Superseded"
)

// RingState is where a release stands in one ring.
// +kubebuilder:validation:Enum=Rolling;Soaking;Qualified;Failed
type RingState string

// The states of a release in a ring.
const (
	// RingRolling: its rollout runs; fewer than minClusters clusters run it.
	RingRolling RingState = "Rolling"
	// RingSoaking: minClusters clusters run it; the soak has not passed.
	RingSoaking RingState = "Soaking"
	// RingQualified: it may enter the next ring.
	RingQualified RingState = "Qualified"
	// RingFailed: more clusters failed than the budget allows, or its rollout ended before it
	// qualified.
	RingFailed RingState = "Failed"
)

// ReleaseTrainSpec is an ordered list of rings and where releases come from: each release
// enters the first ring by itself (or once approved), and each later ring once it qualified in
// the one before.
type ReleaseTrainSpec struct {
	// Releases is where the train learns of releases.
	Releases TrainReleases `json:"releases"`
	// Rings are taken in order.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=name
	Rings []TrainRing `json:"rings"`
	// Approval makes a new release wait for an approval before it enters the first ring.
	// +optional
	Approval *TrainApproval `json:"approval,omitempty"`
	// Paused stops releases from entering rings; running rollouts go on.
	// +optional
	Paused bool `json:"paused,omitempty"`
}

// TrainReleases is a channel of the update graph the operator reads, or versions named by
// hand; the newest release not seen yet starts the train.
type TrainReleases struct {
	// Channel is the update channel, such as stable-4.16: the train takes its newest release,
	// and each ring's clusters are set to it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[a-z]+-[0-9]+\.[0-9]+$`
	Channel string `json:"channel"`
	// Upstream is the update service's graph API; by default the operator's
	// --update-service.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://`
	Upstream string `json:"upstream,omitempty"`
	// Versions names the releases by hand: the channel's graph is then read only for the
	// clusters' paths, and the newest version listed is the train's newest release.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:Pattern=`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`
	// +kubebuilder:validation:items:MaxLength=64
	Versions []string `json:"versions,omitempty"`
	// CheckInterval is how often the channel's graph is read for a new release (1h when
	// unset, at least 1m).
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m')",message="spec.releases.checkInterval must be at least 1m"
	CheckInterval *metav1.Duration `json:"checkInterval,omitempty"`
}

// TrainApproval makes new releases wait for an approval.
type TrainApproval struct {
	// Required makes a release found in the channel wait until it is listed in approved.
	Required bool `json:"required"`
	// Approved are the releases approved to enter the first ring (kubectl cgu train approve).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=64
	Approved []string `json:"approved,omitempty"`
}

// TrainRing is one ring: clusters of this hub, or of each regional hub it names, with the
// settings of their rollout and what a release must show before it leaves the ring.
// +kubebuilder:validation:XValidation:rule="(has(self.placement) && size(self.placement) > 0) || has(self.clusterSelector)",message="a ring selects clusters: placement or clusterSelector"
// +kubebuilder:validation:XValidation:rule="!has(self.hubNamespace) || (has(self.hubs) && size(self.hubs) > 0)",message="hubNamespace is for a ring of regional hubs: name them in hubs"
type TrainRing struct {
	// Name names the ring in the ledger and in the rollouts' names.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// Placement names Placements whose decisions select the ring's clusters (on each regional
	// hub, with hubs).
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Placement []PlacementReference `json:"placement,omitempty"`
	// ClusterSelector selects the ring's clusters (on each regional hub, with hubs).
	// +optional
	ClusterSelector *MCUClusterSelector `json:"clusterSelector,omitempty"`
	// Hubs names regional hubs, managed clusters of this hub that run cgu-operator: the ring's
	// rollout is delivered to each as a ManifestWork and runs there; this hub reads its
	// progress back. Without hubs the ring's clusters are this hub's.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=63
	Hubs []string `json:"hubs,omitempty"`
	// HubNamespace is the namespace of the rollout on each regional hub; the train's
	// namespace's name when unset.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	HubNamespace string `json:"hubNamespace,omitempty"`
	// UpgradeStrategy is the rollout's canaries, batch size and time budgets.
	// +optional
	UpgradeStrategy MCUUpgradeStrategy `json:"upgradeStrategy,omitempty"`
	// Rollout are the rollout's gates, windows and approvals. When it sets no maxFailures, the
	// rollout takes qualification.maxFailed as its budget: it starts no new batch once the
	// release failed the ring.
	// +optional
	Rollout *MCURollout `json:"rollout,omitempty"`
	// OCPOperators chooses the operators approved while a cluster upgrades.
	// +optional
	OCPOperators *OCPOperators `json:"ocpOperators,omitempty"`
	// AcceptedRisks are the conditional-update risks accepted in this ring.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	AcceptedRisks []AcceptedRisk `json:"acceptedRisks,omitempty"`
	// Qualification is what a release must show in this ring before it enters the next.
	// +optional
	Qualification RingQualification `json:"qualification,omitempty"`
}

// RingQualification is when a release qualifies in a ring: once at least minClusters of the ring's
// clusters run it, and have for soak, with at most maxFailed failed or timed-out clusters.
// The rollout's own analysis gates fail the clusters they judge, so a failed gate counts
// against maxFailed.
type RingQualification struct {
	// MinClusters is how many clusters must run the release; when unset, every cluster the
	// rollout upgrades but the held ones and the failed ones within maxFailed.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MinClusters *int32 `json:"minClusters,omitempty"`
	// Soak is how long minClusters must have run the release, such as 24h.
	// +optional
	Soak *metav1.Duration `json:"soak,omitempty"`
	// MaxFailed is the failure budget: failed or timed-out clusters beyond it stop the
	// release in this ring.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxFailed int32 `json:"maxFailed,omitempty"`
}

// ReleaseTrainStatus is the train's rings and its ledger. It stays small whatever the fleet
// and the number of releases.
type ReleaseTrainStatus struct {
	// ObservedGeneration is the spec generation this status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Newest is the newest release of the source, as last read.
	// +optional
	Newest string `json:"newest,omitempty"`
	// CheckedAt is when the channel's graph was last read.
	// +optional
	CheckedAt *metav1.Time `json:"checkedAt,omitempty"`
	// Rings is what each ring runs now, in the spec's order.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Rings []RingStatus `json:"rings,omitempty"`
	// Ledger is every release the train took, newest first: the rings it reached, when, on
	// how many clusters, and whether it qualified. At most TrainLedgerLimit (16).
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Ledger []LedgerRelease `json:"ledger,omitempty"`
	// Conditions are SourceRead, Progressing, HubsReporting and Reconciled.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// RingStatus is what one ring runs now.
type RingStatus struct {
	// Name is the ring's.
	Name string `json:"name"`
	// Release is the release the ring runs or last ran.
	// +optional
	Release string `json:"release,omitempty"`
	// Rollout is the name of the ManagedClustersUpgrade running it (on each regional hub,
	// with hubs; then also the ManifestWorks' name).
	// +optional
	Rollout string `json:"rollout,omitempty"`
	// Ended is true once the rollout ended: the ring may take a newer release.
	// +optional
	Ended bool `json:"ended,omitempty"`
	// Message says what blocks the ring's rollout, for a person to fix: its ManifestWork not
	// applied on a regional hub, or the rollout refusing its spec (no cluster selected, a
	// Placement missing, the update graph unavailable).
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
	// Unreachable names the ring's regional hubs that do not report, at most TrainHubLimit.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Unreachable []string `json:"unreachable,omitempty"`
}

// LedgerRelease is one release on the train.
type LedgerRelease struct {
	// Version is the release's.
	Version string `json:"version"`
	// State is where it stands.
	State ReleaseState `json:"state"`
	// FoundAt is when the train first saw it.
	FoundAt metav1.Time `json:"foundAt"`
	// Message says why it stands there: which ring stopped it, which release superseded it.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
	// Rings are the rings it entered, in order.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Rings []LedgerRing `json:"rings,omitempty"`
}

// LedgerRing is a release in one ring.
type LedgerRing struct {
	// Name is the ring's.
	Name string `json:"name"`
	// State is where the release stands in the ring.
	State RingState `json:"state"`
	// StartedAt is when its rollout was made.
	StartedAt metav1.Time `json:"startedAt"`
	// Clusters is how many clusters the rollout upgrades (held ones aside).
	Clusters int `json:"clusters"`
	// Complete is how many run the release.
	Complete int `json:"complete"`
	// Failed is how many failed or timed out.
	Failed int `json:"failed"`
	// SoakingSince is when minClusters first ran it.
	// +optional
	SoakingSince *metav1.Time `json:"soakingSince,omitempty"`
	// DecidedAt is when it qualified or failed.
	// +optional
	DecidedAt *metav1.Time `json:"decidedAt,omitempty"`
}

// ReleaseTrain takes each new release of a channel through ordered rings of clusters, on this
// hub or on regional hubs, and lets it into a ring only once it qualified in the one before.
// An addition to TALM's API.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=releasetrains,shortName=train,categories=cgu-operator
// +kubebuilder:printcolumn:name="Channel",type=string,JSONPath=`.spec.releases.channel`
// +kubebuilder:printcolumn:name="Newest",type=string,JSONPath=`.status.newest`
// +kubebuilder:printcolumn:name="Progressing",type=string,JSONPath=`.status.conditions[?(@.type=="Progressing")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ReleaseTrain struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ReleaseTrainSpec   `json:"spec"`
	Status ReleaseTrainStatus `json:"status,omitempty"`
}

// ReleaseTrainList is a list of ReleaseTrains.
//
// +kubebuilder:object:root=true
type ReleaseTrainList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ReleaseTrain `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ReleaseTrain{}, &ReleaseTrainList{})
}
