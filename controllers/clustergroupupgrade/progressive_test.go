package clustergroupupgrade_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
)

var _ = Describe("The Progressive mode", func() {
	It("grows its stages after healthy ones and sends the growth back after an unhealthy one", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "grow", 5)
		p := placeUpgradePolicy(ctx, "grow", 5)
		stall(clusters[1])
		cgu := newCGU("cgu-progressive-mode", "upgrade", clusters, 2, p.Name)
		cgu.Spec.RemediationStrategy.Mode = ranv1alpha1.ModeProgressive
		cgu.Spec.RemediationStrategy.Progressive = &ranv1alpha1.ProgressiveSpec{Steps: []intstr.IntOrString{intstr.FromInt32(1)}}
		// Stages of 1 then 2: five clusters take three stages (1, 2, 2). The first is done at
		// once, so the second has half of the three hours left: 90 minutes.
		cgu.Spec.RemediationStrategy.Timeout = 180
		fleet.MustCreate(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Status.Plan.Batches", 1))

		By("the plugin previews the stages")
		code, out := kubectlCGU(ctx, "plan", cgu.Name, "-n", cgu.Namespace)
		Expect(code).To(BeZero(), out)
		Expect(out).To(ContainSubstring("Batch 1 (stages of 1, then 2 clusters; an unhealthy stage starts the growth again): "))
		enable(ctx, cgu)

		By("stage 1 (" + clusters[0] + ") completes; stage 2 runs " + clusters[1] + ", which stalls, and " + clusters[2])
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			firstBatchShows(clusters[0], ranv1alpha1.ClusterCompleted),
			firstBatchShows(clusters[2], ranv1alpha1.ClusterCompleted),
			firstBatchShows(clusters[1], ranv1alpha1.ClusterInProgress),
			HaveField("Status.CurrentBatch.Stage", And(Not(BeNil()),
				HaveField("Number", 2), HaveField("Size", 2), HaveField("Step", 2), HaveField("Resets", 0))),
		))
		Expect(desired(clusters[3])(Default)).NotTo(Equal(to), "a cluster of the next stage started before stage 2 ended")
		code, out = kubectlCGU(ctx, "status", cgu.Name, "-n", cgu.Namespace)
		Expect(code).To(BeZero(), out)
		Expect(out).To(ContainSubstring("Stage 2: 2 clusters (step 2 of the growth)"))

		By("the batch record holds the stages, and each started cluster its stage")
		var records ranv1alpha1.ClusterGroupUpgradeBatchList
		Expect(hub.Client.List(ctx, &records, client.InNamespace(cgu.Namespace))).To(Succeed())
		Expect(records.Items).To(HaveLen(1))
		Expect(records.Items[0].Spec.Stages).To(Equal([]int{1, 2}))
		Expect(records.Items[0].Spec.OnUnhealthy).To(Equal(ranv1alpha1.UnhealthyReset))
		stages := map[string]int{}
		for _, c := range records.Items[0].Status.Clusters {
			stages[c.Name] = c.Stage
		}
		Expect(stages).To(Equal(map[string]int{clusters[0]: 1, clusters[1]: 2, clusters[2]: 2, clusters[3]: 0, clusters[4]: 0}))

		By("90 minutes on, " + clusters[1] + " times out with its stage: the growth goes back to one cluster, then grows again")
		advance(ctx, 91*time.Minute, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			HaveField("Status.State", ranv1alpha1.StateNotCompleted),
			HaveField("Status.Message", ContainSubstring(clusters[1]+" timed out and is not compliant yet")),
			HaveField("Status.Counts", And(HaveField("Completed", 4), HaveField("TimedOut", 1))),
		), "every stage ran: as TALM, the late cluster is watched until the timeout")
		advance(ctx, 90*time.Minute, cgu)
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateTimedOut))
		Expect(hub.Client.List(ctx, &records, client.InNamespace(cgu.Namespace))).To(Succeed())
		for _, c := range records.Items[0].Status.Clusters {
			stages[c.Name] = c.Stage
		}
		Expect(stages).To(HaveKeyWithValue(clusters[3], 3), "the stage after the unhealthy one takes the first size, one cluster")
		Expect(stages).To(HaveKeyWithValue(clusters[4], 4))
		Eventually(events(ctx, cgu)).WithTimeout(settle).Should(And(
			HaveKeyWithValue(talm.ReasonStageStarted, 4),
			HaveKeyWithValue(talm.ReasonStageUnhealthy, 1),
		))
		Eventually(enforcedOn(ctx, cgu, p.Name)).WithTimeout(settle).Should(BeEmpty())
	})
})
