package configpolicy

import (
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	configpolicyv1 "open-cluster-management.io/config-policy-controller/api/v1"
)

// evalCase is one evaluation of a ConfigurationPolicy "p" against a store holding the base
// namespaces and objects. Unless skipOracle is set, the real controller evaluates the same input
// and must agree on the compliance, every condition, and the messages sent.
type evalCase struct {
	spec        string
	objects     []string
	compliance  configpolicyv1.ComplianceState
	message     string
	transitions []string
	after       func(g Gomega, get getter)
	skipOracle  string
}

func cmTemplate(complianceType, metadata, rest string) string {
	return `
- complianceType: ` + complianceType + `
  objectDefinition:
    apiVersion: v1
    kind: ConfigMap
    metadata: ` + metadata + `
` + rest
}

const dataA1 = "    data: {a: \"1\"}\n"

func cmSpec(remediation, complianceType, metadata, rest string) string {
	return "remediationAction: " + remediation + "\nobject-templates:" + cmTemplate(complianceType, metadata, rest)
}

const cmDefault = "{name: cm, namespace: default}"

func TestEvaluateComplianceTypes(t *testing.T) {
	cases := map[string]evalCase{
		"musthave inform, object missing": {
			spec:       cmSpec("inform", "musthave", cmDefault, dataA1),
			compliance: configpolicyv1.NonCompliant,
			message:    "NonCompliant; violation - configmaps [cm] not found in namespace default",
		},
		"musthave enforce creates the missing object": {
			spec:        cmSpec("enforce", "musthave", cmDefault, dataA1),
			compliance:  configpolicyv1.Compliant,
			message:     "Compliant; notification - configmaps [cm] was created successfully in namespace default",
			transitions: []string{"configmaps [cm] not found in namespace default"},
			after: func(g Gomega, get getter) {
				g.Expect(get(configMapGVK, "default", "cm").Object["data"]).To(Equal(map[string]any{"a": "1"}))
			},
		},
		"musthave inform, object contains the template": {
			spec:       cmSpec("inform", "musthave", cmDefault, dataA1),
			objects:    []string{`{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: "1", b: "2"}}`},
			compliance: configpolicyv1.Compliant,
			message:    "Compliant; notification - configmaps [cm] found as specified in namespace default",
		},
		"musthave inform, field differs": {
			spec:       cmSpec("inform", "musthave", cmDefault, dataA1),
			objects:    []string{`{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: "2"}}`},
			compliance: configpolicyv1.NonCompliant,
			message:    "NonCompliant; violation - configmaps [cm] found but not as specified in namespace default",
		},
		"musthave enforce merges into the object": {
			spec:        cmSpec("enforce", "musthave", cmDefault, dataA1),
			objects:     []string{`{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: "2", b: "2"}}`},
			compliance:  configpolicyv1.Compliant,
			message:     "Compliant; notification - configmaps [cm] was updated successfully in namespace default",
			transitions: []string{"configmaps [cm] found but not as specified in namespace default"},
			after: func(g Gomega, get getter) {
				g.Expect(get(configMapGVK, "default", "cm").Object["data"]).To(Equal(map[string]any{"a": "1", "b": "2"}))
			},
		},
		"mustonlyhave inform, extra field": {
			spec:       cmSpec("inform", "mustonlyhave", cmDefault, dataA1),
			objects:    []string{`{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: "1", b: "2"}}`},
			compliance: configpolicyv1.NonCompliant,
			message:    "NonCompliant; violation - configmaps [cm] found but not as specified in namespace default",
		},
		"mustonlyhave inform, exact object": {
			spec:       cmSpec("inform", "mustonlyhave", cmDefault, dataA1),
			objects:    []string{`{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: "1"}}`},
			compliance: configpolicyv1.Compliant,
			message:    "Compliant; notification - configmaps [cm] found as specified in namespace default",
		},
		"mustonlyhave enforce replaces the fields": {
			spec: cmSpec("enforce", "mustonlyhave", cmDefault, dataA1),
			objects: []string{`{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default},
				data: {a: "1", b: "2"}, binaryData: {c: "YQ=="}}`},
			compliance:  configpolicyv1.Compliant,
			message:     "Compliant; notification - configmaps [cm] was updated successfully in namespace default",
			transitions: []string{"configmaps [cm] found but not as specified in namespace default"},
			after: func(g Gomega, get getter) {
				cm := get(configMapGVK, "default", "cm")
				g.Expect(cm.Object["data"]).To(Equal(map[string]any{"a": "1"}))
				g.Expect(cm.Object).NotTo(HaveKey("binaryData"))
			},
		},
		"mustnothave inform, object present": {
			spec:       cmSpec("inform", "mustnothave", cmDefault, dataA1),
			objects:    []string{`{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: "1"}}`},
			compliance: configpolicyv1.NonCompliant,
			message:    "NonCompliant; violation - configmaps [cm] found in namespace default",
		},
		"mustnothave on a named object checks existence only": {
			spec:       cmSpec("inform", "mustnothave", cmDefault, dataA1),
			objects:    []string{`{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: "2"}}`},
			compliance: configpolicyv1.NonCompliant,
			message:    "NonCompliant; violation - configmaps [cm] found in namespace default",
		},
		"mustnothave enforce deletes": {
			spec:       cmSpec("enforce", "mustnothave", cmDefault, dataA1),
			objects:    []string{`{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: "1"}}`},
			compliance: configpolicyv1.Compliant,
			message:    "Compliant; notification - configmaps [cm] was deleted successfully in namespace default",
			after: func(g Gomega, get getter) {
				g.Expect(get(configMapGVK, "default", "cm")).To(BeNil())
			},
		},
		"mustnothave, object absent": {
			spec:       cmSpec("enforce", "mustnothave", cmDefault, dataA1),
			compliance: configpolicyv1.Compliant,
			message:    "Compliant; notification - configmaps [cm] missing as expected in namespace default",
		},
	}

	runEvalCases(t, cases)
}

