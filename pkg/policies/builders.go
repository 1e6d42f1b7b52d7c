// Package policies builds and writes the governance objects a rollout enforces policies
// with: enforce copies of managed policies (Copy mode), and the Placements and
// PlacementBindings that bind a policy or its copy to exactly the clusters working on it
// (both modes; Override mode binds the original policy with ACM's binding override).
package policies

import (
	"encoding/json"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
)

// Labels linking an enforce copy to the policy it copies (besides the owner's labels,
// ownership.Owner.Labels).
const (
	LabelParentPolicy    = "ran.openshift.io/parent-policy-name"
	LabelParentNamespace = "ran.openshift.io/parent-policy-namespace"
)

// clusterNameLabel is the label ACM's cluster-labels controller sets to each ManagedCluster's
// name; Placements select exact clusters with it.
const clusterNameLabel = "name"

// EnforceCopy returns the enforce copy of a managed policy for owner, in owner's namespace:
// the parent's spec with remediationAction enforce, at the policy and in every template,
// and every template renamed (template names must be unique in a cluster namespace, and the
// parent keeps its own there).
func EnforceCopy(parent *policyv1.Policy, owner ownership.Owner) (*policyv1.Policy, error) {
	labels := owner.ObjectLabels()
	labels[LabelParentPolicy], labels[LabelParentNamespace] = parent.Name, parent.Namespace
	cp := &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{
			Name: names.PolicyCopy(owner.Namespace, owner.Name, parent.Name), Namespace: owner.Namespace, Labels: labels,
		},
		Spec: *parent.Spec.DeepCopy(),
	}
	cp.Spec.RemediationAction = policyv1.Enforce
	cp.Spec.Disabled = false
	// A dependency without a namespace means the policy's own namespace: the copy lives in
	// another one, so it names the parent's explicitly.
	pinNamespaces(cp.Spec.Dependencies, parent.Namespace)
	for i, t := range cp.Spec.PolicyTemplates {
		pinNamespaces(t.ExtraDependencies, parent.Namespace)
		raw, err := enforceTemplate(t.ObjectDefinition.Raw, owner.Name)
		if err != nil {
			return nil, fmt.Errorf("policy %s/%s, policy-templates[%d]: %w", parent.Namespace, parent.Name, i, err)
		}
		cp.Spec.PolicyTemplates[i].ObjectDefinition.Raw = raw
	}
	return cp, nil
}

func pinNamespaces(deps []policyv1.PolicyDependency, namespace string) {
	for i := range deps {
		if deps[i].Namespace == "" && deps[i].Kind == policyv1.Kind {
			deps[i].Namespace = namespace
		}
	}
}

// enforceTemplate renames a policy template and sets its remediationAction to enforce.
func enforceTemplate(raw []byte, cguName string) ([]byte, error) {
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("decoding the template: %w", err)
	}
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	if name == "" {
		return nil, fmt.Errorf("the template has no metadata.name")
	}
	meta["name"] = names.Template(cguName, name)
	if spec, ok := obj["spec"].(map[string]any); ok {
		if _, has := spec["remediationAction"]; has {
			spec["remediationAction"] = "enforce"
		}
	}
	return json.Marshal(obj)
}

// tolerated are the taints the hub puts on clusters that stop reporting or are not
// available: a cluster rebooting in the middle of its upgrade must keep its enforced policy,
// so the Placements tolerate both.
var tolerated = []string{clusterv1.ManagedClusterTaintUnreachable, clusterv1.ManagedClusterTaintUnavailable}

// ExactPlacement returns a Placement selecting exactly the given clusters among those of
// the cluster sets bound in its namespace, reachable or not; no cluster selects none.
func ExactPlacement(namespace, name string, clusters []string, labels map[string]string) *clusterv1beta1.Placement {
	p := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels}}
	for _, key := range tolerated {
		p.Spec.Tolerations = append(p.Spec.Tolerations, clusterv1beta1.Toleration{Key: key, Operator: clusterv1beta1.TolerationOpExists})
	}
	if len(clusters) == 0 {
		p.Spec.NumberOfClusters = ptr.To[int32](0)
		return p
	}
	sorted := slices.Sorted(slices.Values(clusters))
	p.Spec.Predicates = []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
		LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: clusterNameLabel, Operator: metav1.LabelSelectorOpIn, Values: sorted,
		}}},
	}}}
	return p
}

// Binding returns the PlacementBinding of a policy to a Placement of the same namespace.
// With override it binds as ACM 2.9's binding override does: it only turns the policy to
// enforce on the Placement's clusters (subFilter restricted), it places nothing.
func Binding(namespace, name, placement, policy string, override bool, labels map[string]string) *policyv1.PlacementBinding {
	b := &policyv1.PlacementBinding{
		ObjectMeta:   metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		PlacementRef: policyv1.PlacementSubject{APIGroup: clusterv1beta1.GroupName, Kind: "Placement", Name: placement},
		Subjects:     []policyv1.Subject{{APIGroup: policyv1.GroupVersion.Group, Kind: policyv1.Kind, Name: policy}},
	}
	if override {
		b.BindingOverrides = policyv1.BindingOverrides{RemediationAction: "enforce"}
		b.SubFilter = policyv1.Restricted
	}
	return b
}
