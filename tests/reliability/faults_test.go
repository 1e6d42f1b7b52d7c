package reliability_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

// Each rollout below has two batches of three clusters and the default 240 minutes: batch 1
// times out 120 minutes after the start (the operator's clock is moved past it), batch 2 at
// the overall deadline.
const batchDeadline = 121 * time.Minute

func desired(name string) func(Gomega) string {
	return func(g Gomega) string {
		v, err := fleet.Sim.DesiredVersion(name)
		g.Expect(err).NotTo(HaveOccurred())
		return v
	}
}

var _ = Describe("A ManagedCluster deleted in the middle of its batch", func() {
	It("times out at the batch deadline, named in the condition; the others complete and nothing is left enforcing", func(ctx SpecContext) {
		clusters, cgu, log := upgradeRollout(ctx, "detached", 6, 3, time.Second)
		gone := clusters[0]
		fleet.Sim.SetBehaviour(gone, sim.Behaviour{Stall: true})
		fleet.MustCreate(ctx, cgu)
		Eventually(desired(gone)).WithTimeout(settle).Should(Equal(harness.To), "the upgrade reached the cluster")
		Expect(clusterState(ctx, cgu, gone)(Default)).To(Equal(ranv1alpha1.ClusterInProgress))

		By("deleting the cluster: the rest of its batch completes, it waits for the deadline")
		Expect(fleet.Hub.RemoveCluster(ctx, gone)).To(Succeed())
		fleet.Sim.RemoveSpoke(gone)
		for _, c := range clusters[1:3] {
			Eventually(clusterState(ctx, cgu, c)).WithTimeout(settle).Should(Equal(ranv1alpha1.ClusterCompleted))
		}
		Consistently(clusterState(ctx, cgu, gone)).WithTimeout(2 * time.Second).Should(Equal(ranv1alpha1.ClusterInProgress))
		Expect(log.started()).To(Equal(1))

		By("at the batch deadline it times out and batch 2 runs")
		passBatchDeadline(ctx, cgu)
		watchedUntilTheTimeout(ctx, cgu, gone)
		passBatchDeadline(ctx, cgu)
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateTimedOut))
		Expect(condition(ctx, cgu, ranv1alpha1.ConditionSucceeded)(Default)).To(And(
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", ranv1alpha1.ReasonTimedOut),
			HaveField("Message", ContainSubstring(gone))))
		log.expectClean(2)
		expectBatchesInOrder(ctx, cgu, clusters, 2, map[string]ranv1alpha1.ClusterState{gone: ranv1alpha1.ClusterTimedOut})
		expectUpgraded(clusters[1:])
		expectNothingEnforcing(ctx, cgu, clusters[1:])
		// The replica enforced on the deleted cluster stays in its namespace, which stays
		// Terminating: the hub world runs no namespace controller to empty it, and the
		// propagator leaves namespaces without a ManagedCluster alone. No Placement of the
		// rollout selects the cluster any more.
		ns := &corev1.Namespace{}
		Expect(fleet.Hub.Client.Get(ctx, client.ObjectKey{Name: gone}, ns)).To(Succeed())
		Expect(ns.DeletionTimestamp).NotTo(BeNil())
	})
})

