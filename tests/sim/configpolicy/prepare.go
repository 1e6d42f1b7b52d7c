package configpolicy

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	configpolicyv1 "open-cluster-management.io/config-policy-controller/api/v1"
)

// ErrTemplatesNotSimulated marks policies that use Go templates ({{ }}, encrypted values) or
// object-templates-raw, which the simulator does not resolve.
var ErrTemplatesNotSimulated = errors.New("templates are not simulated")

const (
	disableTemplatesAnnotation = "policy.open-cluster-management.io/disable-templates"
	lastAppliedAnnotation      = "kubectl.kubernetes.io/last-applied-configuration"
	encryptedPrefix            = "$ocm_encrypted:"
	reasonDecodeError          = "K8s decode object definition error"
)

// Prepared is a ConfigurationPolicy parsed for evaluation. It is read-only once built and can be
// evaluated against many stores at the same time.
type Prepared struct {
	name         string
	remediation  configpolicyv1.RemediationAction
	interval     configpolicyv1.EvaluationInterval
	namespaces   namespaceSelector
	templates    []*objectTemplate
	notSimulated error
	// raw is spec.object-templates-raw when it holds templates: it is resolved against the
	// store on every evaluation (templates.go). rawErr is the message of a raw text that is
	// not valid YAML.
	raw    string
	rawErr string
}

// objectTemplate is one parsed entry of spec.object-templates.
type objectTemplate struct {
	index    int
	ctype    configpolicyv1.ComplianceType
	mdType   configpolicyv1.ComplianceType
	recreate configpolicyv1.RecreateOption
	gvk      schema.GroupVersionKind
	name     string
	ns       string
	// nsList is []string{ns}, kept to avoid building it on every evaluation.
	nsList []string

	// object is the decoded objectDefinition; meta holds its labels and annotations as compared,
	// nil when it states neither; keys are the compared top-level keys, sorted.
	object    map[string]any
	meta      map[string]any
	keys      []string
	hasStatus bool

	hasSelector bool
	selector    labels.Selector
	selectorErr error

	// staticErr is an error found before the kind is mapped, decodeErr one found after.
	staticErr *event
	decodeErr *event
}

// minimalObject is the part of an objectDefinition read before it is decoded.
type minimalObject struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Metadata   struct {
		Name      string `json:"name,omitempty"`
		Namespace string `json:"namespace,omitempty"`
	} `json:"metadata,omitempty"`
}

// Prepare parses a ConfigurationPolicy for evaluation. Problems in the policy are not errors here:
// they become the compliance messages the controller would report.
func Prepare(policy *configpolicyv1.ConfigurationPolicy) *Prepared {
	p := &Prepared{
		name:        policy.Name,
		remediation: policy.Spec.RemediationAction,
		interval:    policy.Spec.EvaluationInterval,
	}

	if err := templatesInUse(policy); err != nil {
		p.notSimulated = err

		return p
	}

	p.namespaces = prepareNamespaceSelector(policy.Spec.NamespaceSelector)

	objectTemplates := policy.Spec.ObjectTemplates
	if raw := policy.Spec.ObjectTemplatesRaw; raw != "" && !templatesDisabled(policy) {
		// The controller replaces spec.object-templates with what the raw text gives.
		objectTemplates = p.prepareRaw(raw)
	}

	for i, ot := range objectTemplates {
		p.templates = append(p.templates, prepareTemplate(i, ot, policy.Name))
	}

	return p
}

// templatesDisabled reports whether the policy turns templates off; the controller then reads
// spec.object-templates only.
func templatesDisabled(policy *configpolicyv1.ConfigurationPolicy) bool {
	disabled, err := strconv.ParseBool(policy.Annotations[disableTemplatesAnnotation])

	return err == nil && disabled
}

// templatesInUse returns an error wrapping ErrTemplatesNotSimulated when the controller would
// resolve templates in spec.object-templates (those of spec.object-templates-raw are
// simulated, and replace these).
func templatesInUse(policy *configpolicyv1.ConfigurationPolicy) error {
	if templatesDisabled(policy) || policy.Spec.ObjectTemplatesRaw != "" {
		return nil
	}

	for i, ot := range policy.Spec.ObjectTemplates {
		if ot == nil {
			continue
		}

		raw := string(ot.ObjectDefinition.Raw)
		if strings.Contains(raw, "{{") || strings.Contains(raw, encryptedPrefix) {
			return fmt.Errorf("%w: the object template at index %d uses templates", ErrTemplatesNotSimulated, i)
		}
	}

	return nil
}

