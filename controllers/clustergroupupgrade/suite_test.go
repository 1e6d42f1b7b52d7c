package clustergroupupgrade_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cgu-operator/cgu-operator/pkg/operator"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/harness/suite"
	"github.com/cgu-operator/cgu-operator/tests/prom"
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
	fleet     *harness.Env
	hub       *world.Hub
	simulator *sim.Simulator
	clock     *clocktesting.FakeClock
	// alertmanager is the operator's Alertmanager (--alertmanager-url), on which rollouts
	// with spec.silenceAlerts silence their upgrading clusters' alerts.
	alertmanager *prom.Alertmanager
)

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	alertmanager, err = prom.StartAlertmanager(ctx, GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = alertmanager.Stop() })
	fleet = suite.StartWith(ctx, func(o *operator.Options) { o.AlertmanagerURL = alertmanager.URL() })
	hub, simulator, clock = fleet.Hub, fleet.Sim, fleet.Clock
})
