// Package testenv starts a real kube-apiserver and etcd (envtest) for the Ginkgo suites, with
// the binaries `make envtest-assets` builds and the CRDs taken from this repository and from
// the Go module cache.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

const module = "github.com/cgu-operator/cgu-operator"

// Root returns the repository root: the nearest directory above the working directory whose
// go.mod declares this module.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module "+module+"\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod of " + module + " above the working directory")
		}
		dir = parent
	}
}

// AssetsDir returns the directory holding kube-apiserver and etcd: $KUBEBUILDER_ASSETS, or
// bin/k8s under the repository root.
func AssetsDir() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		root, err := Root()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "bin", "k8s")
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		//nolint:gosec // the directory is the test environment's own KUBEBUILDER_ASSETS
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			return "", fmt.Errorf("%s not found in %s: run `make envtest-assets` (or `make test`)", bin, dir)
		}
	}
	return dir, nil
}

// ModuleDir returns where the Go module cache holds the version of mod this repository
// requires.
func ModuleDir(mod string) (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", mod)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return "", fmt.Errorf("go list -m %s: %s", mod, exitErr.Stderr)
		}
		return "", fmt.Errorf("go list -m %s: %w", mod, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("module %s is not in the module cache: run `go mod download`", mod)
	}
	return dir, nil
}

// OperatorCRDs returns the directory of this repository's generated CRDs.
func OperatorCRDs() (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "config", "crd", "bases"), nil
}

// crdSource is a set of CRD files inside one module.
type crdSource struct {
	module string
	files  []string
}

var hubCRDSources = []crdSource{
	{"open-cluster-management.io/governance-policy-propagator", []string{
		"deploy/crds/policy.open-cluster-management.io_policies.yaml",
		"deploy/crds/policy.open-cluster-management.io_placementbindings.yaml",
		"deploy/crds/policy.open-cluster-management.io_policysets.yaml",
		"deploy/crds/policy.open-cluster-management.io_policyautomations.yaml",
	}},
	{"open-cluster-management.io/config-policy-controller", []string{
		"deploy/crds/policy.open-cluster-management.io_configurationpolicies.yaml",
		"deploy/crds/policy.open-cluster-management.io_operatorpolicies.yaml",
	}},
	{"open-cluster-management.io/api", []string{
		"cluster/v1/0000_00_clusters.open-cluster-management.io_managedclusters.crd.yaml",
		"cluster/v1alpha1/0000_05_clusters.open-cluster-management.io_addonplacementscores.crd.yaml",
		"cluster/v1beta1/0000_02_clusters.open-cluster-management.io_placements.crd.yaml",
		"cluster/v1beta1/0000_03_clusters.open-cluster-management.io_placementdecisions.crd.yaml",
		"cluster/v1beta2/0000_00_clusters.open-cluster-management.io_managedclustersets.crd.yaml",
		"cluster/v1beta2/0000_01_clusters.open-cluster-management.io_managedclustersetbindings.crd.yaml",
		"work/v1/0000_00_work.open-cluster-management.io_manifestworks.crd.yaml",
		"work/v1alpha1/0000_00_work.open-cluster-management.io_manifestworkreplicasets.crd.yaml",
	}},
	{"open-cluster-management.io/multicloud-operators-subscription", []string{
		"deploy/hub-common/apps.open-cluster-management.io_placementrules_crd.yaml",
	}},
	{"github.com/stolostron/cluster-lifecycle-api", []string{
		"view/v1beta1/view.open-cluster-management.io_managedclusterviews.crd.yaml",
		"action/v1beta1/action.open-cluster-management.io_managedclusteractions.crd.yaml",
	}},
}

// HubCRDs returns the files of the CRDs an Open Cluster Management hub with the governance
// framework serves: policies, placements, managed clusters and cluster sets, ManifestWorks,
// PlacementRules, ManagedClusterViews and ManagedClusterActions.
func HubCRDs() ([]string, error) {
	var paths []string
	for _, src := range hubCRDSources {
		dir, err := ModuleDir(src.module)
		if err != nil {
			return nil, err
		}
		for _, f := range src.files {
			paths = append(paths, filepath.Join(dir, f))
		}
	}
	return paths, nil
}

// Start starts a kube-apiserver and etcd with the CRDs found at crdPaths (files or
// directories) installed, and returns the environment to Stop and a config to reach it.
func Start(crdPaths ...string) (*envtest.Environment, *rest.Config, error) {
	assets, err := AssetsDir()
	if err != nil {
		return nil, nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:   assets,
		CRDDirectoryPaths:       crdPaths,
		ErrorIfCRDPathMissing:   true,
		ControlPlaneStopTimeout: 60 * time.Second,
	}
	// Their logs are kept, for a spec that fails to show (ControlPlaneLog).
	api, etcd := NewTail(apiServerLogKept), NewTail(etcdLogKept)
	env.ControlPlane.APIServer = &envtest.APIServer{Out: api, Err: api}
	env.ControlPlane.Etcd = &envtest.Etcd{Out: etcd, Err: etcd}
	cfg, err := env.Start()
	if err != nil {
		// A start that failed half-way (say, on a CRD) leaves processes running.
		return nil, nil, errors.Join(fmt.Errorf("starting envtest: %w", err), env.Stop())
	}
	return env, cfg, nil
}

// Stop stops env's kube-apiserver and etcd. A process that did not stop within
// ControlPlaneStopTimeout of its SIGTERM was killed (envtest sends SIGKILL then): nothing is
// left running, so that is said on stderr rather than returned. On a loaded machine a
// kube-apiserver's graceful stop can outlast the timeout, and the spec that used it did not
// fail. Any other error is returned.
func Stop(env *envtest.Environment) error {
	return unlessKilled(env.Stop(), func(e error) { fmt.Fprintf(os.Stderr, "testenv: %v; it was killed\n", e) })
}

// unlessKilled is err without its stop timeouts (each told to said), nil when nothing else
// is left.
func unlessKilled(err error, said func(error)) error {
	if err == nil {
		return nil
	}
	var agg interface{ Errors() []error }
	errs := []error{err}
	if errors.As(err, &agg) {
		errs = agg.Errors()
	}
	var kept []error
	for _, e := range errs {
		if strings.HasPrefix(e.Error(), "timeout waiting for process ") && strings.HasSuffix(e.Error(), " to stop") {
			said(e)
			continue
		}
		kept = append(kept, e)
	}
	return errors.Join(kept...)
}

// WriteKubeconfig writes a kubeconfig reaching c's apiserver with c's credentials, with one
// context named name.
func WriteKubeconfig(c *rest.Config, name, path string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: c.CAData,
		CertificateAuthority: c.CAFile, InsecureSkipTLSVerify: c.Insecure}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: c.CertData, ClientKeyData: c.KeyData, ClientCertificate: c.CertFile, ClientKey: c.KeyFile,
		Token: c.BearerToken, TokenFile: c.BearerTokenFile,
	}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: "admin", Namespace: "default"}
	cfg.CurrentContext = name
	return clientcmd.WriteToFile(*cfg, path)
}
