package realspoke

import (
	"fmt"
	"path/filepath"
	"sync"

	gktemplatesv1 "github.com/open-policy-agent/frameworks/constraint/pkg/apis/templates/v1"
	gktemplatesv1beta1 "github.com/open-policy-agent/frameworks/constraint/pkg/apis/templates/v1beta1"
	configv1 "github.com/openshift/api/config/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	configpolicyv1 "open-cluster-management.io/config-policy-controller/api/v1"
	configpolicyv1beta1 "open-cluster-management.io/config-policy-controller/api/v1beta1"
	policiesv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	"github.com/cgu-operator/cgu-operator/tests/testenv"
)

// NewScheme returns a scheme with the kinds a spoke and its controllers use: the built-in
// kinds, CustomResourceDefinition, Policy, ConfigurationPolicy, OperatorPolicy, ClusterVersion
// and Gatekeeper's ConstraintTemplate (which template-sync looks for, not served here).
func NewScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		apiextensionsv1.AddToScheme,
		policiesv1.AddToScheme,
		configpolicyv1.AddToScheme,
		configpolicyv1beta1.AddToScheme,
		configv1.Install,
		gktemplatesv1.AddToScheme,
		gktemplatesv1beta1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("building the spoke scheme: %w", err)
		}
	}
	return scheme, nil
}

// spokeCRDSources are the CRD files a spoke serves, by module.
var spokeCRDSources = []struct {
	module string
	files  []string
}{
	{"open-cluster-management.io/governance-policy-propagator", []string{
		"deploy/crds/policy.open-cluster-management.io_policies.yaml",
	}},
	{"open-cluster-management.io/config-policy-controller", []string{
		"deploy/crds/policy.open-cluster-management.io_configurationpolicies.yaml",
		"deploy/crds/policy.open-cluster-management.io_operatorpolicies.yaml",
	}},
	{"github.com/openshift/api", []string{
		"config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusterversions-Default.crd.yaml",
	}},
	{"open-cluster-management.io/api", []string{
		"work/v1/0000_01_work.open-cluster-management.io_appliedmanifestworks.crd.yaml",
	}},
}

// lcaCRD is the lifecycle agent's ImageBasedUpgrade CRD, from the repository (crds/).
const lcaCRD = "tests/world/realspoke/crds/imagebasedupgrades.yaml"

// CRDs returns the files, in the Go module cache, of the CRDs a spoke serves: Policy,
// ConfigurationPolicy, OperatorPolicy and ClusterVersion.
func CRDs() ([]string, error) {
	paths, err := findCRDs()
	return append([]string(nil), paths...), err
}

// findCRDs runs `go list -m` once per process, not once per spoke.
var findCRDs = sync.OnceValues(func() ([]string, error) {
	var paths []string
	for _, src := range spokeCRDSources {
		dir, err := testenv.ModuleDir(src.module)
		if err != nil {
			return nil, fmt.Errorf("finding the spoke CRDs: %w", err)
		}
		for _, f := range src.files {
			paths = append(paths, filepath.Join(dir, f))
		}
	}
	root, err := testenv.Root()
	if err != nil {
		return nil, fmt.Errorf("finding the spoke CRDs: %w", err)
	}
	return append(paths, filepath.Join(root, lcaCRD)), nil
})
