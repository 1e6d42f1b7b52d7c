package hubapi

import (
	"testing"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

func TestUnservedOf(t *testing.T) {
	for name, tc := range map[string]struct {
		missing []API
		want    Unserved
	}{
		"everything served":          {},
		"no views":                   {missing: []API{Views}, want: Unserved{Views: true}},
		"one work API off turns off": {missing: []API{WorkTemplates}, want: Unserved{Works: true}},
		"a required API is ignored":  {missing: []API{Required[0], SetBindings}, want: Unserved{SetBindings: true}},
		"all of them":                {missing: Optional, want: Unserved{Views: true, Actions: true, Works: true, SetBindings: true}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := UnservedOf(tc.missing); got != tc.want {
				t.Fatalf("UnservedOf = %+v, want %+v", got, tc.want)
			}
		})
	}
	if got := (Unserved{Works: true, SetBindings: true}).APIs(); len(got) != 3 || got[0] != Works || got[1] != WorkTemplates || got[2] != SetBindings {
		t.Fatalf("APIs = %v, want the two work APIs and set bindings, in the order of Optional", got)
	}
}

func TestRefusal(t *testing.T) {
	everything := ranv1alpha1.ClusterGroupUpgradeSpec{
		ManifestWorkTemplates: []string{"step"}, PreCaching: true,
		UpgradeChecks: &ranv1alpha1.UpgradeChecks{PathValidation: true, Health: &ranv1alpha1.HealthChecks{AfterUpgrade: true}},
	}
	for name, tc := range map[string]struct {
		spec        ranv1alpha1.ClusterGroupUpgradeSpec
		approves    bool
		unserved    Unserved
		wantField   string
		wantMessage string
	}{
		"a plain rollout on a bare hub": {
			unserved: Unserved{Views: true, Actions: true, Works: true, SetBindings: true},
		},
		"everything asked on a full hub": {spec: everything, approves: true},
		"ManifestWorks first": {
			spec: everything, unserved: Unserved{Works: true, Views: true}, wantField: "spec.manifestWorkTemplates",
			wantMessage: "spec.manifestWorkTemplates needs APIs the hub does not serve: manifestworks.work.open-cluster-management.io/v1 (Open Cluster Management work), " +
				"manifestworkreplicasets.work.open-cluster-management.io/v1alpha1 (Open Cluster Management work)",
		},
		"pre-caching needs actions": {
			spec: everything, unserved: Unserved{Actions: true}, wantField: "spec.preCaching",
			wantMessage: "spec.preCaching needs APIs the hub does not serve: managedclusteractions.action.open-cluster-management.io/v1beta1 (Red Hat Advanced Cluster Management foundation)",
		},
		"path validation needs views only": {
			spec:     ranv1alpha1.ClusterGroupUpgradeSpec{UpgradeChecks: &ranv1alpha1.UpgradeChecks{PathValidation: true}},
			unserved: Unserved{Actions: true},
		},
		"health checks need actions": {
			spec:     ranv1alpha1.ClusterGroupUpgradeSpec{UpgradeChecks: &ranv1alpha1.UpgradeChecks{Health: &ranv1alpha1.HealthChecks{BeforeUpgrade: true}}},
			unserved: Unserved{Actions: true}, wantField: "spec.upgradeChecks.health",
		},
		"health checks turned off ask for nothing": {
			spec:     ranv1alpha1.ClusterGroupUpgradeSpec{UpgradeChecks: &ranv1alpha1.UpgradeChecks{Health: &ranv1alpha1.HealthChecks{}}},
			unserved: Unserved{Views: true, Actions: true},
		},
		"Manual Subscriptions ask for InstallPlan approval": {
			approves: true, unserved: Unserved{Views: true},
			wantField: "InstallPlan approval for the managed policies' Manual Subscriptions",
		},
		"spec.operatorUpgrades names the field": {
			spec:     ranv1alpha1.ClusterGroupUpgradeSpec{OperatorUpgrades: &ranv1alpha1.OperatorUpgrades{}},
			approves: true, unserved: Unserved{Actions: true}, wantField: "spec.operatorUpgrades",
		},
		"no Manual Subscription, no approval": {
			spec:     ranv1alpha1.ClusterGroupUpgradeSpec{OperatorUpgrades: &ranv1alpha1.OperatorUpgrades{}},
			unserved: Unserved{Views: true, Actions: true},
		},
	} {
		t.Run(name, func(t *testing.T) {
			f, message, refused := tc.unserved.Refusal(Features(tc.spec, tc.approves))
			if refused != (tc.wantField != "") || f.Field != tc.wantField {
				t.Fatalf("refused %v on %q (%s), want %q", refused, f.Field, message, tc.wantField)
			}
			if tc.wantMessage != "" && message != tc.wantMessage {
				t.Fatalf("message %q, want %q", message, tc.wantMessage)
			}
		})
	}
}
