package clustergroupupgrade_test

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
)

var _ = Describe("A rollout", func() {
	DescribeTable("upgrades a fleet canaries first, then batch by batch, and cleans up",
		func(ctx SpecContext, label string, mode ranv1alpha1.EnforcementMode) {
			By("seven clusters on " + from + " and an inform policy upgrading them to " + to)
			clusters := joinFleet(ctx, label, 7)
			p := placeUpgradePolicy(ctx, label, 7)

			By("a CGU with two canaries and batches of two, not enabled")
			cgu := newCGU("cgu-"+label, "upgrade", clusters, 2, p.Name)
			cgu.Spec.RemediationStrategy.Canaries = []string{clusters[6], clusters[5]}
			cgu.Spec.Enforcement = mode
			fleet.MustCreate(ctx, cgu)

			By("the plan is visible before enable and nothing is enforced")
			Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
				HaveField("Status.State", ranv1alpha1.StateNotStarted),
				HaveField("Status.Plan.Batches", 5),
				HaveField("Status.Plan.CanaryBatches", 2),
				HaveField("Status.Counts.Pending", 7),
			))
			Consistently(desired(clusters[6])).WithTimeout(2 * time.Second).Should(BeEmpty())

			By("enabling it")
			enable(ctx, cgu)
			Eventually(state(ctx, cgu)).WithTimeout(3 * settle).Should(Equal(ranv1alpha1.StateCompleted))

			By("every cluster runs " + to + ", each batch after the one before")
			for _, c := range clusters {
				Expect(version(c)(Default)).To(Equal(to), c)
			}
			order := [][]string{{clusters[6]}, {clusters[5]}, clusters[0:2], clusters[2:4], clusters[4:5]}
			for i := 1; i < len(order); i++ {
				for _, later := range order[i] {
					for _, earlier := range order[i-1] {
						Expect(upgradeStarted(later)).NotTo(BeTemporally("<", upgradeCompleted(earlier)),
							"%s (batch %d) started before %s (batch %d) completed", later, i+1, earlier, i)
					}
				}
			}

			By("nothing is left enforcing, the status and the events tell the story once")
			Eventually(leftovers(ctx, cgu)).WithTimeout(settle).Should(BeZero())
			// The propagator puts the replicas back to inform once their binding is gone.
			Eventually(enforcedOn(ctx, cgu, p.Name)).WithTimeout(settle).Should(BeEmpty())
			final := fleet.Stored(ctx, cgu)(Default)
			Expect(final.Status.Counts).To(Equal(ranv1alpha1.ClusterCounts{Total: 7, Completed: 7}))
			Expect(final.Status.CompletedAt).NotTo(BeNil())
			Expect(final.Status.ManagedPoliciesForUpgrade).To(ConsistOf(And(
				HaveField("Name", p.Name), HaveField("Namespace", policyNS), HaveField("Generation", BeNumerically(">", 0)),
			)))
			Eventually(talmEvents(ctx, cgu)).Should(Equal(map[string]int{
				talm.ActionBuildingRemediationPlan: 1, talm.ActionRemediationStarted: 1,
				talm.ActionBatchStarted: 5, talm.ActionBatchCompleted: 5,
				talm.ActionClusterStarted: 7, talm.ActionClusterCompleted: 7, talm.ActionRemediationCompleted: 1,
			}))
			batchClusters := map[string]bool{}
			for _, e := range talmEventsOf(ctx, cgu, talm.ActionBatchCompleted)(Default) {
				Expect(e.Reason).To(Equal(talm.ReasonSuccess))
				Expect(e.Annotations).To(HaveKeyWithValue(talm.AnnotationEventType, talm.EventTypeBatch))
				for _, c := range strings.Split(e.Annotations[talm.AnnotationBatchClusters], ",") {
					Expect(batchClusters).NotTo(HaveKey(c), "the batch events name every cluster once")
					batchClusters[c] = true
				}
			}
			Expect(batchClusters).To(HaveLen(7))
			for _, e := range talmEventsOf(ctx, cgu, talm.ActionClusterCompleted)(Default) {
				Expect(e.Related).NotTo(BeNil())
				Expect(e.Annotations).To(And(HaveKeyWithValue(talm.AnnotationEventType, talm.EventTypeCluster),
					HaveKeyWithValue(talm.AnnotationClusterName, e.Related.Name)))
			}
			Consistently(talmEvents(ctx, cgu)).WithTimeout(2 * time.Second).Should(HaveKeyWithValue(talm.ActionRemediationCompleted, 1))

			By("the metrics count it")
			Expect(metricValue("cgu_operator_upgrades", "state", "Completed")).To(BeNumerically(">=", 1))
			Expect(metricValue("cgu_operator_batch_duration_seconds", "outcome", "completed")).To(BeNumerically(">=", 5))
			Expect(metricValue("cgu_operator_cluster_duration_seconds", "outcome", "completed")).To(BeNumerically(">=", 7))

			By("the batch records keep each cluster's outcome")
			var records ranv1alpha1.ClusterGroupUpgradeBatchList
			Expect(hub.Client.List(ctx, &records, client.InNamespace(cgu.Namespace))).To(Succeed())
			Expect(records.Items).To(HaveLen(5))
			for _, r := range records.Items {
				Expect(r.Status.FinishedAt).NotTo(BeNil())
				Expect(r.Status.Clusters).To(HaveEach(HaveField("State", ranv1alpha1.ClusterCompleted)))
			}
		},
		Entry("in Copy mode", "copyroll", ranv1alpha1.EnforcementCopy),
		Entry("in Override mode", "overroll", ranv1alpha1.EnforcementOverride),
	)
})

// upgradeStarted and upgradeCompleted read when a simulated cluster's update to the target
// version started and completed.
func upgradeStarted(name string) time.Time   { return historyOf(name).StartedTime.Time }
func upgradeCompleted(name string) time.Time { return historyOf(name).CompletionTime.Time }

func historyOf(name string) configv1.UpdateHistory {
	cv, err := simulator.ClusterVersion(name)
	ExpectWithOffset(2, err).NotTo(HaveOccurred())
	for _, h := range cv.Status.History {
		if h.Version == to && h.CompletionTime != nil {
			return h
		}
	}
	Fail("no completed update to " + to + " on " + name)
	return configv1.UpdateHistory{}
}

// metricValue reads a gauge's value, or a histogram's sample count, from controller-runtime's
// registry, for the series with the given label.
func metricValue(name, label, value string) float64 {
	families, err := ctrlmetrics.Registry.Gather()
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					if h := m.GetHistogram(); h != nil {
						return float64(h.GetSampleCount())
					}
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	Fail("no metric " + name + " with " + label + "=" + value)
	return 0
}
