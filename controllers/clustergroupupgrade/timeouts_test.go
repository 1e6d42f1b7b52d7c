package clustergroupupgrade_test

import (
	"context"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

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

// setSoak sets the soak annotation of a managed policy.
func setSoak(ctx context.Context, p *policyv1.Policy, soak time.Duration) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		cur := p.DeepCopy()
		g.Expect(hub.Client.Get(ctx, keyOf(p), cur)).To(Succeed())
		cur.Annotations = map[string]string{"ran.openshift.io/soak-seconds": strconv.Itoa(int(soak.Seconds()))}
		g.Expect(hub.Client.Update(ctx, cur)).To(Succeed())
	}).Should(Succeed())
}

var _ = Describe("Timeouts", func() {
	It("Continue: a timed-out batch lets the next one start, stops enforcing on the late cluster, and the rollout ends TimedOut at its deadline", func(ctx SpecContext) {
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

		By("past the batch deadline, batch 2 runs while the late cluster is listed timedout, as TALM shows it")
		stall(clusters[2])
		advance(ctx, 31*time.Minute, cgu)
		lateOne := ranv1alpha1.ClusterFinalState{Name: clusters[0], State: "timedout",
			CurrentPolicy: &ranv1alpha1.PolicyStatus{Name: p.Name, Status: "NonCompliant"}}
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			HaveField("Status.Status.CurrentBatch", 2),
			HaveField("Status.Clusters", Equal([]ranv1alpha1.ClusterFinalState{{Name: clusters[1], State: "complete"}, lateOne})),
			HaveField("Status.Status.CurrentBatchRemediationProgress", HaveKeyWithValue(clusters[2],
				PointTo(HaveField("State", ranv1alpha1.RemediationInProgress)))),
		))
		Expect(talmConditions(ctx, cgu)(Default)).To(Equal([]string{selected, validated, "Progressing True InProgress"}))
		unstall(clusters[2])

		By("every batch ran: as TALM, the late cluster is watched until the overall deadline, enforcing nothing")
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			HaveField("Status.State", ranv1alpha1.StateNotCompleted),
			HaveField("Status.Message", ContainSubstring(clusters[0]+" timed out and is not compliant yet")),
		))
		Expect(talmConditions(ctx, cgu)(Default)).To(Equal([]string{selected, validated, "Progressing True InProgress"}))
		Eventually(enforcedOn(ctx, cgu, p.Name)).WithTimeout(settle).Should(BeEmpty())
		advance(ctx, 30*time.Minute, cgu)
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateTimedOut))
		Expect(talmConditions(ctx, cgu)(Default)).To(Equal(timedOut))
		Expect(fleet.Stored(ctx, cgu)(Default).Status.Clusters).To(ConsistOf(
			ranv1alpha1.ClusterFinalState{Name: clusters[1], State: "complete"}, lateOne,
			ranv1alpha1.ClusterFinalState{Name: clusters[2], State: "complete"}, ranv1alpha1.ClusterFinalState{Name: clusters[3], State: "complete"}))
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

		Expect(fleet.Stored(ctx, cgu)(Default).Status.RemediationPlan).To(Equal([][]string{{clusters[2]}, {clusters[0], clusters[1]}}))

		advance(ctx, 31*time.Minute, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			HaveField("Status.State", ranv1alpha1.StateTimedOut),
			HaveField("Status.Message", HavePrefix("Canary batch 1 timed out; cluster "+clusters[2]+" is not compliant yet")),
		))
		Consistently(desired(clusters[0])).WithTimeout(2 * time.Second).Should(BeEmpty())
		By("TALM's view: TimedOut, the canary listed timedout, the other batches never started")
		Expect(talmConditions(ctx, cgu)(Default)).To(Equal(timedOut))
		ended := fleet.Stored(ctx, cgu)(Default).Status
		Expect(ended.Clusters).To(Equal([]ranv1alpha1.ClusterFinalState{{Name: clusters[2], State: "timedout",
			CurrentPolicy: &ranv1alpha1.PolicyStatus{Name: p.Name, Status: "NonCompliant"}}}))
		Expect(ended.Status.CurrentBatch).To(BeZero())
		Eventually(talmEvents(ctx, cgu)).Should(And(HaveKeyWithValue(talm.ActionBatchStarted, 1),
			HaveKeyWithValue(talm.ActionRemediationTimeout, 1), Not(HaveKey(talm.ActionRemediationCompleted))))
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
		setSoak(ctx, p, 10*time.Minute)
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
