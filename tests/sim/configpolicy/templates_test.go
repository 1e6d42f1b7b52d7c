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
				var docs []string
				for _, o := range c.objects {
					docs = append(docs, o...)
				}
				store, controller := evaluateAsRealController(g, t, remediation, c.raw, objects(t, docs...))
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

// evaluateAsRealController evaluates a policy of the raw object templates given, with
// remediation, on a store of objs and on the real controller, and expects the same
// compliance, conditions and messages; it returns both, for the objects they left.
func evaluateAsRealController(g Gomega, t *testing.T, remediation, raw string, objs []*unstructured.Unstructured) (*MapStore, *oracle) {
	t.Helper()
	policy := configurationPolicy(t, "remediationAction: "+remediation)
	policy.Spec.ObjectTemplatesRaw = raw
	store := newTestStore(t, objs)
	controller := newOracle(t, store.mapper, objs, policy)

	res := Evaluate(policy, store, testNow)
	g.Expect(res.Err).NotTo(HaveOccurred())
	status, sent := controller.evaluate(t, policy.Name)

	g.Expect(res.Compliance).To(Equal(status.ComplianceState))
	g.Expect(resultConditions(res)).To(Equal(oracleConditions(status)))
	g.Expect(orEmpty(EmittedMessages(Result{}, res, false))).To(Equal(sent))
	return store, controller
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

// machineSet is a MachineSet of openshift-machine-api whose machines have role, with the
// annotations (a YAML flow map's entries), replicas and ready machines given.
func machineSet(name, role, annotations string, replicas, ready int) string {
	return fmt.Sprintf(`{apiVersion: machine.openshift.io/v1beta1, kind: MachineSet,
  metadata: {name: %s, namespace: openshift-machine-api, annotations: {%s}},
  spec: {replicas: %d, template: {metadata: {labels: {machine.openshift.io/cluster-api-machine-role: %s}}}},
  status: {replicas: %d, readyReplicas: %d}}`, name, annotations, replicas, role, replicas, ready)
}

// workerPool is the worker MachineConfigPool, Updated or not.
func workerPool(updated bool) string {
	status := "False"
	if updated {
		status = "True"
	}
	return `{apiVersion: machineconfiguration.openshift.io/v1, kind: MachineConfigPool, metadata: {name: worker},
  spec: {paused: false}, status: {conditions: [{type: Updated, status: "` + status + `"}]}}`
}

const before = mcu.AnnotationReplicasBeforeSurge + `: "2"`

// TestCapacityTemplatesMatchRealController resolves the templates adding and removing worker
// capacity of a ManagedClustersUpgrade against MachineSets in each state they pass through,
// and expects the real controller's compliance, conditions, messages and resulting
// MachineSets, on inform and on enforce.
func TestCapacityTemplatesMatchRealController(t *testing.T) {
	up, down := mcu.ScaleUpTemplates(1), mcu.ScaleDownTemplates()
	cases := map[string]struct {
		raw     string
		objects []string
	}{
		"add, before the surge":                {raw: up, objects: []string{machineSet("w-a", "worker", "", 2, 2)}},
		"add, surged, a machine not ready yet": {raw: up, objects: []string{machineSet("w-a", "worker", before, 3, 2)}},
		"add, surged and ready":                {raw: up, objects: []string{machineSet("w-a", "worker", before, 3, 3)}},
		"add, no MachineSet":                   {raw: up},
		"add, none to surge: infra, autoscaled, empty": {raw: up, objects: []string{
			machineSet("i-a", "infra", "", 2, 2),
			machineSet("w-b", "worker", "machine.openshift.io/cluster-api-autoscaler-node-group-max-size: \"6\"", 2, 2),
			machineSet("w-c", "worker", "", 0, 0)}},
		"add, a removed surge is forgotten": {raw: up, objects: []string{machineSet("w-a", "worker", mcu.AnnotationReplicasBeforeSurge+`: ""`, 4, 4)}},
		"remove, workers updating":          {raw: down, objects: []string{workerPool(false), machineSet("w-a", "worker", before, 3, 3)}},
		"remove, workers updated":           {raw: down, objects: []string{workerPool(true), machineSet("w-a", "worker", before, 3, 3), machineSet("w-b", "worker", "", 2, 2)}},
		"remove, the surge removed":         {raw: down, objects: []string{workerPool(true), machineSet("w-a", "worker", mcu.AnnotationReplicasBeforeSurge+`: ""`, 2, 2)}},
		"remove, machines still going":      {raw: down, objects: []string{workerPool(true), machineSet("w-a", "worker", mcu.AnnotationReplicasBeforeSurge+`: ""`, 3, 2)}},
		"remove, no pool":                   {raw: down},
	}
	for name, c := range cases {
		for _, remediation := range []string{"inform", "enforce"} {
			t.Run(name+" "+remediation, func(t *testing.T) {
				g := NewWithT(t)
				objs := objects(t, c.objects...)
				store, controller := evaluateAsRealController(g, t, remediation, c.raw, objs)
				for _, o := range objs {
					if o.GroupVersionKind() != machineSetGVK {
						continue
					}
					mine, theirs := storeGetter(store)(machineSetGVK, o.GetNamespace(), o.GetName()), controller.get(machineSetGVK, o.GetNamespace(), o.GetName())
					g.Expect(scaled(mine)).To(Equal(scaled(theirs)), o.GetName())
				}
			})
		}
	}
}

// scaled is what the capacity templates change of a MachineSet: its replicas and the
// annotation keeping those before the surge.
func scaled(o *unstructured.Unstructured) string {
	replicas, _, _ := unstructured.NestedInt64(o.Object, "spec", "replicas")
	kept, ok := o.GetAnnotations()[mcu.AnnotationReplicasBeforeSurge]
	return fmt.Sprintf("replicas %d, before the surge %q (%t)", replicas, kept, ok)
}

// TestCapacityTemplatesOutcomes pins what the capacity templates do through a surge, beside
// the agreement with the real controller: enforcing the addition asks one machine more and
// keeps the replicas before it, compliant once ready, however often evaluated; the removal
// waits for the worker pool, then asks the replicas before, compliant once the machine is
// gone; a surge that follows starts again from the MachineSet's own replicas.
func TestCapacityTemplatesOutcomes(t *testing.T) {
	g := NewWithT(t)
	up, down := configurationPolicy(t, "remediationAction: enforce"), configurationPolicy(t, "remediationAction: enforce")
	up.Spec.ObjectTemplatesRaw, down.Spec.ObjectTemplatesRaw = mcu.ScaleUpTemplates(1), mcu.ScaleDownTemplates()
	store := newTestStore(t, objects(t, workerPool(false), machineSet("w-a", "worker", "", 2, 2)))
	get := func() *unstructured.Unstructured {
		return storeGetter(store)(machineSetGVK, "openshift-machine-api", "w-a")
	}
	setStatus := func(replicas, ready int64) {
		ms := get().DeepCopy()
		g.Expect(unstructured.SetNestedField(ms.Object, replicas, "status", "replicas")).To(Succeed())
		g.Expect(unstructured.SetNestedField(ms.Object, ready, "status", "readyReplicas")).To(Succeed())
		g.Expect(store.Update(ms)).To(Succeed())
	}

	g.Expect(Evaluate(up, store, testNow).Compliance).To(BeEquivalentTo("NonCompliant"))
	g.Expect(scaled(get())).To(Equal(`replicas 3, before the surge "2" (true)`))
	setStatus(3, 3)
	for range 2 {
		g.Expect(Evaluate(up, store, testNow).Compliance).To(BeEquivalentTo("Compliant"))
		g.Expect(scaled(get())).To(Equal(`replicas 3, before the surge "2" (true)`))
	}

	g.Expect(Evaluate(down, store, testNow).Compliance).To(BeEquivalentTo("NonCompliant"))
	g.Expect(scaled(get())).To(Equal(`replicas 3, before the surge "2" (true)`), "removed before the workers updated")
	pool := storeGetter(store)(poolGVK, "", "worker").DeepCopy()
	g.Expect(unstructured.SetNestedSlice(pool.Object, []any{map[string]any{"type": "Updated", "status": "True"}}, "status", "conditions")).To(Succeed())
	g.Expect(store.Update(pool)).To(Succeed())
	g.Expect(Evaluate(down, store, testNow).Compliance).To(BeEquivalentTo("NonCompliant"))
	g.Expect(scaled(get())).To(Equal(`replicas 2, before the surge "" (true)`))
	g.Expect(Evaluate(down, store, testNow).Compliance).To(BeEquivalentTo("NonCompliant"), "compliant while the added machine is still there")
	setStatus(2, 2)
	g.Expect(Evaluate(down, store, testNow).Compliance).To(BeEquivalentTo("Compliant"))

	g.Expect(Evaluate(up, store, testNow).Compliance).To(BeEquivalentTo("NonCompliant"))
	g.Expect(scaled(get())).To(Equal(`replicas 3, before the surge "2" (true)`))
}
