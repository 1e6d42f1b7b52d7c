package sim_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/world"
	"github.com/cgu-operator/cgu-operator/tests/world/graphserver"
)

var _ = Describe("Simulated spokes with an update service", func() {
	It("derive availableUpdates and conditionalUpdates from the graph, with risks decided per cluster", func(ctx SpecContext) {
		graph, err := graphserver.NewGraph("stable-4.16").
			Versions("4.16.10", "4.16.11", "4.16.12").
			Edge("4.16.10", "4.16.11").
			Conditional("4.16.10", "4.16.12", graphserver.PromQLRisk("SRIOVFirmware", `group(sriov_firmware{version="1.2"})`)).
			Build()
		Expect(err).NotTo(HaveOccurred())
		server, err := graphserver.New(map[string]*updategraph.Graph{"stable-4.16": graph})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(server.Close)

		exposed := func(cluster string, _ configv1.ConditionalUpdateRisk) (bool, error) {
			return cluster == "graph-exposed", nil
		}
		withGraph, err := sim.Start(ctx, hub, sim.Options{Updates: sim.GraphUpdates(server.URL(), exposed)})
		Expect(err).NotTo(HaveOccurred())
		Expect(hub.AddClusters(ctx, world.Cluster{Name: "graph-exposed"}, world.Cluster{Name: "graph-safe"})).To(Succeed())
		Expect(withGraph.AddSpokes(
			sim.SpokeSpec{Name: "graph-exposed", Version: "4.16.10", Channel: "stable-4.16"},
			sim.SpokeSpec{Name: "graph-safe", Version: "4.16.10", Channel: "stable-4.16"},
		)).To(Succeed())

		recommended := func(name string) func(Gomega) metav1.ConditionStatus {
			return func(g Gomega) metav1.ConditionStatus {
				cv, err := withGraph.ClusterVersion(name)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(cv.Status.ConditionalUpdates).To(HaveLen(1))
				cu := cv.Status.ConditionalUpdates[0]
				g.Expect(cu.Release.Version).To(Equal("4.16.12"))
				g.Expect(cu.Risks).To(ConsistOf(HaveField("Name", "SRIOVFirmware")))
				c := meta.FindStatusCondition(cu.Conditions, "Recommended")
				g.Expect(c).NotTo(BeNil())
				return c.Status
			}
		}
		Eventually(recommended("graph-exposed")).WithTimeout(20 * time.Second).Should(Equal(metav1.ConditionFalse))
		Eventually(recommended("graph-safe")).WithTimeout(20 * time.Second).Should(Equal(metav1.ConditionTrue))

		cv, err := withGraph.ClusterVersion("graph-exposed")
		Expect(err).NotTo(HaveOccurred())
		Expect(cv.Status.AvailableUpdates).To(ConsistOf(HaveField("Version", "4.16.11")))
		safe, err := withGraph.ClusterVersion("graph-safe")
		Expect(err).NotTo(HaveOccurred())
		Expect(safe.Status.AvailableUpdates).To(ConsistOf(HaveField("Version", "4.16.11"), HaveField("Version", "4.16.12")),
			"a conditional update whose risks do not apply is also available, as the cluster-version operator lists it")
	})
})
