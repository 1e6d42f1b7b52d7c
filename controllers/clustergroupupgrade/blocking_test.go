package clustergroupupgrade_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/blocking"
)

// blockedBy matches a CGU that cannot start for reason.
func blockedBy(reason, message string) OmegaMatcher {
	return And(
		HaveField("Status.State", ranv1alpha1.StateCannotStart),
		HaveField("Status.Conditions", ContainElement(And(
			HaveField("Type", ranv1alpha1.ConditionProgressing), HaveField("Status", metav1.ConditionFalse),
			HaveField("Reason", reason), HaveField("Message", ContainSubstring(message)),
		))),
	)
}

var _ = Describe("Blocking CRs", func() {
	It("waits for a missing, then an incomplete blocking CGU, and starts once it completes", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "block", 2)
		p := placeUpgradePolicy(ctx, "block", 2)
		blocked := newCGU("cgu-block", "second", clusters[1:], 0, p.Name)
		blocked.Spec.BlockingCRs = []ranv1alpha1.BlockingCR{{Name: "first"}}
		enableOnCreate(blocked)
		fleet.MustCreate(ctx, blocked)
		Eventually(fleet.Stored(ctx, blocked)).WithTimeout(settle).Should(blockedBy(ranv1alpha1.ReasonMissingBlockingCR, "cgu-block/first"))

		By("the blocking CGU appears, not enabled")
		first := newCGU("cgu-block", "first", clusters[:1], 0, p.Name)
		fleet.MustCreate(ctx, first)
		Eventually(fleet.Stored(ctx, blocked)).WithTimeout(settle).Should(blockedBy(ranv1alpha1.ReasonIncompleteBlockingCR, "cgu-block/first (NotStarted)"))
		Consistently(desired(clusters[1])).WithTimeout(2 * time.Second).Should(BeEmpty())

		By("the blocking CGU runs and completes; the blocked one follows on its own")
		enable(ctx, first)
		Eventually(state(ctx, first)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		Eventually(state(ctx, blocked)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		Expect(upgradeStarted(clusters[1])).NotTo(BeTemporally("<", upgradeCompleted(clusters[0])))
	})

	It("reports a blocking cycle on every CGU in it", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "cycle", 1)
		p := placeUpgradePolicy(ctx, "cycle", 1)
		a := newCGU("cgu-cycle", "a", clusters, 0, p.Name)
		a.Spec.BlockingCRs = []ranv1alpha1.BlockingCR{{Name: "b"}}
		b := newCGU("cgu-cycle", "b", clusters, 0, p.Name)
		b.Spec.BlockingCRs = []ranv1alpha1.BlockingCR{{Name: "a"}}
		enableOnCreate(a)
		enableOnCreate(b)
		fleet.MustCreate(ctx, a)
		fleet.MustCreate(ctx, b)
		Eventually(fleet.Stored(ctx, a)).WithTimeout(settle).Should(blockedBy(ranv1alpha1.ReasonBlockingCRCycle, "cgu-cycle/a -> cgu-cycle/b -> cgu-cycle/a"))
		Eventually(fleet.Stored(ctx, b)).WithTimeout(settle).Should(blockedBy(ranv1alpha1.ReasonBlockingCRCycle, "cgu-cycle/b -> cgu-cycle/a -> cgu-cycle/b"))
	})

	It("with partial completion and cluster filtering, follows a timed-out blocker without its late clusters", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "partial", 3)
		p := placeUpgradePolicy(ctx, "partial", 3)
		stall(clusters[0])
		first := newCGU("cgu-partial", "first", clusters[:2], 0, p.Name)
		first.Spec.RemediationStrategy.Timeout = 30
		enableOnCreate(first)
		fleet.MustCreate(ctx, first)

		second := newCGU("cgu-partial", "second", clusters, 0, p.Name)
		second.Annotations = map[string]string{
			blocking.AnnotationCompletionMode: blocking.CompletionModePartial, blocking.AnnotationClusterFiltering: "true",
		}
		second.Spec.BlockingCRs = []ranv1alpha1.BlockingCR{{Name: "first"}}
		enableOnCreate(second)
		fleet.MustCreate(ctx, second)
		Eventually(fleet.Stored(ctx, second)).WithTimeout(settle).Should(blockedBy(ranv1alpha1.ReasonIncompleteBlockingCR, "cgu-partial/first (NotCompleted)"))

		advance(ctx, 31*time.Minute, first)
		Eventually(state(ctx, first)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateTimedOut))
		Eventually(state(ctx, second)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		final := fleet.Stored(ctx, second)(Default)
		Expect(final.Status.Plan.Clusters).To(Equal(1), "the late cluster is filtered out, the completed one left out")
		var records ranv1alpha1.ClusterGroupUpgradeBatchList
		Expect(hub.Client.List(ctx, &records, client.InNamespace(second.Namespace), client.MatchingLabels{ranv1alpha1.LabelUpgradeName: "second"})).To(Succeed())
		Expect(records.Items).To(ConsistOf(HaveField("Spec.Clusters", []string{clusters[2]})))
		Expect(version(clusters[2])(Default)).To(Equal(to))
	})
})
