package clustergroupupgrade_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

var _ = Describe("The enforcement mode", func() {
	DescribeTable("stays the one the rollout started with when spec.enforcement is edited mid-rollout",
		func(ctx SpecContext, label string, started, other ranv1alpha1.EnforcementMode) {
			By("a rollout in " + string(started) + " mode, its first cluster stalled")
			clusters, p, cgu := stalledRollout(ctx, label, started, 1)
			// The enforcement is written before the status of the same pass.
			Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Status.Enforcement", started))

			By("an edit to " + string(other) + " is refused, naming the field")
			edited := fleet.Stored(ctx, cgu)(Default)
			edited.Spec.Enforcement = other
			Expect(hub.Client.Update(ctx, edited)).To(MatchError(ContainSubstring("spec.enforcement cannot change once the rollout started")))

			By("removing spec.enforcement is accepted, and the rollout keeps its mode")
			fleet.MustUpdate(ctx, cgu, func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.Enforcement = "" })
			through, elsewhere := originalRoot(p.Name), copyRoot(cgu, p.Name)
			if started == ranv1alpha1.EnforcementCopy {
				through, elsewhere = elsewhere, through
			}
			Consistently(func(g Gomega) {
				g.Expect(fleet.Stored(ctx, cgu)(g).Status.Enforcement).To(Equal(started))
				g.Expect(enforcedThrough(ctx, through)(g)).To(Equal([]string{clusters[0]}))
				g.Expect(enforcedThrough(ctx, elsewhere)(g)).To(BeEmpty(), "nothing of the %s mode enforces", other)
			}).WithTimeout(3 * time.Second).Should(Succeed())

			By("the rollout completes and leaves nothing enforcing")
			unstall(clusters[0])
			Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
			Eventually(leftovers(ctx, cgu)).WithTimeout(settle).Should(BeZero())
			Eventually(enforcedOn(ctx, cgu, p.Name)).WithTimeout(settle).Should(BeEmpty())
		},
		Entry("started in Override, edited to Copy", "modeover", ranv1alpha1.EnforcementOverride, ranv1alpha1.EnforcementCopy),
		Entry("started in Copy, edited to Override", "modecopy", ranv1alpha1.EnforcementCopy, ranv1alpha1.EnforcementOverride),
	)
})
