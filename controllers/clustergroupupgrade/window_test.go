package clustergroupupgrade_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

var _ = Describe("The Window mode", func() {
	It("starts the next cluster as one is done, while a slow one runs on to its own deadline", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "slide", 4)
		p := placeUpgradePolicy(ctx, "slide", 4)
		stall(clusters[0])
		cgu := newCGU("cgu-window-mode", "upgrade", clusters, 2, p.Name)
		cgu.Spec.RemediationStrategy.Mode = ranv1alpha1.ModeWindow
		cgu.Spec.RemediationStrategy.Timeout = 120 // two waves of two: an hour for each cluster
		fleet.MustCreate(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Status.Plan.Batches", 1))
		enable(ctx, cgu)

		By("the second slot passes from " + clusters[1] + " to " + clusters[2] + " and " + clusters[3] + " while " + clusters[0] + " still runs")
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			firstBatchShows(clusters[1], ranv1alpha1.ClusterCompleted),
			firstBatchShows(clusters[2], ranv1alpha1.ClusterCompleted),
			firstBatchShows(clusters[3], ranv1alpha1.ClusterCompleted),
			firstBatchShows(clusters[0], ranv1alpha1.ClusterInProgress),
		))
		Expect(desired(clusters[3])(Default)).To(Equal(to))

		By("the plugin shows the window")
		code, out := kubectlCGU(ctx, "plan", cgu.Name, "-n", cgu.Namespace)
		Expect(code).To(BeZero(), out)
		Expect(out).To(ContainSubstring("Batch 1 (a window of 2 in progress at once): "))
		code, out = kubectlCGU(ctx, "status", cgu.Name, "-n", cgu.Namespace)
		Expect(code).To(BeZero(), out)
		Expect(out).To(ContainSubstring("Batch 1 of 1 (a window of 2 at once, each cluster with its own deadline)"))
		code, out = kubectlCGU(ctx, "preflight", cgu.Name, "-n", cgu.Namespace)
		Expect(code).To(BeZero(), out)
		Expect(out).To(ContainSubstring("1 wave of 2 clusters at 0s each, the median of 3 clusters that completed"))

		By("the batch record holds the window and each cluster's start")
		var records ranv1alpha1.ClusterGroupUpgradeBatchList
		Expect(hub.Client.List(ctx, &records, client.InNamespace(cgu.Namespace))).To(Succeed())
		Expect(records.Items).To(HaveLen(1))
		Expect(records.Items[0].Spec.Window).To(Equal(2))
		Expect(records.Items[0].Status.Clusters).To(HaveEach(HaveField("StartedAt", Not(BeNil()))))

		By("an hour after its start, " + clusters[0] + " times out alone; the rollout waits for it, as TALM, until its timeout")
		advance(ctx, 61*time.Minute, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			HaveField("Status.State", ranv1alpha1.StateNotCompleted),
			HaveField("Status.Message", ContainSubstring(clusters[0]+" timed out and is not compliant yet")),
			HaveField("Status.Counts", And(HaveField("Completed", 3), HaveField("TimedOut", 1))),
		))
		Eventually(enforcedOn(ctx, cgu, p.Name)).WithTimeout(settle).Should(BeEmpty())
		advance(ctx, 60*time.Minute, cgu)
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateTimedOut))
	})
})
