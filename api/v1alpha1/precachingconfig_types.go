package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PrecacheOverrides replace what the operator derives from the managed policies.
type PrecacheOverrides struct {
	// PlatformImage replaces the release image derived from the ClusterVersion policy.
	// +optional
	PlatformImage string `json:"platformImage,omitempty"`
	// OperatorsIndexes replaces the catalog index images derived from CatalogSource policies.
	// +optional
	OperatorsIndexes []string `json:"operatorsIndexes,omitempty"`
	// OperatorsPackagesAndChannels replaces the "package:channel" entries derived from
	// Subscription policies.
	// +optional
	OperatorsPackagesAndChannels []string `json:"operatorsPackagesAndChannels,omitempty"`
	// PreCacheImage is accepted and not used, as TALM does not use it: the precache Job
	// runs the operator's spoke image (its --spoke-image), so that a PreCachingConfig
	// cannot choose what runs on the spokes with the Job's rights.
	// +optional
	PreCacheImage string `json:"preCacheImage,omitempty"`
}

// PreCachingConfigSpec refines what a ClusterGroupUpgrade pre-caches.
type PreCachingConfigSpec struct {
	// Overrides replace values derived from the managed policies.
	// +optional
	Overrides PrecacheOverrides `json:"overrides,omitempty"`
	// SpaceRequired is the free space the spoke's image store must have before pulling,
	// as a quantity ("30Gi") or as TALM writes it ("30 GiB", "1.5TB"); 35 GiB when unset,
	// as in TALM. The precache spec holds it in whole GiB, rounded up; it is checked when
	// the spec is built (condition PrecacheSpecValid).
	// +optional
	SpaceRequired string `json:"spaceRequired,omitempty"`
	// ExcludePrecachePatterns drops every image whose reference contains one of them.
	// +optional
	ExcludePrecachePatterns []string `json:"excludePrecachePatterns,omitempty"`
	// AdditionalImages are pulled as well.
	// +optional
	AdditionalImages []string `json:"additionalImages,omitempty"`
	// Bandwidth schedules the pre-caching against the capacity of the registry and of the
	// links clusters share, in place of the operator's --max-concurrent-precaching: the
	// clusters whose pull takes longest start first, and a cluster starts only when what the
	// pulls under way leave gives it a quarter of its line and the rate that ends its pull
	// within the precache timeout. status.precaching.plan says when the plan ends
	// (docs/precaching.md). Not TALM's: TALM starts every cluster at once.
	// +optional
	Bandwidth *PrecacheBandwidth `json:"bandwidth,omitempty"`
}

// PrecacheBandwidth is the capacity pre-caching may use, in megabits a second (Mbit/s, 10^6
// bits), and what the clusters pull.
//
// +kubebuilder:validation:XValidation:rule="has(self.registryMbps) || has(self.links) || has(self.lineLabel) || has(self.defaultLinkMbps)",message="spec.bandwidth bounds nothing: set registryMbps, links, defaultLinkMbps or lineLabel"
// +kubebuilder:validation:XValidation:rule="!has(self.links) && !has(self.defaultLinkMbps) || has(self.linkLabel)",message="spec.bandwidth.links and defaultLinkMbps need linkLabel, the ManagedCluster label that names a cluster's link"
type PrecacheBandwidth struct {
	// RegistryMbps is what the registry or mirror serves to the rollout's clusters together.
	// Rollouts pre-caching at once each have their own budget.
	// +optional
	// +kubebuilder:validation:Minimum=1
	RegistryMbps int64 `json:"registryMbps,omitempty"`
	// LinkLabel is the ManagedCluster label whose value names the link a cluster shares with
	// others (a rack's uplink, a site's WAN line). A cluster without it shares no link.
	// +optional
	// +kubebuilder:validation:MaxLength=317
	LinkLabel string `json:"linkLabel,omitempty"`
	// Links are the capacities of the links, by the value of LinkLabel.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=10000
	Links []PrecacheLink `json:"links,omitempty"`
	// DefaultLinkMbps is the capacity of a link Links does not name; none when unset.
	// +optional
	// +kubebuilder:validation:Minimum=1
	DefaultLinkMbps int64 `json:"defaultLinkMbps,omitempty"`
	// LineLabel is the ManagedCluster label whose value is the cluster's own line, in whole
	// Mbit/s ("100"). A cluster without it, or with a value that is not a positive number, is
	// bounded by its link and the registry only.
	// +optional
	// +kubebuilder:validation:MaxLength=317
	LineLabel string `json:"lineLabel,omitempty"`
	// PayloadSize is what a cluster pulls ("16Gi"), until the clusters' precache Jobs report
	// what they pull: then the largest report stands for the clusters not started.
	// +optional
	PayloadSize *resource.Quantity `json:"payloadSize,omitempty"`
}

// PrecacheLink is the capacity of one link.
type PrecacheLink struct {
	// Name is the value of the link label.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Mbps is what the link carries, in Mbit/s.
	// +kubebuilder:validation:Minimum=1
	Mbps int64 `json:"mbps"`
}

// PreCachingConfig refines what is pre-cached on spokes before a rollout. A
// ClusterGroupUpgrade refers to it by spec.preCachingConfigRef.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=precachingconfigs,categories=cgu-operator
type PreCachingConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec PreCachingConfigSpec `json:"spec,omitempty"`
}

// PreCachingConfigList is a list of PreCachingConfigs.
//
// +kubebuilder:object:root=true
type PreCachingConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PreCachingConfig `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PreCachingConfig{}, &PreCachingConfigList{})
}
