package reliability_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/harness/suite"
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
	// Cleanups run last registered first: this check runs after suite.Start's stops the hub.
	DeferCleanup(func() {
		procs, err := testenv.ControlPlaneProcesses()
		Expect(err).NotTo(HaveOccurred())
		Expect(procs).To(BeEmpty(), "no kube-apiserver or etcd outlives the suite")
	})
	fleet = suite.Start(ctx)
})
