package spokehealth

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
)

var collectedAt = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// timeEqual compares metav1.Times by instant: JSON gives them back in the local zone.
var timeEqual = cmp.Comparer(func(a, b metav1.Time) bool { return a.Equal(&b) })

// fakeSource returns fixed inputs or errors and counts its calls.
type fakeSource struct {
	operators      []configv1.ClusterOperator
	clusterVersion *configv1.ClusterVersion
	alerts         []Alert
	operatorsErr   error
	versionErr     error
	alertsErr      error
	calls          int
}

func (f *fakeSource) ClusterOperators(context.Context) ([]configv1.ClusterOperator, error) {
	f.calls++
	return f.operators, f.operatorsErr
}

func (f *fakeSource) ClusterVersion(context.Context) (*configv1.ClusterVersion, error) {
	f.calls++
	return f.clusterVersion, f.versionErr
}

func (f *fakeSource) Alerts(context.Context) ([]Alert, error) {
	f.calls++
	return f.alerts, f.alertsErr
}

func condition(t configv1.ClusterStatusConditionType, s configv1.ConditionStatus) configv1.ClusterOperatorStatusCondition {
	return configv1.ClusterOperatorStatusCondition{Type: t, Status: s}
}

// clusterOperator is a ClusterOperator with the given Available and Degraded statuses.
func clusterOperator(name string, available, degraded configv1.ConditionStatus) configv1.ClusterOperator {
	return configv1.ClusterOperator{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: configv1.ClusterOperatorStatus{Conditions: []configv1.ClusterOperatorStatusCondition{
			condition(configv1.OperatorAvailable, available), condition(configv1.OperatorDegraded, degraded),
		}},
	}
}

func clusterVersion(conds ...configv1.ClusterOperatorStatusCondition) *configv1.ClusterVersion {
	return &configv1.ClusterVersion{
		ObjectMeta: metav1.ObjectMeta{Name: "version"},
		Status:     configv1.ClusterVersionStatus{Conditions: conds},
	}
}

// healthySource is a source of a healthy cluster with two operators, listed out of order.
func healthySource() *fakeSource {
	return &fakeSource{
		operators: []configv1.ClusterOperator{
			clusterOperator("etcd", configv1.ConditionTrue, configv1.ConditionFalse),
			clusterOperator("dns", configv1.ConditionTrue, configv1.ConditionFalse),
		},
		clusterVersion: clusterVersion(condition(configv1.OperatorUpgradeable, configv1.ConditionTrue)),
		alerts:         []Alert{{Name: "Watchdog", Severity: "none", State: "firing"}},
	}
}

// healthyReport is what Collect makes of healthySource.
func healthyReport() Report {
	return Report{
		Run:         "run-1",
		CollectedAt: metav1.NewTime(collectedAt),
		ClusterOperators: []Operator{
			{Name: "dns", Conditions: []configv1.ClusterOperatorStatusCondition{
				condition(configv1.OperatorAvailable, configv1.ConditionTrue), condition(configv1.OperatorDegraded, configv1.ConditionFalse)}},
			{Name: "etcd", Conditions: []configv1.ClusterOperatorStatusCondition{
				condition(configv1.OperatorAvailable, configv1.ConditionTrue), condition(configv1.OperatorDegraded, configv1.ConditionFalse)}},
		},
		Alerts:                   []Alert{{Name: "Watchdog", Severity: "none", State: "firing"}},
		ClusterVersionConditions: []configv1.ClusterOperatorStatusCondition{condition(configv1.OperatorUpgradeable, configv1.ConditionTrue)},
	}
}