func TestEvaluateUnnamedObjects(t *testing.T) {
	const (
		cmA1 = `{apiVersion: v1, kind: ConfigMap, metadata: {name: cm-a, namespace: default}, data: {a: "1"}}`
		cmA2 = `{apiVersion: v1, kind: ConfigMap, metadata: {name: cm-a, namespace: default}, data: {a: "2"}}`
		cmB1 = `{apiVersion: v1, kind: ConfigMap, metadata: {name: cm-b, namespace: default}, data: {a: "1", b: "x"}}`
	)

	unnamed := "{namespace: default}"

	cases := map[string]evalCase{
		"musthave, one object matches": {
			spec:       cmSpec("inform", "musthave", unnamed, dataA1),
			objects:    []string{cmA2, cmB1},
			compliance: configpolicyv1.Compliant,
			message:    "Compliant; notification - configmaps [cm-b] found as specified in namespace default",
		},
		"musthave, several objects match": {
			spec:       cmSpec("inform", "musthave", unnamed, dataA1),
			objects:    []string{cmA1, cmB1},
			compliance: configpolicyv1.Compliant,
			message:    "Compliant; notification - configmaps [cm-a, cm-b] found as specified in namespace default",
		},
		"musthave, objects of the kind but none matches": {
			spec:       cmSpec("inform", "musthave", unnamed, dataA1),
			objects:    []string{cmA2},
			compliance: configpolicyv1.NonCompliant,
			message:    "NonCompliant; violation - configmaps found but not as specified in namespace default",
		},
		"musthave, no object of the kind": {
			spec:       cmSpec("inform", "musthave", unnamed, dataA1),
			compliance: configpolicyv1.NonCompliant,
			message:    "NonCompliant; violation - configmaps not found in namespace default",
		},
		"enforce on an unnamed template only informs": {
			spec:       cmSpec("enforce", "musthave", unnamed, dataA1),
			objects:    []string{cmA2},
			compliance: configpolicyv1.NonCompliant,
			message:    "NonCompliant; violation - configmaps found but not as specified in namespace default",
			after: func(g Gomega, get getter) {
				g.Expect(get(configMapGVK, "default", "cm-a").Object["data"]).To(Equal(map[string]any{"a": "2"}))
			},
		},
		"mustnothave, two objects match": {
			spec:       cmSpec("enforce", "mustnothave", unnamed, dataA1),
			objects:    []string{cmA1, cmB1},
			compliance: configpolicyv1.NonCompliant,
			message:    "NonCompliant; violation - configmaps [cm-a, cm-b] found in namespace default",
		},
		"mustnothave, no object matches": {
			spec:       cmSpec("inform", "mustnothave", unnamed, dataA1),
			objects:    []string{cmA2},
			compliance: configpolicyv1.Compliant,
			message:    "Compliant; notification - configmaps missing as expected in namespace default",
		},
		"objectSelector names the selected objects and enforces them": {
			spec: `remediationAction: enforce
object-templates:
- complianceType: musthave
  objectSelector: {matchLabels: {app: x}}
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {namespace: default}, data: {a: "1"}}`,
			objects: []string{
				`{apiVersion: v1, kind: ConfigMap, metadata: {name: cm-a, namespace: default, labels: {app: x}}, data: {a: "2"}}`,
				cmB1,
			},
			compliance:  configpolicyv1.Compliant,
			message:     "Compliant; notification - configmaps [cm-a] was updated successfully in namespace default",
			transitions: []string{"configmaps [cm-a] found but not as specified in namespace default"},
		},
		"objectSelector without selected objects": {
			spec: `remediationAction: inform
object-templates:
- complianceType: musthave
  objectSelector: {matchLabels: {app: y}}
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {namespace: default}, data: {a: "1"}}`,
			objects:    []string{cmA1},
			compliance: configpolicyv1.Compliant,
			message:    "Compliant; notification - No objects of kind ConfigMap were matched from the policy objectSelector",
		},
		"mustnothave objectSelector, selected objects do not match": {
			spec: `remediationAction: inform
object-templates:
- complianceType: mustnothave
  objectSelector: {matchLabels: {app: x}}
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {namespace: default}, data: {a: "1"}}`,
			objects:    []string{`{apiVersion: v1, kind: ConfigMap, metadata: {name: cm-a, namespace: default, labels: {app: x}}, data: {a: "2"}}`},
			compliance: configpolicyv1.Compliant,
			message:    "Compliant; notification - configmaps missing as expected in namespace default",
		},
	}

	runEvalCases(t, cases)
}

