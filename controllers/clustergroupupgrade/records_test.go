package clustergroupupgrade_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/names"
)

// records lists a CGU's batch records by batch and part.
func records(ctx SpecContext, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) []ranv1alpha1.ClusterGroupUpgradeBatch {
	return func(g Gomega) []ranv1alpha1.ClusterGroupUpgradeBatch {
		var list ranv1alpha1.ClusterGroupUpgradeBatchList
		g.Expect(hub.Client.List(ctx, &list, client.InNamespace(cgu.Namespace),
			client.MatchingLabels{ranv1alpha1.LabelUpgradeName: names.LabelValue(cgu.Name)})).To(Succeed())
		return list.Items
	}
}

var _ = Describe("Batch records deleted by hand", func() {
	DescribeTable("are made again and the rollout goes on where it was",
		func(ctx SpecContext, label string, lose func(ranv1alpha1.ClusterGroupUpgradeBatch) bool) {
			clusters := joinFleet(ctx, label, 3)
			p := placeUpgradePolicy(ctx, label, 3)
			stall(clusters[1])
			cgu := newCGU("cgu-"+label, "upgrade", clusters, 1, p.Name)
			cgu.Spec.RemediationStrategy.Timeout = 60
			enableOnCreate(cgu)
			fleet.MustCreate(ctx, cgu)
			Eventually(enforcedOn(ctx, cgu, p.Name)).WithTimeout(settle).Should(Equal([]string{clusters[1]}))
			Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Status.CurrentBatch.Index", 2))
			started := fleet.Stored(ctx, cgu)(Default).Status.CurrentBatch.StartedAt

			By("deleting records as a person would, with oc delete cgub")
			for _, r := range records(ctx, cgu)(Default) {
				if lose(r) {
					Expect(hub.Client.Delete(ctx, &r)).To(Succeed())
				}
			}
			Eventually(records(ctx, cgu)).WithTimeout(settle).Should(ConsistOf(
				And(HaveField("Spec.Index", 1), HaveField("Spec.Clusters", []string{clusters[0]}),
					HaveField("Status.FinishedAt", Not(BeNil())),
					HaveField("Status.Clusters", ConsistOf(And(HaveField("Name", clusters[0]), HaveField("State", ranv1alpha1.ClusterCompleted))))),
				And(HaveField("Spec.Index", 2), HaveField("Spec.Clusters", []string{clusters[1]}),
					HaveField("Status.StartedAt", HaveField("Time", BeTemporally("==", started.Time))),
					HaveField("Status.FinishedAt", BeNil())),
				And(HaveField("Spec.Index", 3), HaveField("Status.StartedAt", BeNil())),
			))
			Expect(fleet.Stored(ctx, cgu)(Default).Status.Conditions).NotTo(ContainElement(And(
				HaveField("Type", ranv1alpha1.ConditionReconciled), HaveField("Status", BeEquivalentTo("False")))))
			Consistently(enforcedOn(ctx, cgu, p.Name)).WithTimeout(2*time.Second).Should(Equal([]string{clusters[1]}),
				"the running batch goes on enforcing, no other")

			By("the stalled cluster finishes: the last batch runs and the rollout completes")
			unstall(clusters[1])
			Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
			Expect(version(clusters[2])(Default)).To(Equal(to))
			Expect(fleet.Stored(ctx, cgu)(Default).Status.Counts.Completed).To(Equal(3))
		},
		Entry("every record of the running rollout", "lostall", func(ranv1alpha1.ClusterGroupUpgradeBatch) bool { return true }),
		Entry("the record of an ended batch", "lostone", func(r ranv1alpha1.ClusterGroupUpgradeBatch) bool { return r.Spec.Index == 1 }),
	)
})
