package world

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ConfigPolicy is one ConfigurationPolicy template of a Policy: object templates of one
// compliance type.
type ConfigPolicy struct {
	// Name of the ConfigurationPolicy (the template's metadata.name).
	Name string
	// ComplianceType of every object template; empty means musthave.
	ComplianceType string
	// Objects are the object definitions.
	Objects []map[string]any
}

// NewPolicy returns a root policy with the given remediation action wrapping one
// ConfigurationPolicy per template (each inform: the root policy's action replaces it on the
// spoke, as template-sync does). It panics if an object cannot be encoded as JSON, which
// only a test's own mistake can cause.
func NewPolicy(namespace, name string, action policyv1.RemediationAction, templates ...ConfigPolicy) *policyv1.Policy {
	p := &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       policyv1.PolicySpec{RemediationAction: action},
	}
	for _, t := range templates {
		kind := t.ComplianceType
		if kind == "" {
			kind = "musthave"
		}
		objectTemplates := make([]any, len(t.Objects))
		for i, o := range t.Objects {
			objectTemplates[i] = map[string]any{"complianceType": kind, "objectDefinition": o}
		}
		raw, err := json.Marshal(map[string]any{
			"apiVersion": "policy.open-cluster-management.io/v1",
			"kind":       "ConfigurationPolicy",
			"metadata":   map[string]any{"name": t.Name},
			"spec":       map[string]any{"remediationAction": "inform", "severity": "high", "object-templates": objectTemplates},
		})
		if err != nil {
			panic(fmt.Sprintf("policy %s/%s: %v", namespace, name, err))
		}
		p.Spec.PolicyTemplates = append(p.Spec.PolicyTemplates, &policyv1.PolicyTemplate{ObjectDefinition: runtime.RawExtension{Raw: raw}})
	}
	return p
}

// ClusterVersionUpdated is the object definition of a platform upgrade policy: the
// ClusterVersion asks for version in spec.desiredUpdate and its history reports it
// Completed, so that the policy is compliant only once the update finished.
func ClusterVersionUpdated(version string) map[string]any {
	return map[string]any{
		"apiVersion": "config.openshift.io/v1",
		"kind":       "ClusterVersion",
		"metadata":   map[string]any{"name": "version"},
		"spec":       map[string]any{"desiredUpdate": map[string]any{"version": version}},
		"status":     map[string]any{"history": []any{map[string]any{"state": "Completed", "version": version}}},
	}
}

// UpgradePolicy returns a platform upgrade policy to version, its ConfigurationPolicy named
// "<name>-cv", in the shape ZTP policies have.
func UpgradePolicy(namespace, name, version string, action policyv1.RemediationAction) *policyv1.Policy {
	return NewPolicy(namespace, name, action, ConfigPolicy{Name: name + "-cv", Objects: []map[string]any{ClusterVersionUpdated(version)}})
}

// PlacePolicy binds a policy to the clusters matching selector, through a Placement and a
// PlacementBinding named after the policy. The namespace must be bound to the cluster set
// (BindClusterSet).
func (h *Hub) PlacePolicy(ctx context.Context, p *policyv1.Policy, selector metav1.LabelSelector) error {
	placement := &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
		Spec: clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{{
			RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: selector},
		}}},
	}
	if err := h.Client.Create(ctx, placement); err != nil {
		return fmt.Errorf("placement %s: %w", p.Name, err)
	}
	if err := h.Client.Create(ctx, p); err != nil {
		return fmt.Errorf("policy %s: %w", p.Name, err)
	}
	binding := &policyv1.PlacementBinding{
		ObjectMeta:   metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
		PlacementRef: policyv1.PlacementSubject{APIGroup: clusterv1beta1.GroupName, Kind: "Placement", Name: p.Name},
		Subjects:     []policyv1.Subject{{APIGroup: policyv1.GroupVersion.Group, Kind: policyv1.Kind, Name: p.Name}},
	}
	if err := h.Client.Create(ctx, binding); err != nil {
		return fmt.Errorf("placement binding %s: %w", p.Name, err)
	}
	return nil
}

// Compliance returns each cluster's compliance with a root policy, as its status shows it.
func (h *Hub) Compliance(ctx context.Context, namespace, name string) (map[string]policyv1.ComplianceState, error) {
	root := &policyv1.Policy{}
	if err := h.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, root); err != nil {
		return nil, err
	}
	out := make(map[string]policyv1.ComplianceState, len(root.Status.Status))
	for _, s := range root.Status.Status {
		out[s.ClusterName] = s.ComplianceState
	}
	return out, nil
}
