package sim_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

var _ = Describe("Simulated spokes", func() {
	It("report per-cluster compliance of an inform policy on the root policy", func(ctx SpecContext) {
		joinFleet(ctx, "inform",
			sim.SpokeSpec{Name: "inform-1", Version: "4.16.12", Channel: "stable-4.16"},
			sim.SpokeSpec{Name: "inform-2", Version: "4.16.10", Channel: "stable-4.16"},
			sim.SpokeSpec{Name: "inform-3", Version: "4.16.12", Channel: "stable-4.16"},
		)
		placePolicy(ctx, upgradePolicy("inform-upgrade", policyv1.Inform), "inform")

		// inform-1 and inform-3 run 4.16.12 but nothing set spec.desiredUpdate, so only a
		// cluster whose spec and history both match is compliant: none is, at first.
		Eventually(rootCompliance(ctx, "inform-upgrade")).WithTimeout(30 * time.Second).Should(Equal(
			map[string]policyv1.ComplianceState{"inform-1": policyv1.NonCompliant, "inform-2": policyv1.NonCompliant, "inform-3": policyv1.NonCompliant}))

		replicated := &policyv1.Policy{}
		Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: "inform-2", Name: policyNS + ".inform-upgrade"}, replicated)).To(Succeed())
		Expect(replicated.Status.Details).To(HaveLen(1))
		Expect(replicated.Status.Details[0].TemplateMeta.Name).To(Equal("inform-upgrade-cv"))
		Expect(replicated.Status.Details[0].History[0].Message).To(HavePrefix("NonCompliant; violation - "))
		Expect(replicated.Status.Details[0].History[0].EventName).To(HavePrefix(policyNS + ".inform-upgrade."))
		Consistently(func() []string {
			cv, err := simulator.ClusterVersion("inform-2")
			Expect(err).NotTo(HaveOccurred())
			return []string{cv.Status.Desired.Version, string(cv.Status.History[0].State)}
		}).WithTimeout(time.Second).Should(Equal([]string{"4.16.10", "Completed"}), "inform never changes the spoke")
	})

	It("upgrade a cluster when a ClusterVersion policy is enforced, Compliant only once history says Completed", func(ctx SpecContext) {
		joinFleet(ctx, "enforce", sim.SpokeSpec{Name: "enforce-1", Version: "4.16.10", Channel: "stable-4.16",
			Behaviour: sim.Behaviour{Duration: 3 * time.Second}})
		placePolicy(ctx, upgradePolicy("enforce-upgrade", policyv1.Enforce), "enforce")

		By("starting the update: desiredUpdate written, history Partial, policy still NonCompliant")
		Eventually(func(g Gomega) configv1.UpdateState {
			cv, err := simulator.ClusterVersion("enforce-1")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cv.Spec.DesiredUpdate).NotTo(BeNil())
			g.Expect(cv.Spec.DesiredUpdate.Version).To(Equal("4.16.12"))
			return cv.Status.History[0].State
		}).WithTimeout(30 * time.Second).Should(Equal(configv1.PartialUpdate))
		Expect(rootCompliance(ctx, "enforce-upgrade")(Default)).NotTo(HaveKeyWithValue("enforce-1", policyv1.Compliant))

		By("completing it: history Completed for 4.16.12, then Compliant")
		Eventually(rootCompliance(ctx, "enforce-upgrade")).WithTimeout(30 * time.Second).
			Should(HaveKeyWithValue("enforce-1", policyv1.Compliant))
		cv, err := simulator.ClusterVersion("enforce-1")
		Expect(err).NotTo(HaveOccurred())
		Expect(cv.Status.History[0].State).To(Equal(configv1.CompletedUpdate))
		Expect(cv.Status.History[0].Version).To(Equal("4.16.12"))
		Expect(cv.Status.History[0].CompletionTime.Sub(cv.Status.History[0].StartedTime.Time)).To(BeNumerically(">=", 3*time.Second))
	})
})

var _ = Describe("The fleet", func() {
	It("drops a detached cluster from the root policy and marks an unreachable one", func(ctx SpecContext) {
		joinFleet(ctx, "churn",
			sim.SpokeSpec{Name: "churn-1", Version: "4.16.10", Channel: "stable-4.16"},
			sim.SpokeSpec{Name: "churn-2", Version: "4.16.10", Channel: "stable-4.16"},
		)
		placePolicy(ctx, upgradePolicy("churn-upgrade", policyv1.Inform), "churn")
		Eventually(rootCompliance(ctx, "churn-upgrade")).WithTimeout(30 * time.Second).Should(HaveLen(2))

		By("detaching churn-1")
		simulator.RemoveSpoke("churn-1")
		Expect(hub.RemoveCluster(ctx, "churn-1")).To(Succeed())
		Eventually(rootCompliance(ctx, "churn-upgrade")).WithTimeout(30 * time.Second).
			Should(Equal(map[string]policyv1.ComplianceState{"churn-2": policyv1.NonCompliant}))

		By("making churn-2 unreachable")
		Expect(simulator.SetReachable(ctx, "churn-2", false)).To(Succeed())
		mc := &clusterv1.ManagedCluster{}
		Expect(hub.Client.Get(ctx, client.ObjectKey{Name: "churn-2"}, mc)).To(Succeed())
		Expect(meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)).
			To(HaveField("Status", metav1.ConditionUnknown))
		Expect(mc.Spec.Taints).To(ContainElement(HaveField("Key", world.TaintUnreachable)))
	})
})

var _ = Describe("Template names", func() {
	It("are unique per cluster: a later policy reusing one gets template-sync's error, as on a real spoke", func(ctx SpecContext) {
		joinFleet(ctx, "dup", sim.SpokeSpec{Name: "dup-1", Version: "4.16.10", Channel: "stable-4.16"})
		first := world.NewPolicy(policyNS, "dup-first", policyv1.Inform,
			world.ConfigPolicy{Name: "dup-cv", Objects: []map[string]any{world.ClusterVersionUpdated("4.16.12")}})
		placePolicy(ctx, first, "dup")
		Eventually(rootCompliance(ctx, "dup-first")).WithTimeout(30 * time.Second).Should(HaveKey("dup-1"))
		second := world.NewPolicy(policyNS, "dup-second", policyv1.Enforce,
			world.ConfigPolicy{Name: "dup-cv", Objects: []map[string]any{world.ClusterVersionUpdated("4.16.12")}})
		placePolicy(ctx, second, "dup")

		Eventually(func(g Gomega) string {
			p := &policyv1.Policy{}
			g.Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: "dup-1", Name: policyNS + ".dup-second"}, p)).To(Succeed())
			g.Expect(p.Status.Details).NotTo(BeEmpty())
			g.Expect(p.Status.Details[0].History).NotTo(BeEmpty())
			return p.Status.Details[0].History[0].Message
		}).WithTimeout(30 * time.Second).Should(Equal("NonCompliant; template-error; Template name must be unique. " +
			"Policy template with kind: ConfigurationPolicy name: dup-cv already exists in policy policies.dup-first"))
		cv, err := simulator.ClusterVersion("dup-1")
		Expect(err).NotTo(HaveOccurred())
		Expect(cv.Spec.DesiredUpdate).To(BeNil(), "the refused enforce template changes nothing")
	})
})
