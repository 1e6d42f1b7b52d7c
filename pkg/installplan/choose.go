// Package installplan decides, for the OLM Subscriptions with Manual approval that a managed
// policy declares, which InstallPlan the operator approves on a cluster while it enforces the
// policy there. It is pure: the controller reads the spoke's Subscription and InstallPlan
// through ManagedClusterViews and approves through a ManagedClusterAction
// (controllers/clustergroupupgrade/installplans.go).
//
// Field names follow operator-framework/api pkg/operators/v1alpha1 (subscription_types.go,
// installplan_types.go).
package installplan

import (
	"cmp"
	"slices"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/policyobjects"
)

// Subscription is a Subscription a managed policy asks to exist with Manual InstallPlan
// approval: where it is, and the spec fields the policy states (empty when it states none,
// or states them with templates).
type Subscription struct {
	Namespace, Name string
	// Package is spec.name.
	Package         string
	Channel         string
	Source          string
	SourceNamespace string
	StartingCSV     string
}

// Key is "namespace/name".
func (s Subscription) Key() string { return s.Namespace + "/" + s.Name }

// Chosen returns the Subscriptions with spec.installPlanApproval Manual that the policy's
// ConfigurationPolicies ask to exist (musthave or mustonlyhave), that choice picks (nil picks
// all), sorted by namespace and name, each once. Subscriptions whose name or namespace is not
// stated, or is a template, are left out: the operator cannot name them on a cluster.
func Chosen(p *policyv1.Policy, choice *ranv1alpha1.OperatorUpgrades) ([]Subscription, error) {
	var out []Subscription
	err := policyobjects.Read(p, policyobjects.Visitor{Object: func(def map[string]any) error {
		if s, ok := manualSubscription(def); ok && Picks(choice, s.Namespace, s.Name) {
			out = append(out, s)
		}
		return nil
	}})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Subscription) int { return cmp.Compare(a.Key(), b.Key()) })
	return slices.CompactFunc(out, func(a, b Subscription) bool { return a.Key() == b.Key() }), nil
}

// manualSubscription reads an object definition as a Subscription with Manual approval.
func manualSubscription(def map[string]any) (Subscription, bool) {
	if str(def, "apiVersion") != operatorsv1alpha1.SubscriptionCRDAPIVersion || str(def, "kind") != operatorsv1alpha1.SubscriptionKind {
		return Subscription{}, false
	}
	meta, _ := def["metadata"].(map[string]any)
	spec, _ := def["spec"].(map[string]any)
	if str(spec, "installPlanApproval") != string(operatorsv1alpha1.ApprovalManual) {
		return Subscription{}, false
	}
	s := Subscription{
		Namespace: str(meta, "namespace"), Name: str(meta, "name"),
		Package: stated(spec, "name"), Channel: stated(spec, "channel"), Source: stated(spec, "source"),
		SourceNamespace: stated(spec, "sourceNamespace"), StartingCSV: stated(spec, "startingCSV"),
	}
	if s.Namespace == "" || s.Name == "" || templated(s.Namespace) || templated(s.Name) {
		return Subscription{}, false
	}
	return s, true
}

// Picks reports whether choice picks the Subscription namespace/name: include empty or naming
// it, and exclude not naming it. A reference with an empty namespace names the Subscription
// in any namespace.
func Picks(choice *ranv1alpha1.OperatorUpgrades, namespace, name string) bool {
	if choice == nil {
		return true
	}
	names := func(refs []ranv1alpha1.SubscriptionRef) bool {
		return slices.ContainsFunc(refs, func(r ranv1alpha1.SubscriptionRef) bool {
			return r.Name == name && (r.Namespace == "" || r.Namespace == namespace)
		})
	}
	if names(choice.Exclude) {
		return false
	}
	return len(choice.Include) == 0 || names(choice.Include)
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// stated is a string field the policy states literally, "" for a template.
func stated(m map[string]any, key string) string {
	if s := str(m, key); !templated(s) {
		return s
	}
	return ""
}

func templated(s string) bool { return strings.Contains(s, policyobjects.TemplateDelimiter) }
