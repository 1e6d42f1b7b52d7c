package world

import (
	configv1 "github.com/openshift/api/config/v1"
	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	workv1 "open-cluster-management.io/api/work/v1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	policyv1beta1 "open-cluster-management.io/governance-policy-propagator/api/v1beta1"
	placementrulev1 "open-cluster-management.io/multicloud-operators-subscription/pkg/apis/apps/placementrule/v1"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// NewScheme returns a scheme with every kind of the hub test world: Kubernetes, ours, the
// governance policies, clusters and placements, ManifestWorks, PlacementRules, views and
// actions, and OpenShift's config kinds (for objects inside policy templates).
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, ranv1alpha1.AddToScheme, lcmv1alpha1.AddToScheme,
		policyv1.AddToScheme, policyv1beta1.AddToScheme,
		clusterv1.Install, clusterv1beta1.Install, clusterv1beta2.Install,
		workv1.Install, workv1alpha1.Install, placementrulev1.AddToScheme,
		viewv1beta1.AddToScheme, actionv1beta1.AddToScheme, configv1.Install,
	} {
		utilruntime.Must(add(s))
	}
	return s
}
