package upgradecheck

import (
	"encoding/json"
	"fmt"
	"strings"

	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/yaml"
)

// The kinds of object a Target can come from.
const (
	// KindClusterVersion is the cluster-version operator's config.openshift.io ClusterVersion.
	KindClusterVersion = "ClusterVersion"

	// KindUpgradeConfig is the managed-upgrade-operator's upgrade.managed.openshift.io
	// UpgradeConfig.
	KindUpgradeConfig = "UpgradeConfig"
)

const (
	configPolicyKind       = "ConfigurationPolicy"
	clusterVersionGroup    = "config.openshift.io"
	upgradeConfigGroup     = "upgrade.managed.openshift.io"
	clusterVersionName     = "version"
	templateDelimiter      = "{{"
	complianceMustHave     = "musthave"
	complianceMustOnlyHave = "mustonlyhave"
)

// Target is one upgrade a policy asks of the clusters it is placed on.
type Target struct {
	// Policy is the name of the policy.
	Policy string

	// Kind is KindClusterVersion or KindUpgradeConfig.
	Kind string

	// Version, Image and Channel are the release asked for, as the object writes them;
	// empty when not set or when Templated left them out.
	Version, Image, Channel string

	// Templated says that at least one of these fields is a hub or spoke template ("{{"),
	// resolved only on the hub or the spoke: the field is left empty and the target must
	// be treated as unknown.
	Templated bool
}

// Targets returns what a policy asks clusters to upgrade to, in template order: one Target
// per musthave or mustonlyhave object template of a ConfigurationPolicy whose object is a
// ClusterVersion named "version" (spec.desiredUpdate.version and .image, spec.channel) or an
// UpgradeConfig (spec.desired.version, .image and .channel). See the package documentation
// for templates and object-templates-raw. A policy without such objects has no targets. The
// error names the policy template index whose JSON, or a field of it, cannot be read.
func Targets(p *policyv1.Policy) ([]Target, error) {
	if p == nil {
		return nil, nil
	}
	var out []Target
	for i, tmpl := range p.Spec.PolicyTemplates {
		raw, err := templateJSON(tmpl)
		if err != nil {
			return nil, fmt.Errorf("policy %s: policy-templates[%d]: %w", p.Name, i, err)
		}
		found, err := templateTargets(raw)
		if err != nil {
			return nil, fmt.Errorf("policy %s: policy-templates[%d]: %w", p.Name, i, err)
		}
		for _, t := range found {
			t.Policy = p.Name
			out = append(out, t)
		}
	}
	return out, nil
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

// configurationPolicy is what Targets reads of a policy template.
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

// templateTargets reads the targets of one policy template's objectDefinition.
func templateTargets(raw []byte) ([]Target, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("decoding objectDefinition: %w", err)
	}
	if head.Kind != configPolicyKind {
		return nil, nil
	}
	var cp configurationPolicy
	if err := json.Unmarshal(raw, &cp); err != nil {
		return nil, fmt.Errorf("decoding ConfigurationPolicy: %w", err)
	}
	if cp.Spec == nil {
		return nil, nil
	}
	if strings.TrimSpace(cp.Spec.ObjectTemplatesRaw) != "" {
		return rawTemplateTargets(cp.Spec.ObjectTemplatesRaw)
	}
	return objectTemplateTargets(cp.Spec.ObjectTemplates, "object-templates")
}

// rawTemplateTargets reads object-templates-raw: YAML with the shape of object-templates,
// or, when it holds templates, text that only tells which kinds it may produce.
func rawTemplateTargets(raw string) ([]Target, error) {
	if strings.Contains(raw, templateDelimiter) {
		var out []Target
		for _, kind := range []string{KindClusterVersion, KindUpgradeConfig} {
			if strings.Contains(raw, kind) {
				out = append(out, Target{Kind: kind, Templated: true})
			}
		}
		return out, nil
	}
	var templates []objectTemplate
	if err := yaml.Unmarshal([]byte(raw), &templates); err != nil {
		return nil, fmt.Errorf("decoding object-templates-raw: %w", err)
	}
	return objectTemplateTargets(templates, "object-templates-raw")
}

// objectTemplateTargets reads the targets of object templates; field names the list in errors.
func objectTemplateTargets(templates []objectTemplate, field string) ([]Target, error) {
	var out []Target
	for j, ot := range templates {
		if !wanted(ot.ComplianceType) || ot.ObjectDefinition == nil {
			continue
		}
		t, ok, err := objectTarget(ot.ObjectDefinition)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", field, j, err)
		}
		if ok {
			out = append(out, t)
		}
	}
	return out, nil
}

// wanted reports whether an object template asks for its object to exist.
func wanted(complianceType string) bool {
	return complianceType == "" ||
		strings.EqualFold(complianceType, complianceMustHave) ||
		strings.EqualFold(complianceType, complianceMustOnlyHave)
}

// objectTarget returns the target an object definition sets, if it is one of the known kinds.
func objectTarget(obj map[string]any) (Target, bool, error) {
	kind, _, err := field(obj, "kind")
	if err != nil {
		return Target{}, false, err
	}
	apiVersion, apiTemplated, err := field(obj, "apiVersion")
	if err != nil {
		return Target{}, false, err
	}
	group, _, _ := strings.Cut(apiVersion, "/")
	switch {
	case kind == KindClusterVersion && (group == clusterVersionGroup || apiTemplated):
		return clusterVersionTarget(obj)
	case kind == KindUpgradeConfig && (group == upgradeConfigGroup || apiTemplated):
		return fields(obj, KindUpgradeConfig, []string{"spec", "desired", "version"},
			[]string{"spec", "desired", "image"}, []string{"spec", "desired", "channel"})
	}
	return Target{}, false, nil
}

// clusterVersionTarget reads a ClusterVersion object, which is a target only when it names
// the one ClusterVersion, "version" (or names none, or a template).
func clusterVersionTarget(obj map[string]any) (Target, bool, error) {
	name, templated, err := field(obj, "metadata", "name")
	if err != nil {
		return Target{}, false, err
	}
	if name != "" && name != clusterVersionName && !templated {
		return Target{}, false, nil
	}
	return fields(obj, KindClusterVersion, []string{"spec", "desiredUpdate", "version"},
		[]string{"spec", "desiredUpdate", "image"}, []string{"spec", "channel"})
}

// fields builds a Target of kind from the strings at the paths of its version, image and
// channel.
func fields(obj map[string]any, kind string, version, image, channel []string) (Target, bool, error) {
	t := Target{Kind: kind}
	for _, f := range []struct {
		path []string
		into *string
	}{{version, &t.Version}, {image, &t.Image}, {channel, &t.Channel}} {
		value, templated, err := field(obj, f.path...)
		if err != nil {
			return Target{}, false, err
		}
		*f.into = value
		t.Templated = t.Templated || templated
	}
	return t, true, nil
}

// field returns the string at path in a decoded JSON object: empty when absent or null, and
// templated (with an empty value) when a string holding a template stands on the path. A
// value of another JSON type is an error.
func field(obj map[string]any, path ...string) (string, bool, error) {
	var cur any = obj
	for i, key := range path {
		switch v := cur.(type) {
		case nil:
			return "", false, nil
		case map[string]any:
			cur = v[key]
		case string:
			if strings.Contains(v, templateDelimiter) {
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
		if strings.Contains(v, templateDelimiter) {
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
