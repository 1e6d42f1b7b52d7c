package sim

import (
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
)

func TestClusterOperatorsReportTheClusterVersionWhenAllIsWell(t *testing.T) {
	store := newSpokeStore(t, "4.15.30")
	cos := NewClusterOperators(SpokeSpec{})
	if again := round(t, store, opsT0, cos); again != 0 {
		t.Fatalf("again = %v, want 0 outside updates", again)
	}
	for _, name := range defaultClusterOperators {
		co := storedClusterOperator(t, store, name)
		if len(co.Status.Versions) != 1 || co.Status.Versions[0] != (configv1.OperandVersion{Name: "operator", Version: "4.15.30"}) {
			t.Errorf("%s versions = %v", name, co.Status.Versions)
		}
		want := map[configv1.ClusterStatusConditionType]configv1.ConditionStatus{
			configv1.OperatorAvailable: configv1.ConditionTrue, configv1.OperatorProgressing: configv1.ConditionFalse,
			configv1.OperatorDegraded: configv1.ConditionFalse, configv1.OperatorUpgradeable: configv1.ConditionTrue,
		}
		for typ, status := range want {
			if c := coCondition(co, typ); c.Status != status || c.Reason != reasonAsExpected {
				t.Errorf("%s %s = %+v, want %s AsExpected", name, typ, c, status)
			}
		}
	}
	before := storedClusterOperator(t, store, "etcd").ResourceVersion
	round(t, store, opsT0.Add(time.Hour), cos)
	if after := storedClusterOperator(t, store, "etcd").ResourceVersion; after != before {
		t.Errorf("an unchanged operator was written again: resourceVersion %s -> %s", before, after)
	}
}

func TestClusterOperatorsFollowAnUpdate(t *testing.T) {
	names := []string{"etcd", "kube-apiserver", "network", "machine-config"}
	cases := map[string]struct {
		at              time.Duration
		wantNew         []string
		wantProgressing []string
		wantAgain       time.Duration
	}{
		"at the start the first operator rolls out": {0, nil, []string{"etcd"}, 2 * time.Minute},
		"a quarter in, the second":                  {2 * time.Minute, []string{"etcd"}, []string{"kube-apiserver"}, 2 * time.Minute},
		"midway":                                    {5 * time.Minute, []string{"etcd", "kube-apiserver"}, []string{"network"}, time.Minute},
		"machine-config waits for Completed":        {7 * time.Minute, []string{"etcd", "kube-apiserver", "network"}, []string{"machine-config"}, time.Minute},
		"all done once the history says Completed":  {8 * time.Minute, names, nil, 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			store := newSpokeStore(t, "4.16.10")
			cvo := &CVO{Cluster: "c1", Behaviour: Behaviour{Duration: 8 * time.Minute}}
			cos := &ClusterOperators{Names: names, Duration: 8 * time.Minute}
			round(t, store, opsT0, cvo, cos)
			askForUpdate(t, store, "4.16.12")
			round(t, store, opsT0, cvo, cos)
			again := round(t, store, opsT0.Add(tc.at), cvo, cos)
			var gotNew, gotProgressing []string
			for _, n := range names {
				co := storedClusterOperator(t, store, n)
				if co.Status.Versions[0].Version == "4.16.12" {
					gotNew = append(gotNew, n)
				}
				if c := coCondition(co, configv1.OperatorProgressing); c.Status == configv1.ConditionTrue {
					gotProgressing = append(gotProgressing, n)
					if c.Message != "Working towards 4.16.12" {
						t.Errorf("%s Progressing message = %q", n, c.Message)
					}
				}
			}
			if strings.Join(gotNew, ",") != strings.Join(tc.wantNew, ",") ||
				strings.Join(gotProgressing, ",") != strings.Join(tc.wantProgressing, ",") || again != tc.wantAgain {
				t.Fatalf("at %v: new=%v progressing=%v again=%v, want new=%v progressing=%v again=%v",
					tc.at, gotNew, gotProgressing, again, tc.wantNew, tc.wantProgressing, tc.wantAgain)
			}
		})
	}
}

