package cli_test

import (
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/harness/suite"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

// The plugin suite runs the commands against the hub test world, as the controller suite
// does: a real kube-apiserver and etcd, the real policy propagator and placement
// controller, simulated spokes, and the operator built by operator.New on a fake clock.
// The commands read the same fake clock, so the times they print are stable.
func TestCLI(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "kubectl-cgu suite")
}

var (
	fleet     *harness.Env
	hub       *world.Hub
	simulator *sim.Simulator
	clock     *clocktesting.FakeClock
	// kubeconfig is the path of a kubeconfig reaching the hub as its admin.
	kubeconfig string
)

var _ = BeforeSuite(func(ctx SpecContext) {
	env := suite.Start(ctx)
	hub, simulator, clock = env.Hub, env.Sim, env.Clock
	fleet = env
	kubeconfig = filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(hub.WriteKubeconfig(kubeconfig)).To(Succeed())
})
