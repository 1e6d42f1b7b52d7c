// Package policyobjects reads what a governance policy asks of clusters: the object
// definitions of its ConfigurationPolicy templates that must exist. The upgrade checks read
// the release a policy asks for through it, the precache derivation its operators.
package policyobjects

import (
	"encoding/json"
	"fmt"
	"strings"

	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/yaml"
)

// TemplateDelimiter opens a hub or managed-cluster template.
const TemplateDelimiter = "{{"

const configPolicyKind = "ConfigurationPolicy"

// Visitor is told each object definition that must exist, and each object-templates-raw that
// holds templates (its objects are only known as text once the templates are resolved).
type Visitor struct {
	Object    func(definition map[string]any) error
	Templated func(raw string) error
}

// Read walks the policy templates of p in order. An object template counts when its
// complianceType is musthave or mustonlyhave, in any case, or empty (musthave); an
// object-templates-raw without templates is read as object-templates. Errors, from decoding or
// from the visitor, name the policy and the template: "policy P: policy-templates[1]:
// object-templates[0]: ...".
func Read(p *policyv1.Policy, v Visitor) error {
	if p == nil {
		return nil
	}
	for i, tmpl := range p.Spec.PolicyTemplates {
		if err := readTemplate(tmpl, v); err != nil {
			return fmt.Errorf("policy %s: policy-templates[%d]: %w", p.Name, i, err)
		}
	}
	return nil
}

// configurationPolicy is what Read reads of a policy template.
type configurationPolicy struct {
	Kind string `json:"kind"`
	Spec *struct {
		ObjectTemplates    []objectTemplate `json:"object-templates"`
		ObjectTemplatesRaw string           `json:"object-templates-raw"`
	} `json:"spec"`
}

// objectTemplate is one entry of a ConfigurationPolicy's object-templates.
type objectTemplate struct {
	ComplianceType   string         `json:"complianceType"`
	ObjectDefinition map[string]any `json:"objectDefinition"`
}

func readTemplate(tmpl *policyv1.PolicyTemplate, v Visitor) error {
	raw, err := templateJSON(tmpl)
	if err != nil || len(raw) == 0 {
		return err
	}
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return fmt.Errorf("decoding objectDefinition: %w", err)
	}
	if head.Kind != configPolicyKind {
		return nil
	}
	var cp configurationPolicy
	if err := json.Unmarshal(raw, &cp); err != nil {
		return fmt.Errorf("decoding ConfigurationPolicy: %w", err)
	}
	switch {
	case cp.Spec == nil:
		return nil
	case strings.TrimSpace(cp.Spec.ObjectTemplatesRaw) != "":
		return readRaw(cp.Spec.ObjectTemplatesRaw, v)
	}
	return readObjects(cp.Spec.ObjectTemplates, "object-templates", v)
}

// templateJSON returns the JSON of a policy template's objectDefinition, nil when it has none.
func templateJSON(tmpl *policyv1.PolicyTemplate) ([]byte, error) {
	switch {
	case tmpl == nil:
		return nil, nil
	case len(tmpl.ObjectDefinition.Raw) > 0:
		return tmpl.ObjectDefinition.Raw, nil
	case tmpl.ObjectDefinition.Object != nil:
		return json.Marshal(tmpl.ObjectDefinition.Object)
	}
	return nil, nil
}

// readRaw reads object-templates-raw: YAML with the shape of object-templates, or, when it
// holds templates, text the visitor can only search.
func readRaw(raw string, v Visitor) error {
	if strings.Contains(raw, TemplateDelimiter) {
		if v.Templated == nil {
			return nil
		}
		return v.Templated(raw)
	}
	var templates []objectTemplate
	if err := yaml.Unmarshal([]byte(raw), &templates); err != nil {
		return fmt.Errorf("decoding object-templates-raw: %w", err)
	}
	return readObjects(templates, "object-templates-raw", v)
}

// readObjects tells the visitor the object definitions that must exist; field names the
// list in errors.
func readObjects(templates []objectTemplate, field string, v Visitor) error {
	for j, ot := range templates {
		if !Wanted(ot.ComplianceType) || ot.ObjectDefinition == nil || v.Object == nil {
			continue
		}
		if err := v.Object(ot.ObjectDefinition); err != nil {
			return fmt.Errorf("%s[%d]: %w", field, j, err)
		}
	}
	return nil
}

// Wanted reports whether an object template's complianceType asks for its object to exist.
func Wanted(complianceType string) bool {
	return complianceType == "" || strings.EqualFold(complianceType, "musthave") || strings.EqualFold(complianceType, "mustonlyhave")
}

// KindsIn returns the kinds, of those given, that a templated object-templates-raw mentions:
// the kinds of objects it may produce once its templates are resolved.
func KindsIn(raw string, kinds ...string) []string {
	var out []string
	for _, k := range kinds {
		if strings.Contains(raw, k) {
			out = append(out, k)
		}
	}
	return out
}

// Collect returns what read makes of each object definition of p that must exist, in
// template order (read reports false for an object it does not want), and, for an
// object-templates-raw that holds templates, what templated makes of each of kinds it
// mentions: such objects are only known by kind until the templates are resolved.
func Collect[T any](p *policyv1.Policy, kinds []string, read func(definition map[string]any) (T, bool, error), templated func(kind string) T) ([]T, error) {
	var out []T
	err := Read(p, Visitor{
		Object: func(obj map[string]any) error {
			t, ok, err := read(obj)
			if ok {
				out = append(out, t)
			}
			return err
		},
		Templated: func(raw string) error {
			for _, kind := range KindsIn(raw, kinds...) {
				out = append(out, templated(kind))
			}
			return nil
		},
	})
	return out, err
}

// String returns the string at path in an object definition: "" when absent or null, and
// templated (with "") when a string holding a template stands in place of the value or of
// an object on the path. Another JSON type on the path is an error that names the field and
// the type found.
func String(obj map[string]any, path ...string) (value string, templated bool, err error) {
	var cur any = obj
	for i, key := range path {
		switch v := cur.(type) {
		case nil:
			return "", false, nil
		case map[string]any:
			cur = v[key]
		case string:
			if strings.Contains(v, TemplateDelimiter) {
				return "", true, nil
			}
			return "", false, fmt.Errorf("%s is a string, not an object", strings.Join(path[:i], "."))
		default:
			return "", false, fmt.Errorf("%s is %s, not an object", strings.Join(path[:i], "."), jsonType(v))
		}
	}
	switch v := cur.(type) {
	case nil:
		return "", false, nil
	case string:
		if strings.Contains(v, TemplateDelimiter) {
			return "", true, nil
		}
		return v, false, nil
	default:
		return "", false, fmt.Errorf("%s is %s, not a string", strings.Join(path, "."), jsonType(v))
	}
}

// jsonType names, for messages, the JSON type of a value encoding/json decoded into any.
func jsonType(v any) string {
	switch v.(type) {
	case bool:
		return "a boolean"
	case float64, json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "of another type"
}
