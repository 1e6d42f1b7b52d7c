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
	// Alerts freeze the fleet while one of their queries fires, and let it go on when none
	// does; a query that cannot be answered freezes it too (fail closed). Independent of
	// Frozen, which a person sets.
	// +optional
	Alerts *FreezeAlerts `json:"alerts,omitempty"`
}

// FreezeAlerts are alert queries run against a Prometheus-compatible API.
type FreezeAlerts struct {
	// Prometheus is the query API: ACM Observability's Thanos querier on a hub, or any
	// Prometheus.
	Prometheus PrometheusSource `json:"prometheus"`
	// Queries are PromQL expressions giving an instant vector, each firing while it returns
	// a series with a value other than zero, for example ALERTS{alertstate="firing",
	// severity="critical"}. Checked with the Prometheus parser: one that does not parse is
	// refused by condition AlertsEvaluated, and freezes the fleet.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=4096
	// +listType=atomic
	Queries []string `json:"queries"`
	// Interval is how often the queries run; 1m when absent, at least 5s.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]+([.][0-9]*)?|[.][0-9]+)(ms|s|m|h))+$') && duration(self) >= duration('5s')",message="spec.alerts.interval must be a duration of at least 5s, such as 30s or 1m"
	Interval string `json:"interval,omitempty"`
}

// PrometheusSource is a Prometheus-compatible query API and how to reach it.
type PrometheusSource struct {
	// URL is the API's base: the query goes to URL/api/v1/query. TLS is always verified.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && (self.startsWith('https://') || self.startsWith('http://'))",message="the Prometheus url must be an http or https URL"
	URL string `json:"url"`
	// SecretRef names a Secret holding `token` (a bearer token sent with each query) and
	// `ca.crt` (the PEM certificates the server's is verified against; the system's roots
	// without it), either or both.
	// +optional
	SecretRef *SecretReference `json:"secretRef,omitempty"`
}

// SecretReference names a Secret.
type SecretReference struct {
	// +kubebuilder:validation:MinLength=1
	Namespace string `json:"namespace"`
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// FleetFreezeStatus is what the alert queries said at their last run.
type FleetFreezeStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// AlertsFrozen is true while the alert queries freeze the fleet: one fires, or they could
	// not be answered.
	// +optional
	AlertsFrozen bool `json:"alertsFrozen,omitempty"`
	// Firing are the queries that fired at the last run, each with its series.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	Firing []FiringQuery `json:"firing,omitempty"`
	// CheckedAt is when the queries last ran.
	// +optional
	CheckedAt *metav1.Time `json:"checkedAt,omitempty"`
	// Conditions: AlertsEvaluated (True: the queries were answered; False: they could not be,
	// with the reason, and the fleet is frozen).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// FiringQuery is one alert query that fired.
type FiringQuery struct {
	Query string `json:"query"`
	// Series is how many series it returned with a value other than zero.
	Series int `json:"series"`
	// Shown are the first of those series' label sets, at most 5, as PromQL writes them.
	// +optional
	// +kubebuilder:validation:MaxItems=5
	// +listType=atomic
	Shown []string `json:"shown,omitempty"`
}

// The condition of a FleetFreeze's alert queries, and its reasons.
const (
	ConditionAlertsEvaluated = "AlertsEvaluated"
	// ReasonAlertsClear: no query fires.
	ReasonAlertsClear = "Clear"
	// ReasonAlertsFiring: a query fires; the fleet is frozen.
	ReasonAlertsFiring = "Firing"
	// ReasonQueryFailed: a query could not be answered (the endpoint, its answer, the
	// Secret); the fleet is frozen.
	ReasonQueryFailed = "QueryFailed"
	// ReasonInvalidQuery: a query does not parse as PromQL or gives no instant vector; the
	// fleet is frozen until it is fixed.
	ReasonInvalidQuery = "InvalidQuery"
)

// FleetFreeze holds every rollout on the hub while it is frozen (spec.frozen, a person's
// freeze) or its alert queries fire (status.alertsFrozen): a change freeze, an incident. It
// is cluster-scoped; any number may exist, and the fleet is frozen while one of them is. `kubectl cgu freeze` and `unfreeze` write the one named "manual". An addition
// to TALM's API (docs/freeze.md).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=fleetfreezes,scope=Cluster,shortName=freeze,categories=cgu-operator
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Frozen",type=boolean,JSONPath=`.spec.frozen`
// +kubebuilder:printcolumn:name="Alerts Frozen",type=boolean,JSONPath=`.status.alertsFrozen`
// +kubebuilder:printcolumn:name="Changed By",type=string,JSONPath=`.spec.changedBy`
// +kubebuilder:printcolumn:name="Changed",type=date,JSONPath=`.spec.changedAt`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.spec.reason`
type FleetFreeze struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec FleetFreezeSpec `json:"spec"`
	// +optional
	Status FleetFreezeStatus `json:"status,omitempty"`
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