func TestEvaluateNamespaceSelector(t *testing.T) {
	cmIn := func(ns string) string {
		return `{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: ` + ns + `}, data: {a: "1"}}`
	}

	withSelector := func(remediation, selector string) string {
		return "remediationAction: " + remediation + "\nnamespaceSelector: " + selector + "\nobject-templates:" +
			cmTemplate("musthave", "{name: cm}", dataA1)
	}

	cases := map[string]evalCase{
		"include glob, missing in one namespace": {
			spec:       withSelector("inform", `{include: ["app-*"]}`),
			objects:    []string{cmIn("app-1")},
			compliance: configpolicyv1.NonCompliant,
			message:    "NonCompliant; violation - configmaps [cm] not found in namespace app-2",
		},
		"include glob, found in every namespace": {
			spec:       withSelector("inform", `{include: ["app-*"]}`),
			objects:    []string{cmIn("app-1"), cmIn("app-2")},
			compliance: configpolicyv1.Compliant,
			message:    "Compliant; notification - configmaps [cm] found as specified in namespaces: app-1, app-2",
		},
		"matchLabels with exclude, enforce": {
			spec:        withSelector("enforce", `{matchLabels: {env: prod}, exclude: ["app-2"]}`),
			compliance:  configpolicyv1.Compliant,
			message:     "Compliant; notification - configmaps [cm] was created successfully in namespace app-1",
			transitions: []string{"configmaps [cm] not found in namespace app-1"},
			after: func(g Gomega, get getter) {
				g.Expect(get(configMapGVK, "app-1", "cm")).NotTo(BeNil())
				g.Expect(get(configMapGVK, "app-2", "cm")).To(BeNil())
			},
		},
		"matchExpressions, created in one namespace and found in another": {
			spec:        withSelector("enforce", `{matchExpressions: [{key: env, operator: In, values: [prod]}]}`),
			objects:     []string{cmIn("app-2")},
			compliance:  configpolicyv1.Compliant,
			message:     "Compliant; notification - configmaps [cm] found as specified in namespace app-2; configmaps [cm] was created successfully in namespace app-1",
			transitions: []string{"configmaps [cm] not found in namespace app-1"},
		},
		"no namespace chosen": {
			spec:       withSelector("inform", `{include: ["nothing-*"]}`),
			compliance: configpolicyv1.NonCompliant,
			message:    "NonCompliant; violation - namespaced object cm of kind ConfigMap has no namespace specified from the policy namespaceSelector nor the object metadata",
		},
		"no selector and no namespace": {
			spec:       cmSpec("inform", "musthave", "{name: cm}", dataA1),
			compliance: configpolicyv1.NonCompliant,
			message:    "NonCompliant; violation - namespaced object cm of kind ConfigMap has no namespace specified from the policy namespaceSelector nor the object metadata",
		},
		"bad include pattern": {
			spec:       withSelector("inform", `{include: ["["]}`),
			compliance: configpolicyv1.NonCompliant,
			message:    "NonCompliant; violation - Error filtering namespaces with provided namespaceSelector: error parsing 'include' pattern '[': syntax error in pattern",
		},
		"metadata.namespace wins over the selector": {
			spec:       cmSpec("inform", "musthave", cmDefault, dataA1) + `namespaceSelector: {include: ["app-*"]}`,
			objects:    []string{cmIn("default")},
			compliance: configpolicyv1.Compliant,
			message:    "Compliant; notification - configmaps [cm] found as specified in namespace default",
		},
	}

	runEvalCases(t, cases)
}