func TestCollect(t *testing.T) {
	cases := map[string]struct {
		change func(*fakeSource)
		want   func(*Report)
	}{
		"all inputs read": {},
		"cluster operators fail": {
			change: func(s *fakeSource) { s.operatorsErr = errors.New("forbidden") },
			want: func(r *Report) {
				r.ClusterOperators = nil
				r.Errors = []string{"cluster operators: forbidden"}
			},
		},
		"alerts fail": {
			change: func(s *fakeSource) { s.alertsErr = errors.New("answer 403 Forbidden") },
			want: func(r *Report) {
				r.Alerts = nil
				r.Errors = []string{"alerts: answer 403 Forbidden"}
			},
		},
		"ClusterVersion fails": {
			change: func(s *fakeSource) { s.versionErr = errors.New("not found") },
			want: func(r *Report) {
				r.ClusterVersionConditions = nil
				r.Errors = []string{"ClusterVersion: not found"}
			},
		},
		"no ClusterVersion and no error": {
			change: func(s *fakeSource) { s.clusterVersion = nil },
			want: func(r *Report) {
				r.ClusterVersionConditions = nil
				r.Errors = []string{"ClusterVersion: the source returned no ClusterVersion"}
			},
		},
		"everything fails": {
			change: func(s *fakeSource) {
				s.operatorsErr, s.alertsErr, s.versionErr = errors.New("a"), errors.New("b"), errors.New("c")
			},
			want: func(r *Report) {
				r.ClusterOperators, r.Alerts, r.ClusterVersionConditions = nil, nil, nil
				r.Errors = []string{"cluster operators: a", "alerts: b", "ClusterVersion: c"}
			},
		},
		"read and empty stays non-nil": {
			change: func(s *fakeSource) {
				s.operators, s.alerts, s.clusterVersion = nil, nil, clusterVersion()
			},
			want: func(r *Report) {
				r.ClusterOperators = []Operator{}
				r.Alerts = []Alert{}
				r.ClusterVersionConditions = []configv1.ClusterOperatorStatusCondition{}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			src := healthySource()
			if tc.change != nil {
				tc.change(src)
			}
			want := healthyReport()
			if tc.want != nil {
				tc.want(&want)
			}
			got := Collect(context.Background(), src, "run-1", collectedAt)
			if diff := cmp.Diff(want, got, timeEqual); diff != "" {
				t.Errorf("Collect() mismatch (-want +got):\n%s", diff)
			}
			if src.calls != 3 {
				t.Errorf("Collect() called the source %d times, want 3", src.calls)
			}
		})
	}
}

func TestCollectCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	src := healthySource()
	got := Collect(ctx, src, "run-1", collectedAt)
	if got.ClusterOperators != nil || got.Alerts != nil || got.ClusterVersionConditions != nil {
		t.Errorf("Collect() with a cancelled context read inputs: %+v", got)
	}
	want := []string{"cluster operators: context canceled", "alerts: context canceled", "ClusterVersion: context canceled"}
	if diff := cmp.Diff(want, got.Errors); diff != "" {
		t.Errorf("Collect() errors mismatch (-want +got):\n%s", diff)
	}
	if src.calls != 0 {
		t.Errorf("Collect() with a cancelled context called the source %d times, want 0", src.calls)
	}
	if got.Run != "run-1" || !got.CollectedAt.Time.Equal(collectedAt) {
		t.Errorf("Collect() = run %q at %v, want run-1 at %v", got.Run, got.CollectedAt, collectedAt)
	}
}

