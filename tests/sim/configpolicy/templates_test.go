package configpolicy

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cgu-operator/cgu-operator/pkg/mcu"
)

// olm returns a Subscription of namespace app-1 with the approval and status given (YAML flow
// maps, status empty for none), and the InstallPlan it names when plan is set.
func olm(name, approval, status, plan string, approved bool) []string {
	docs := []string{fmt.Sprintf(`{apiVersion: operators.coreos.com/v1alpha1, kind: Subscription,
  metadata: {name: %s, namespace: app-1}, spec: {name: %s, installPlanApproval: %s}%s}`, name, name, approval, status)}
	if plan != "" {
		docs = append(docs, fmt.Sprintf(`{apiVersion: operators.coreos.com/v1alpha1, kind: InstallPlan,
  metadata: {name: %s, namespace: app-1}, spec: {approval: Manual, approved: %t, clusterServiceVersionNames: [%s.v2]}}`,
			plan, approved, name))
	}
	return docs
}

func pending(plan string) string {
	return `, status: {state: UpgradePending, installPlanRef: {name: ` + plan + `, namespace: app-1}}`
}

const atLatest = `, status: {state: AtLatestKnown}`

// TestRawTemplatesMatchRealController resolves spec.object-templates-raw with managed-cluster
// templates, among them the approve-all template of a ManagedClustersUpgrade, and expects the
// real controller's compliance, conditions, messages and resulting objects.
func TestRawTemplatesMatchRealController(t *testing.T) {
	approveAll := mcu.ApproveAllTemplates([]mcu.Operator{{Name: "storage", Namespace: "app-1"}})
	cases := map[string]struct {
		raw     string
		objects [][]string
		// plans are the InstallPlans whose spec.approved is compared afterwards.
		plans []string
	}{
		"approve all, no Subscription": {raw: approveAll},
		"approve all, Manual at latest and Automatic pending": {raw: approveAll, objects: [][]string{
			olm("gitops", "Manual", atLatest, "", false), olm("ptp", "Automatic", pending("install-p"), "install-p", true)}},
		"approve all, Manual pending on its plan": {raw: approveAll, plans: []string{"install-g"}, objects: [][]string{
			olm("gitops", "Manual", pending("install-g"), "install-g", false)}},
		"approve all, the excluded pending left alone": {raw: approveAll, plans: []string{"install-g", "install-s"}, objects: [][]string{
			olm("gitops", "Manual", pending("install-g"), "install-g", false), olm("storage", "Manual", pending("install-s"), "install-s", false)}},
		"approve all, a Manual Subscription without status": {raw: approveAll, objects: [][]string{olm("gitops", "Manual", "", "", false)}},
		"approve all, only the excluded one": {raw: approveAll, plans: []string{"install-s"}, objects: [][]string{
			olm("storage", "Manual", pending("install-s"), "install-s", false)}},
		"a lookup by name and a label selector": {raw: `
{{- $cm := lookup "v1" "ConfigMap" "default" "settings" }}
{{- range $w := (lookup "example.com/v1" "Widget" "" "" "tier=gold").items }}
- complianceType: musthave
  objectDefinition:
    apiVersion: example.com/v1
    kind: Widget
    metadata: {name: {{ $w.metadata.name }}, namespace: {{ $w.metadata.namespace }}}
    spec: {size: {{ $cm.data.size }}}
{{- end }}
{{- $missing := lookup "v1" "ConfigMap" "default" "absent" }}
{{- if not $missing }}
- complianceType: mustnothave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: absent, namespace: default}}
{{- end }}`, objects: [][]string{{
			`{apiVersion: v1, kind: ConfigMap, metadata: {name: settings, namespace: default}, data: {size: "3"}}`,
			`{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, namespace: app-1, labels: {tier: gold}}, spec: {size: "2"}}`,
			`{apiVersion: example.com/v1, kind: Widget, metadata: {name: w2, namespace: app-2, labels: {tier: silver}}, spec: {size: "1"}}`,
		}}},
		"a template error":          {raw: `{{ lookup "v1" }}`},
		"a kind not served":         {raw: `{{ (lookup "example.com/v9" "Gadget" "" "").items }}`},
		"no template, plain YAML":   {raw: "- complianceType: musthave\n  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: app-1}}"},
		"no template, invalid YAML": {raw: "- complianceType: [musthave"},
	}
	for name, c := range cases {
		for _, remediation := range []string{"inform", "enforce"} {
			t.Run(name+" "+remediation, func(t *testing.T) {
				g := NewWithT(t)
				policy := configurationPolicy(t, "remediationAction: "+remediation)
				policy.Spec.ObjectTemplatesRaw = c.raw
				var docs []string
				for _, o := range c.objects {
					docs = append(docs, o...)
				}
				objs := objects(t, docs...)
				store := newTestStore(t, objs)
				controller := newOracle(t, store.mapper, objs, policy)

				res := Evaluate(policy, store, testNow)
				g.Expect(res.Err).NotTo(HaveOccurred())
				status, sent := controller.evaluate(t, policy.Name)

				g.Expect(res.Compliance).To(Equal(status.ComplianceState))
				g.Expect(resultConditions(res)).To(Equal(oracleConditions(status)))
				g.Expect(orEmpty(EmittedMessages(Result{}, res, false))).To(Equal(sent))
				for _, plan := range c.plans {
					mine, theirs := storeGetter(store)(installPlanGVK, "app-1", plan), controller.get(installPlanGVK, "app-1", plan)
					approved := func(o *unstructured.Unstructured) any {
						v, _, _ := unstructured.NestedBool(o.Object, "spec", "approved")
						return v
					}
					g.Expect(approved(mine)).To(Equal(approved(theirs)), plan)
				}
			})
		}
	}
}

// TestRawTemplatesOutcomes pins what the approve-all template decides, beside the agreement
// with the real controller: the pending plan of a Subscription chosen is approved on enforce,
// the excluded one's is not, and the cluster complies once its chosen Subscriptions are at
// the latest version.
func TestRawTemplatesOutcomes(t *testing.T) {
	g := NewWithT(t)
	policy := configurationPolicy(t, "remediationAction: enforce")
	policy.Spec.ObjectTemplatesRaw = mcu.ApproveAllTemplates([]mcu.Operator{{Name: "storage", Namespace: "app-1"}})
	store := newTestStore(t, objects(t, append(olm("gitops", "Manual", pending("install-g"), "install-g", false),
		olm("storage", "Manual", pending("install-s"), "install-s", false)...)...))

	res := Evaluate(policy, store, testNow)
	g.Expect(res.Compliance).To(BeEquivalentTo("NonCompliant"))
	g.Expect(res.Message).To(ContainSubstring("installplans [install-g] was updated successfully"))
	g.Expect(res.Message).NotTo(ContainSubstring("storage"))
	approved := func(plan string) bool {
		v, _, _ := unstructured.NestedBool(storeGetter(store)(installPlanGVK, "app-1", plan).Object, "spec", "approved")
		return v
	}
	g.Expect(approved("install-g")).To(BeTrue())
	g.Expect(approved("install-s")).To(BeFalse())

	sub := storeGetter(store)(subscriptionGVK, "app-1", "gitops").DeepCopy()
	g.Expect(unstructured.SetNestedField(sub.Object, map[string]any{"state": "AtLatestKnown", "installedCSV": "gitops.v2"}, "status")).To(Succeed())
	g.Expect(store.Update(sub)).To(Succeed())
	res = Evaluate(policy, store, testNow)
	g.Expect(res.Compliance).To(BeEquivalentTo("Compliant"), res.Message)
}
