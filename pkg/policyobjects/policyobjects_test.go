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

func TestCollect(t *testing.T) {
	p := policy(
		`{"object-templates":[{"objectDefinition":{"kind":"A","n":1}},{"objectDefinition":{"kind":"B"}},{"objectDefinition":{"kind":"A","n":2}}]}`,
		`{"object-templates-raw":"{{ range .x }}- objectDefinition: {kind: A}{{ end }}"}`,
	)
	read := func(obj map[string]any) (string, bool, error) {
		if obj["kind"] != "A" {
			return "", false, nil
		}
		return fmt.Sprintf("A%v", obj["n"]), true, nil
	}
	got, err := Collect(p, []string{"A", "Z"}, read, func(kind string) string { return "templated " + kind })
	if err != nil || fmt.Sprint(got) != "[A1 A2 templated A]" {
		t.Fatalf("got %q, %v; want [A1 A2 templated A]", got, err)
	}
	_, err = Collect(p, nil, func(map[string]any) (string, bool, error) { return "", false, fmt.Errorf("unreadable") }, nil)
	if err == nil || err.Error() != "policy p: policy-templates[0]: object-templates[0]: unreadable" {
		t.Fatalf("error %v, want the first object's, naming it", err)
	}
}

func TestString(t *testing.T) {
	obj := map[string]any{
		"spec": map[string]any{"version": "4.17.3", "templated": "{{ .v }}", "number": 3.0, "list": []any{}, "null": nil},
		"raw":  "{{ hub }}", "text": "plain",
	}
	for name, tc := range map[string]struct {
		path      []string
		want      string
		templated bool
		err       string
	}{
		"a string":                          {path: []string{"spec", "version"}, want: "4.17.3"},
		"absent":                            {path: []string{"spec", "channel"}},
		"null":                              {path: []string{"spec", "null"}},
		"below an absent object":            {path: []string{"status", "desired", "version"}},
		"a template in place of the value":  {path: []string{"spec", "templated"}, templated: true},
		"a template in place of an object":  {path: []string{"raw", "version"}, templated: true},
		"a number":                          {path: []string{"spec", "number"}, err: "spec.number is a number, not a string"},
		"an array":                          {path: []string{"spec", "list"}, err: "spec.list is an array, not a string"},
		"an object":                         {path: []string{"spec"}, err: "spec is an object, not a string"},
		"a plain string in place of object": {path: []string{"text", "version"}, err: "text is a string, not an object"},
		"a number in place of an object":    {path: []string{"spec", "number", "x"}, err: "spec.number is a number, not an object"},
	} {
		t.Run(name, func(t *testing.T) {
			got, templated, err := String(obj, tc.path...)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want || templated != tc.templated {
				t.Fatalf("got %q, templated %v, error %v; want %q, templated %v", got, templated, err, tc.want, tc.templated)
			}
		})
	}
}
