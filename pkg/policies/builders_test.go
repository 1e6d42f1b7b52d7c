package policies

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	"github.com/cgu-operator/cgu-operator/pkg/ownership"
)

func parentPolicy() *policyv1.Policy {
	tmpl := func(kind, name string) *policyv1.PolicyTemplate {
		raw := `{"apiVersion":"policy.open-cluster-management.io/v1","kind":"` + kind + `","metadata":{"name":"` + name +
			`"},"spec":{"remediationAction":"inform","severity":"high","object-templates":[]}}`
		return &policyv1.PolicyTemplate{ObjectDefinition: runtime.RawExtension{Raw: []byte(raw)}}
	}
	return &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Name: "du-upgrade-platform", Namespace: "ztp-group", Labels: map[string]string{"team": "ran"}},
		Spec: policyv1.PolicySpec{
			RemediationAction: policyv1.Inform, Disabled: true,
			PolicyTemplates: []*policyv1.PolicyTemplate{tmpl("ConfigurationPolicy", "platform-cv"), tmpl("OperatorPolicy", "platform-op")},
		},
	}
}

func templateField(t *testing.T, raw []byte, path ...string) string {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	var v any = obj
	for _, p := range path {
		v = v.(map[string]any)[p]
	}
	s, _ := v.(string)
	return s
}

func TestEnforceCopy(t *testing.T) {
	parent := parentPolicy()
	owner := ownership.Owner{Namespace: "ztp-install", Name: "cgu-1"}
	cp, err := EnforceCopy(parent, owner)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Name != "cgu-1-du-upgrade-platform" || cp.Namespace != "ztp-install" {
		t.Fatalf("copy is %s/%s", cp.Namespace, cp.Name)
	}
	if cp.Spec.RemediationAction != policyv1.Enforce || cp.Spec.Disabled {
		t.Fatalf("copy spec: action %s disabled %v, want enforce and enabled", cp.Spec.RemediationAction, cp.Spec.Disabled)
	}
	wantLabels := map[string]string{"ran.openshift.io/cgu": "cgu-1", ownership.LabelUpgradeNamespace: "ztp-install",
		LabelParentPolicy: "du-upgrade-platform", LabelParentNamespace: "ztp-group"}
	for k, v := range wantLabels {
		if cp.Labels[k] != v {
			t.Fatalf("label %s = %q, want %q (labels %v)", k, cp.Labels[k], v, cp.Labels)
		}
	}
	for i, want := range []string{"cgu-1-platform-cv", "cgu-1-platform-op"} {
		raw := cp.Spec.PolicyTemplates[i].ObjectDefinition.Raw
		if got := templateField(t, raw, "metadata", "name"); got != want {
			t.Fatalf("template %d named %q, want %q", i, got, want)
		}
		if got := templateField(t, raw, "spec", "remediationAction"); got != "enforce" {
			t.Fatalf("template %d remediationAction %q, want enforce", i, got)
		}
	}
	if got := templateField(t, parent.Spec.PolicyTemplates[0].ObjectDefinition.Raw, "metadata", "name"); got != "platform-cv" ||
		parent.Spec.RemediationAction != policyv1.Inform {
		t.Fatalf("the parent policy was changed: %q %s", got, parent.Spec.RemediationAction)
	}
}

func TestEnforceCopyRejectsUnusableTemplates(t *testing.T) {
	cases := map[string]string{
		"not JSON": `{"kind":`,
		"no name":  `{"kind":"ConfigurationPolicy","metadata":{},"spec":{}}`,
		"no meta":  `{"kind":"ConfigurationPolicy"}`,
	}
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			p := parentPolicy()
			p.Spec.PolicyTemplates[1].ObjectDefinition.Raw = []byte(raw)
			_, err := EnforceCopy(p, ownership.Owner{Namespace: "ns", Name: "cgu"})
			if err == nil || !strings.Contains(err.Error(), "policy ztp-group/du-upgrade-platform, policy-templates[1]") {
				t.Fatalf("error %v, want one naming the template", err)
			}
		})
	}
}

func TestExactPlacement(t *testing.T) {
	p := ExactPlacement("ztp-install", "pl", []string{"sno-3", "sno-1"}, map[string]string{"a": "b"})
	req := p.Spec.Predicates[0].RequiredClusterSelector.LabelSelector.MatchExpressions[0]
	if req.Key != "name" || req.Operator != metav1.LabelSelectorOpIn || strings.Join(req.Values, ",") != "sno-1,sno-3" {
		t.Fatalf("requirement %+v, want name In [sno-1 sno-3]", req)
	}
	if p.Spec.NumberOfClusters != nil || p.Labels["a"] != "b" {
		t.Fatalf("placement %+v", p)
	}
	empty := ExactPlacement("ztp-install", "pl", nil, nil)
	if empty.Spec.NumberOfClusters == nil || *empty.Spec.NumberOfClusters != 0 || len(empty.Spec.Predicates) != 0 {
		t.Fatalf("an empty placement must select no cluster: %+v", empty.Spec)
	}
}

func TestBinding(t *testing.T) {
	plain := Binding("ns", "b", "pl", "p", false, nil)
	if plain.SubFilter != "" || plain.BindingOverrides.RemediationAction != "" || plain.Subjects[0].Name != "p" || plain.PlacementRef.Name != "pl" {
		t.Fatalf("plain binding %+v", plain)
	}
	override := Binding("ns", "b", "pl", "p", true, nil)
	if override.SubFilter != policyv1.Restricted || override.BindingOverrides.RemediationAction != "enforce" {
		t.Fatalf("override binding %+v", override)
	}
}

func TestEnforceCopyPinsDependencyNamespaces(t *testing.T) {
	parent := parentPolicy()
	dep := func(ns string) policyv1.PolicyDependency {
		return policyv1.PolicyDependency{TypeMeta: metav1.TypeMeta{Kind: policyv1.Kind, APIVersion: policyv1.GroupVersion.String()},
			Name: "operators-ready", Namespace: ns, Compliance: policyv1.Compliant}
	}
	parent.Spec.Dependencies = []policyv1.PolicyDependency{dep(""), dep("elsewhere")}
	parent.Spec.PolicyTemplates[0].ExtraDependencies = []policyv1.PolicyDependency{dep("")}
	cp, err := EnforceCopy(parent, ownership.Owner{Namespace: "ztp-install", Name: "cgu-1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{cp.Spec.Dependencies[0].Namespace, cp.Spec.Dependencies[1].Namespace, cp.Spec.PolicyTemplates[0].ExtraDependencies[0].Namespace}; got[0] != "ztp-group" || got[1] != "elsewhere" || got[2] != "ztp-group" {
		t.Fatalf("copy dependency namespaces %v, want the parent's where none was given", got)
	}
	if parent.Spec.Dependencies[0].Namespace != "" || parent.Spec.PolicyTemplates[0].ExtraDependencies[0].Namespace != "" {
		t.Fatal("the parent was modified")
	}
}
