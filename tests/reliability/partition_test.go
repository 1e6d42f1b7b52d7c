package reliability_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/cgu-operator/cgu-operator/tests/harness"
)

var _ = Describe("A leader partitioned from the API server while a follower takes over", func() {
	It("stops leading and writes nothing once the partition heals; the follower completes, each batch once", func(ctx SpecContext) {
		replicas := startReplicas(ctx, 2)
		var leader, follower *harness.Operator
		Eventually(func() int {
			leader, follower = nil, nil
			for _, r := range replicas {
				if r.Leading() {
					leader = r
				} else {
					follower = r
				}
			}
			if leader == nil || follower == nil {
				return 0
			}
			return 1
		}).WithTimeout(settle).Should(Equal(1))

		names, cgu, log := upgradeRollout(ctx, "partition", 30, 10, 2*time.Second)
		fleet.MustCreate(ctx, cgu)
		Eventually(log.started).WithTimeout(settle).Should(BeNumerically(">=", 2))

		By("partitioning the leader while batch 2 runs: its lease expires, the follower takes over")
		leader.Partition()
		Eventually(follower.Leading).WithTimeout(settle).Should(BeTrue())
		Eventually(leader.Stopped()).WithTimeout(settle).Should(BeClosed(), "the partitioned leader gives up leading and its manager ends")
		written := leader.Writes()

		By("healing the partition: the old leader writes nothing more")
		leader.Heal()
		Consistently(leader.Writes).WithTimeout(3 * time.Second).Should(Equal(written))

		expectCompletedOnce(ctx, cgu, log, names, 3)
	})
})
