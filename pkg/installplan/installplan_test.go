package installplan_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/installplan"
)

// policyOf wraps object templates, given as JSON, into a policy with one ConfigurationPolicy.
func policyOf(templates ...string) *policyv1.Policy {
	raw := fmt.Sprintf(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","spec":{"object-templates":[%s]}}`,
		strings.Join(templates, ","))
	p := &policyv1.Policy{}
	p.Name = "operators"
	p.Spec.PolicyTemplates = []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: []byte(raw)}}}
	return p
}

// subTemplate is an object template of a Subscription.
func subTemplate(compliance, apiVersion, namespace, name, approval string) string {
	return fmt.Sprintf(`{"complianceType":%q,"objectDefinition":{"apiVersion":%q,"kind":"Subscription",`+
		`"metadata":{"name":%q,"namespace":%q},"spec":{"name":"pkg","channel":"stable","installPlanApproval":%q}}}`,
		compliance, apiVersion, name, namespace, approval)
}

const olmV1 = "operators.coreos.com/v1alpha1"

func TestChosen(t *testing.T) {
	p := policyOf(
		subTemplate("musthave", olmV1, "ns-b", "sriov", "Manual"),
		subTemplate("musthave", olmV1, "ns-a", "ptp", "Manual"),
		subTemplate("mustonlyhave", olmV1, "ns-a", "ptp", "Manual"), // the same Subscription again
		subTemplate("musthave", olmV1, "ns-a", "auto", "Automatic"),
		subTemplate("mustnothave", olmV1, "ns-a", "gone", "Manual"),
		subTemplate("musthave", "operators.coreos.com/v2", "ns-a", "other-group", "Manual"),
		subTemplate("musthave", olmV1, "", "no-namespace", "Manual"),
		subTemplate("musthave", olmV1, "ns-a", `{{hub .ManagedClusterName hub}}`, "Manual"),
		subTemplate("musthave", olmV1, "ns-c", "sriov", "Manual"),
	)
	cases := map[string]struct {
		choice *ranv1alpha1.OperatorUpgrades
		want   []string
	}{
		"without operatorUpgrades every Manual Subscription": {want: []string{"ns-a/ptp", "ns-b/sriov", "ns-c/sriov"}},
		"an empty include chooses all":                       {choice: &ranv1alpha1.OperatorUpgrades{}, want: []string{"ns-a/ptp", "ns-b/sriov", "ns-c/sriov"}},
		"include by name in any namespace": {choice: &ranv1alpha1.OperatorUpgrades{Include: []ranv1alpha1.SubscriptionRef{{Name: "sriov"}}},
			want: []string{"ns-b/sriov", "ns-c/sriov"}},
		"include by name and namespace": {choice: &ranv1alpha1.OperatorUpgrades{Include: []ranv1alpha1.SubscriptionRef{{Name: "sriov", Namespace: "ns-c"}}},
			want: []string{"ns-c/sriov"}},
		"exclude wins over include": {choice: &ranv1alpha1.OperatorUpgrades{
			Include: []ranv1alpha1.SubscriptionRef{{Name: "sriov"}, {Name: "ptp"}}, Exclude: []ranv1alpha1.SubscriptionRef{{Name: "sriov", Namespace: "ns-b"}}},
			want: []string{"ns-a/ptp", "ns-c/sriov"}},
		"exclude in any namespace": {choice: &ranv1alpha1.OperatorUpgrades{Exclude: []ranv1alpha1.SubscriptionRef{{Name: "sriov"}}},
			want: []string{"ns-a/ptp"}},
		"include naming no Subscription of the policy": {choice: &ranv1alpha1.OperatorUpgrades{Include: []ranv1alpha1.SubscriptionRef{{Name: "auto"}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			subs, err := installplan.Chosen(p, tc.choice)
			g.Expect(err).NotTo(HaveOccurred())
			var keys []string
			for _, s := range subs {
				keys = append(keys, s.Key())
			}
			g.Expect(keys).To(Equal(tc.want))
		})
	}
}

func TestChosenReadsTheStatedSpec(t *testing.T) {
	g := NewWithT(t)
	p := policyOf(`{"objectDefinition":{"apiVersion":"operators.coreos.com/v1alpha1","kind":"Subscription",` +
		`"metadata":{"name":"sriov","namespace":"ns"},"spec":{"name":"sriov-network-operator","channel":"{{hub .Channel hub}}",` +
		`"source":"redhat-operators","sourceNamespace":"openshift-marketplace","startingCSV":"sriov.v2","installPlanApproval":"Manual"}}}`)
	subs, err := installplan.Chosen(p, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(subs).To(Equal([]installplan.Subscription{{Namespace: "ns", Name: "sriov", Package: "sriov-network-operator",
		Source: "redhat-operators", SourceNamespace: "openshift-marketplace", StartingCSV: "sriov.v2"}}), "a templated channel is not stated")

	_, err = installplan.Chosen(policyOf(`{"objectDefinition":`), nil)
	g.Expect(err).To(MatchError(ContainSubstring("policy operators: policy-templates[0]")))
}

// observed builds a spoke object from JSON.
func observed(s string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(s), &obj.Object); err != nil {
		panic(err)
	}
	return obj
}

// liveSub is the spoke's Subscription ns/sriov with its status fields (empty ones left out).
func liveSub(channel, planNS, plan, current, installed string) *unstructured.Unstructured {
	sub := observed(fmt.Sprintf(`{"apiVersion":"operators.coreos.com/v1alpha1","kind":"Subscription","metadata":{"name":"sriov","namespace":"ns"},`+
		`"spec":{"name":"sriov-network-operator","channel":%q,"source":"redhat-operators","installPlanApproval":"Manual"},"status":{}}`, channel))
	for field, v := range map[string]string{"currentCSV": current, "installedCSV": installed} {
		if v != "" {
			_ = unstructured.SetNestedField(sub.Object, v, "status", field)
		}
	}
	if plan != "" {
		_ = unstructured.SetNestedStringMap(sub.Object, map[string]string{"apiVersion": olmV1, "kind": "InstallPlan", "namespace": planNS, "name": plan},
			"status", "installPlanRef")
	}
	return sub
}

// livePlan is the spoke's InstallPlan ns/install-abcde.
func livePlan(approval string, approved bool, phase string, csvs ...string) *unstructured.Unstructured {
	plan := observed(`{"apiVersion":"operators.coreos.com/v1alpha1","kind":"InstallPlan","metadata":{"name":"install-abcde","namespace":"ns"}}`)
	_ = unstructured.SetNestedStringSlice(plan.Object, csvs, "spec", "clusterServiceVersionNames")
	_ = unstructured.SetNestedField(plan.Object, approval, "spec", "approval")
	_ = unstructured.SetNestedField(plan.Object, approved, "spec", "approved")
	_ = unstructured.SetNestedField(plan.Object, phase, "status", "phase")
	return plan
}

func TestDecide(t *testing.T) {
	want := installplan.Subscription{Namespace: "ns", Name: "sriov", Package: "sriov-network-operator", Channel: "stable"}
	pinned := want
	pinned.StartingCSV = "sriov.v2"
	pending := liveSub("stable", "ns", "install-abcde", "sriov.v2", "sriov.v1")
	waiting := livePlan("Manual", false, "RequiresApproval", "sriov.v2")
	cases := map[string]struct {
		want      installplan.Subscription
		sub, plan *unstructured.Unstructured
		also      []string
		outcome   installplan.Outcome
		csv       string
		message   string
	}{
		"Subscription not read yet": {want: want, outcome: installplan.Wait, message: "Subscription ns/sriov has not been read yet"},
		"Subscription on another channel than the policy's": {want: want, sub: liveSub("beta", "ns", "install-abcde", "sriov.v2", "sriov.v1"), plan: waiting,
			outcome: installplan.Wait, message: `Subscription ns/sriov does not follow the policy yet: spec.channel is "beta", the policy asks for "stable"`},
		"Subscription without startingCSV the policy pins": {want: pinned, sub: pending, plan: waiting, outcome: installplan.Wait,
			message: `Subscription ns/sriov does not follow the policy yet: spec.startingCSV is "", the policy asks for "sriov.v2"`},
		"no InstallPlan referenced": {want: want, sub: liveSub("stable", "", "", "sriov.v1", "sriov.v1"),
			outcome: installplan.Wait, message: "Subscription ns/sriov refers to no InstallPlan"},
		"InstallPlan in another namespace": {want: want, sub: liveSub("stable", "other", "install-abcde", "sriov.v2", "sriov.v1"), plan: waiting,
			outcome: installplan.Mismatch, message: "InstallPlan other/install-abcde is not in the namespace of Subscription ns/sriov"},
		"InstallPlan not read yet": {want: want, sub: pending, outcome: installplan.Wait, message: "InstallPlan ns/install-abcde has not been read yet"},
		"the view shows an older InstallPlan": {want: want, sub: liveSub("stable", "ns", "install-fghij", "sriov.v2", "sriov.v1"), plan: waiting,
			outcome: installplan.Wait, message: "InstallPlan ns/install-fghij has not been read yet"},
		"already approved": {want: want, sub: pending, plan: livePlan("Manual", true, "Installing", "sriov.v2"),
			outcome: installplan.Approved, message: "InstallPlan ns/install-abcde is approved"},
		"Automatic approval, not approved": {want: want, sub: pending, plan: livePlan("Automatic", false, "Installing", "sriov.v2"),
			outcome: installplan.Mismatch, message: `InstallPlan ns/install-abcde has approval "Automatic", not Manual`},
		"still planning": {want: want, sub: pending, plan: livePlan("Manual", false, "Planning", "sriov.v2"),
			outcome: installplan.Wait, message: "InstallPlan ns/install-abcde is still planning"},
		"no phase yet": {want: want, sub: pending, plan: livePlan("Manual", false, "", "sriov.v2"),
			outcome: installplan.Wait, message: "InstallPlan ns/install-abcde is still planning"},
		"failed, not approved": {want: want, sub: pending, plan: livePlan("Manual", false, "Failed", "sriov.v2"),
			outcome: installplan.Mismatch, message: "InstallPlan ns/install-abcde is Failed, not RequiresApproval"},
		"the plan for the currentCSV": {want: want, sub: pending, plan: waiting,
			outcome: installplan.Approve, csv: "sriov.v2", message: "InstallPlan ns/install-abcde installs sriov.v2 for Subscription ns/sriov"},
		"a plan for another CSV than the currentCSV": {want: want, sub: liveSub("stable", "ns", "install-abcde", "sriov.v3", "sriov.v1"), plan: waiting,
			outcome: installplan.Mismatch, message: "InstallPlan ns/install-abcde installs sriov.v2, not sriov.v3, the currentCSV of Subscription ns/sriov"},
		"no currentCSV yet": {want: want, sub: liveSub("stable", "ns", "install-abcde", "", "sriov.v1"), plan: waiting,
			outcome: installplan.Wait, message: "Subscription ns/sriov names no currentCSV yet"},
		"the plan for the pinned startingCSV": {want: pinned, sub: withStartingCSV(liveSub("stable", "ns", "install-abcde", "sriov.v2", "sriov.v1"), "sriov.v2"),
			plan: waiting, outcome: installplan.Approve, csv: "sriov.v2"},
		"a hop on the way to the pinned startingCSV": {want: pinned,
			sub:  withStartingCSV(liveSub("stable", "ns", "install-abcde", "sriov.v1-1", "sriov.v1"), "sriov.v2"),
			plan: livePlan("Manual", false, "RequiresApproval", "sriov.v1-1"), outcome: installplan.Approve, csv: "sriov.v1-1"},
		"past the pinned startingCSV": {want: pinned, sub: withStartingCSV(liveSub("stable", "ns", "install-abcde", "sriov.v3", "sriov.v2"), "sriov.v2"),
			plan: livePlan("Manual", false, "RequiresApproval", "sriov.v3"), outcome: installplan.Mismatch,
			message: "Subscription ns/sriov runs sriov.v2, the startingCSV the policy pins; InstallPlan ns/install-abcde would go past it"},
		"a shared plan with a CSV no chosen Subscription asks for": {want: want, sub: pending,
			plan: livePlan("Manual", false, "RequiresApproval", "sriov.v2", "ptp.v5"), outcome: installplan.Mismatch,
			message: "InstallPlan ns/install-abcde also installs ptp.v5, which no chosen Subscription asks for"},
		"a shared plan with the CSV of another chosen Subscription": {want: want, sub: pending,
			plan: livePlan("Manual", false, "RequiresApproval", "sriov.v2", "ptp.v5"), also: []string{"ptp.v5"},
			outcome: installplan.Approve, csv: "sriov.v2"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			v := installplan.Decide(tc.want, tc.sub, tc.plan, tc.also)
			g.Expect(v.Outcome).To(Equal(tc.outcome), v.Message)
			g.Expect(v.CSV).To(Equal(tc.csv))
			if tc.message != "" {
				g.Expect(v.Message).To(Equal(tc.message))
			}
		})
	}
}

