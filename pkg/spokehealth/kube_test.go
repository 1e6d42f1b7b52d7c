package spokehealth

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestKubeSource(t *testing.T) {
	network := clusterOperator("network", configv1.ConditionTrue, configv1.ConditionFalse)
	etcd := clusterOperator("etcd", configv1.ConditionFalse, configv1.ConditionTrue)
	c := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(
		&network, &etcd, clusterVersion(condition(configv1.OperatorUpgradeable, configv1.ConditionFalse)),
	).Build()
	srvURL, auth, _ := serve(t, answer{code: http.StatusOK, body: alertsAnswerJSON})
	src := KubeSource{Client: c, Prometheus: &Prometheus{URL: srvURL, Token: "token"}}

	got := Collect(context.Background(), src, "run-2", collectedAt)

	var names []string
	for _, op := range got.ClusterOperators {
		names = append(names, op.Name)
	}
	if diff := cmp.Diff([]string{"etcd", "network"}, names); diff != "" {
		t.Errorf("operators mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(etcd.Status.Conditions, got.ClusterOperators[0].Conditions); diff != "" {
		t.Errorf("etcd conditions mismatch (-want +got):\n%s", diff)
	}
	if len(got.Alerts) != 3 || got.Alerts[1].Name != "KubeAPIDown" {
		t.Errorf("alerts = %v, want the three of the answer", got.Alerts)
	}
	if diff := cmp.Diff([]string{"Bearer token"}, *auth); diff != "" {
		t.Errorf("Authorization headers mismatch (-want +got):\n%s", diff)
	}
	if len(got.ClusterVersionConditions) != 1 || got.ClusterVersionConditions[0].Status != configv1.ConditionFalse {
		t.Errorf("ClusterVersion conditions = %v, want Upgradeable=False", got.ClusterVersionConditions)
	}
	if got.Errors != nil {
		t.Errorf("errors = %v, want none", got.Errors)
	}
}

func TestKubeSourceEmptyCluster(t *testing.T) {
	src := KubeSource{Client: fake.NewClientBuilder().WithScheme(Scheme()).Build()}

	got := Collect(context.Background(), src, "run-3", collectedAt)

	if got.ClusterOperators == nil || len(got.ClusterOperators) != 0 {
		t.Errorf("operators = %#v, want read and empty", got.ClusterOperators)
	}
	if got.Alerts != nil || got.ClusterVersionConditions != nil {
		t.Errorf("alerts = %#v, ClusterVersion conditions = %#v, want both not read", got.Alerts, got.ClusterVersionConditions)
	}
	want := []string{"alerts: no Prometheus to read alerts from", `ClusterVersion: reading ClusterVersion version: clusterversions.config.openshift.io "version" not found`}
	if diff := cmp.Diff(want, got.Errors); diff != "" {
		t.Errorf("errors mismatch (-want +got):\n%s", diff)
	}
}

func TestKubeSourceWithoutConfigTypes(t *testing.T) {
	// A client whose scheme lacks config.openshift.io cannot list ClusterOperators.
	src := KubeSource{Client: fake.NewClientBuilder().Build()}
	_, err := src.ClusterOperators(context.Background())
	if err == nil || !strings.Contains(err.Error(), "listing ClusterOperators") {
		t.Errorf("ClusterOperators() error = %v, want one saying the list failed", err)
	}
}
