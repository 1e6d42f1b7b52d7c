package controllers_test

import (
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

// stall makes a simulated cluster's updates never finish; unstall lets them finish.
func stall(name string)   { simulator.SetBehaviour(name, sim.Behaviour{Stall: true}) }
func unstall(name string) { simulator.SetBehaviour(name, sim.Behaviour{}) }

// firstBatchShows matches a CGU running its first batch, showing cluster in state.
func firstBatchShows(cluster string, st ranv1alpha1.ClusterState) OmegaMatcher {
	return And(
		HaveField("Status.State", ranv1alpha1.StateNotCompleted),
		HaveField("Status.CurrentBatch.Index", 1),
		HaveField("Status.CurrentBatch.Clusters", ContainElement(And(HaveField("Name", cluster), HaveField("State", st)))),
	)
}

// soaking matches a CGU whose current batch shows cluster compliant with policy and soaking.
func soaking(index int, cluster, policy string) OmegaMatcher {
	return And(
		HaveField("Status.CurrentBatch.Index", index),
		HaveField("Status.CurrentBatch.Clusters", ContainElement(And(
			HaveField("Name", cluster), HaveField("State", ranv1alpha1.ClusterInProgress),
			HaveField("CurrentPolicy", policy), HaveField("CompliantSince", Not(BeNil())),
		))),
	)
}

var _ = Describe("Timeouts", func() {
	It("Continue: a timed-out batch lets the next one start, stops enforcing on the late cluster, and the rollout ends TimedOut", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "cont", 4)
		p := placeUpgradePolicy(ctx, "cont", 4)
		stall(clusters[0])
		cgu := newCGU("cgu-cont", "upgrade", clusters, 2, p.Name)
		cgu.Spec.RemediationStrategy.Timeout = 60 // two batches: 30 minutes each
		fleet.MustCreate(ctx, cgu)
		enable(ctx, cgu)

		By("batch 1 waits on the stalled cluster, the other one done")
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			firstBatchShows(clusters[1], ranv1alpha1.ClusterCompleted),
			firstBatchShows(clusters[0], ranv1alpha1.ClusterInProgress),
		))
		Eventually(enforcedOn(ctx, cgu, p.Name)).WithTimeout(settle).Should(Equal([]string{clusters[0]}))
		Expect(desired(clusters[2])(Default)).To(BeEmpty(), "batch 2 has not started")

		By("past the batch deadline")
		advance(ctx, 31*time.Minute, cgu)
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateTimedOut))
		Expect(version(clusters[2])(Default)).To(Equal(to))
		Expect(version(clusters[3])(Default)).To(Equal(to))
		Eventually(enforcedOn(ctx, cgu, p.Name)).WithTimeout(settle).Should(BeEmpty())
		final := fleet.Stored(ctx, cgu)(Default)
		Expect(final.Status.Counts).To(Equal(ranv1alpha1.ClusterCounts{Total: 4, Completed: 3, TimedOut: 1}))
		Expect(final.Status.Message).To(ContainSubstring(clusters[0]))
		Eventually(talmEvents(ctx, cgu)).Should(And(
			HaveKeyWithValue(talm.ActionBatchTimeout, 1), HaveKeyWithValue(talm.ActionBatchCompleted, 1),
			HaveKeyWithValue(talm.ActionClusterTimeout, 1), HaveKeyWithValue(talm.ActionClusterCompleted, 3),
			HaveKeyWithValue(talm.ActionRemediationTimeout, 1), Not(HaveKey(talm.ActionRemediationCompleted)),
		))
		timedOut := talmEventsOf(ctx, cgu, talm.ActionBatchTimeout)(Default)[0]
		Expect(timedOut.Annotations).To(And(HaveKeyWithValue(talm.AnnotationEventType, talm.EventTypeBatch),
			HaveKeyWithValue(talm.AnnotationTimedOutClusters, clusters[0]), HaveKeyWithValue(talm.AnnotationTimedOutCount, "1")))
	})

	It("Abort: a timed-out batch ends the rollout; no later batch starts", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "abort", 4)
		p := placeUpgradePolicy(ctx, "abort", 4)
		stall(clusters[1])
		cgu := newCGU("cgu-abort", "upgrade", clusters, 2, p.Name)
		cgu.Spec.RemediationStrategy.Timeout = 60
		cgu.Spec.BatchTimeoutAction = ranv1alpha1.BatchTimeoutAbort
		fleet.MustCreate(ctx, cgu)
		enable(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(firstBatchShows(clusters[0], ranv1alpha1.ClusterCompleted))

		advance(ctx, 31*time.Minute, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			HaveField("Status.State", ranv1alpha1.StateTimedOut),
			HaveField("Status.Message", ContainSubstring("batchTimeoutAction is Abort")),
			HaveField("Status.Counts", ranv1alpha1.ClusterCounts{Total: 4, Completed: 1, TimedOut: 1, Pending: 2}),
		))
		Eventually(enforcedOn(ctx, cgu, p.Name)).WithTimeout(settle).Should(BeEmpty())
		Consistently(desired(clusters[2])).WithTimeout(2 * time.Second).Should(BeEmpty())
	})

	It("a canary that times out ends the rollout before any other batch", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "canto", 3)
		p := placeUpgradePolicy(ctx, "canto", 3)
		stall(clusters[2])
		cgu := newCGU("cgu-canto", "upgrade", clusters, 2, p.Name)
		cgu.Spec.RemediationStrategy.Canaries = []string{clusters[2]}
		cgu.Spec.RemediationStrategy.Timeout = 60
		fleet.MustCreate(ctx, cgu)
		enable(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(firstBatchShows(clusters[2], ranv1alpha1.ClusterInProgress))

		advance(ctx, 31*time.Minute, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			HaveField("Status.State", ranv1alpha1.StateTimedOut),
			HaveField("Status.Message", HavePrefix("Canary batch 1 timed out; cluster "+clusters[2]+" is not compliant yet")),
		))
		Consistently(desired(clusters[0])).WithTimeout(2 * time.Second).Should(BeEmpty())
	})

	It("an overall timeout is followed by a late completion: the TimedOut rollout keeps watching", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "late", 2)
		p := placeUpgradePolicy(ctx, "late", 2)
		stall(clusters[1])
		cgu := newCGU("cgu-late", "upgrade", clusters, 0, p.Name)
		cgu.Spec.RemediationStrategy.Timeout = 60
		fleet.MustCreate(ctx, cgu)
		enable(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(firstBatchShows(clusters[0], ranv1alpha1.ClusterCompleted))

		advance(ctx, 61*time.Minute, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			HaveField("Status.State", ranv1alpha1.StateTimedOut),
			HaveField("Status.Message", HavePrefix("The rollout ran out of time; cluster "+clusters[1])),
		))
		Eventually(enforcedOn(ctx, cgu, p.Name)).WithTimeout(settle).Should(BeEmpty())

		By("the late cluster finishes on its own")
		unstall(clusters[1])
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		Eventually(leftovers(ctx, cgu)).WithTimeout(settle).Should(BeZero())
		Eventually(talmEvents(ctx, cgu)).Should(And(HaveKeyWithValue(talm.ActionRemediationTimeout, 1), HaveKeyWithValue(talm.ActionRemediationCompleted, 1)))
	})

	It("honours the soak annotation: a cluster stays on a compliant policy for its soak before moving on", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "soak", 2)
		p := placeUpgradePolicy(ctx, "soak", 2)
		Eventually(func(g Gomega) {
			cur := p.DeepCopy()
			g.Expect(hub.Client.Get(ctx, keyOf(p), cur)).To(Succeed())
			cur.Annotations = map[string]string{"ran.openshift.io/soak-seconds": strconv.Itoa(600)}
			g.Expect(hub.Client.Update(ctx, cur)).To(Succeed())
		}).Should(Succeed())
		cgu := newCGU("cgu-soak", "upgrade", clusters, 1, p.Name)
		fleet.MustCreate(ctx, cgu)
		enable(ctx, cgu)

		By("the first cluster complies and soaks; the second batch waits")
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(soaking(1, clusters[0], p.Name))
		Consistently(desired(clusters[1])).WithTimeout(3 * time.Second).Should(BeEmpty())
		Expect(fleet.Stored(ctx, cgu)(Default).Status.CurrentBatch.Index).To(Equal(1))

		By("after the soak")
		advance(ctx, 601*time.Second, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(soaking(2, clusters[1], p.Name))
		Expect(version(clusters[1])(Default)).To(Equal(to))
		advance(ctx, 601*time.Second, cgu)
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
	})
})
