package controllers_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cgu-operator/cgu-operator/pkg/operator"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

// The controller suite runs the operator, built by the production operator.New, against the
// hub test world: a real kube-apiserver and etcd, the real policy propagator and placement
// controller, and simulated spokes. The operator's clock is a fake one the specs move to
// reach deadlines; the spokes run on real time.
func TestControllers(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "ClusterGroupUpgrade controller suite")
}

var (
	hub       *world.Hub
	simulator *sim.Simulator
	clock     *clocktesting.FakeClock
)

var _ = BeforeSuite(func(ctx SpecContext) {
	log := zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true))
	ctrl.SetLogger(log)
	var err error
	hub, err = world.StartHub(ctx, world.Options{Logger: log})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(hub.Stop()).To(Succeed()) })
	simulator, err = sim.Start(ctx, hub, sim.Options{Logger: log})
	Expect(err).NotTo(HaveOccurred())
	Expect(hub.BindClusterSet(ctx, policyNS)).To(Succeed())

	clock = clocktesting.NewFakeClock(time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC))
	opts := operator.DefaultOptions()
	opts.LeaderElect, opts.MetricsAddr, opts.ProbeAddr, opts.Clock = false, "0", "0", clock
	opts.QPS, opts.Burst = 500, 1000
	mgr, err := operator.New(hub.Config, opts)
	Expect(err).NotTo(HaveOccurred())
	hub.Go(func(ctx context.Context) {
		defer GinkgoRecover()
		Expect(mgr.Start(ctx)).To(Succeed())
	})
})
