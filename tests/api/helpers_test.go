package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/cgu-operator/cgu-operator/tests/testenv"
)

// sample is one object of a file under samples/.
type sample struct {
	file string
	obj  *unstructured.Unstructured
}

func (s sample) String() string {
	return fmt.Sprintf("%s: %s %s/%s", s.file, s.obj.GetKind(), s.obj.GetNamespace(), s.obj.GetName())
}

// loadSamples reads every Kubernetes object in the YAML files under samples/. Kustomize
// files are not objects and are left out.
func loadSamples() ([]sample, error) {
	root, err := testenv.Root()
	if err != nil {
		return nil, err
	}
	var out []sample
	err = filepath.WalkDir(filepath.Join(root, "samples"), func(path string, d os.DirEntry, err error) error {
		isYAML := strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")
		if err != nil || d.IsDir() || !isYAML {
			return err
		}
		objs, err := decodeYAMLFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, o := range objs {
			if strings.HasPrefix(o.GetAPIVersion(), "kustomize.config.k8s.io/") {
				continue
			}
			out = append(out, sample{file: rel, obj: o})
		}
		return nil
	})
	return out, err
}

func decodeYAMLFile(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(m) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
}

// fromYAML turns a YAML document into an object.
func fromYAML(doc string) *unstructured.Unstructured {
	var m map[string]any
	ExpectWithOffset(1, yaml.Unmarshal([]byte(doc), &m)).To(Succeed())
	return &unstructured.Unstructured{Object: m}
}

func ensureNamespace(ctx context.Context, name string) error {
	if name == "" {
		return nil
	}
	err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// firstDifference returns the path of the first value of want that got does not hold, or "".
func firstDifference(path string, want, got any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if d := firstDifference(path+"."+k, w[k], g[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path
		}
		for i := range w {
			if d := firstDifference(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); d != "" {
				return d
			}
		}
		return ""
	default:
		if !reflect.DeepEqual(want, got) {
			return path
		}
		return ""
	}
}

// asJSON returns v as encoding/json decodes it, so that values decoded different ways (an
// int64 and a float64 for the same number) compare equal.
func asJSON(v any) any {
	data, err := json.Marshal(v)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	var out any
	ExpectWithOffset(1, json.Unmarshal(data, &out)).To(Succeed())
	return out
}

// crdSchema returns the OpenAPI schema of the one version of a CRD of config/crd/bases.
func crdSchema(file string) (*apiextensionsv1.JSONSchemaProps, error) {
	dir, err := testenv.OperatorCRDs()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return nil, err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		return nil, err
	}
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema, nil
}

// schemaPaths lists every field path a schema declares: "a.b" for properties, "a[]" for
// list items. A map (additionalProperties) is one path.
func schemaPaths(path string, s *apiextensionsv1.JSONSchemaProps, out map[string]bool) {
	if path != "" {
		out[path] = true
	}
	for name, prop := range s.Properties {
		schemaPaths(join(path, name), &prop, out)
	}
	if s.Items != nil && s.Items.Schema != nil {
		schemaPaths(path+"[]", s.Items.Schema, out)
	}
}

// valuePaths marks the paths of schema s that value v sets.
func valuePaths(path string, s *apiextensionsv1.JSONSchemaProps, v any, out map[string]bool) {
	if path != "" {
		out[path] = true
	}
	switch val := v.(type) {
	case map[string]any:
		for name, prop := range s.Properties {
			if child, ok := val[name]; ok {
				valuePaths(join(path, name), &prop, child, out)
			}
		}
	case []any:
		if s.Items == nil || s.Items.Schema == nil {
			return
		}
		for _, item := range val {
			valuePaths(path+"[]", s.Items.Schema, item, out)
		}
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
