package world_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cgu-operator/cgu-operator/tests/testenv"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

func TestWorld(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Hub test world suite")
}

var hub *world.Hub

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	hub, err = world.StartHub(ctx, world.Options{Logger: zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true))})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		Expect(hub.Stop()).To(Succeed())
		procs, err := testenv.ControlPlaneProcesses()
		Expect(err).NotTo(HaveOccurred())
		Expect(procs).To(BeEmpty(), "no kube-apiserver or etcd outlives the hub")
	})
})