func TestEvaluateLists(t *testing.T) {
	const widget = `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, namespace: default},
		spec: {items: [{name: a, size: 1, color: red}, {name: b, size: 2}], tags: [x, y], memory: 1024Mi}}`

	spec := func(remediation, complianceType, body string) string {
		return `remediationAction: ` + remediation + `
object-templates:
- complianceType: ` + complianceType + `
  objectDefinition:
    apiVersion: example.com/v1
    kind: Widget
    metadata: {name: w, namespace: default}
    spec: ` + body
	}

	items := func(get getter) any {
		return get(widgetGVK, "default", "w").Object["spec"].(map[string]any)["items"]
	}

	cases := map[string]evalCase{
		"template item contained in an object item": {
			spec:       spec("inform", "musthave", `{items: [{name: a, size: 1}]}`),
			objects:    []string{widget},
			compliance: configpolicyv1.Compliant,
			message:    "Compliant; notification - widgets [w] found as specified in namespace default",
		},
		"template item in no object item": {
			spec:       spec("inform", "musthave", `{items: [{name: c, size: 3}]}`),
			objects:    []string{widget},
			compliance: configpolicyv1.NonCompliant,
			message:    "NonCompliant; violation - widgets [w] found but not as specified in namespace default",
		},
		"enforce adds the template item before the object's": {
			spec:       spec("enforce", "musthave", `{items: [{name: c, size: 3}]}`),
			objects:    []string{widget},
			compliance: configpolicyv1.Compliant,
			message:    "Compliant; notification - widgets [w] was updated successfully in namespace default",
			after: func(g Gomega, get getter) {
				g.Expect(items(get)).To(Equal([]any{
					map[string]any{"name": "c", "size": int64(3)},
					map[string]any{"name": "a", "size": int64(1), "color": "red"},
					map[string]any{"name": "b", "size": int64(2)},
				}))
			},
			transitions: []string{"widgets [w] found but not as specified in namespace default"},
		},
		"enforce merges an item of the same name": {
			spec:       spec("enforce", "musthave", `{items: [{name: a, size: 5}]}`),
			objects:    []string{widget},
			compliance: configpolicyv1.Compliant,
			message:    "Compliant; notification - widgets [w] was updated successfully in namespace default",
			after: func(g Gomega, get getter) {
				g.Expect(items(get)).To(Equal([]any{
					map[string]any{"name": "a", "size": int64(5), "color": "red"},
					map[string]any{"name": "b", "size": int64(2)},
				}))
			},
			transitions: []string{"widgets [w] found but not as specified in namespace default"},
		},
		"musthave scalar list is a subset": {
			spec:       spec("inform", "musthave", `{tags: [y]}`),
			objects:    []string{widget},
			compliance: configpolicyv1.Compliant,
			message:    "Compliant; notification - widgets [w] found as specified in namespace default",
		},
		"mustonlyhave list in another order": {
			spec: spec("inform", "mustonlyhave",
				`{items: [{name: b, size: 2}, {name: a, size: 1, color: red}], tags: [y, x], memory: 1024Mi}`),
			objects:    []string{widget},
			compliance: configpolicyv1.Compliant,
			message:    "Compliant; notification - widgets [w] found as specified in namespace default",
		},
		"mustonlyhave list with an item missing": {
			spec: spec("inform", "mustonlyhave",
				`{items: [{name: b, size: 2}, {name: a, size: 1, color: red}], tags: [x], memory: 1024Mi}`),
			objects:    []string{widget},
			compliance: configpolicyv1.NonCompliant,
			message:    "NonCompliant; violation - widgets [w] found but not as specified in namespace default",
		},
		"quantities compare by value": {
			spec:       spec("inform", "musthave", `{memory: 1Gi}`),
			objects:    []string{widget},
			compliance: configpolicyv1.Compliant,
			message:    "Compliant; notification - widgets [w] found as specified in namespace default",
		},
		"scalar where the object has a list": {
			spec:       spec("inform", "musthave", `{tags: x}`),
			objects:    []string{widget},
			compliance: configpolicyv1.NonCompliant,
			message:    "NonCompliant; violation - widgets [w] found but not as specified in namespace default",
		},
	}

	runEvalCases(t, cases)
}

