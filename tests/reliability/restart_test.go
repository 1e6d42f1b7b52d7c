package reliability_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

var _ = Describe("The operator killed and restarted during a rollout of 200 clusters", func() {
	It("completes every batch once, in order, upgrades every cluster and leaves nothing enforcing", func(ctx SpecContext) {
		const clusters, concurrency, batches = 200, 20, 10
		names, cgu, log := upgradeRollout(ctx, "restart", clusters, concurrency, 2*time.Second)
		errorsBefore := reconcileErrors()

		By("creating the rollout, then killing or stopping the operator as each batch starts and in the middle of some")
		fleet.MustCreate(ctx, cgu)
		restarts, midBatch := 0, 0
		restart := func(kill bool) {
			_, err := fleet.RestartOperator(kill)
			Expect(err).NotTo(HaveOccurred())
			restarts++
		}
		for k := 1; k <= batches; k++ {
			Eventually(log.started).WithTimeout(settle).Should(BeNumerically(">=", k), "batch %d starts", k)
			// A minute passes between batch starts, so that each batch record's times differ.
			fleet.Clock.Step(time.Minute)
			restart(k%2 == 1)
			if k%3 == 0 {
				Eventually(func() bool { return log.completedIn(k) > 0 || log.finished(k) }).WithTimeout(settle).Should(BeTrue())
				if !log.finished(k) {
					midBatch++
				}
				restart(true)
			}
		}
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		Expect(restarts).To(BeNumerically(">=", 10))
		AddReportEntry("operator restarts", restarts)
		AddReportEntry("restarts with a batch half done", midBatch)
		AddReportEntry("failed reconciles (conflicts and cut connections included)", reconcileErrors()-errorsBefore)

		By("every batch ran once, after the one before it, and every cluster completed once")
		log.expectClean(batches)
		expectBatchesInOrder(ctx, cgu, names, batches, nil)
		recs := records(ctx, cgu)(Default)
		for i := 1; i < len(recs); i++ {
			Expect(recs[i-1].Status.StartedAt.Before(recs[i].Status.StartedAt)).To(BeTrue(), "batch %d started after batch %d", i+1, i)
		}
		Expect(stored(ctx, cgu)(Default).Status.Counts).To(HaveField("Completed", clusters))
		expectEachBatchStartedOnce(ctx, cgu)

		By("every cluster upgraded and labelled, and nothing left enforcing")
		expectUpgraded(names)
		expectLabelled(ctx, cgu, names)
		Eventually(leftovers(ctx, cgu)).WithTimeout(settle).Should(BeZero())
		expectNothingEnforcing(ctx, cgu, names)
	})
})

var _ = Describe("The hub's control plane restarted during a rollout", func() {
	JustAfterEach(func() {
		if CurrentSpecReport().Failed() {
			AddReportEntry("the hub's control plane", fleet.Hub.ControlPlaneLog())
		}
	})
	DescribeTable("lets the rollout complete afterwards, each batch once, nothing left enforcing",
		func(ctx SpecContext, label string, restart func(h *world.Hub, whileDown func()) error) {
			const clusters, concurrency, batches = 30, 10, 3
			names, cgu, log := upgradeRollout(ctx, label, clusters, concurrency, 2*time.Second)
			fleet.MustCreate(ctx, cgu)

			By("killing it while batch 2 runs, and starting it again")
			Eventually(log.started).WithTimeout(settle).Should(BeNumerically(">=", 2))
			Expect(restart(fleet.Hub, func() {
				// While it is down nobody reaches the hub, the operator included. The read is
				// cut after two seconds: with etcd down, the kube-apiserver holds a request
				// until its own timeouts, and every second etcd stays down lengthens the
				// kube-apiserver's backoff before it dials etcd again (up to two minutes),
				// which a real outage has but this spec does not test.
				down, cancel := context.WithTimeout(ctx, 2*time.Second)
				defer cancel()
				Expect(fleet.Hub.Client.Get(down, keyOf(cgu), &ranv1alpha1.ClusterGroupUpgrade{})).NotTo(Succeed())
			})).To(Succeed())

			Eventually(state(ctx, cgu)).WithTimeout(2 * settle).Should(Equal(ranv1alpha1.StateCompleted))
			log.expectClean(batches)
			expectBatchesInOrder(ctx, cgu, names, batches, nil)
			expectEachBatchStartedOnce(ctx, cgu)
			expectUpgraded(names)
			expectLabelled(ctx, cgu, names)
			Eventually(leftovers(ctx, cgu)).WithTimeout(settle).Should(BeZero())
			expectNothingEnforcing(ctx, cgu, names)
		},
		Entry("the kube-apiserver (etcd stays up)", "apiserver", (*world.Hub).RestartAPIServer),
		Entry("etcd, on its data (the kube-apiserver stays up and answers errors)", "etcd", (*world.Hub).RestartEtcd),
	)
})
