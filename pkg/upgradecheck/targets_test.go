package upgradecheck

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
)

// configPolicy returns the JSON of a ConfigurationPolicy template in the shape
// tests/world.NewPolicy gives it, with one object template per object.
func configPolicy(complianceType string, objects ...map[string]any) string {
	templates := make([]any, 0, len(objects))
	for _, o := range objects {
		templates = append(templates, map[string]any{"complianceType": complianceType, "objectDefinition": o})
	}
	return mustJSON(map[string]any{
		"apiVersion": "policy.open-cluster-management.io/v1",
		"kind":       "ConfigurationPolicy",
		"metadata":   map[string]any{"name": "upgrade-cv"},
		"spec":       map[string]any{"remediationAction": "inform", "severity": "high", "object-templates": templates},
	})
}

func mustJSON(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(raw)
}

// clusterVersion is the object of a platform upgrade policy, as tests/world.ClusterVersionUpdated
// writes it, with the channel and image added when set.
func clusterVersion(version, image, channel string) map[string]any {
	desired := map[string]any{}
	if version != "" {
		desired["version"] = version
	}
	if image != "" {
		desired["image"] = image
	}
	spec := map[string]any{"desiredUpdate": desired}
	if channel != "" {
		spec["channel"] = channel
	}
	return map[string]any{
		"apiVersion": "config.openshift.io/v1",
		"kind":       "ClusterVersion",
		"metadata":   map[string]any{"name": "version"},
		"spec":       spec,
		"status":     map[string]any{"history": []any{map[string]any{"state": "Completed", "version": version}}},
	}
}

// upgradeConfig is an UpgradeConfig in the shape tests/sim.NewUpgradeConfig gives it.
func upgradeConfig(version, channel string) map[string]any {
	return map[string]any{
		"apiVersion": "upgrade.managed.openshift.io/v1alpha1",
		"kind":       "UpgradeConfig",
		"metadata":   map[string]any{"name": "managed-upgrade-config", "namespace": "openshift-managed-upgrade-operator"},
		"spec": map[string]any{
			"desired":   map[string]any{"version": version, "channel": channel},
			"upgradeAt": "2024-01-01T00:00:00Z", "PDBForceDrainTimeout": 60, "type": "OSD",
		},
	}
}

func policy(templates ...string) *policyv1.Policy {
	p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Name: "platform-upgrade", Namespace: "ztp-common"}}
	for _, t := range templates {
		p.Spec.PolicyTemplates = append(p.Spec.PolicyTemplates,
			&policyv1.PolicyTemplate{ObjectDefinition: runtime.RawExtension{Raw: []byte(t)}})
	}
	return p
}

