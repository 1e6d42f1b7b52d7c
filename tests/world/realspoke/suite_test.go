package realspoke_test

import (
	"context"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/cgu-operator/cgu-operator/tests/harness/suite"
	"github.com/cgu-operator/cgu-operator/tests/testenv"
	"github.com/cgu-operator/cgu-operator/tests/world/realspoke"
)

// The real-spoke suite runs a hub apiserver with only the Policy CRD (the tests write the
// replicated policies the propagator would) and real spokes connected to it.

func TestRealSpoke(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Real spoke suite")
}

var (
	hubEnv   *envtest.Environment
	hubCfg   *rest.Config
	hub      client.Client
	hubProcs []testenv.Process
)

var _ = BeforeSuite(func() {
	suite.Logging()

	dir, err := testenv.ModuleDir("open-cluster-management.io/governance-policy-propagator")
	Expect(err).NotTo(HaveOccurred())
	hubEnv, hubCfg, err = testenv.Start(filepath.Join(dir, "deploy/crds/policy.open-cluster-management.io_policies.yaml"))
	Expect(err).NotTo(HaveOccurred())
	scheme, err := realspoke.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	hub, err = client.New(hubCfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	hubProcs = controlPlaneProcs()
	Expect(hubProcs).To(HaveLen(2), "the hub's kube-apiserver and etcd")
})

var _ = AfterSuite(func() {
	if hubEnv != nil {
		Expect(hubEnv.Stop()).To(Succeed())
	}
	Expect(controlPlaneProcs()).To(BeEmpty(), "no kube-apiserver or etcd is left running")
})

// createClusterNamespace creates the cluster namespace of a managed cluster on the hub.
func createClusterNamespace(ctx context.Context, name string) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	Expect(hub.Create(ctx, ns)).To(Succeed())
}
