// Package hubapi owns what the operator knows of the hub's APIs: it checks at start that the
// required ones are served, so that a missing CRD stops the manager with one message naming
// them all instead of a stream of watch errors; it finds the optional ones the hub lacks,
// the features each turns off (Unserved), which spec fields ask for those features
// (Features), and whether the PlacementBinding API has binding overrides.
package hubapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	workv1 "open-cluster-management.io/api/work/v1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// API is one resource the operator uses, with what provides it on a hub.
type API struct {
	GroupVersion schema.GroupVersion
	Resource     string
	ProvidedBy   string
}

func (a API) String() string {
	return fmt.Sprintf("%s.%s/%s (%s)", a.Resource, a.GroupVersion.Group, a.GroupVersion.Version, a.ProvidedBy)
}

const (
	governance = "Open Cluster Management governance-policy-propagator"
	placement  = "Open Cluster Management cluster-manager"
	foundation = "Red Hat Advanced Cluster Management foundation"
	work       = "Open Cluster Management work"
	self       = "cgu-operator: apply config/crd"
)

var ranV1a1 = ranv1alpha1.GroupVersion

// Required are the APIs without which no rollout can run.
var Required = []API{
	{ranV1a1, "clustergroupupgrades", self},
	{ranV1a1, "clustergroupupgradebatches", self},
	{ranV1a1, "precachingconfigs", self},
	{lcmv1alpha1.GroupVersion, "imagebasedgroupupgrades", self},
	{policyv1.GroupVersion, "policies", governance},
	{policyv1.GroupVersion, "placementbindings", governance},
	{schema.GroupVersion(clusterv1.GroupVersion), "managedclusters", placement},
	{schema.GroupVersion(clusterv1beta1.GroupVersion), "placements", placement},
	{schema.GroupVersion(clusterv1beta1.GroupVersion), "placementdecisions", placement},
}

// The optional APIs, by what they let the operator do.
var (
	// Views read spoke objects: ClusterVersions for the upgrade checks, the reports of
	// the health check and precache Jobs, Subscriptions and InstallPlans.
	Views = API{viewv1beta1.GroupVersion, "managedclusterviews", foundation}
	// Actions create and delete spoke objects: the health check and precache Jobs, the
	// approval of InstallPlans.
	Actions = API{actionv1beta1.GroupVersion, "managedclusteractions", foundation}
	// Works and WorkTemplates roll spec.manifestWorkTemplates and the pre- and
	// post-upgrade actions out.
	Works         = API{schema.GroupVersion(workv1.GroupVersion), "manifestworks", work}
	WorkTemplates = API{schema.GroupVersion(workv1alpha1.GroupVersion), "manifestworkreplicasets", work}
	// SetBindings let the operator bind the global cluster set to a namespace where it
	// places policies, so that its Placements there can select clusters.
	SetBindings = API{schema.GroupVersion(clusterv1beta2.GroupVersion), "managedclustersetbindings", placement}
)

// Optional are the APIs only some features need; Features says which.
var Optional = []API{Views, Actions, Works, WorkTemplates, SetBindings}

// Missing returns the APIs of want that the server behind d does not serve.
func Missing(d discovery.DiscoveryInterface, want []API) ([]API, error) {
	served := map[schema.GroupVersion]map[string]bool{}
	var missing []API
	for _, api := range want {
		resources, known := served[api.GroupVersion]
		if !known {
			var err error
			resources, err = listResources(d, api.GroupVersion)
			if err != nil {
				return nil, err
			}
			served[api.GroupVersion] = resources
		}
		if !resources[api.Resource] {
			missing = append(missing, api)
		}
	}
	return missing, nil
}

func listResources(d discovery.DiscoveryInterface, gv schema.GroupVersion) (map[string]bool, error) {
	list, err := d.ServerResourcesForGroupVersion(gv.String())
	if apierrors.IsNotFound(err) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discovering %s: %w", gv, err)
	}
	names := make(map[string]bool, len(list.APIResources))
	for _, r := range list.APIResources {
		names[r.Name] = true
	}
	return names, nil
}

// ErrMissingAPIs is wrapped by the error CheckRequired returns when required APIs are
// missing.
var ErrMissingAPIs = errors.New("the hub does not serve APIs the operator needs")

// CheckRequired returns an error naming every required API the hub does not serve.
func CheckRequired(d discovery.DiscoveryInterface) error {
	missing, err := Missing(d, Required)
	if err != nil {
		return err
	}
	if len(missing) == 0 {
		return nil
	}
	names := make([]string, len(missing))
	for i, api := range missing {
		names[i] = api.String()
	}
	return fmt.Errorf("%w; install the missing CRDs and start again: %s", ErrMissingAPIs, strings.Join(names, ", "))
}

// placementBindingSchema is the OpenAPI v3 name of the PlacementBinding schema.
const placementBindingSchema = "io.open-cluster-management.policy.v1.PlacementBinding"

// BindingOverrides reports whether the hub's PlacementBinding API has binding overrides
// (bindingOverrides.remediationAction and subFilter, ACM 2.9 and later), read from the
// OpenAPI v3 schema the hub serves for policy.open-cluster-management.io/v1: those let a
// rollout enforce a policy itself on the clusters of a batch (Override) instead of an enforce
// copy of it (Copy).
func BindingOverrides(d discovery.DiscoveryInterface) (bool, error) {
	paths, err := d.OpenAPIV3().Paths()
	if err != nil {
		return false, fmt.Errorf("reading the hub's OpenAPI v3 paths: %w", err)
	}
	gv, ok := paths["apis/"+policyv1.GroupVersion.String()]
	if !ok {
		return false, nil
	}
	raw, err := gv.Schema("application/json")
	if err != nil {
		return false, fmt.Errorf("reading the OpenAPI v3 schema of %s: %w", policyv1.GroupVersion, err)
	}
	return hasBindingOverrides(raw)
}

// hasBindingOverrides reads an OpenAPI v3 document for a PlacementBinding schema with the
// bindingOverrides and subFilter properties.
func hasBindingOverrides(raw []byte) (bool, error) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return false, fmt.Errorf("decoding the OpenAPI v3 schema of %s: %w", policyv1.GroupVersion, err)
	}
	props := doc.Components.Schemas[placementBindingSchema].Properties
	_, overrides := props["bindingOverrides"]
	_, subFilter := props["subFilter"]
	return overrides && subFilter, nil
}