var _ = Describe("A managed policy deleted during the rollout", func() {
	It("has its enforce copy deleted; the clusters on it, and those of later batches, time out at their batch deadline", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "polgone", 6, time.Second)
		upgrade := fleet.MustPlaceUpgradePolicy(ctx, "polgone", 6, settle)
		marker := world.NewPolicy(harness.PolicyNamespace, "polgone-marker", policyv1.Inform, world.ConfigPolicy{
			Name: "polgone-marker-ns", Objects: []map[string]any{{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "polgone-marker"}}},
		})
		Expect(fleet.Hub.PlacePolicy(ctx, marker, metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "polgone"}})).To(Succeed())
		Eventually(func(g Gomega) map[string]policyv1.ComplianceState {
			out, err := fleet.Hub.Compliance(ctx, harness.PolicyNamespace, marker.Name)
			g.Expect(err).NotTo(HaveOccurred())
			return out
		}).WithTimeout(settle).Should(HaveLen(6))
		stuck := clusters[0]
		fleet.Sim.SetBehaviour(stuck, sim.Behaviour{Stall: true})
		cgu := rolloutOf("cgu-polgone", clusters, 3, upgrade.Name, marker.Name)
		cgu.Spec.Enforcement = ranv1alpha1.EnforcementCopy
		log := watchRecords(ctx, cgu)
		fleet.MustCreate(ctx, cgu)
		for _, c := range clusters[1:3] {
			Eventually(clusterState(ctx, cgu, c)).WithTimeout(settle).Should(Equal(ranv1alpha1.ClusterCompleted))
		}
		Eventually(desired(stuck)).WithTimeout(settle).Should(Equal(harness.To))
		copyKey := client.ObjectKey{Namespace: cgu.Namespace, Name: names.PolicyCopy(cgu.Namespace, cgu.Name, upgrade.Name)}
		Expect(fleet.Hub.Client.Get(ctx, copyKey, &policyv1.Policy{})).To(Succeed())
		Eventually(enforcedOn(ctx, clusters)).WithTimeout(settle).Should(Equal([]string{stuck + "/" + cgu.Namespace + "." + copyKey.Name}),
			"only the upgrade copy is enforced, on the stalled cluster")

		By("deleting the upgrade policy: its copy, Placement and binding go, nothing is enforced any more")
		Expect(fleet.Hub.Client.Delete(ctx, upgrade)).To(Succeed())
		Eventually(func() error { return fleet.Hub.Client.Get(ctx, copyKey, &policyv1.Policy{}) }).
			WithTimeout(settle).Should(MatchError(ContainSubstring("not found")))
		Eventually(enforcedOn(ctx, clusters)).WithTimeout(settle).Should(BeEmpty())
		Eventually(leftovers(ctx, cgu)).WithTimeout(settle).Should(Equal(3), "the marker's copy, Placement and binding")
		Consistently(clusterState(ctx, cgu, stuck)).WithTimeout(2*time.Second).Should(Equal(ranv1alpha1.ClusterInProgress),
			"a cluster on a deleted policy never becomes compliant with it")

		By("at the batch deadline the cluster times out; batch 2 starts on the deleted policy and enforces nothing")
		passBatchDeadline(ctx, cgu)
		Eventually(log.started).WithTimeout(settle).Should(Equal(2))
		Eventually(clusterState(ctx, cgu, clusters[3])).WithTimeout(settle).Should(Equal(ranv1alpha1.ClusterInProgress))
		Consistently(enforcedOn(ctx, clusters)).WithTimeout(2 * time.Second).Should(BeEmpty())
		Expect(fleet.Hub.Client.Get(ctx, copyKey, &policyv1.Policy{})).To(MatchError(ContainSubstring("not found")), "the copy is not made again")

		By("batch 2 times out at the overall deadline: the rollout ends TimedOut")
		passBatchDeadline(ctx, cgu)
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateTimedOut))
		Expect(condition(ctx, cgu, ranv1alpha1.ConditionSucceeded)(Default)).To(HaveField("Message", ContainSubstring(stuck)))
		log.expectClean(2)
		expectBatchesInOrder(ctx, cgu, clusters, 2, map[string]ranv1alpha1.ClusterState{
			stuck: ranv1alpha1.ClusterTimedOut, clusters[3]: ranv1alpha1.ClusterTimedOut,
			clusters[4]: ranv1alpha1.ClusterTimedOut, clusters[5]: ranv1alpha1.ClusterTimedOut,
		})
		expectNothingEnforcing(ctx, cgu, clusters)
	})
})

var _ = Describe("A spoke that stops answering in the middle of its upgrade", func() {
	It("stays InProgress until the batch deadline, then times out; the rest go on; back later, nothing is enforced on it", func(ctx SpecContext) {
		clusters, cgu, log := upgradeRollout(ctx, "unreach", 6, 3, time.Second)
		lost := clusters[0]
		fleet.Sim.SetBehaviour(lost, sim.Behaviour{Stall: true})
		fleet.MustCreate(ctx, cgu)
		Eventually(desired(lost)).WithTimeout(settle).Should(Equal(harness.To), "the upgrade reached the cluster")

		By("the spoke stops answering")
		Expect(fleet.Sim.SetReachable(ctx, lost, false)).To(Succeed())
		for _, c := range clusters[1:3] {
			Eventually(clusterState(ctx, cgu, c)).WithTimeout(settle).Should(Equal(ranv1alpha1.ClusterCompleted))
		}
		Consistently(clusterState(ctx, cgu, lost)).WithTimeout(2 * time.Second).Should(Equal(ranv1alpha1.ClusterInProgress))
		Expect(log.started()).To(Equal(1))

		By("at the batch deadline it times out, and batch 2 completes")
		passBatchDeadline(ctx, cgu)
		watchedUntilTheTimeout(ctx, cgu, lost)
		passBatchDeadline(ctx, cgu)
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateTimedOut))
		Expect(condition(ctx, cgu, ranv1alpha1.ConditionSucceeded)(Default)).To(HaveField("Message", ContainSubstring(lost)))
		log.expectClean(2)
		expectBatchesInOrder(ctx, cgu, clusters, 2, map[string]ranv1alpha1.ClusterState{lost: ranv1alpha1.ClusterTimedOut})
		expectUpgraded(clusters[1:])
		expectNothingEnforcing(ctx, cgu, clusters)

		By("back after the rollout ended: nothing is enforced on it; the update it had started finishes")
		fleet.Sim.SetBehaviour(lost, sim.Behaviour{})
		Expect(fleet.Sim.SetReachable(ctx, lost, true)).To(Succeed())
		Consistently(enforcedOn(ctx, []string{lost})).WithTimeout(2 * time.Second).Should(BeEmpty())
		Eventually(version(lost)).WithTimeout(settle).Should(Equal(harness.To))
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted),
			"a TimedOut rollout keeps watching and completes once every cluster complies")
		Expect(clusterState(ctx, cgu, lost)(Default)).To(Equal(ranv1alpha1.ClusterTimedOut), "its record keeps the timeout")
		Eventually(leftovers(ctx, cgu)).WithTimeout(settle).Should(BeZero())
	})
})
