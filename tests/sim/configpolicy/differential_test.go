package configpolicy

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	configpolicyv1 "open-cluster-management.io/config-policy-controller/api/v1"
)

// TestEvaluateMatchesRealController evaluates random Widget objects against random templates
// derived from them, named or not, with every compliance type and remediation, and expects the
// same compliance, conditions, messages and resulting objects as the real controller.
// DIFFERENTIAL_CASES raises the number of cases.
func TestEvaluateMatchesRealController(t *testing.T) {
	n := 150
	if v, err := strconv.Atoi(os.Getenv("DIFFERENTIAL_CASES")); err == nil {
		n = v
	}

	for i := range n {
		r := rand.New(rand.NewPCG(uint64(i), 7))
		gen := valueGen{r: r}

		existing, tmpl := gen.scenario()
		ctype := []string{"musthave", "mustonlyhave", "mustnothave"}[r.IntN(3)]
		remediation := []string{"inform", "enforce"}[r.IntN(2)]

		t.Run(fmt.Sprintf("case %d %s %s", i, ctype, remediation), func(t *testing.T) {
			compareWithRealController(t, existing, tmpl, ctype, remediation)
		})
	}
}

// compareWithRealController evaluates one template against one Widget with the evaluator and the
// real controller, and compares their findings and the stored objects.
func compareWithRealController(t *testing.T, existing []map[string]any, tmpl map[string]any, ctype, remediation string) {
	g := NewWithT(t)

	tmplJSON, err := json.Marshal(tmpl)
	must(t, err)

	policy := configurationPolicy(t, "remediationAction: "+remediation)
	policy.Spec.ObjectTemplates = []*configpolicyv1.ObjectTemplate{{
		ComplianceType:   configpolicyv1.ComplianceType(ctype),
		ObjectDefinition: runtime.RawExtension{Raw: tmplJSON},
	}}

	objs := make([]*unstructured.Unstructured, len(existing))
	for i, obj := range existing {
		objs[i] = &unstructured.Unstructured{Object: obj}
	}

	store := newTestStore(t, objs)
	controller := newOracle(t, store.mapper, objs, policy)

	res := Evaluate(policy, store, testNow)
	status, sent := controller.evaluate(t, policy.Name)

	context := fmt.Sprintf("template %s\nobject %v", tmplJSON, existing)
	g.Expect(res.Compliance).To(Equal(status.ComplianceState), context)
	g.Expect(resultConditions(res)).To(Equal(oracleConditions(status)), context)
	g.Expect(orEmpty(EmittedMessages(Result{}, res, false))).To(Equal(sent), context)

	for _, name := range []string{"w", "w2"} {
		mine, theirs := storeGetter(store)(widgetGVK, "default", name), controller.get(widgetGVK, "default", name)
		g.Expect(mine == nil).To(Equal(theirs == nil), context)

		if mine == nil {
			continue
		}

		for _, key := range []string{"spec", "other", "status"} {
			g.Expect(jsonEqual(mine.Object[key], theirs.Object[key])).To(BeTrue(),
				"%s\n%s mine %v\n%s theirs %v", context, key, mine.Object[key], key, theirs.Object[key])
		}

		g.Expect(mine.GetLabels()).To(Equal(theirs.GetLabels()), context)
	}
}

// valueGen makes small JSON values from a narrow vocabulary, so that templates often match.
type valueGen struct {
	r *rand.Rand
}

var (
	genKeys    = []string{"a", "b", "c", "name"}
	genScalars = []any{"x", "y", "", int64(0), int64(1), true, false, "1", "1Gi", "1024Mi", nil}
)