func withStartingCSV(sub *unstructured.Unstructured, csv string) *unstructured.Unstructured {
	_ = unstructured.SetNestedField(sub.Object, csv, "spec", "startingCSV")
	return sub
}

func TestPlanOfAndProgressing(t *testing.T) {
	g := NewWithT(t)
	_, ok := installplan.PlanOf(nil)
	g.Expect(ok).To(BeFalse())
	_, ok = installplan.PlanOf(liveSub("stable", "", "", "a", "a"))
	g.Expect(ok).To(BeFalse())
	ref, ok := installplan.PlanOf(liveSub("stable", "ns", "install-abcde", "a", ""))
	g.Expect(ok).To(BeTrue())
	g.Expect(ref).To(Equal(installplan.Ref{Namespace: "ns", Name: "install-abcde"}))

	want := installplan.Subscription{Namespace: "ns", Name: "sriov", StartingCSV: "sriov.v3"}
	g.Expect(installplan.Progressing(want, nil)).To(BeEmpty(), "nothing is accepted for a Subscription not read")
	g.Expect(installplan.Progressing(want, liveSub("stable", "", "", "sriov.v2", ""))).To(Equal([]string{"sriov.v2", "sriov.v3"}))
}

func TestFromView(t *testing.T) {
	processing := func(status metav1.ConditionStatus) []metav1.Condition {
		return []metav1.Condition{{Type: viewv1beta1.ConditionViewProcessing, Status: status}}
	}
	cases := map[string]struct {
		status viewv1beta1.ViewStatus
		name   string
	}{
		"not answered": {},
		"the object is missing": {status: viewv1beta1.ViewStatus{Conditions: processing(metav1.ConditionFalse),
			Result: runtime.RawExtension{Raw: []byte(`{"metadata":{"name":"old"}}`)}}},
		"empty":   {status: viewv1beta1.ViewStatus{Conditions: processing(metav1.ConditionTrue)}},
		"garbled": {status: viewv1beta1.ViewStatus{Conditions: processing(metav1.ConditionTrue), Result: runtime.RawExtension{Raw: []byte(`{"metadata":`)}}},
		"shown": {status: viewv1beta1.ViewStatus{Conditions: processing(metav1.ConditionTrue),
			Result: runtime.RawExtension{Raw: []byte(`{"kind":"InstallPlan","metadata":{"name":"install-abcde"}}`)}}, name: "install-abcde"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := installplan.FromView(&viewv1beta1.ManagedClusterView{Status: tc.status})
			if (obj == nil) != (tc.name == "") || (obj != nil && obj.GetName() != tc.name) {
				t.Fatalf("got %v, want an object named %q", obj, tc.name)
			}
		})
	}
	if installplan.FromView(nil) != nil {
		t.Fatal("a missing view shows nothing")
	}
}

