package v1alpha1

import (
	"os"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// list writes items as a CEL list literal, each as item writes it.
func list[T any](items []T, item func(T) string) string {
	out := make([]string, len(items))
	for i, x := range items {
		out[i] = item(x)
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// render writes plans as a CEL list literal.
func render(plans [][][]Action) string {
	quote := func(a Action) string { return "'" + a + "'" }
	step := func(actions []Action) string { return list(actions, quote) }
	return list(plans, func(plan [][]Action) string { return list(plan, step) })
}

// The CRD's rule on spec.plan lists the shapes of ValidPlans, no more and no fewer.
func TestPlanRuleListsValidPlans(t *testing.T) {
	crd, err := os.ReadFile("../../../config/crd/bases/lcm.openshift.io_imagebasedgroupupgrades.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var def apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(crd, &def); err != nil {
		t.Fatal(err)
	}
	plan := def.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["plan"]
	want := render(ValidPlans) + ".exists(shape, shape == self.map(step, step.actions))"
	found := false
	for _, r := range plan.XValidations {
		found = found || r.Rule == want
	}
	if !found {
		t.Fatalf("no rule of spec.plan is %s", want)
	}
	if len(ValidPlans) != 26 {
		t.Fatalf("%d plan shapes, want TALM's 26", len(ValidPlans))
	}
}
