package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Analysis judges each batch by what its upgraded clusters' metrics say before the batch
// ends (docs/analysis.md): PromQL queries run against a Prometheus-compatible API at
// intervals, from the moment the batch's clusters ended until every query passed. An
// addition to TALM's API.
type Analysis struct {
	// Prometheus is the query API: ACM Observability's Thanos querier on a hub, or any
	// Prometheus.
	Prometheus AnalysisSource `json:"prometheus"`
	// ClusterLabel is the label naming a series' cluster: "cluster" when absent, as ACM
	// Observability labels the series it collects.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[a-zA-Z_][a-zA-Z0-9_]*$`
	ClusterLabel string `json:"clusterLabel,omitempty"`
	// OnFailure is what a failed gate does once it failed the batch's clusters: Abort (the
	// default) ends the rollout, no further batch starts; Continue counts them against
	// spec.maxFailures and goes on.
	// +optional
	// +kubebuilder:validation:Enum=Abort;Continue
	OnFailure AnalysisFailureAction `json:"onFailure,omitempty"`
	// Gates are the queries; a batch ends once every one passed (or was skipped).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=name
	Gates []AnalysisGate `json:"gates"`
}

// AnalysisFailureAction is what a failed analysis does.
type AnalysisFailureAction string

// The actions of a failed analysis.
const (
	AnalysisAbort    AnalysisFailureAction = "Abort"
	AnalysisContinue AnalysisFailureAction = "Continue"
)

// AnalysisSource is the Prometheus-compatible query API of an analysis.
type AnalysisSource struct {
	// URL is the API's base: the query goes to URL/api/v1/query. TLS is always verified.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && (self.startsWith('https://') || self.startsWith('http://'))",message="spec.analysis.prometheus.url must be an http or https URL"
	URL string `json:"url"`
	// SecretRef names a Secret in the ClusterGroupUpgrade's namespace holding `token` (a
	// bearer token sent with each query) and `ca.crt` (the PEM certificates the server's is
	// verified against; the system's roots without it), either or both.
	// +optional
	SecretRef *LocalSecretReference `json:"secretRef,omitempty"`
}

// LocalSecretReference names a Secret in the object's namespace.
type LocalSecretReference struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// AnalysisMode is how a gate judges a measurement.
type AnalysisMode string

// The modes of a gate.
const (
	// AnalysisAbsolute: every upgraded cluster's value must meet successCondition.
	AnalysisAbsolute AnalysisMode = "Absolute"
	// AnalysisComparison: the upgraded clusters' values must not be worse than those of the
	// clusters not upgraded yet, by a one-sided Mann-Whitney U test.
	AnalysisComparison AnalysisMode = "Comparison"
)

// AnalysisGate is one query of an analysis.
// +kubebuilder:validation:XValidation:rule="!has(self.failureLimit) || self.failureLimit < (has(self.measurements) ? self.measurements : 3)",message="failureLimit must be below measurements: the gate could never fail"
// +kubebuilder:validation:XValidation:rule="(has(self.mode) && self.mode == 'Comparison') ? !has(self.successCondition) && !has(self.failureCondition) : has(self.successCondition) || has(self.failureCondition)",message="an Absolute gate needs successCondition, failureCondition or both; a Comparison gate takes neither (it compares with the baseline)"
// +kubebuilder:validation:XValidation:rule="!has(self.comparison) || (has(self.mode) && self.mode == 'Comparison')",message="comparison is only for a gate of mode Comparison"
type AnalysisGate struct {
	// Name names the gate in status and events.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// Query is a PromQL expression giving an instant vector with one series per cluster,
	// labelled by clusterLabel; {{clusters}} stands for the clusters measured, as a regular
	// expression: `cluster:apiserver_request_error_ratio:rate5m{cluster=~"{{clusters}}"}`.
	// Checked with the Prometheus parser before the start.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:XValidation:rule="self.contains('{{clusters}}')",message="the query must contain {{clusters}}, which stands for the clusters measured"
	Query string `json:"query"`
	// Mode is Absolute (the default) or Comparison.
	// +optional
	// +kubebuilder:validation:Enum=Absolute;Comparison
	Mode AnalysisMode `json:"mode,omitempty"`
	// Interval is how long between two measurements; 1m when absent, at least 5s.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^(([0-9]+([.][0-9]*)?|[.][0-9]+)(ms|s|m|h))+$') && duration(self) >= duration('5s')",message="interval must be a duration of at least 5s, such as 30s or 1m"
	Interval string `json:"interval,omitempty"`
	// Measurements is how many conclusive measurements the gate takes before it passes; 3
	// when absent.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=30
	Measurements int `json:"measurements,omitempty"`
	// FailureLimit is how many failed measurements the gate tolerates: one more fails it.
	// 0 when absent: the first failed measurement fails it.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=29
	FailureLimit int `json:"failureLimit,omitempty"`
	// SuccessCondition is what each upgraded cluster's value must meet in an Absolute gate:
	// an operator (<, <=, >, >=) and a number, such as "< 0.05".
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^\s*(<|<=|>|>=)\s*[-+]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][-+]?[0-9]+)?\s*$`
	SuccessCondition string `json:"successCondition,omitempty"`
	// FailureCondition is what fails a cluster's value in an Absolute gate, in the same form,
	// such as "> 0.1". With both conditions, a value that meets neither makes the measurement
	// inconclusive; with one, a value fails or passes by it alone. Conditions that a value
	// could meet both of are refused before the start (InvalidAnalysis).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^\s*(<|<=|>|>=)\s*[-+]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][-+]?[0-9]+)?\s*$`
	FailureCondition string `json:"failureCondition,omitempty"`
	// Comparison tunes a Comparison gate.
	// +optional
	Comparison *ComparisonTest `json:"comparison,omitempty"`
}

