package sim

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// spokeKind is a kind a simulated spoke serves, with what discovery says of it.
type spokeKind struct {
	gvk        schema.GroupVersionKind
	resource   string
	namespaced bool
}

// spokeKinds are the kinds a simulated spoke serves: what policies, views and actions may
// name on an OpenShift spoke.
var spokeKinds = []spokeKind{
	{schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "namespaces", false},
	{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, "configmaps", true},
	{schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, "secrets", true},
	{schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"}, "serviceaccounts", true},
	{schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, "pods", true},
	{schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, "jobs", true},
	{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}, "roles", true},
	{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}, "rolebindings", true},
	{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, "clusterroles", false},
	{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"}, "clusterrolebindings", false},
	{schema.GroupVersionKind{Group: "config.openshift.io", Version: "v1", Kind: "ClusterVersion"}, "clusterversions", false},
	{schema.GroupVersionKind{Group: "config.openshift.io", Version: "v1", Kind: "ClusterOperator"}, "clusteroperators", false},
	{schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "Subscription"}, "subscriptions", true},
	{schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "InstallPlan"}, "installplans", true},
	{schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "ClusterServiceVersion"}, "clusterserviceversions", true},
	{schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "CatalogSource"}, "catalogsources", true},
	{schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1", Kind: "OperatorGroup"}, "operatorgroups", true},
	{schema.GroupVersionKind{Group: "upgrade.managed.openshift.io", Version: "v1alpha1", Kind: "UpgradeConfig"}, "upgradeconfigs", true},
	{ImageBasedUpgradeGVK, "imagebasedupgrades", false},
	{MachineConfigPoolGVK, "machineconfigpools", false},
	{MachineSetGVK, "machinesets", true},
}

func newMapper() *configpolicy.Mapper {
	m := configpolicy.NewMapper()
	for _, k := range spokeKinds {
		m.Add(k.gvk, k.resource, k.namespaced)
	}
	return m
}