func TestClusterOperatorsUpgradeableOnTheClusterVersion(t *testing.T) {
	notUpgradeable := func(op, reason string) ClusterOperatorCondition {
		return ClusterOperatorCondition{Operator: op, Type: configv1.OperatorUpgradeable, Status: configv1.ConditionFalse,
			Reason: reason, Message: op + " says no"}
	}
	cases := map[string]struct {
		imposed     []ClusterOperatorCondition
		wantStatus  configv1.ConditionStatus
		wantReason  string
		wantMessage string
	}{
		"none": {nil, "", "", ""},
		"one": {[]ClusterOperatorCondition{notUpgradeable("network", "OpenShiftSDNConfigured")}, configv1.ConditionFalse,
			"OpenShiftSDNConfigured", "Cluster operator network should not be upgraded between minor versions: network says no"},
		"two": {[]ClusterOperatorCondition{notUpgradeable("network", "A"), notUpgradeable("etcd", "B")}, configv1.ConditionFalse,
			"ClusterOperatorsNotUpgradeable", "Multiple cluster operators should not be upgraded between minor versions:\n" +
				"* Cluster operator etcd should not be upgraded between minor versions: B: etcd says no\n" +
				"* Cluster operator network should not be upgraded between minor versions: A: network says no"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			store := newSpokeStore(t, "4.16.10")
			cos := NewClusterOperators(SpokeSpec{ClusterOperatorConditions: tc.imposed})
			round(t, store, opsT0, cos)
			c := findCVCondition(storedClusterVersion(t, store), configv1.OperatorUpgradeable)
			if tc.wantStatus == "" {
				if c != nil {
					t.Fatalf("Upgradeable = %+v, want none", c)
				}
				return
			}
			if c == nil || c.Status != tc.wantStatus || c.Reason != tc.wantReason || c.Message != tc.wantMessage {
				t.Fatalf("Upgradeable = %+v, want %s %s %q", c, tc.wantStatus, tc.wantReason, tc.wantMessage)
			}
			for _, imposed := range tc.imposed {
				delete(cos.imposed, imposed.Operator)
			}
			round(t, store, opsT0.Add(time.Minute), cos)
			if c := findCVCondition(storedClusterVersion(t, store), configv1.OperatorUpgradeable); c != nil {
				t.Fatalf("after clearing, Upgradeable = %+v, want none", c)
			}
		})
	}
}

func TestClusterOperatorsImposedAndBlamedConditions(t *testing.T) {
	cases := map[string]struct {
		spec     SpokeSpec
		cvo      Behaviour
		operator string
		typ      configv1.ClusterStatusConditionType
		want     configv1.ConditionStatus
		reason   string
	}{
		"imposed Degraded": {SpokeSpec{ClusterOperatorConditions: []ClusterOperatorCondition{{Operator: "ingress",
			Type: configv1.OperatorDegraded, Status: configv1.ConditionTrue, Reason: "IngressDegraded", Message: "router pods crash"}}},
			Behaviour{}, "ingress", configv1.OperatorDegraded, configv1.ConditionTrue, "IngressDegraded"},
		"imposed Available=False": {SpokeSpec{ClusterOperatorConditions: []ClusterOperatorCondition{{Operator: "etcd",
			Type: configv1.OperatorAvailable, Status: configv1.ConditionFalse, Reason: "EtcdMembersDown", Message: "2 of 3 down"}}},
			Behaviour{}, "etcd", configv1.OperatorAvailable, configv1.ConditionFalse, "EtcdMembersDown"},
		"the failing update blames machine-config": {SpokeSpec{}, Behaviour{Fail: true}, "machine-config",
			configv1.OperatorDegraded, configv1.ConditionTrue, "UpdateFailed"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			store := newSpokeStore(t, "4.16.10")
			cvo := &CVO{Cluster: "c1", Behaviour: tc.cvo}
			cos := NewClusterOperators(tc.spec)
			if tc.cvo.Fail {
				askForUpdate(t, store, "4.16.12")
			}
			round(t, store, opsT0, cvo, cos)
			if c := coCondition(storedClusterOperator(t, store, tc.operator), tc.typ); c.Status != tc.want || c.Reason != tc.reason {
				t.Fatalf("%s %s = %+v, want %s %s", tc.operator, tc.typ, c, tc.want, tc.reason)
			}
			degraded, err := degradedOperators(store)
			if err != nil || len(degraded) != 1 || degraded[0] != tc.operator {
				t.Fatalf("degraded operators = %v, %v; want [%s]", degraded, err, tc.operator)
			}
		})
	}
}
