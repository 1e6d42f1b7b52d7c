package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FleetFreezeManual is the name of the FleetFreeze that `kubectl cgu freeze` and `unfreeze`
// write.
const FleetFreezeManual = "manual"

// FleetFreezeSpec freezes every rollout on the hub while Frozen is true.
// +kubebuilder:validation:XValidation:rule="!self.frozen || (has(self.reason) && size(self.reason.trim()) > 0)",message="spec.reason must say why the fleet is frozen"
type FleetFreezeSpec struct {
	// Frozen freezes the fleet: no ClusterGroupUpgrade on the hub starts a batch or a
	// cluster; clusters already upgrading finish. Frozen time does not count against the
	// rollouts' timeouts. False lets them go on.
	Frozen bool `json:"frozen"`
	// Reason says why the fleet is frozen (or was last unfrozen); every frozen rollout's
	// status shows it.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Reason string `json:"reason,omitempty"`
	// ChangedBy is who last froze or unfroze the fleet, as `kubectl cgu freeze` read it from
	// the API server (the user's name).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	ChangedBy string `json:"changedBy,omitempty"`
	// ChangedAt is when.
	// +optional
	ChangedAt *metav1.Time `json:"changedAt,omitempty"`
}

// FleetFreeze holds every rollout on the hub while it is frozen: a change freeze, an
// incident. It is cluster-scoped; any number may exist, and the fleet is frozen while one
// of them is. `kubectl cgu freeze` and `unfreeze` write the one named "manual". An addition
// to TALM's API (docs/freeze.md).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=fleetfreezes,scope=Cluster,shortName=freeze,categories=cgu-operator
// +kubebuilder:printcolumn:name="Frozen",type=boolean,JSONPath=`.spec.frozen`
// +kubebuilder:printcolumn:name="Changed By",type=string,JSONPath=`.spec.changedBy`
// +kubebuilder:printcolumn:name="Changed",type=date,JSONPath=`.spec.changedAt`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.spec.reason`
type FleetFreeze struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec FleetFreezeSpec `json:"spec"`
}

// FleetFreezeList is a list of FleetFreezes.
//
// +kubebuilder:object:root=true
type FleetFreezeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FleetFreeze `json:"items"`
}

func init() {
	SchemeBuilder.Register(&FleetFreeze{}, &FleetFreezeList{})
}