func TestInput(t *testing.T) {
	cases := map[string]struct {
		report       func(*Report)
		yStream      bool
		wantReason   string
		wantProblems []string
	}{
		"healthy": {
			wantReason: upgradecheck.ReasonHealthy,
		},
		"healthy y-stream": {
			yStream: true, wantReason: upgradecheck.ReasonHealthy,
		},
		"read and empty is healthy": {
			report: func(r *Report) {
				r.ClusterOperators, r.Alerts, r.ClusterVersionConditions = []Operator{}, []Alert{}, []configv1.ClusterOperatorStatusCondition{}
			},
			yStream: true, wantReason: upgradecheck.ReasonHealthy,
		},
		"nothing read": {
			report: func(r *Report) {
				r.ClusterOperators, r.Alerts, r.ClusterVersionConditions = nil, nil, nil
			},
			yStream:      true,
			wantReason:   upgradecheck.ReasonHealthUnknown,
			wantProblems: []string{"cluster operators not read", "alerts not read", "ClusterVersion not read"},
		},
		"alerts not read": {
			report:       func(r *Report) { r.Alerts = nil },
			wantReason:   upgradecheck.ReasonHealthUnknown,
			wantProblems: []string{"alerts not read"},
		},
		"ClusterVersion not read for a z-stream": {
			report:     func(r *Report) { r.ClusterVersionConditions = nil },
			wantReason: upgradecheck.ReasonHealthy,
		},
		"ClusterVersion not read for a y-stream": {
			report:       func(r *Report) { r.ClusterVersionConditions = nil },
			yStream:      true,
			wantReason:   upgradecheck.ReasonHealthUnknown,
			wantProblems: []string{"ClusterVersion not read"},
		},
		"degraded operator": {
			report: func(r *Report) {
				r.ClusterOperators[1].Conditions[1].Status = configv1.ConditionTrue
			},
			wantReason:   upgradecheck.ReasonClusterOperatorsUnhealthy,
			wantProblems: []string{"ClusterOperator etcd is Degraded"},
		},
		"critical alert firing": {
			report: func(r *Report) {
				r.Alerts = append(r.Alerts, Alert{Name: "KubeAPIDown", Severity: "critical", State: "firing"})
			},
			wantReason:   upgradecheck.ReasonCriticalAlertsFiring,
			wantProblems: []string{"Critical alert KubeAPIDown is firing"},
		},
		"Upgradeable=False for a y-stream": {
			report: func(r *Report) {
				r.ClusterVersionConditions[0] = configv1.ClusterOperatorStatusCondition{
					Type: configv1.OperatorUpgradeable, Status: configv1.ConditionFalse, Message: "Cluster operator etcd should not be upgraded"}
			},
			yStream:      true,
			wantReason:   upgradecheck.ReasonUpgradeableFalse,
			wantProblems: []string{"ClusterVersion is Upgradeable=False: Cluster operator etcd should not be upgraded"},
		},
		"Upgradeable=False for a z-stream": {
			report: func(r *Report) {
				r.ClusterVersionConditions[0].Status = configv1.ConditionFalse
			},
			wantReason: upgradecheck.ReasonHealthy,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := healthyReport()
			if tc.report != nil {
				tc.report(&r)
			}
			in := r.Input(tc.yStream)
			if in.YStream != tc.yStream {
				t.Errorf("Input(%t).YStream = %t", tc.yStream, in.YStream)
			}
			checkReadInputs(t, r, in)
			v := upgradecheck.Health(in)
			if v.Reason != tc.wantReason || v.Healthy != (tc.wantReason == upgradecheck.ReasonHealthy) {
				t.Errorf("Health(Input()) = %t, %s (%s), want reason %s", v.Healthy, v.Reason, v.Message, tc.wantReason)
			}
			if diff := cmp.Diff(tc.wantProblems, v.Problems); diff != "" {
				t.Errorf("Health(Input()) problems mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// checkReadInputs checks that Input keeps what was not read nil and what was read non-nil,
// with the operators' names and conditions and the ClusterVersion's conditions.
func checkReadInputs(t *testing.T, r Report, in upgradecheck.HealthInput) {
	t.Helper()
	if (r.ClusterOperators == nil) != (in.ClusterOperators == nil) || (r.Alerts == nil) != (in.Alerts == nil) ||
		(r.ClusterVersionConditions == nil) != (in.Cluster == nil) {
		t.Fatalf("Input() changed what was read: report %+v, input %+v", r, in)
	}
	for i, co := range in.ClusterOperators {
		if co.Name != r.ClusterOperators[i].Name || !slices.Equal(co.Status.Conditions, r.ClusterOperators[i].Conditions) {
			t.Errorf("Input() operator %d = %s %v, want %+v", i, co.Name, co.Status.Conditions, r.ClusterOperators[i])
		}
	}
	if in.Cluster != nil && (in.Cluster.Name != "version" || !slices.Equal(in.Cluster.Status.Conditions, r.ClusterVersionConditions)) {
		t.Errorf("Input() ClusterVersion = %s %v, want version %v", in.Cluster.Name, in.Cluster.Status.Conditions, r.ClusterVersionConditions)
	}
}

func TestConfigMapRoundTrip(t *testing.T) {
	cases := map[string]struct {
		report   func(*Report)
		wantJSON []string
	}{
		"all read": {
			wantJSON: []string{`"run":"run-1"`, `"collectedAt":"2025-03-14T09:26:53Z"`, `"name":"Watchdog","severity":"none","state":"firing"`},
		},
		"nothing read": {
			report: func(r *Report) {
				r.ClusterOperators, r.Alerts, r.ClusterVersionConditions = nil, nil, nil
				r.Errors = []string{"cluster operators: a", "alerts: b", "ClusterVersion: c"}
			},
			wantJSON: []string{`"clusterOperators":null`, `"alerts":null`, `"clusterVersionConditions":null`, `"errors":["cluster operators: a"`},
		},
		"read and empty": {
			report: func(r *Report) {
				r.ClusterOperators, r.Alerts, r.ClusterVersionConditions = []Operator{}, []Alert{}, []configv1.ClusterOperatorStatusCondition{}
			},
			wantJSON: []string{`"clusterOperators":[]`, `"alerts":[]`, `"clusterVersionConditions":[]`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			want := healthyReport()
			if tc.report != nil {
				tc.report(&want)
			}
			cm, err := ToConfigMap("open-cluster-management-agent-addon", "cgu-health", want)
			if err != nil {
				t.Fatalf("ToConfigMap() error: %v", err)
			}
			if cm.Namespace != "open-cluster-management-agent-addon" || cm.Name != "cgu-health" || len(cm.Data) != 1 {
				t.Errorf("ToConfigMap() = %s/%s with %d keys, want open-cluster-management-agent-addon/cgu-health with 1", cm.Namespace, cm.Name, len(cm.Data))
			}
			for _, s := range tc.wantJSON {
				if !strings.Contains(cm.Data[DataKey], s) {
					t.Errorf("ToConfigMap() JSON %s does not contain %s", cm.Data[DataKey], s)
				}
			}
			got, err := FromConfigMap(cm)
			if err != nil {
				t.Fatalf("FromConfigMap() error: %v", err)
			}
			if diff := cmp.Diff(want, got, timeEqual); diff != "" {
				t.Errorf("round trip mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFromConfigMapErrors(t *testing.T) {
	withData := func(data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cgu-health"}, Data: data}
	}
	cases := map[string]struct {
		cm   *corev1.ConfigMap
		want string
	}{
		"no ConfigMap":   {cm: nil, want: "no ConfigMap"},
		"no data":        {cm: withData(nil), want: "ConfigMap ns/cgu-health: it has no key report.json"},
		"other key":      {cm: withData(map[string]string{"report.yaml": "{}"}), want: "it has no key report.json"},
		"not JSON":       {cm: withData(map[string]string{DataKey: "<html>"}), want: "ConfigMap ns/cgu-health: invalid character"},
		"truncated JSON": {cm: withData(map[string]string{DataKey: `{"run":"run-1","alerts":[`}), want: "unexpected end of JSON input"},
		"wrong type":     {cm: withData(map[string]string{DataKey: `{"alerts":{"name":"x"}}`}), want: "cannot unmarshal object"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := FromConfigMap(tc.cm)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("FromConfigMap() error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
