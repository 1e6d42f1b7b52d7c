package upgradecheck

import (
	"testing"

	configv1 "github.com/openshift/api/config/v1"
)

// FuzzTargets checks that Targets never panics on a policy template's raw JSON, and that
// every target it returns can be judged, also without panicking.
func FuzzTargets(f *testing.F) {
	for _, seed := range []string{
		configPolicy("musthave", clusterVersion("4.14.9", "quay.io/ocp@sha256:09", "stable-4.14")),
		configPolicy("mustonlyhave", upgradeConfig("4.14.9", "stable-4.14")),
		configPolicy("musthave", clusterVersion(`{{hub .ManagedClusterName hub}}`, "", "")),
		`{"kind": "ConfigurationPolicy", "spec": {"object-templates-raw": "- complianceType: musthave\n  objectDefinition: {kind: UpgradeConfig, apiVersion: upgrade.managed.openshift.io/v1alpha1}\n"}}`,
		`{"kind": "ConfigurationPolicy", "spec": {"object-templates-raw": "{{ range }}ClusterVersion{{ end }}"}}`,
		`{"kind": "ConfigurationPolicy", "spec": {"object-templates": [{"objectDefinition": {"kind": "ClusterVersion", "apiVersion": "config.openshift.io/v1", "spec": {"desiredUpdate": 3}}}]}}`,
		`{"kind": "ConfigurationPolicy", "spec": null}`,
		`{"kind": "ConfigurationPolicy", "spec": {"object-templates": [null, {}]}}`,
		`{"kind": 1}`,
		`null`,
		`[]`,
		`"x"`,
		`{`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		targets, err := Targets(policy(string(raw)))
		if err != nil {
			return
		}
		for _, target := range targets {
			if target.Policy != "platform-upgrade" || (target.Kind != KindClusterVersion && target.Kind != KindUpgradeConfig) {
				t.Fatalf("target %+v has the wrong policy or kind", target)
			}
			v := Judge(Input{Target: target, Cluster: cluster("4.14.8", "stable-4.14",
				available("4.14.9"), conditionalUpdate("4.14.10", "", configv1.ConditionalUpdateRisk{Name: "R"}))})
			if v.Outcome == "" || v.Reason == "" || v.Message == "" {
				t.Fatalf("incomplete verdict %+v for %+v", v, target)
			}
		}
	})
}
