// Package spokehealth collects, on a managed cluster, what the pre-upgrade health check reads:
// the ClusterOperators, the alerts of the cluster's Prometheus and the conditions of the
// ClusterVersion. The spoke program writes them as a Report into a ConfigMap; the hub reads
// that ConfigMap through a ManagedClusterView and decides with upgradecheck.Health.
//
// A Report keeps the difference between an input that was not read (a nil slice, JSON null)
// and one that was read and is empty (an empty slice, JSON []), so that the hub fails closed
// on what the spoke could not read.
//
// Collect, Input and the ConfigMap encoding are pure; kube.go and prometheus.go hold the
// Source that reads a real cluster.
package spokehealth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
)

// DataKey is the key of the report in the report ConfigMap.
const DataKey = "report.json"

// Alert is one alert of the spoke's Prometheus, as the health check reads it.
type Alert = upgradecheck.Alert

// Operator is a ClusterOperator reduced to what the health check reads.
type Operator struct {
	// Name is the ClusterOperator's name.
	Name string `json:"name"`
	// Conditions are the ClusterOperator's status conditions.
	Conditions []configv1.ClusterOperatorStatusCondition `json:"conditions"`
}

// Report is what the health program found on a spoke. A nil slice means the input could not
// be read (JSON null); an empty one means read and empty (JSON []).
type Report struct {
	// Run is the run the report answers, as the hub passed it to the program.
	Run string `json:"run"`
	// CollectedAt is when the program read the inputs; JSON keeps it to the second.
	CollectedAt metav1.Time `json:"collectedAt"`
	// ClusterOperators are the cluster's ClusterOperators, sorted by name; nil when not read.
	ClusterOperators []Operator `json:"clusterOperators"`
	// Alerts are the firing and pending alerts of the cluster; nil when not read.
	Alerts []Alert `json:"alerts"`
	// ClusterVersionConditions are the status conditions of the ClusterVersion "version";
	// nil when not read.
	ClusterVersionConditions []configv1.ClusterOperatorStatusCondition `json:"clusterVersionConditions"`
	// Errors says, one entry per input that could not be read, why.
	Errors []string `json:"errors,omitempty"`
}

// Source reads the inputs on a spoke.
type Source interface {
	// ClusterOperators returns every ClusterOperator of the cluster.
	ClusterOperators(ctx context.Context) ([]configv1.ClusterOperator, error)
	// ClusterVersion returns the ClusterVersion "version".
	ClusterVersion(ctx context.Context) (*configv1.ClusterVersion, error)
	// Alerts returns the firing and pending alerts.
	Alerts(ctx context.Context) ([]Alert, error)
}

// Collect reads every input of src. An input that fails is left nil and its error recorded
// in Errors; an input that is read is never nil, even when empty. Collect never fails as a
// whole: the hub decides what a missing input means.
func Collect(ctx context.Context, src Source, run string, now time.Time) Report {
	r := Report{Run: run, CollectedAt: metav1.NewTime(now)}
	var err error
	if r.ClusterOperators, err = readOperators(ctx, src); err != nil {
		r.Errors = append(r.Errors, "cluster operators: "+err.Error())
	}
	if r.Alerts, err = readAlerts(ctx, src); err != nil {
		r.Errors = append(r.Errors, "alerts: "+err.Error())
	}
	if r.ClusterVersionConditions, err = readClusterVersionConditions(ctx, src); err != nil {
		r.Errors = append(r.Errors, "ClusterVersion: "+err.Error())
	}
	return r
}

// readOperators reads the ClusterOperators and reduces them to Operators sorted by name.
func readOperators(ctx context.Context, src Source) ([]Operator, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cos, err := src.ClusterOperators(ctx)
	if err != nil {
		return nil, err
	}
	ops := make([]Operator, 0, len(cos))
	for _, co := range cos {
		ops = append(ops, Operator{Name: co.Name, Conditions: conditions(co.Status.Conditions)})
	}
	slices.SortFunc(ops, func(a, b Operator) int { return strings.Compare(a.Name, b.Name) })
	return ops, nil
}

// readAlerts reads the alerts; a read that succeeds gives a non-nil slice.
func readAlerts(ctx context.Context, src Source) ([]Alert, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	alerts, err := src.Alerts(ctx)
	if err != nil {
		return nil, err
	}
	return append([]Alert{}, alerts...), nil
}

// readClusterVersionConditions reads the conditions of the ClusterVersion; a read that
// succeeds gives a non-nil slice.
func readClusterVersionConditions(ctx context.Context, src Source) ([]configv1.ClusterOperatorStatusCondition, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cv, err := src.ClusterVersion(ctx)
	if err != nil {
		return nil, err
	}
	if cv == nil {
		return nil, errors.New("the source returned no ClusterVersion")
	}
	return conditions(cv.Status.Conditions), nil
}

// conditions copies conditions into a non-nil slice.
func conditions(in []configv1.ClusterOperatorStatusCondition) []configv1.ClusterOperatorStatusCondition {
	return append([]configv1.ClusterOperatorStatusCondition{}, in...)
}

// Input turns a report into the input of upgradecheck.Health for an upgrade that is a
// y-stream one when yStream is set. Inputs that were not read stay nil, so that Health fails
// closed on them; ClusterVersionConditions become the status of a ClusterVersion "version".
func (r Report) Input(yStream bool) upgradecheck.HealthInput {
	in := upgradecheck.HealthInput{Alerts: slices.Clone(r.Alerts), YStream: yStream}
	if r.ClusterOperators != nil {
		in.ClusterOperators = make([]configv1.ClusterOperator, 0, len(r.ClusterOperators))
		for _, op := range r.ClusterOperators {
			in.ClusterOperators = append(in.ClusterOperators, configv1.ClusterOperator{
				ObjectMeta: metav1.ObjectMeta{Name: op.Name},
				Status:     configv1.ClusterOperatorStatus{Conditions: slices.Clone(op.Conditions)},
			})
		}
	}
	if r.ClusterVersionConditions != nil {
		in.Cluster = &configv1.ClusterVersion{
			ObjectMeta: metav1.ObjectMeta{Name: "version"},
			Status:     configv1.ClusterVersionStatus{Conditions: slices.Clone(r.ClusterVersionConditions)},
		}
	}
	return in
}

// ToConfigMap encodes a report as the ConfigMap namespace/name, with the report's JSON under
// DataKey.
func ToConfigMap(namespace, name string, r Report) (*corev1.ConfigMap, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encoding the health report of run %q: %w", r.Run, err)
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Data:       map[string]string{DataKey: string(data)},
	}, nil
}

// FromConfigMap decodes the report a ConfigMap written by ToConfigMap holds. It is an error
// when the ConfigMap is nil, has no DataKey, or holds JSON that does not decode into a Report.
func FromConfigMap(cm *corev1.ConfigMap) (Report, error) {
	if cm == nil {
		return Report{}, errors.New("decoding a health report: no ConfigMap")
	}
	data, ok := cm.Data[DataKey]
	if !ok {
		return Report{}, fmt.Errorf("decoding the health report of ConfigMap %s/%s: it has no key %s", cm.Namespace, cm.Name, DataKey)
	}
	var r Report
	if err := json.Unmarshal([]byte(data), &r); err != nil {
		return Report{}, fmt.Errorf("decoding the health report of ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return r, nil
}