func TestTargets(t *testing.T) {
	operatorPolicy := `{"apiVersion": "policy.open-cluster-management.io/v1beta1", "kind": "OperatorPolicy",
		"metadata": {"name": "sriov"}, "spec": {"subscription": {"name": "sriov-network-operator"}}}`
	namespace := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "x"}}
	cases := map[string]struct {
		policy  *policyv1.Policy
		want    []Target
		wantErr string
	}{
		"a ClusterVersion version, image and channel": {
			policy: policy(configPolicy("musthave", clusterVersion("4.14.9", "quay.io/ocp@sha256:09", "stable-4.14"))),
			want: []Target{{Policy: "platform-upgrade", Kind: KindClusterVersion, Version: "4.14.9",
				Image: "quay.io/ocp@sha256:09", Channel: "stable-4.14"}},
		},
		"mustonlyhave in any case counts, mustnothave does not": {
			policy: policy(
				configPolicy("MustOnlyHave", clusterVersion("4.14.9", "", "")),
				configPolicy("mustnothave", clusterVersion("4.14.10", "", ""))),
			want: []Target{{Policy: "platform-upgrade", Kind: KindClusterVersion, Version: "4.14.9"}},
		},
		"an UpgradeConfig version and channel": {
			policy: policy(configPolicy("musthave", upgradeConfig("4.14.9", "stable-4.14"))),
			want:   []Target{{Policy: "platform-upgrade", Kind: KindUpgradeConfig, Version: "4.14.9", Channel: "stable-4.14"}},
		},
		"targets in template and object order, other objects and kinds skipped": {
			policy: policy(
				operatorPolicy,
				configPolicy("musthave", namespace, upgradeConfig("4.15.2", "fast-4.15")),
				configPolicy("musthave", clusterVersion("4.15.2", "", "fast-4.15"))),
			want: []Target{
				{Policy: "platform-upgrade", Kind: KindUpgradeConfig, Version: "4.15.2", Channel: "fast-4.15"},
				{Policy: "platform-upgrade", Kind: KindClusterVersion, Version: "4.15.2", Channel: "fast-4.15"},
			},
		},
		"a hub template in the version": {
			policy: policy(configPolicy("musthave",
				clusterVersion(`{{hub fromConfigMap "" "versions" (printf "%s-version" .ManagedClusterName) hub}}`, "", "stable-4.14"))),
			want: []Target{{Policy: "platform-upgrade", Kind: KindClusterVersion, Channel: "stable-4.14", Templated: true}},
		},
		"a spoke template in the channel": {
			policy: policy(configPolicy("musthave", upgradeConfig("4.14.9", `{{ fromConfigMap "ns" "cm" "channel" }}`))),
			want:   []Target{{Policy: "platform-upgrade", Kind: KindUpgradeConfig, Version: "4.14.9", Templated: true}},
		},
		"a toLiteral template for the whole desiredUpdate": {
			policy: policy(configPolicy("musthave", map[string]any{
				"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion", "metadata": map[string]any{"name": "version"},
				"spec": map[string]any{"desiredUpdate": `{{hub fromConfigMap "" "u" "desired" | toLiteral hub}}`, "channel": "stable-4.14"},
			})),
			want: []Target{{Policy: "platform-upgrade", Kind: KindClusterVersion, Channel: "stable-4.14", Templated: true}},
		},
		"object-templates-raw with templates names the kinds it may produce": {
			policy: policy(`{"apiVersion": "policy.open-cluster-management.io/v1", "kind": "ConfigurationPolicy",
				"metadata": {"name": "raw"}, "spec": {"object-templates-raw":
				"{{- range $v := (lookup \"v1\" \"ConfigMap\" \"ns\" \"v\").data }}\n- complianceType: musthave\n  objectDefinition:\n    apiVersion: config.openshift.io/v1\n    kind: ClusterVersion\n    metadata:\n      name: version\n    spec:\n      desiredUpdate:\n        version: '{{ $v }}'\n{{- end }}\n"}}`),
			want: []Target{{Policy: "platform-upgrade", Kind: KindClusterVersion, Templated: true}},
		},
		"object-templates-raw without templates is read as YAML": {
			policy: policy(`{"apiVersion": "policy.open-cluster-management.io/v1", "kind": "ConfigurationPolicy",
				"metadata": {"name": "raw"}, "spec": {"object-templates-raw":
				"- complianceType: musthave\n  objectDefinition:\n    apiVersion: upgrade.managed.openshift.io/v1alpha1\n    kind: UpgradeConfig\n    metadata:\n      name: managed-upgrade-config\n    spec:\n      desired:\n        version: 4.14.9\n        channel: stable-4.14\n"}}`),
			want: []Target{{Policy: "platform-upgrade", Kind: KindUpgradeConfig, Version: "4.14.9", Channel: "stable-4.14"}},
		},
		"a ClusterVersion with another name or group is not a target": {
			policy: policy(configPolicy("musthave",
				map[string]any{"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion", "metadata": map[string]any{"name": "other"}},
				map[string]any{"apiVersion": "example.com/v1", "kind": "ClusterVersion", "metadata": map[string]any{"name": "version"}})),
		},
		"a policy without upgrade objects has no targets": {
			policy: policy(operatorPolicy, configPolicy("musthave", namespace)),
		},
		"nil and empty templates have no targets": {
			policy: &policyv1.Policy{Spec: policyv1.PolicySpec{PolicyTemplates: []*policyv1.PolicyTemplate{nil, {}}}},
		},
		"malformed JSON names the template index": {
			policy:  policy(configPolicy("musthave", namespace), `{"kind": "ConfigurationPolicy", "spec": {`),
			wantErr: "policy platform-upgrade: policy-templates[1]: decoding objectDefinition",
		},
		"object-templates of the wrong type": {
			policy:  policy(`{"kind": "ConfigurationPolicy", "spec": {"object-templates": {"a": 1}}}`),
			wantErr: "policy-templates[0]: decoding ConfigurationPolicy",
		},
		"a version that is not a string names the field": {
			policy: policy(configPolicy("musthave", map[string]any{
				"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion", "metadata": map[string]any{"name": "version"},
				"spec": map[string]any{"desiredUpdate": map[string]any{"version": 4.14}},
			})),
			wantErr: "policy-templates[0]: object-templates[0]: spec.desiredUpdate.version is a number, not a string",
		},
		"a desired that is a plain string names the field": {
			policy: policy(configPolicy("musthave", map[string]any{
				"apiVersion": "upgrade.managed.openshift.io/v1alpha1", "kind": "UpgradeConfig",
				"spec": map[string]any{"desired": "4.14.9"},
			})),
			wantErr: "object-templates[0]: spec.desired is a string, not an object",
		},
		"malformed object-templates-raw": {
			policy:  policy(`{"kind": "ConfigurationPolicy", "spec": {"object-templates-raw": "- complianceType: [\n"}}`),
			wantErr: "policy-templates[0]: decoding object-templates-raw",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Targets(tc.policy)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Targets: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("targets (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTargetsNilPolicy(t *testing.T) {
	if got, err := Targets(nil); got != nil || err != nil {
		t.Fatalf("Targets(nil) = %v, %v; want nothing", got, err)
	}
}

func TestTargetsFromObject(t *testing.T) {
	// A policy built in code may carry its template as an object rather than raw JSON.
	u := map[string]any{}
	if err := json.Unmarshal([]byte(configPolicy("musthave", clusterVersion("4.14.9", "", ""))), &u); err != nil {
		t.Fatal(err)
	}
	p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	p.Spec.PolicyTemplates = []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Object: &unstructured.Unstructured{Object: u}}}}
	got, err := Targets(p)
	if err != nil || len(got) != 1 || got[0].Version != "4.14.9" {
		t.Fatalf("Targets = %v, %v; want one target to 4.14.9", got, err)
	}
}
