package talm

import (
	"encoding/json"
	"slices"

	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/policyobjects"
)

// Objects are the names TALM's status lists for the objects a rollout makes: its Placements
// and PlacementBindings (each pair shares a name), its enforce copies (Copy mode only), and
// safeResourceNames, which maps the name TALM would give an object ("<namespace>/<cgu>-<policy>
// -placement", "<namespace>/<cgu>-<policy>" for a copy, "/<namespace>.<template>" for a
// ManifestWork) to the name it has.
type Objects struct {
	Placements        []string
	PlacementBindings []string
	CopiedPolicies    []string
	SafeResourceNames map[string]string
}

// ObjectsOf names the objects a rollout of owner's ClusterGroupUpgrade makes for the managed
// policies for upgrade in mode, and for its ManifestWork templates.
func ObjectsOf(owner ownership.Owner, mode ranv1alpha1.EnforcementMode, policies []ranv1alpha1.PolicyReference, templates []string) Objects {
	var out Objects
	safe := map[string]string{}
	namespace, name := owner.Namespace, owner.Name
	for _, p := range policies {
		placement := owner.Placement(p.Name)
		where := namespace
		if mode == ranv1alpha1.EnforcementOverride {
			where = p.Namespace
		} else {
			cp := names.PolicyCopy(namespace, name, p.Name)
			out.CopiedPolicies = append(out.CopiedPolicies, cp)
			safe[namespace+"/"+name+"-"+p.Name] = cp
		}
		out.Placements = append(out.Placements, placement)
		safe[where+"/"+name+"-"+p.Name+"-placement"] = placement
	}
	for _, t := range templates {
		safe["/"+namespace+"."+t] = manifestwork.Name(owner, manifestwork.RoleStep, t)
	}
	slices.Sort(out.Placements)
	out.Placements = slices.Compact(out.Placements)
	out.PlacementBindings = slices.Clone(out.Placements)
	slices.Sort(out.CopiedPolicies)
	if len(safe) > 0 {
		out.SafeResourceNames = safe
	}
	return out
}

// subscriptionRef is how TALM's managedPoliciesContent names a Subscription, in its field
// order.
type subscriptionRef struct {
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	APIVersion string `json:"apiVersion"`
	Namespace  string `json:"namespace"`
}

// Content is TALM's managedPoliciesContent: for each policy that asks for OLM Subscriptions,
// a JSON list of them (kind, name, apiVersion, namespace), as the InstallPlan approval reads
// them. Policies that cannot be read, or ask for no Subscription, have no entry.
func Content(policies []*policyv1.Policy) map[string]string {
	out := map[string]string{}
	for _, p := range policies {
		var subs []subscriptionRef
		err := policyobjects.Read(p, policyobjects.Visitor{Object: func(def map[string]any) error {
			meta, _ := def["metadata"].(map[string]any)
			ref := subscriptionRef{Kind: str(def, "kind"), APIVersion: str(def, "apiVersion"), Name: str(meta, "name"), Namespace: str(meta, "namespace")}
			if ref.Kind == "Subscription" && ref.Name != "" && ref.Namespace != "" {
				subs = append(subs, ref)
			}
			return nil
		}})
		if err != nil || len(subs) == 0 {
			continue
		}
		raw, err := json.Marshal(subs)
		if err != nil {
			continue
		}
		out[p.Name] = string(raw)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// AsksForStatus reports whether one of the policy's object definitions states a status: TALM
// never counts such a policy compliant before the upgrade, since a status is only reached by
// enforcing it.
func AsksForStatus(p *policyv1.Policy) bool {
	found := false
	_ = policyobjects.Read(p, policyobjects.Visitor{Object: func(def map[string]any) error {
		if _, ok := def["status"]; ok {
			found = true
		}
		return nil
	}})
	return found
}

// Namespaces is TALM's managedPoliciesNs: each managed policy for upgrade's name to its
// namespace.
func Namespaces(policies []ranv1alpha1.PolicyReference) map[string]string {
	if len(policies) == 0 {
		return nil
	}
	out := make(map[string]string, len(policies))
	for _, p := range policies {
		out[p.Name] = p.Namespace
	}
	return out
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}
