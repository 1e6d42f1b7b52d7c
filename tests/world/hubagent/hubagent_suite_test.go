package hubagent_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cgu-operator/cgu-operator/tests/testenv"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

func TestHubAgent(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Work agent between hubs suite")
}

var (
	// global is the global hub; its clusters are regional hubs.
	global *world.Hub
	// regional reaches the regional hub: a kube-apiserver with our CRDs.
	regional       *rest.Config
	regionalClient client.Client
)

var _ = BeforeSuite(func(ctx SpecContext) {
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	SetDefaultConsistentlyPollingInterval(50 * time.Millisecond)
	DeferCleanup(func() {
		procs, err := testenv.ControlPlaneProcesses()
		Expect(err).NotTo(HaveOccurred())
		Expect(procs).To(BeEmpty(), "no kube-apiserver or etcd outlives the suite")
	})
	var err error
	global, err = world.StartHub(ctx, world.Options{
		Logger:                     zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)),
		WithoutPlacementController: true,
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(global.Stop()).To(Succeed()) })

	crds, err := testenv.OperatorCRDs()
	Expect(err).NotTo(HaveOccurred())
	env, cfg, err := testenv.Start(crds)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(env.Stop()).To(Succeed()) })
	regional = cfg
	regionalClient, err = client.New(regional, client.Options{Scheme: world.NewScheme()})
	Expect(err).NotTo(HaveOccurred())
})