func prepareTemplate(index int, ot *configpolicyv1.ObjectTemplate, policyName string) *objectTemplate {
	if ot == nil {
		ot = &configpolicyv1.ObjectTemplate{}
	}

	t := &objectTemplate{
		index:    index,
		ctype:    ot.ComplianceType,
		mdType:   ot.MetadataComplianceType,
		recreate: ot.RecreateOption,
	}

	var minimal minimalObject
	if err := json.Unmarshal(ot.ObjectDefinition.Raw, &minimal); err != nil {
		t.staticErr = &event{reason: reasonDecodeError, message: "Error parsing the namespace from the object definition"}

		return t
	}

	t.gvk = gvkOf(minimal.APIVersion, minimal.Kind)
	if t.gvk.Kind == "" || t.gvk.Version == "" {
		t.staticErr = &event{reason: reasonDecodeError, message: fmt.Sprintf(
			"The kind and apiVersion fields are required on the object template at index %d in policy %s",
			index, policyName)}

		return t
	}

	t.name = strings.TrimSpace(minimal.Metadata.Name)
	t.ns = strings.TrimSpace(minimal.Metadata.Namespace)
	t.nsList = []string{t.ns}

	if ot.ObjectSelector != nil {
		t.hasSelector = true
		t.selector, t.selectorErr = metav1.LabelSelectorAsSelector(ot.ObjectSelector)
	}

	decoded := &unstructured.Unstructured{}
	if _, _, err := unstructured.UnstructuredJSONScheme.Decode(ot.ObjectDefinition.Raw, nil, decoded); err != nil {
		t.decodeErr = &event{reason: reasonDecodeError, message: fmt.Sprintf("Decoding error, please check your "+
			"policy file! Aborting handling the object template at index [%v] in policy `%v` with error = `%v`",
			index, policyName, err)}

		return t
	}

	t.setObject(decoded.Object)

	return t
}

// gvkOf splits apiVersion itself rather than with schema.ParseGroupVersion, so that a malformed
// one fails the mapping like in the controller.
func gvkOf(apiVersion, kind string) schema.GroupVersionKind {
	group, version, found := strings.Cut(apiVersion, "/")
	if !found {
		group, version = "", apiVersion
	}

	return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
}

func (t *objectTemplate) setObject(object map[string]any) {
	t.object = object
	_, t.hasStatus = object["status"]

	if md, ok := object["metadata"].(map[string]any); ok {
		if formatted := comparedMetadata(md); len(formatted) > 0 {
			t.meta = formatted
		}
	}

	for key := range object {
		if key == "apiVersion" || key == "kind" || (key == "metadata" && t.meta == nil) {
			continue
		}

		t.keys = append(t.keys, key)
	}

	slices.Sort(t.keys)
}

// comparedMetadata keeps the metadata fields the controller compares: labels, and annotations
// without the kubectl last-applied one (formatMetadata).
func comparedMetadata(md map[string]any) map[string]any {
	out := map[string]any{}

	if lbls, ok := md["labels"]; ok {
		out["labels"] = lbls
	}

	annotations, ok := md["annotations"]
	if !ok {
		return out
	}

	annotationMap, ok := annotations.(map[string]any)
	if !ok {
		out["annotations"] = annotations

		return out
	}

	filtered := make(map[string]any, len(annotationMap))

	for k, v := range annotationMap {
		if k != lastAppliedAnnotation {
			filtered[k] = v
		}
	}

	out["annotations"] = filtered

	return out
}

// newObject returns the object enforcement creates: a copy of the template with the name and
// namespace set, without status (the API server ignores it).
func (t *objectTemplate) newObject(namespace, name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: make(map[string]any, len(t.object))}

	for k, v := range t.object {
		if k != "status" {
			obj.Object[k] = v
		}
	}

	obj = obj.DeepCopy()
	obj.SetKind(strings.TrimSpace(obj.GetKind()))
	obj.SetName(name)

	if namespace != "" {
		obj.SetNamespace(namespace)
	}

	return obj
}
