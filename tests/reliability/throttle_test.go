package reliability_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/tests/harness"
)

var _ = Describe("A throttled hub, with leader election on", func() {
	It("loses and takes the lease again, replicas restarting, and still runs each batch once, in order, leaving nothing enforcing", func(ctx SpecContext) {
		// A third of the requests refused with 429 and the rest delayed up to 1 s: a lease
		// renewal (2 s deadline) often misses, the leader's manager exits, and a new replica
		// starts, as a Deployment would start it.
		throttle := harness.NewThrottle(0.3, time.Second, 30)
		sv, err := fleet.SuperviseReplicas(ctx, 2, "cgu-operator-system", throttle)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			sv.Stop()
			_, err := fleet.StartOperator()
			Expect(err).NotTo(HaveOccurred())
		})

		names, cgu, log := upgradeRollout(ctx, "throttled", 20, 10, 2*time.Second)
		fleet.MustCreate(ctx, cgu)
		Eventually(state(ctx, cgu)).WithTimeout(4 * settle).Should(Equal(ranv1alpha1.StateCompleted))
		AddReportEntry("requests refused with 429", throttle.Rejections.Load())
		AddReportEntry("replicas that stopped on a lost lease and were replaced", sv.Replaced.Load())
		Expect(throttle.Rejections.Load()).To(BeNumerically(">=", 20), "the hub throttled the operator")
		Expect(sv.Replaced.Load()).To(BeNumerically(">=", 1), "a leader lost its lease at least once")

		log.expectClean(2)
		expectBatchesInOrder(ctx, cgu, names, 2, nil)
		expectEachBatchStartedOnce(ctx, cgu)
		expectUpgraded(names)
		Eventually(leftovers(ctx, cgu)).WithTimeout(2 * settle).Should(BeZero())
		expectNothingEnforcing(ctx, cgu, names)
	})
})
