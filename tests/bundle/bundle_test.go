// Package bundle_test checks the OLM bundle that `make bundle` writes into bundle/: it loads
// as a registry+v1 bundle, passes operator-framework's validators, and its examples, owned
// CRDs and deployment agree with the CRDs and the manager's flags.
package bundle_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cgu-operator/cgu-operator/pkg/bundlegen"
	"github.com/cgu-operator/cgu-operator/tests/testenv"
)

func loadBundle(t *testing.T) *manifests.Bundle {
	t.Helper()
	root, err := testenv.Root()
	if err != nil {
		t.Fatal(err)
	}
	b, err := manifests.GetBundleFromDir(filepath.Join(root, "bundle"))
	if err != nil {
		t.Fatalf("loading bundle/ (run make bundle): %v", err)
	}
	return b
}

// falsePositives are warnings that cannot be fixed in the bundle, each with its reason.
var falsePositives = map[string]string{
	// The removed-APIs check matches RBAC rules by group and resource only: it reads the
	// manager's rule on events.k8s.io events (served as v1 since 1.19) as one on v1beta1.
	"Migrate the API(s) for events: ([\"ClusterServiceVersion.Spec.InstallStrategy.StrategySpec.ClusterPermissions[0].Rules[": "events.k8s.io/v1 events",
}

func falsePositive(msg string) bool {
	for prefix := range falsePositives {
		if strings.Contains(msg, "deprecated and removed in v1.25") && strings.Contains(msg, prefix) {
			return true
		}
	}
	return false
}

// The validators that need no network: the defaults, OperatorHub's metadata checks, the good
// practices and the removed-APIs check for the Kubernetes version the operator is built with.
func TestBundleValidates(t *testing.T) {
	g := NewWithT(t)
	b := loadBundle(t)
	validators := append(interfaces.Validators{}, validation.DefaultBundleValidators...)
	validators = append(validators,
		validation.OperatorHubV2Validator,
		validation.StandardCapabilitiesValidator,
		validation.StandardCategoriesValidator,
		validation.GoodPracticesValidator,
		validation.AlphaDeprecatedAPIsValidator,
	)
	optional := map[string]string{"k8s-version": "1.35"}
	var problems []string
	for _, result := range validators.Validate(b, optional) {
		for _, e := range append(result.Errors, result.Warnings...) {
			t.Logf("%s %s: %s", e.Level, result.Name, e.Error())
			if e.Level == errors.LevelError || (e.Level == errors.LevelWarn && !falsePositive(e.Error())) {
				problems = append(problems, e.Error())
			}
		}
	}
	g.Expect(problems).To(BeEmpty(), "the validators report errors or warnings")
}

func TestBundleExamplesMatchTheirCRDs(t *testing.T) {
	g := NewWithT(t)
	b := loadBundle(t)
	var examples []map[string]any
	g.Expect(json.Unmarshal([]byte(b.CSV.Annotations["alm-examples"]), &examples)).To(Succeed())
	g.Expect(examples).NotTo(BeEmpty())

	kinds := map[string]bool{}
	for _, example := range examples {
		kind, _ := example["kind"].(string)
		kinds[kind] = true
		crd := crdOf(b, example)
		g.Expect(crd).NotTo(BeNil(), "no CRD in the bundle serves the example's %s", example["apiVersion"])
		g.Expect(validateAgainst(crd, example)).To(BeEmpty(), "the %s example does not validate", kind)
	}
	g.Expect(kinds).To(HaveKey("ClusterGroupUpgrade"))
	g.Expect(kinds).To(HaveKey("PreCachingConfig"))
	g.Expect(kinds).To(HaveKey("ImageBasedGroupUpgrade"))
	g.Expect(kinds).To(HaveKey("ReleaseTrain"))
}

func TestBundleOwnsItsCRDs(t *testing.T) {
	g := NewWithT(t)
	b := loadBundle(t)
	var inBundle, owned []string
	for _, crd := range b.V1CRDs {
		for _, v := range crd.Spec.Versions {
			if v.Served {
				inBundle = append(inBundle, crd.Name+"/"+v.Name+"/"+crd.Spec.Names.Kind)
			}
		}
	}
	for _, d := range b.CSV.Spec.CustomResourceDefinitions.Owned {
		owned = append(owned, d.Name+"/"+d.Version+"/"+d.Kind)
		g.Expect(d.DisplayName).NotTo(BeEmpty(), d.Kind)
		g.Expect(d.Description).NotTo(BeEmpty(), d.Kind)
	}
	g.Expect(owned).To(ConsistOf(inBundle))
	g.Expect(owned).To(HaveLen(7))
}

func TestBundleDeploymentRunsTheSpokeImage(t *testing.T) {
	g := NewWithT(t)
	b := loadBundle(t)
	related := map[string]string{}
	for _, r := range b.CSV.Spec.RelatedImages {
		related[r.Name] = r.Image
	}
	g.Expect(related).To(HaveKey("cgu-operator-precache"))

	deployments := b.CSV.Spec.InstallStrategy.StrategySpec.DeploymentSpecs
	g.Expect(deployments).To(HaveLen(1))
	containers := deployments[0].Spec.Template.Spec.Containers
	g.Expect(containers).To(HaveLen(1))
	g.Expect(containers[0].Args).To(ContainElement(bundlegen.SpokeImageFlag + related["cgu-operator-precache"]))
	g.Expect(containers[0].Image).To(Equal(related["cgu-operator"]))
	g.Expect(b.CSV.Annotations).To(HaveKeyWithValue("containerImage", containers[0].Image))
}

func crdOf(b *manifests.Bundle, obj map[string]any) *apiextensionsv1.CustomResourceDefinition {
	apiVersion, _ := obj["apiVersion"].(string)
	group, version, _ := strings.Cut(apiVersion, "/")
	for _, crd := range b.V1CRDs {
		if crd.Spec.Group != group || crd.Spec.Names.Kind != obj["kind"] {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Name == version && v.Served {
				return crd
			}
		}
	}
	return nil
}

// validateAgainst checks obj against its version's OpenAPI schema and lists the fields the
// API server would prune as unknown.
func validateAgainst(crd *apiextensionsv1.CustomResourceDefinition, obj map[string]any) []string {
	apiVersion, _ := obj["apiVersion"].(string)
	_, version, _ := strings.Cut(apiVersion, "/")
	var schema *apiextensionsv1.JSONSchemaProps
	for _, v := range crd.Spec.Versions {
		if v.Name == version {
			schema = v.Schema.OpenAPIV3Schema
		}
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(schema, internal, nil); err != nil {
		return []string{err.Error()}
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(internal)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for _, e := range apiservervalidation.ValidateCustomResource(field.NewPath(""), obj, validator) {
		problems = append(problems, e.Error())
	}
	structural, err := structuralschema.NewStructural(internal)
	if err != nil {
		return append(problems, err.Error())
	}
	pruned := pruning.PruneWithOptions(deepCopy(obj), structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	for _, path := range pruned {
		problems = append(problems, "unknown field "+path)
	}
	return problems
}

func deepCopy(obj map[string]any) map[string]any {
	data, _ := json.Marshal(obj)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return out
}
