package sim_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

func TestSimulator(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Spoke simulator suite")
}

var (
	hub       *world.Hub
	simulator *sim.Simulator
)

var _ = BeforeSuite(func(ctx SpecContext) {
	log := zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true))
	var err error
	hub, err = world.StartHub(ctx, world.Options{Logger: log})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(hub.Stop()).To(Succeed()) })
	simulator, err = sim.Start(ctx, hub, sim.Options{Logger: log})
	Expect(err).NotTo(HaveOccurred())
	Expect(hub.BindClusterSet(ctx, "policies")).To(Succeed())
})
