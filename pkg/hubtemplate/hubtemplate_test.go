package hubtemplate

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

const policyNamespace = "ztp-site"

// configPolicy returns the raw JSON of a ConfigurationPolicy that makes a ConfigMap with
// data on the managed clusters, as a policy's spec.policy-templates[].objectDefinition.
func configPolicy(t testing.TB, name string, data map[string]string) []byte {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "policy.open-cluster-management.io/v1",
		"kind":       "ConfigurationPolicy",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"remediationAction": "inform",
			"severity":          "low",
			"object-templates": []any{map[string]any{
				"complianceType": "musthave",
				"objectDefinition": map[string]any{
					"apiVersion": "v1",
					"kind":       "ConfigMap",
					"metadata":   map[string]any{"name": "site-settings", "namespace": "openshift-config"},
					"data":       data,
				},
			}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// rawPolicy returns the raw JSON of a ConfigurationPolicy with object-templates-raw.
func rawPolicy(t testing.TB, objectTemplatesRaw string) []byte {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "policy.open-cluster-management.io/v1",
		"kind":       "ConfigurationPolicy",
		"metadata":   map[string]any{"name": "site-raw"},
		"spec":       map[string]any{"remediationAction": "inform", "object-templates-raw": objectTemplatesRaw},
	})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestAnalyze(t *testing.T) {
	one := func(v string) map[string]string { return map[string]string{"value": v} }
	cases := map[string]struct {
		templates   []map[string]string
		raw         [][]byte // used instead of templates when set
		configMaps  []string
		unsupported string
	}{
		"fromConfigMap in the policy's namespace with a key computed per cluster": {
			templates:  []map[string]string{one(`{{hub fromConfigMap "" "site-data" (printf "%s-version" .ManagedClusterName) hub}}`)},
			configMaps: []string{"site-data"},
		},
		"fromConfigMap naming the policy's namespace": {
			templates:  []map[string]string{one(`{{hub fromConfigMap "ztp-site" "site-data" "version" hub}}`)},
			configMaps: []string{"site-data"},
		},
		"trim markers": {
			templates:  []map[string]string{one(`v{{hub- fromConfigMap "" "trimmed" "k" -hub}}`)},
			configMaps: []string{"trimmed"},
		},
		"the key piped into fromConfigMap": {
			templates:  []map[string]string{one(`{{hub printf "%s-key" .ManagedClusterName | fromConfigMap "" "site-data" hub}}`)},
			configMaps: []string{"site-data"},
		},
		"copyConfigMapData": {
			templates:  []map[string]string{{"data": `{{hub copyConfigMapData "" "site-bundle" hub}}`}},
			configMaps: []string{"site-bundle"},
		},
		"lookup of a ConfigMap by name": {
			templates:  []map[string]string{one(`{{hub (lookup "v1" "ConfigMap" "" "site-data").data.version hub}}`)},
			configMaps: []string{"site-data"},
		},
		"lookup of the cluster's ManagedCluster": {
			templates: []map[string]string{one(`{{hub (lookup "cluster.open-cluster-management.io/v1" "ManagedCluster" "" .ManagedClusterName).metadata.labels.site hub}}`)},
		},
		"context variables and pure functions": {
			templates: []map[string]string{{
				"name":   `{{hub .ManagedClusterName | upper hub}}`,
				"region": `{{hub index .ManagedClusterLabels "region" | default "none" hub}}`,
				"policy": `{{hub .PolicyMetadata.name hub}}`,
				"blob":   `{{hub dict "a" 1 | toJSON | b64enc hub}}`,
			}},
		},
		"no templates": {
			templates: []map[string]string{one("4.16.3")},
		},
		"spoke templates are not hub templates": {
			templates: []map[string]string{{
				"pull":   `{{ fromSecret "openshift-config" "pull-secret" ".dockerconfigjson" }}`,
				"lookup": `{{ (lookup "v1" "Namespace" "" "default").metadata.uid }}`,
			}},
		},
		"a hub template in a key": {
			templates:  []map[string]string{{`{{hub fromConfigMap "" "site-keys" "key" hub}}`: "v"}},
			configMaps: []string{"site-keys"},
		},
		"an if spanning two values": {
			templates: []map[string]string{{
				"a": `{{hub if eq .ManagedClusterName "sno1" hub}}{{hub fromConfigMap "" "sno1-data" "v" hub}}`,
				"b": `{{hub end hub}}`,
			}},
			configMaps: []string{"sno1-data"},
		},
		"multiple templates with duplicates": {
			templates: []map[string]string{
				{"a": `{{hub fromConfigMap "" "site-data" "a" hub}}`, "b": `{{hub fromConfigMap "ztp-site" "common" "b" hub}}`},
				one("no templates here"),
				{"c": `{{hub fromConfigMap "" "site-data" "c" hub}}-{{hub fromConfigMap "" "alpha" "c" hub}}`},
			},
			configMaps: []string{"alpha", "common", "site-data"},
		},
		"fromSecret": {
			templates:   []map[string]string{one(`{{hub fromSecret "" "creds" "pw" hub}}`)},
			unsupported: `policy-templates[0]: {{hub fromSecret "" "creds" "pw" hub}} reads a Secret; Copy mode does not copy Secrets (use enforcement: Override)`,
		},
		"copySecretData": {
			templates:   []map[string]string{{"data": `{{hub copySecretData "" "creds" hub}}`}},
			unsupported: `policy-templates[0]: {{hub copySecretData "" "creds" hub}} reads a Secret; Copy mode does not copy Secrets (use enforcement: Override)`,
		},
		"lookup of a Deployment": {
			templates: []map[string]string{one(`{{hub (lookup "apps/v1" "Deployment" "" "site-agent").spec.replicas hub}}`)},
			unsupported: `policy-templates[0]: {{hub (lookup "apps/v1" "Deployment" "" "site-agent").spec.replicas hub}} uses lookup, ` +
				`which reads arbitrary objects of the policy's namespace; Copy mode copies only ConfigMaps named literally (use enforcement: Override)`,
		},
		"lookup listing ConfigMaps": {
			templates: []map[string]string{one(`{{hub range (lookup "v1" "ConfigMap" "" "" "site=a").items hub}}x{{hub end hub}}`)},
			unsupported: `policy-templates[0]: {{hub range (lookup "v1" "ConfigMap" "" "" "site=a").items hub}} lists the ConfigMaps ` +
				`of the policy's namespace; Copy mode copies only ConfigMaps named literally (use enforcement: Override)`,
		},
		"a ConfigMap name in a variable": {
			templates: []map[string]string{one(`{{hub $name := printf "%s-data" .ManagedClusterName hub}}{{hub fromConfigMap "" $name "version" hub}}`)},
			unsupported: `policy-templates[0]: {{hub fromConfigMap "" $name "version" hub}} computes the ConfigMap name, which may differ ` +
				`per cluster and cannot be known before the rollout; Copy mode copies only ConfigMaps named literally (use enforcement: Override)`,
		},
		"a ConfigMap name from a pipeline": {
			templates: []map[string]string{one(`{{hub fromConfigMap "" (printf "%s-data" .ManagedClusterName) "version" hub}}`)},
			unsupported: `policy-templates[0]: {{hub fromConfigMap "" (printf "%s-data" .ManagedClusterName) "version" hub}} computes ` +
				`the ConfigMap name, which may differ per cluster and cannot be known before the rollout; Copy mode copies only ` +
				`ConfigMaps named literally (use enforcement: Override)`,
		},
		"a computed namespace": {
			templates: []map[string]string{one(`{{hub fromConfigMap .PolicyMetadata.namespace "site-data" "v" hub}}`)},
			unsupported: `policy-templates[0]: {{hub fromConfigMap .PolicyMetadata.namespace "site-data" "v" hub}} computes the ` +
				`namespace it reads, so Copy mode cannot tell whether it is the policy's (use enforcement: Override)`,
		},
		"another namespace": {
			templates: []map[string]string{one(`{{hub fromConfigMap "ztp-common" "site-data" "v" hub}}`)},
			unsupported: `policy-templates[0]: {{hub fromConfigMap "ztp-common" "site-data" "v" hub}} reads namespace "ztp-common"; ` +
				`the propagator lets hub templates read only the policy's namespace "ztp-site", so it refuses this template with or without a copy`,
		},
		"a missing argument": {
			templates:   []map[string]string{one(`{{hub fromConfigMap "" "site-data" hub}}`)},
			unsupported: `policy-templates[0]: {{hub fromConfigMap "" "site-data" hub}} gives fromConfigMap 2 arguments; it takes (namespace, name, key)`,
		},
		"lookup without a name": {
			templates: []map[string]string{one(`{{hub lookup "v1" "ConfigMap" "" hub}}`)},
			unsupported: `policy-templates[0]: {{hub lookup "v1" "ConfigMap" "" hub}} gives lookup 3 arguments; ` +
				`it takes (apiVersion, kind, namespace, name, labelSelector...)`,
		},
		"an unknown function": {
			templates:   []map[string]string{one(`{{hub env "HOME" hub}}`)},
			unsupported: `policy-templates[0]: {{hub env "HOME" hub}} calls env, which is not an ACM hub template function`,
		},
		"a parse error": {
			templates:   []map[string]string{one(`{{hub if .ManagedClusterName hub}}`)},
			unsupported: `policy-templates[0]: {{hub if .ManagedClusterName hub}} cannot be parsed: unexpected EOF`,
		},
		"a parse error in object-templates-raw": {
			raw: [][]byte{rawPolicy(t, "- complianceType: musthave\n  objectDefinition:\n    data: '{{hub fromConfigMap \"\" \"a\" hub}}{{hub end hub}}'\n")},
			unsupported: `policy-templates[0]: - complianceType: musthave objectDefinition: data: '{{hub fromConfigMap "" "a" hub}}{{hub end hub}}' ` +
				`cannot be parsed: line 3: unexpected {{end}}`,
		},
		"a secret inside a define": {
			templates: []map[string]string{one(`{{hub define "creds" hub}}{{hub fromSecret "" "creds" "pw" hub}}{{hub end hub}}{{hub template "creds" hub}}`)},
			unsupported: `policy-templates[0]: {{hub fromSecret "" "creds" "pw" hub}} reads a Secret; Copy mode does not copy Secrets ` +
				`(use enforcement: Override)`,
		},
		"the first problem in template order": {
			templates: []map[string]string{
				one(`{{hub fromConfigMap "" "site-data" "a" hub}}`),
				{"a": `{{hub fromConfigMap "" "site-data" "a" hub}}`, "b": `{{hub lookup "v1" "Pod" "" "x" hub}}`, "c": `{{hub fromSecret "" "s" "k" hub}}`},
				one(`{{hub env "HOME" hub}}`),
			},
			unsupported: `policy-templates[1]: {{hub lookup "v1" "Pod" "" "x" hub}} uses lookup, which reads arbitrary objects of the ` +
				`policy's namespace; Copy mode copies only ConfigMaps named literally (use enforcement: Override)`,
		},
		"invalid JSON": {
			raw:         [][]byte{[]byte(`{"data": "{{hub fromConfigMap \"\" \"a\" \"b\" hub}}"`)},
			unsupported: `policy-templates[0]: holds hub templates but is not valid JSON: unexpected end of JSON input`,
		},
		"invalid JSON without hub templates": {
			raw: [][]byte{[]byte(`{"data": `)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			templates := tc.raw
			for i, data := range tc.templates {
				templates = append(templates, configPolicy(t, "site-"+string(rune('a'+i)), data))
			}
			got := Analyze(policyNamespace, templates)
			if got.Unsupported != tc.unsupported {
				t.Errorf("Unsupported =\n  %s\nwant\n  %s", got.Unsupported, tc.unsupported)
			}
			if !slices.Equal(got.ConfigMaps, tc.configMaps) {
				t.Errorf("ConfigMaps = %q, want %q", got.ConfigMaps, tc.configMaps)
			}
		})
	}
}

func TestAnalyzeCutsLongExpressions(t *testing.T) {
	long := `{{hub fromSecret "" "creds" (printf "%s-` + strings.Repeat("x", 200) + `" .ManagedClusterName) hub}}`
	got := Analyze(policyNamespace, [][]byte{configPolicy(t, "long", map[string]string{"v": long})})
	want := "policy-templates[0]: " + long[:117] + "... reads a Secret"
	if !strings.HasPrefix(got.Unsupported, want) {
		t.Fatalf("Unsupported = %s\nwant it to start with %s", got.Unsupported, want)
	}
}

func TestRewrite(t *testing.T) {
	cases := map[string]struct {
		raw, want string
	}{
		"an explicit namespace": {
			raw:  `{"data": {"v": "{{hub fromConfigMap \"ztp-site\" \"site-data\" \"version\" hub}}"}}`,
			want: `{"data": {"v": "{{hub fromConfigMap \"cgu-ns\" \"site-data\" \"version\" hub}}"}}`,
		},
		"every reading function, and only the namespace argument": {
			raw: `{"a": "{{hub fromSecret \"ztp-site\" \"ztp-site\" \"k\" hub}}", ` +
				`"b": "{{hub (lookup \"v1\" \"ConfigMap\" \"ztp-site\" \"ztp-site\").data hub}}", ` +
				`"c": "{{hub copyConfigMapData \"ztp-site\" \"x\" hub}} {{hub copySecretData \"ztp-site\" \"y\" hub}}"}`,
			want: `{"a": "{{hub fromSecret \"cgu-ns\" \"ztp-site\" \"k\" hub}}", ` +
				`"b": "{{hub (lookup \"v1\" \"ConfigMap\" \"cgu-ns\" \"ztp-site\").data hub}}", ` +
				`"c": "{{hub copyConfigMapData \"cgu-ns\" \"x\" hub}} {{hub copySecretData \"cgu-ns\" \"y\" hub}}"}`,
		},
		"layout, other values and HTML characters are kept": {
			raw:  "{\n  \"z\": \"ztp-site\",\n  \"a\": \"<{{hub fromConfigMap `ztp-site` \\\"b\\\" \\\"c\\\" hub}}> & \\u00e9\",\n  \"n\": 1.50\n}",
			want: "{\n  \"z\": \"ztp-site\",\n  \"a\": \"<{{hub fromConfigMap \\\"cgu-ns\\\" \\\"b\\\" \\\"c\\\" hub}}> & é\",\n  \"n\": 1.50\n}",
		},
		"a namespace in a key": {
			raw:  `{"{{hub fromConfigMap \"ztp-site\" \"a\" \"k\" hub}}": "v"}`,
			want: `{"{{hub fromConfigMap \"cgu-ns\" \"a\" \"k\" hub}}": "v"}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Rewrite([]byte(tc.raw), policyNamespace, "cgu-ns")
			if string(got) != tc.want {
				t.Fatalf("Rewrite =\n  %s\nwant\n  %s", got, tc.want)
			}
			if !json.Valid(got) {
				t.Fatalf("Rewrite made invalid JSON: %s", got)
			}
		})
	}
}

func TestRewriteLeavesOtherTemplatesAlone(t *testing.T) {
	cases := map[string][]byte{
		"the empty namespace": configPolicy(t, "a", map[string]string{"v": `{{hub fromConfigMap "" "site-data" "version" hub}}`}),
		"unrelated strings": configPolicy(t, "a", map[string]string{
			"ns": "ztp-site", "v": `{{hub printf "ztp-site" hub}} {{hub fromConfigMap "" "ztp-site" "ztp-site" hub}}`,
		}),
		"another namespace":   configPolicy(t, "a", map[string]string{"v": `{{hub fromConfigMap "ztp-common" "site-data" "v" hub}}`}),
		"spoke templates":     configPolicy(t, "a", map[string]string{"v": `{{ fromConfigMap "ztp-site" "site-data" "v" }}`}),
		"no templates":        []byte(`{ "kind" : "ConfigurationPolicy", "ns": "ztp-site" }`),
		"an unparsable one":   configPolicy(t, "a", map[string]string{"v": `{{hub fromConfigMap "ztp-site" "a" "b" hub}}{{hub end hub}}`}),
		"invalid JSON":        []byte(`{"v": "{{hub fromConfigMap \"ztp-site\" \"a\" \"b\" hub}}"`),
		"a non-literal value": configPolicy(t, "a", map[string]string{"v": `{{hub fromConfigMap (print "ztp-site") "a" "b" hub}}`}),
	}
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			before := bytes.Clone(raw)
			got := Rewrite(raw, policyNamespace, "cgu-ns")
			if !bytes.Equal(got, before) || !bytes.Equal(raw, before) {
				t.Fatalf("Rewrite changed\n  %s\ninto\n  %s", before, got)
			}
		})
	}
}

// TestRewrittenCopyAnalyzesAlike checks the use Copy mode makes of the package: a template
// rewritten for the copy's namespace reads the same ConfigMaps from there.
func TestRewrittenCopyAnalyzesAlike(t *testing.T) {
	raw := configPolicy(t, "a", map[string]string{
		"a": `{{hub fromConfigMap "ztp-site" "site-data" "a" hub}}`,
		"b": `{{hub fromConfigMap "" "common" (printf "%s-b" .ManagedClusterName) hub}}`,
	})
	original := Analyze(policyNamespace, [][]byte{raw})
	copied := Analyze("cgu-ns", [][]byte{Rewrite(raw, policyNamespace, "cgu-ns")})
	if original.Unsupported != "" || copied.Unsupported != "" || !slices.Equal(original.ConfigMaps, copied.ConfigMaps) {
		t.Fatalf("original %+v, copy %+v: want the same ConfigMaps and no problem", original, copied)
	}
	if unchanged := Analyze("cgu-ns", [][]byte{raw}); !strings.Contains(unchanged.Unsupported, `reads namespace "ztp-site"`) {
		t.Fatalf("a copy that is not rewritten: %+v, want it refused", unchanged)
	}
}