func TestEvaluateMetadataAndErrors(t *testing.T) {
	const labeled = `{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default, labels: {team: a, other: x}}}`

	cases := map[string]evalCase{
		"labels contained": {
			spec:       cmSpec("inform", "musthave", "{name: cm, namespace: default, labels: {team: a}}", ""),
			objects:    []string{labeled},
			compliance: configpolicyv1.Compliant,
			message:    "Compliant; notification - configmaps [cm] found as specified in namespace default",
		},
		"labels enforced": {
			spec:        cmSpec("enforce", "musthave", "{name: cm, namespace: default, labels: {team: b}}", ""),
			objects:     []string{labeled},
			compliance:  configpolicyv1.Compliant,
			message:     "Compliant; notification - configmaps [cm] was updated successfully in namespace default",
			transitions: []string{"configmaps [cm] found but not as specified in namespace default"},
			after: func(g Gomega, get getter) {
				g.Expect(get(configMapGVK, "default", "cm").GetLabels()).To(Equal(map[string]string{"team": "b", "other": "x"}))
			},
		},
		"template field of another type": {
			spec:        cmSpec("inform", "musthave", cmDefault, "    data: [a]\n"),
			objects:     []string{`{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: "1"}}`},
			compliance:  configpolicyv1.NonCompliant,
			message:     `NonCompliant; violation - Error merging changes into key "data": object type of template and existing do not match`,
			transitions: []string{"configmaps [cm] found but not as specified in namespace default"},
		},
		"unknown kind": {
			spec: `remediationAction: inform
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: example.com/v1, kind: Gizmo, metadata: {name: g}}`,
			compliance: configpolicyv1.NonCompliant,
			message:    "NonCompliant; violation - couldn't find mapping resource with kind Gizmo in API version example.com/v1, please check if you have CRD deployed",
		},
		"missing kind": {
			spec: `remediationAction: inform
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, metadata: {name: g}}`,
			compliance: configpolicyv1.NonCompliant,
			message:    "NonCompliant; violation - The kind and apiVersion fields are required on the object template at index 0 in policy p",
		},
		"no remediationAction": {
			spec:       cmSpec("", "musthave", cmDefault, dataA1),
			compliance: configpolicyv1.NonCompliant,
			message:    "NonCompliant; violation - Policy does not have a RemediationAction specified",
		},
		"no object templates": {
			spec:       "remediationAction: inform",
			compliance: configpolicyv1.Compliant,
			message:    "Compliant; notification - p contains no object templates to check, and thus has no violations",
		},
		"templates are joined in order": {
			spec: "remediationAction: inform\nobject-templates:" + cmTemplate("musthave", cmDefault, "") +
				cmTemplate("mustnothave", "{name: cm2, namespace: default}", "") +
				cmTemplate("musthave", "{name: cm3, namespace: default}", ""),
			objects: []string{
				`{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}}`,
				`{apiVersion: v1, kind: ConfigMap, metadata: {name: cm2, namespace: default}}`,
			},
			compliance: configpolicyv1.NonCompliant,
			message: "NonCompliant; notification - configmaps [cm] found as specified in namespace default; " +
				"violation - configmaps [cm2] found in namespace default; violation - configmaps [cm3] not found in namespace default",
		},
		"evaluation interval never": {
			spec: "evaluationInterval: {compliant: never}\n" +
				cmSpec("inform", "musthave", cmDefault, ""),
			objects:    []string{`{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}}`},
			compliance: configpolicyv1.Compliant,
			message: "Compliant; notification - configmaps [cm] found as specified in namespace default. " +
				`This policy will not be evaluated again due to spec.evaluationInterval.compliant being set to "never".`,
		},
	}

	runEvalCases(t, cases)
}

