package reliability_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

var _ = Describe("The operator killed and stopped again and again during a Window or a Progressive rollout", func() {
	DescribeTable("starts each cluster once, never exceeds the window, completes and leaves nothing enforcing",
		func(ctx SpecContext, label string, mode ranv1alpha1.RolloutMode) {
			names, cgu, log := upgradeRollout(ctx, label, 30, 5, 2*time.Second)
			cgu.Spec.RemediationStrategy.Mode = mode
			fleet.MustCreate(ctx, cgu)
			Eventually(log.started).WithTimeout(settle).Should(BeNumerically(">=", 1))

			By("killing or stopping the operator every second and a half while clusters start")
			restarts := 0
			for restarts < 8 && state(ctx, cgu)(Default) != ranv1alpha1.StateCompleted {
				time.Sleep(1500 * time.Millisecond) // the test's own pace; the operator sleeps nowhere
				_, err := fleet.RestartOperator(restarts%2 == 0)
				Expect(err).NotTo(HaveOccurred())
				restarts++
			}
			AddReportEntry("operator restarts", restarts)
			Expect(restarts).To(BeNumerically(">=", 3), "the operator restarted during the rollout")
			Eventually(state(ctx, cgu)).WithTimeout(2 * settle).Should(Equal(ranv1alpha1.StateCompleted))

			log.expectClean(1)
			expectEachBatchStartedOnce(ctx, cgu)
			Expect(stored(ctx, cgu)(Default).Status.Counts).To(HaveField("Completed", len(names)))
			expectUpgraded(names)
			Eventually(leftovers(ctx, cgu)).WithTimeout(settle).Should(BeZero())
			expectNothingEnforcing(ctx, cgu, names)
		},
		Entry("Window", "killwindow", ranv1alpha1.ModeWindow),
		Entry("Progressive", "killprogressive", ranv1alpha1.ModeProgressive),
	)
})
