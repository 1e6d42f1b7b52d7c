package reliability_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/testenv"
)

// The reliability suite runs rollouts through faults on one hub world: the operator killed
// and restarted, the kube-apiserver restarted, another writer editing the rollout, two
// replicas electing a leader, a cluster deleted, a managed policy deleted and a spoke that
// stops answering. Each spec has its own fleet label, clusters and CGU namespace.

func TestReliability(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Reliability suite")
}

// settle bounds how long the hub takes to carry a change through the operator, the
// propagator and the simulated spokes; faults make it slower than in the controller suite.
const settle = 90 * time.Second

var fleet *harness.Env

var _ = BeforeSuite(func(ctx SpecContext) {
	log := zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true))
	ctrl.SetLogger(log)
	var err error
	fleet, err = harness.Start(ctx, log)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		Expect(fleet.Hub.Stop()).To(Succeed())
		procs, err := testenv.ControlPlaneProcesses()
		Expect(err).NotTo(HaveOccurred())
		Expect(procs).To(BeEmpty(), "no kube-apiserver or etcd outlives the suite")
	})
})