// scenario returns the Widgets of a cluster and a template: usually "w" and a template derived
// from it, sometimes without "w" in the cluster, sometimes with a second Widget "w2" and an unnamed
// template.
func (gen valueGen) scenario() ([]map[string]any, map[string]any) {
	existing, tmpl := gen.objects()

	switch gen.r.IntN(5) {
	case 0:
		return nil, tmpl
	case 1:
		other, _ := gen.objects()
		other["metadata"].(map[string]any)["name"] = "w2"
		delete(tmpl["metadata"].(map[string]any), "name")

		return []map[string]any{existing, other}, tmpl
	}

	return []map[string]any{existing}, tmpl
}

// objects returns a Widget "w" and a template derived from it, sometimes with labels, status or a
// second top-level field.
func (gen valueGen) objects() (map[string]any, map[string]any) {
	existing := map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "default"}, "spec": gen.mapValue(0),
	}
	tmpl := map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "default"}, "spec": gen.derive(existing["spec"], 0),
	}

	if gen.r.IntN(3) == 0 {
		lbls := map[string]any{}
		for range gen.r.IntN(3) {
			lbls[genKeys[gen.r.IntN(len(genKeys))]] = []string{"x", "y"}[gen.r.IntN(2)]
		}

		tmplLabels := map[string]any{}
		for k, v := range lbls {
			if gen.r.IntN(3) != 0 {
				tmplLabels[k] = v
			}
		}

		if gen.r.IntN(3) == 0 {
			tmplLabels[genKeys[gen.r.IntN(len(genKeys))]] = "y"
		}

		existing["metadata"].(map[string]any)["labels"] = lbls

		// An API server drops empty labels, a fake client keeps them.
		if len(tmplLabels) > 0 {
			tmpl["metadata"].(map[string]any)["labels"] = tmplLabels
		}
	}

	for _, key := range []string{"status", "other"} {
		if gen.r.IntN(3) == 0 {
			existing[key] = gen.mapValue(0)
		}

		switch {
		case gen.r.IntN(2) == 0:
		case existing[key] == nil:
			// A fake client keeps a top-level null, an API server drops it.
			tmpl[key] = gen.mapValue(0)
		default:
			tmpl[key] = gen.deriveValue(existing[key], 0)
		}
	}

	return existing, tmpl
}

func (gen valueGen) value(depth int) any {
	switch k := gen.r.IntN(6); {
	case k < 2 && depth < 3:
		return gen.mapValue(depth + 1)
	case k < 4 && depth < 3:
		return gen.listValue(depth + 1)
	}

	return genScalars[gen.r.IntN(len(genScalars))]
}

func (gen valueGen) mapValue(depth int) map[string]any {
	m := map[string]any{}
	for range gen.r.IntN(4) {
		m[genKeys[gen.r.IntN(len(genKeys))]] = gen.value(depth)
	}

	return m
}

func (gen valueGen) listValue(depth int) []any {
	l := []any{}
	for range gen.r.IntN(4) {
		l = append(l, gen.value(depth))
	}

	return l
}

// derive returns a template made from v: fields dropped, changed or added, list items dropped,
// reordered, changed or added.
func (gen valueGen) derive(v any, depth int) map[string]any {
	m, _ := v.(map[string]any)
	out := map[string]any{}

	for k, val := range m {
		switch gen.r.IntN(6) {
		case 0:
			continue
		case 1:
			out[k] = gen.value(depth + 1)
		default:
			out[k] = gen.deriveValue(val, depth+1)
		}
	}

	if gen.r.IntN(4) == 0 {
		out[genKeys[gen.r.IntN(len(genKeys))]] = gen.value(depth + 1)
	}

	return out
}

func (gen valueGen) deriveValue(v any, depth int) any {
	switch v := v.(type) {
	case map[string]any:
		return gen.derive(v, depth)
	case []any:
		var out []any

		for _, item := range v {
			if gen.r.IntN(4) != 0 {
				out = append(out, gen.deriveValue(item, depth+1))
			}
		}

		gen.r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })

		if gen.r.IntN(4) == 0 {
			out = append(out, gen.value(depth+1))
		}

		if out == nil {
			out = []any{}
		}

		return out
	}

	return v
}
