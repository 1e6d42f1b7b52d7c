package sim_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/policies"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

// desiredVersion returns a simulated cluster's spec.desiredUpdate version, "" when unset.
func desiredVersion(name string) func(Gomega) string {
	return func(g Gomega) string {
		v, err := simulator.DesiredVersion(name)
		g.Expect(err).NotTo(HaveOccurred())
		return v
	}
}

// The builders of pkg/policies, checked through the real propagator: each mode enforces a
// policy on exactly the clusters named, and leaves it inform everywhere else.
var _ = Describe("Enforcement modes", func() {
	const cguNS = "cgu-ns"

	It("Copy: an enforce copy bound to exact clusters upgrades only those, next to the inform original", func(ctx SpecContext) {
		joinFleet(ctx, "copy",
			sim.SpokeSpec{Name: "copy-1", Version: "4.16.10", Channel: "stable-4.16"},
			sim.SpokeSpec{Name: "copy-2", Version: "4.16.10", Channel: "stable-4.16"},
		)
		parent := upgradePolicy("copy-upgrade", policyv1.Inform)
		placePolicy(ctx, parent, "copy")
		Expect(hub.BindClusterSet(ctx, cguNS)).To(Succeed())

		owner := ownership.Owner{Namespace: cguNS, Name: "cgu-copy"}
		cp, err := policies.EnforceCopy(parent, owner)
		Expect(err).NotTo(HaveOccurred())
		Expect(hub.Client.Create(ctx, cp)).To(Succeed())
		Expect(hub.Client.Create(ctx, policies.ExactPlacement(cguNS, cp.Name, []string{"copy-1"}, owner.Labels()))).To(Succeed())
		Expect(hub.Client.Create(ctx, policies.Binding(cguNS, cp.Name, cp.Name, cp.Name, false, owner.Labels()))).To(Succeed())

		Eventually(rootCompliance(ctx, "copy-upgrade")).WithTimeout(30 * time.Second).Should(HaveKeyWithValue("copy-1", policyv1.Compliant))
		Expect(desiredVersion("copy-1")(Default)).To(Equal("4.16.12"))
		Consistently(desiredVersion("copy-2")).WithTimeout(2 * time.Second).Should(BeEmpty())

		root := &policyv1.Policy{}
		Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(cp), root)).To(Succeed())
		Expect(root.Status.Status).To(ConsistOf(HaveField("ClusterName", "copy-1")), "the copy reaches copy-1 only")
	})

	It("Override: a restricted binding override enforces the original policy on exact clusters only", func(ctx SpecContext) {
		joinFleet(ctx, "override",
			sim.SpokeSpec{Name: "override-1", Version: "4.16.10", Channel: "stable-4.16"},
			sim.SpokeSpec{Name: "override-2", Version: "4.16.10", Channel: "stable-4.16"},
		)
		parent := upgradePolicy("override-upgrade", policyv1.Inform)
		placePolicy(ctx, parent, "override")

		labels := ownership.Owner{Namespace: cguNS, Name: "cgu-override"}.Labels()
		name := "cgu-override-binding"
		Expect(hub.Client.Create(ctx, policies.ExactPlacement(policyNS, name, []string{"override-2"}, labels))).To(Succeed())
		Expect(hub.Client.Create(ctx, policies.Binding(policyNS, name, name, parent.Name, true, labels))).To(Succeed())

		Eventually(rootCompliance(ctx, "override-upgrade")).WithTimeout(30 * time.Second).Should(Equal(map[string]policyv1.ComplianceState{
			"override-1": policyv1.NonCompliant, "override-2": policyv1.Compliant,
		}))
		replicated := &policyv1.Policy{}
		Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: "override-2", Name: policyNS + ".override-upgrade"}, replicated)).To(Succeed())
		Expect(replicated.Spec.RemediationAction).To(BeEquivalentTo("enforce"))
		Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: "override-1", Name: policyNS + ".override-upgrade"}, replicated)).To(Succeed())
		Expect(replicated.Spec.RemediationAction).To(Equal(policyv1.Inform))
		Expect(desiredVersion("override-1")(Default)).To(BeEmpty())
	})

	It("an empty exact Placement selects no cluster", func(ctx SpecContext) {
		Expect(hub.BindClusterSet(ctx, cguNS)).To(Succeed())
		Expect(hub.Client.Create(ctx, policies.ExactPlacement(cguNS, "empty", nil, nil))).To(Succeed())
		Consistently(func(g Gomega) int {
			var list clusterv1beta1.PlacementDecisionList
			g.Expect(hub.Client.List(ctx, &list, client.InNamespace(cguNS), client.MatchingLabels{clusterv1beta1.PlacementLabel: "empty"})).To(Succeed())
			n := 0
			for _, d := range list.Items {
				n += len(d.Status.Decisions)
			}
			return n
		}).WithTimeout(3 * time.Second).Should(BeZero())
	})
})
