package installplan

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// FuzzChosen reads the Subscriptions of arbitrary policy templates: the result is sorted,
// each Subscription once, each named with a namespace and without a template, and each one
// the choice picks.
func FuzzChosen(f *testing.F) {
	f.Add([]byte(`{"kind":"ConfigurationPolicy","spec":{"object-templates":[{"complianceType":"musthave","objectDefinition":
{"apiVersion":"operators.coreos.com/v1alpha1","kind":"Subscription","metadata":{"name":"sriov","namespace":"openshift-sriov"},
"spec":{"name":"sriov-network-operator","channel":"stable","installPlanApproval":"Manual","source":"redhat","sourceNamespace":"openshift-marketplace"}}}]}}`), "sriov")
	f.Add([]byte(`{"kind":"ConfigurationPolicy","spec":{"object-templates":[{"objectDefinition":
{"apiVersion":"operators.coreos.com/v1alpha1","kind":"Subscription","metadata":{"name":"{{hub .Name hub}}","namespace":"x"},"spec":{"installPlanApproval":"Manual"}}},
{"objectDefinition":{"apiVersion":"operators.coreos.com/v1alpha1","kind":"Subscription","metadata":{"name":"a","namespace":"x"},"spec":{"installPlanApproval":"Manual","channel":7}}},
{"objectDefinition":{"apiVersion":"operators.coreos.com/v1alpha1","kind":"Subscription","metadata":"oops","spec":{"installPlanApproval":"Manual"}}}]}}`), "")
	f.Add([]byte(`{"kind":"ConfigurationPolicy","spec":{"object-templates-raw":"- objectDefinition: {apiVersion: operators.coreos.com/v1alpha1, kind: Subscription, metadata: {name: b, namespace: y}, spec: {installPlanApproval: Manual}}\n- objectDefinition: {apiVersion: operators.coreos.com/v1alpha1, kind: Subscription, metadata: {name: b, namespace: y}, spec: {installPlanApproval: Manual}}"}}`), "b")
	f.Fuzz(func(t *testing.T, raw []byte, include string) {
		p := &policyv1.Policy{}
		p.Name = "operators"
		p.Spec.PolicyTemplates = []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: raw}}}
		var choice *ranv1alpha1.OperatorUpgrades
		if include != "" {
			choice = &ranv1alpha1.OperatorUpgrades{Include: []ranv1alpha1.SubscriptionRef{{Name: include}}}
		}
		subs, err := Chosen(p, choice)
		if err != nil {
			return
		}
		if !slices.IsSortedFunc(subs, func(a, b Subscription) int { return strings.Compare(a.Key(), b.Key()) }) {
			t.Fatalf("not sorted: %v", subs)
		}
		for i, s := range subs {
			if i > 0 && subs[i-1].Key() == s.Key() {
				t.Fatalf("%s twice", s.Key())
			}
			if s.Name == "" || s.Namespace == "" || strings.Contains(s.Key(), "{{") || !Picks(choice, s.Namespace, s.Name) {
				t.Fatalf("chose %+v with include %q", s, include)
			}
		}
	})
}

// FuzzDecide judges arbitrary Subscriptions and InstallPlans as their views show them:
// Decide never panics, its outcome is a known one, and it approves only a Manual plan that
// is not approved, in RequiresApproval, in the Subscription's namespace and named by it, for
// a CSV the plan installs.
func FuzzDecide(f *testing.F) {
	sub := `{"spec":{"name":"sriov-network-operator","channel":"stable","installPlanApproval":"Manual"},
"status":{"installPlanRef":{"namespace":"openshift-sriov","name":"install-abc"},"currentCSV":"sriov.v4.16.1","installedCSV":"sriov.v4.16.0"}}`
	plan := `{"metadata":{"namespace":"openshift-sriov","name":"install-abc"},"spec":{"approval":"Manual","approved":false,
"clusterServiceVersionNames":["sriov.v4.16.1"]},"status":{"phase":"RequiresApproval"}}`
	f.Add(sub, plan, "", "")
	f.Add(sub, strings.Replace(plan, `"approved":false`, `"approved":"yes"`, 1), "", "other.v1")
	f.Add(sub, strings.Replace(plan, `["sriov.v4.16.1"]`, `["sriov.v4.16.1","other.v1"]`, 1), "sriov.v4.16.0", "")
	f.Add(`{"status":{"installPlanRef":"install-abc"}}`, `{"spec":{"clusterServiceVersionNames":[1,null]}}`, "", "")
	f.Add(`{"status":{"installPlanRef":{"name":"p","namespace":"elsewhere"}}}`, `null`, "", "")
	f.Add(`{}`, `{}`, "", "")
	f.Fuzz(func(t *testing.T, subJSON, planJSON, startingCSV, also string) {
		s, p := object(subJSON), object(planJSON)
		want := Subscription{Namespace: "openshift-sriov", Name: "sriov", Package: "sriov-network-operator", StartingCSV: startingCSV}
		v := Decide(want, s, p, []string{also})
		switch v.Outcome {
		case Wait, Approved, Mismatch:
		case Approve:
			approval, _, _ := unstructured.NestedString(p.Object, "spec", "approval")
			phase, _, _ := unstructured.NestedString(p.Object, "status", "phase")
			csvs, _, _ := unstructured.NestedStringSlice(p.Object, "spec", "clusterServiceVersionNames")
			ref, _ := PlanOf(s)
			if approval != "Manual" || phase != "RequiresApproval" || ref.Namespace != want.Namespace ||
				p.GetName() != ref.Name || v.CSV == "" || !slices.Contains(csvs, v.CSV) {
				t.Fatalf("approved %+v of subscription %s, plan %s", v, subJSON, planJSON)
			}
		default:
			t.Fatalf("unknown outcome %+v", v)
		}
		if v.Message == "" {
			t.Fatalf("no message: %+v", v)
		}
	})
}

// object decodes JSON as a view shows an object, nil when it is no JSON object.
func object(text string) *unstructured.Unstructured {
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil || m == nil {
		return nil
	}
	return &unstructured.Unstructured{Object: m}
}