func TestEvaluateTemplatesNotSimulated(t *testing.T) {
	cases := map[string]string{
		"go template": cmSpec("inform", "musthave", cmDefault,
			"    data: {a: '{{ fromConfigMap \"default\" \"x\" \"a\" }}'}\n"),
		"encrypted value": cmSpec("inform", "musthave", cmDefault, "    data: {a: '$ocm_encrypted:abc'}\n"),
		"object-templates-raw reading a ConfigMap": "remediationAction: inform\nobject-templates-raw: " +
			"'{{ fromConfigMap \"default\" \"x\" \"a\" }}'",
	}

	for name, spec := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)

			res := Evaluate(configurationPolicy(t, spec), newTestStore(t, nil), testNow)
			g.Expect(errors.Is(res.Err, ErrTemplatesNotSimulated)).To(BeTrue())
			g.Expect(res.Compliance).To(Equal(configpolicyv1.NonCompliant))
			g.Expect(res.Message).To(HavePrefix("NonCompliant; violation - templates are not simulated: "))
		})
	}

	t.Run("disabled templates are compared literally", func(t *testing.T) {
		g := NewWithT(t)

		policy := configurationPolicy(t, cmSpec("inform", "musthave", cmDefault, "    data: {a: '{{ x }}'}\n"))
		policy.Annotations = map[string]string{disableTemplatesAnnotation: "true"}

		store := newTestStore(t, objects(t,
			`{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}, data: {a: "{{ x }}"}}`))

		res := Evaluate(policy, store, testNow)
		g.Expect(res.Err).NotTo(HaveOccurred())
		g.Expect(res.Message).To(Equal("Compliant; notification - configmaps [cm] found as specified in namespace default"))
	})
}

// runEvalCases evaluates each case with the evaluator and, unless skipped, the real controller.
func runEvalCases(t *testing.T, cases map[string]evalCase) {
	t.Helper()

	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)

			policy := configurationPolicy(t, tc.spec)
			objs := objects(t, tc.objects...)
			store := newTestStore(t, objs)

			res := Evaluate(policy, store, testNow)
			g.Expect(res.Err).NotTo(HaveOccurred())
			g.Expect(res.Compliance).To(Equal(tc.compliance))
			g.Expect(res.Message).To(Equal(tc.message))
			g.Expect(messagesOf(res.Templates[0].Transitions)).To(Equal(orEmpty(tc.transitions)))

			if tc.after != nil {
				tc.after(g, storeGetter(store))
			}

			if tc.skipOracle != "" {
				return
			}

			o := newOracle(t, store.mapper, objs, policy)
			status, sent := o.evaluate(t, policy.Name)
			g.Expect(status.ComplianceState).To(Equal(res.Compliance), "real compliance")
			g.Expect(resultConditions(res)).To(Equal(oracleConditions(status)), "real conditions")
			g.Expect(EmittedMessages(Result{}, res, false)).To(Equal(sent), "real messages")

			if tc.after != nil {
				tc.after(g, o.get)
			}
		})
	}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}

	return s
}