// ComparisonTest tunes the test of a Comparison gate.
type ComparisonTest struct {
	// HigherIsWorse says which way is worse; true when absent (an error ratio, a latency).
	// +optional
	HigherIsWorse *bool `json:"higherIsWorse,omitempty"`
	// Tolerance is how much worse than the baseline the upgraded clusters may be, in the
	// query's unit: the baseline is moved that far the worse way before the test. "0" when
	// absent.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^\+?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][-+]?[0-9]+)?$`
	Tolerance string `json:"tolerance,omitempty"`
	// Alpha is the test's significance level, between 0 and 0.5: a p-value below it fails
	// the measurement. "0.05" when absent.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^0?[.][0-9]+$`
	// +kubebuilder:validation:XValidation:rule="double(self) > 0.0 && double(self) <= 0.5",message="alpha must be above 0 and at most 0.5"
	Alpha string `json:"alpha,omitempty"`
	// MinSamples is the fewest values each side needs: fewer make a measurement
	// inconclusive, and a batch whose plan leaves fewer clusters on a side skips the gate.
	// 8 when absent.
	// +optional
	// +kubebuilder:validation:Minimum=3
	// +kubebuilder:validation:Maximum=1000
	MinSamples int `json:"minSamples,omitempty"`
}

// AnalysisPhase is where a gate stands in a batch.
type AnalysisPhase string

// The phases of a gate.
const (
	AnalysisRunning      AnalysisPhase = "Running"
	AnalysisPassed       AnalysisPhase = "Passed"
	AnalysisFailed       AnalysisPhase = "Failed"
	AnalysisInconclusive AnalysisPhase = "Inconclusive"
	// AnalysisSkipped: a Comparison gate in a batch whose plan leaves fewer than minSamples
	// clusters on a side (the last batch has no baseline left).
	AnalysisSkipped AnalysisPhase = "Skipped"
)

// AnalysisGateMeasurementLimit is the most measurements a gate's status keeps: the latest.
const AnalysisGateMeasurementLimit = 30

// BatchAnalysis is the analysis of one batch.
type BatchAnalysis struct {
	// StartedAt is when the analysis started: when the batch's clusters ended.
	StartedAt metav1.Time `json:"startedAt"`
	// Gates are the gates' verdicts, in the spec's order.
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=name
	Gates []AnalysisGateStatus `json:"gates"`
}

// AnalysisGateStatus is one gate's verdict in a batch.
type AnalysisGateStatus struct {
	Name  string        `json:"name"`
	Phase AnalysisPhase `json:"phase"`
	// Query is the gate's query as it ran, {{clusters}} not filled in.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Query string `json:"query,omitempty"`
	// Conclusive, Failures and Inconclusives count the measurements by outcome.
	// +optional
	Conclusive int `json:"conclusive,omitempty"`
	// +optional
	Failures int `json:"failures,omitempty"`
	// +optional
	Inconclusives int `json:"inconclusives,omitempty"`
	// Clusters are, for an Absolute gate, the clusters that missed the condition in a failed
	// measurement.
	// +optional
	// +kubebuilder:validation:MaxItems=250
	// +listType=atomic
	Clusters []string `json:"clusters,omitempty"`
	// Message says why, in one sentence.
	// +optional
	Message string `json:"message,omitempty"`
	// Measurements are the latest measurements, oldest first, at most
	// AnalysisGateMeasurementLimit.
	// +optional
	// +kubebuilder:validation:MaxItems=30
	// +listType=atomic
	Measurements []AnalysisMeasurement `json:"measurements,omitempty"`
}

// AnalysisMeasurement is one run of a gate's query.
type AnalysisMeasurement struct {
	At metav1.Time `json:"at"`
	// Outcome is Passed, Failed or Inconclusive.
	Outcome AnalysisPhase `json:"outcome"`
	// Value is, for an Absolute gate, the upgraded clusters' worst value; for a Comparison,
	// their median. Baseline is a Comparison's baseline median. Both as decimal strings.
	// +optional
	Value string `json:"value,omitempty"`
	// +optional
	Baseline string `json:"baseline,omitempty"`
}
