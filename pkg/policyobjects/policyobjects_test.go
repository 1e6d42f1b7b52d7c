package policyobjects

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
)

// policy wraps ConfigurationPolicy specs, given as JSON, into a policy.
func policy(specs ...string) *policyv1.Policy {
	p := &policyv1.Policy{}
	p.Name = "p"
	for _, spec := range specs {
		raw := fmt.Sprintf(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","spec":%s}`, spec)
		p.Spec.PolicyTemplates = append(p.Spec.PolicyTemplates, &policyv1.PolicyTemplate{ObjectDefinition: runtime.RawExtension{Raw: []byte(raw)}})
	}
	return p
}

func TestRead(t *testing.T) {
	p := policy(
		`{"object-templates":[{"complianceType":"musthave","objectDefinition":{"kind":"A"}},{"complianceType":"mustnothave","objectDefinition":{"kind":"B"}},{"objectDefinition":{"kind":"C"}}]}`,
		`{"object-templates-raw":"- complianceType: MustOnlyHave\n  objectDefinition:\n    kind: D\n"}`,
		`{"object-templates-raw":"{{ range .x }}- objectDefinition: {kind: E}{{ end }}"}`,
	)
	var kinds, templated []string
	err := Read(p, Visitor{
		Object:    func(obj map[string]any) error { kinds = append(kinds, obj["kind"].(string)); return nil },
		Templated: func(raw string) error { templated = append(templated, KindsIn(raw, "E", "F")...); return nil },
	})
	if err != nil || fmt.Sprint(kinds) != "[A C D]" || fmt.Sprint(templated) != "[E]" {
		t.Fatalf("kinds %v templated %v err %v, want [A C D], [E]", kinds, templated, err)
	}
}

func TestReadErrorsNameTheTemplate(t *testing.T) {
	p := policy(`{"object-templates":[{"objectDefinition":{"kind":"A"}}]}`, `{"object-templates":[{"objectDefinition":{"kind":"A"}}, {"objectDefinition":{"kind":"B"}}]}`)
	err := Read(p, Visitor{Object: func(obj map[string]any) error {
		if obj["kind"] == "B" {
			return fmt.Errorf("bad B")
		}
		return nil
	}})
	if err == nil || err.Error() != "policy p: policy-templates[1]: object-templates[1]: bad B" {
		t.Fatalf("error %v", err)
	}
	bad := policy(`{"object-templates-raw":"- : ["}`)
	if err := Read(bad, Visitor{}); err == nil || !strings.Contains(err.Error(), "decoding object-templates-raw") {
		t.Fatalf("error %v, want one decoding object-templates-raw", err)
	}
	if err := Read(nil, Visitor{}); err != nil {
		t.Fatalf("a nil policy: %v", err)
	}
}
