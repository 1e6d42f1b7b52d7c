package configpolicy

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	templates "github.com/stolostron/go-template-utils/v7/pkg/templates"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	configpolicyv1 "open-cluster-management.io/config-policy-controller/api/v1"
	"sigs.k8s.io/yaml"
)

// Managed-cluster templates in spec.object-templates-raw are resolved as the controller resolves
// them (controllers/configurationpolicy_controller.go, resolveObjectTemplatesRaw, v0.19.0): by the
// same template library, github.com/stolostron/go-template-utils v7, with the raw text taken as
// YAML, on every evaluation, before the resulting object templates are evaluated like written
// ones. The library's own lookup reads through a dynamic client and API discovery; here lookup
// reads the Store instead, with the library's results: a list query gives {"items": [...]}, a
// missing object gives nothing and no error, a kind the cluster does not serve fails the
// template. The functions that read other objects (fromConfigMap, fromSecret, the cluster claim
// and node functions, copyConfigMapData, copySecretData) are not simulated: a template calling
// them gives ErrTemplatesNotSimulated.

// Reasons and messages of the controller for object-templates-raw.
const (
	reasonTemplateError = "Error processing template"
	rawYAMLError        = "Error parsing object-templates-raw YAML: "
)

// notSimulatedFunctions are the template functions of the library that read the cluster through
// its clients, other than lookup.
var notSimulatedFunctions = []string{
	"fromSecret", "fromConfigMap", "fromClusterClaim", "lookupClusterClaim", "copyConfigMapData",
	"copySecretData", "getNodesWithExactRoles", "hasNodesWithExactRoles",
}

// prepareRaw reads spec.object-templates-raw: without templates it is parsed once into object
// templates; with templates it is kept, to be resolved against each store. It returns the
// object templates parsed, or the policy-level error the controller reports.
func (p *Prepared) prepareRaw(raw string) []*configpolicyv1.ObjectTemplate {
	if templates.HasTemplate([]byte(raw), "", true) {
		p.raw = raw

		return nil
	}

	var parsed []*configpolicyv1.ObjectTemplate
	if err := yaml.Unmarshal([]byte(raw), &parsed); err != nil {
		p.rawErr = rawYAMLError + err.Error()
	}

	return parsed
}

// resolved returns the policy with its object-templates-raw resolved against the store: a
// Prepared holding the resulting object templates, or the message of the template error the
// controller reports, or an error wrapping ErrTemplatesNotSimulated.
func (p *Prepared) resolved(store Store) (*Prepared, string, error) {
	resolver, err := templates.NewResolverWithClients(nil, nil, templates.Config{})
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrTemplatesNotSimulated, err)
	}

	var called string // the first function called that is not simulated

	functions := map[string]any{"lookup": storeLookup(store)}
	for _, name := range notSimulatedFunctions {
		functions[name] = func(...any) (any, error) {
			called = name

			return nil, ErrTemplatesNotSimulated
		}
	}

	result, err := resolver.ResolveTemplate([]byte(p.raw), nil,
		&templates.ResolveOptions{InputIsYAML: true, CustomFunctions: functions})

	var parsed []*configpolicyv1.ObjectTemplate
	if err == nil {
		if err = json.Unmarshal(result.ResolvedJSON, &parsed); err != nil {
			err = fmt.Errorf("failed unmarshalling resolved object-templates-raw template: %w", err)
		}
	}

	if errors.Is(err, ErrTemplatesNotSimulated) {
		return nil, "", fmt.Errorf("%w: spec.object-templates-raw calls %s", ErrTemplatesNotSimulated, called)
	}

	if err != nil {
		return nil, err.Error(), nil
	}

	out := *p
	out.raw, out.templates = "", nil

	for i, ot := range parsed {
		out.templates = append(out.templates, prepareTemplate(i, ot, p.name))
	}

	return &out, "", nil
}

// storeLookup is the lookup template function over a store, with the library's arguments and
// results: lookup apiVersion kind namespace name [labelSelector...].
func storeLookup(store Store) func(string, string, string, string, ...string) (map[string]any, error) {
	return func(apiVersion, kind, namespace, name string, labelSelector ...string) (map[string]any, error) {
		if apiVersion == "" || kind == "" {
			return nil, errors.New("the apiVersion and kind are required")
		}

		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			return nil, err
		}

		selector := labels.Everything()
		if len(labelSelector) > 0 && labelSelector[0] != "" {
			if selector, err = labels.Parse(strings.Join(labelSelector, ",")); err != nil {
				return nil, err
			}
		}

		gvk := gv.WithKind(kind)

		mapping, ok := store.Mapping(gvk)
		if !ok {
			return nil, templates.ErrMissingAPIResource
		}

		if !mapping.Namespaced {
			namespace = ""
		}

		if name != "" {
			obj, err := store.Get(gvk, namespace, name)
			if errors.Is(err, ErrNotFound) {
				return nil, nil
			}

			if err != nil {
				return nil, err
			}

			return obj.DeepCopy().UnstructuredContent(), nil
		}

		objs, err := store.List(gvk, namespace)
		if err != nil {
			return nil, err
		}

		list := unstructured.UnstructuredList{}

		for _, obj := range objs {
			if selector.Matches(labels.Set(obj.GetLabels())) {
				list.Items = append(list.Items, *obj.DeepCopy())
			}
		}

		return list.UnstructuredContent(), nil
	}
}
