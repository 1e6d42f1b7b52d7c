package policyobjects

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
)

// FuzzRead reads arbitrary policy templates, as raw objectDefinitions and as
// object-templates-raw text: Read never panics, tells the visitor only object definitions
// that exist and templated text that holds a template, and names the policy and the template
// in its errors.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","metadata":{"name":"cv"},
"spec":{"object-templates":[{"complianceType":"musthave","objectDefinition":{"apiVersion":"config.openshift.io/v1","kind":"ClusterVersion","metadata":{"name":"version"}}}]}}`), "")
	f.Add([]byte(`{"kind":"ConfigurationPolicy","spec":{"object-templates":[{"complianceType":"mustnothave","objectDefinition":{"kind":"X"}},{"objectDefinition":null}]}}`), "")
	f.Add([]byte(`{"kind":"ConfigurationPolicy","spec":{"object-templates-raw":"RAW"}}`), "- complianceType: musthave\n  objectDefinition: {kind: Subscription}\n")
	f.Add([]byte(`{"kind":"ConfigurationPolicy","spec":{"object-templates-raw":"RAW"}}`), "{{ range (lookup \"v1\" \"ConfigMap\" \"\" \"\").items }}\n- objectDefinition: {}\n{{ end }}")
	f.Add([]byte(`{"kind":"ConfigurationPolicy","spec":{"object-templates-raw":"RAW"}}`), "- [unbalanced\n\t: tabs")
	f.Add([]byte(`{"kind":"ConfigurationPolicy","spec":{"object-templates":"not a list"}}`), "")
	f.Add([]byte(`{"kind":"ConfigurationPolicy","spec":null}`), "")
	f.Add([]byte(`{"kind":7}`), "")
	f.Add([]byte(`[]`), "")
	f.Add([]byte(`{"kind":"ConfigurationPolicy","spec":{"object-templates":[{"complianceType":"MustOnlyHave","objectDefinition":{"a":{"b":[1,2,{"c":null}]}}}]}}`), "")
	f.Fuzz(func(t *testing.T, raw []byte, rawText string) {
		if text, err := jsonString(rawText); err == nil {
			raw = []byte(strings.ReplaceAll(string(raw), `"RAW"`, text))
		}
		p := &policyv1.Policy{}
		p.Name = "fuzz"
		p.Spec.PolicyTemplates = []*policyv1.PolicyTemplate{nil, {ObjectDefinition: runtime.RawExtension{Raw: raw}}}
		visited := 0
		err := Read(p, Visitor{
			Object: func(def map[string]any) error {
				if def == nil {
					t.Fatal("told a nil object definition")
				}
				visited++
				return nil
			},
			Templated: func(raw string) error {
				if !strings.Contains(raw, TemplateDelimiter) {
					t.Fatalf("told templated text without a template: %q", raw)
				}
				return nil
			},
		})
		if err != nil && !strings.HasPrefix(err.Error(), "policy fuzz: policy-templates[1]: ") {
			t.Fatalf("error does not name the policy and template: %v", err)
		}
		// A visitor's error stops the walk and is named.
		stop := fmt.Errorf("stop")
		err = Read(p, Visitor{Object: func(map[string]any) error { return stop }})
		if visited > 0 && (err == nil || !strings.Contains(err.Error(), "object-templates")) {
			t.Fatalf("a visitor error is lost or not located: %v", err)
		}
	})
}

func jsonString(s string) (string, error) {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r == 0xFFFD:
			return "", fmt.Errorf("invalid UTF-8")
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String(), nil
}