func TestApprovalTemplate(t *testing.T) {
	g := NewWithT(t)
	plan := livePlan("Manual", false, "RequiresApproval", "sriov.v2")
	plan.SetLabels(map[string]string{"operators.coreos.com/sriov.ns": ""})
	plan.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: olmV1, Kind: "Subscription", Name: "sriov", UID: "u1"}})
	plan.SetResourceVersion("42")
	plan.SetUID("u2")
	tmpl := installplan.ApprovalTemplate(plan)
	g.Expect(tmpl.Object).To(And(Not(HaveKey("status")), HaveKeyWithValue("spec", map[string]any{
		"approval": "Manual", "approved": true, "clusterServiceVersionNames": []any{"sriov.v2"},
	})))
	g.Expect(tmpl.GetAPIVersion()).To(Equal(olmV1))
	g.Expect(tmpl.GetKind()).To(Equal("InstallPlan"))
	g.Expect(tmpl.GetNamespace() + "/" + tmpl.GetName()).To(Equal("ns/install-abcde"))
	g.Expect(tmpl.GetLabels()).To(Equal(plan.GetLabels()))
	g.Expect(tmpl.GetOwnerReferences()).To(Equal(plan.GetOwnerReferences()))
	g.Expect(tmpl.GetResourceVersion() + string(tmpl.GetUID())).To(BeEmpty())
	approved, _, _ := unstructured.NestedBool(plan.Object, "spec", "approved")
	g.Expect(approved).To(BeFalse(), "the viewed plan is not changed")
}
