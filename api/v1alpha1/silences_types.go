package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SilenceAlerts silences the alerts an upgrade is expected to raise, for each cluster while it
// upgrades, on the Alertmanager the operator is given (--alertmanager-url: the hub's, as ACM
// Observability runs it, which tells clusters apart by their cluster label). Docs:
// docs/silences.md. An addition to TALM's API.
type SilenceAlerts struct {
	// Enabled turns the silences on.
	Enabled bool `json:"enabled"`
	// Severities are the values of the severity label silenced: critical, warning and info
	// when absent (the managed-upgrade-operator silences the critical alerts while the control
	// plane upgrades, the warning and info ones while the workers do).
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-zA-Z0-9_.-]+$`
	// +listType=set
	Severities []string `json:"severities,omitempty"`
}

// DefaultSilencedSeverities are the severities silenced when spec.silenceAlerts names none.
var DefaultSilencedSeverities = []string{"critical", "warning", "info"}

// SilencedSeverities are the severities s silences: Severities, or DefaultSilencedSeverities
// when it names none.
func (s *SilenceAlerts) SilencedSeverities() []string {
	if s == nil || len(s.Severities) == 0 {
		return DefaultSilencedSeverities
	}
	return s.Severities
}

// SilencesStatus are the silences of the clusters upgrading now.
type SilencesStatus struct {
	// Clusters are the silences the operator keeps, one per upgrading cluster.
	// +optional
	// +kubebuilder:validation:MaxItems=250
	// +listType=map
	// +listMapKey=cluster
	Clusters []ClusterSilence `json:"clusters,omitempty"`
	// Error says why the last pass could not make or end a silence; the next tries again.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Error string `json:"error,omitempty"`
}

// ClusterSilence is the silence of one upgrading cluster.
type ClusterSilence struct {
	Cluster string `json:"cluster"`
	// ID is the Alertmanager's ID of the silence.
	ID string `json:"id"`
	// EndsAt is when the silence ends by itself: the cluster's batch deadline.
	EndsAt metav1.Time `json:"endsAt"`
}
