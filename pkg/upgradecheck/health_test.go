package upgradecheck

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// operator is a ClusterOperator with the given Available and Degraded statuses.
func operator(name string, available, degraded configv1.ConditionStatus) configv1.ClusterOperator {
	return configv1.ClusterOperator{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: configv1.ClusterOperatorStatus{Conditions: []configv1.ClusterOperatorStatusCondition{
			{Type: configv1.OperatorAvailable, Status: available},
			{Type: configv1.OperatorDegraded, Status: degraded},
		}},
	}
}

func healthyOperators(names ...string) []configv1.ClusterOperator {
	out := []configv1.ClusterOperator{}
	for _, n := range names {
		out = append(out, operator(n, configv1.ConditionTrue, configv1.ConditionFalse))
	}
	return out
}

func TestHealth(t *testing.T) {
	manyDegraded := healthyOperators("authentication")
	for i := range 7 {
		manyDegraded = append(manyDegraded, operator(fmt.Sprintf("op-%d", i), configv1.ConditionTrue, configv1.ConditionTrue))
	}
	var manyAlerts []Alert
	for i := range 8 {
		manyAlerts = append(manyAlerts, Alert{Name: fmt.Sprintf("Alert%d", i), Severity: "critical", State: "firing"})
	}
	none := []Alert{}
	cases := map[string]struct {
		in           HealthInput
		wantHealthy  bool
		wantReason   string
		wantMessage  []string
		wantProblems []string
	}{
		"healthy": {
			in: HealthInput{ClusterOperators: healthyOperators("etcd", "dns"), Alerts: []Alert{
				{Name: "Watchdog", Severity: "none", State: "firing"},
				{Name: "KubeAPIDown", Severity: "critical", State: "pending"},
				{Name: "NodeDiskFull", Severity: "warning", State: "firing"},
			}},
			wantHealthy: true, wantReason: ReasonHealthy,
			wantMessage: []string{"Cluster is healthy: 2 cluster operators are available and not degraded and no critical alert is firing"},
		},
		"healthy y-stream": {
			in:          HealthInput{ClusterOperators: healthyOperators("etcd"), Alerts: none, YStream: true, Cluster: cluster("4.14.9", "stable-4.15")},
			wantHealthy: true, wantReason: ReasonHealthy,
			wantMessage: []string{"1 cluster operator is available", ", and the ClusterVersion is not Upgradeable=False"},
		},
		"operators not read fail closed": {
			in:           HealthInput{Alerts: none},
			wantReason:   ReasonHealthUnknown,
			wantMessage:  []string{"Health of the cluster is unknown: cluster operators not read"},
			wantProblems: []string{"cluster operators not read"},
		},
		"alerts not read fail closed": {
			in:          HealthInput{ClusterOperators: healthyOperators("etcd")},
			wantReason:  ReasonHealthUnknown,
			wantMessage: []string{"unknown: alerts not read"},
		},
		"a y-stream without the ClusterVersion fails closed": {
			in:           HealthInput{YStream: true},
			wantReason:   ReasonHealthUnknown,
			wantMessage:  []string{"unknown: cluster operators and alerts and ClusterVersion not read"},
			wantProblems: []string{"cluster operators not read", "alerts not read", "ClusterVersion not read"},
		},
		"a z-stream does not need the ClusterVersion": {
			in:          HealthInput{ClusterOperators: healthyOperators("etcd"), Alerts: none},
			wantHealthy: true, wantReason: ReasonHealthy,
		},
		"degraded and unavailable operators are named, sorted": {
			in: HealthInput{ClusterOperators: append(healthyOperators("dns"),
				operator("network", configv1.ConditionFalse, configv1.ConditionFalse),
				operator("etcd", configv1.ConditionTrue, configv1.ConditionTrue),
				operator("ingress", configv1.ConditionFalse, configv1.ConditionTrue),
				operator("console", configv1.ConditionUnknown, configv1.ConditionUnknown)), Alerts: none},
			wantReason:  ReasonClusterOperatorsUnhealthy,
			wantMessage: []string{"Cluster is not healthy: 3 cluster operators are degraded or unavailable: etcd (Degraded), ingress (Degraded, Unavailable), network (Unavailable)"},
			wantProblems: []string{"ClusterOperator etcd is Degraded", "ClusterOperator ingress is Degraded",
				"ClusterOperator ingress is not Available", "ClusterOperator network is not Available"},
		},
		"many degraded operators are bounded in the message": {
			in:          HealthInput{ClusterOperators: manyDegraded, Alerts: none},
			wantReason:  ReasonClusterOperatorsUnhealthy,
			wantMessage: []string{"7 cluster operators are degraded or unavailable: op-0 (Degraded), op-1 (Degraded), op-2 (Degraded), op-3 (Degraded), op-4 (Degraded) and 2 more"},
		},
		"firing critical alerts are named once each": {
			in: HealthInput{ClusterOperators: healthyOperators("etcd"), Alerts: []Alert{
				{Name: "KubeAPIDown", Severity: "critical", State: "firing"},
				{Name: "KubeAPIDown", Severity: "critical", State: "firing"},
				{Name: "EtcdNoLeader", Severity: "Critical", State: "Firing"},
				{Name: "NodeDiskFull", Severity: "warning", State: "firing"},
			}},
			wantReason:   ReasonCriticalAlertsFiring,
			wantMessage:  []string{"Cluster is not healthy: 2 critical alerts are firing: EtcdNoLeader, KubeAPIDown"},
			wantProblems: []string{"Critical alert EtcdNoLeader is firing", "Critical alert KubeAPIDown is firing"},
		},
		"many critical alerts are bounded in the message": {
			in:          HealthInput{ClusterOperators: healthyOperators("etcd"), Alerts: manyAlerts},
			wantReason:  ReasonCriticalAlertsFiring,
			wantMessage: []string{"8 critical alerts are firing: Alert0, Alert1, Alert2, Alert3, Alert4 and 3 more"},
		},
		"a y-stream on a cluster that is Upgradeable=False": {
			in: HealthInput{ClusterOperators: healthyOperators("etcd"), Alerts: none, YStream: true,
				Cluster: cluster("4.14.9", "stable-4.15", notUpgradeableCV("Admin ack required."))},
			wantReason:   ReasonUpgradeableFalse,
			wantMessage:  []string{`ClusterVersion is not upgradeable to a new minor version: "Admin ack required"`},
			wantProblems: []string{"ClusterVersion is Upgradeable=False: Admin ack required"},
		},
		"a z-stream ignores Upgradeable=False": {
			in: HealthInput{ClusterOperators: healthyOperators("etcd"), Alerts: none,
				Cluster: cluster("4.14.9", "stable-4.15", notUpgradeableCV("Admin ack required."))},
			wantHealthy: true, wantReason: ReasonHealthy,
		},
		"several kinds of problems": {
			in: HealthInput{ClusterOperators: []configv1.ClusterOperator{operator("etcd", configv1.ConditionTrue, configv1.ConditionTrue)},
				Alerts: []Alert{{Name: "KubeAPIDown", Severity: "critical", State: "firing"}}},
			wantReason:  ReasonMultipleProblems,
			wantMessage: []string{"Cluster is not healthy: 1 cluster operator is degraded or unavailable: etcd (Degraded); 1 critical alert is firing: KubeAPIDown"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := Health(tc.in)
			if v.Healthy != tc.wantHealthy || v.Reason != tc.wantReason {
				t.Fatalf("health %v/%s (%s), want %v/%s", v.Healthy, v.Reason, v.Message, tc.wantHealthy, tc.wantReason)
			}
			for _, s := range tc.wantMessage {
				if !strings.Contains(v.Message, s) {
					t.Errorf("message %q does not contain %q", v.Message, s)
				}
			}
			checkMessageShape(t, v.Message)
			if tc.wantProblems != nil {
				if diff := cmp.Diff(tc.wantProblems, v.Problems); diff != "" {
					t.Errorf("problems (-want +got):\n%s", diff)
				}
			}
			if v.Healthy != (len(v.Problems) == 0) {
				t.Errorf("healthy %v with problems %v", v.Healthy, v.Problems)
			}
		})
	}
}
