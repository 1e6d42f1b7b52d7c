package v1alpha1

import (
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
