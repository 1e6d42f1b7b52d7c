package clustergroupupgrade_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

// The alert freeze runs against a real Prometheus scraping the simulator's metrics endpoint,
// where every simulated cluster's firing alerts are ALERTS series labelled by cluster.
var _ = Describe("A fleet freeze on alerts", Serial, func() {
	It("freezes two running rollouts while an alert fires, stays frozen while the endpoint is down, and frees both once it answers that the alert cleared", func(ctx SpecContext) {
		By("a real Prometheus scraping the simulated clusters every second")
		p := startPrometheus(ctx)
		const query = `ALERTS{alertname="KubeAPIDown",alertstate="firing"}`
		firingSeries := promAnswer(ctx, p, query)

		By("two rollouts of two batches, each running its first cluster, stalled")
		a, b := joinFleet(ctx, "alerts-a", 2), joinFleet(ctx, "alerts-b", 2)
		pa, pb := placeUpgradePolicy(ctx, "alerts-a", 2), placeUpgradePolicy(ctx, "alerts-b", 2)
		elsewhere := joinFleet(ctx, "alerts-x", 1)[0]
		stall(a[0])
		stall(b[0])
		cguA, cguB := newCGU("cgu-alerts", "a", a, 1, pa.Name), newCGU("cgu-alerts", "b", b, 1, pb.Name)
		for _, c := range []*ranv1alpha1.ClusterGroupUpgrade{cguA, cguB} {
			enableOnCreate(c)
			fleet.MustCreate(ctx, c)
		}
		Eventually(enforcedOn(ctx, cguA, pa.Name)).WithTimeout(settle).Should(Equal([]string{a[0]}))
		Eventually(enforcedOn(ctx, cguB, pb.Name)).WithTimeout(settle).Should(Equal([]string{b[0]}))

		By("a FleetFreeze on the alert query: clear at first")
		ff := alertFreeze(ctx, "noc", p, query)
		evaluated(ctx, ff, ranv1alpha1.ReasonAlertsClear)

		By("KubeAPIDown fires on a cluster of neither rollout: both freeze, naming the alert")
		Expect(simulator.SetAlerts(elsewhere, []sim.Alert{{Name: "KubeAPIDown", Severity: sim.SeverityCritical, Since: clock.Now()}})).To(Succeed())
		Eventually(firingSeries).WithTimeout(settle).Should(ContainSubstring(`"cluster":"` + elsewhere + `"`))
		evaluated(ctx, ff, ranv1alpha1.ReasonAlertsFiring)
		Expect(ff.Status.AlertsFrozen).To(BeTrue())
		Expect(ff.Status.Firing).To(ConsistOf(And(HaveField("Query", query), HaveField("Series", 1),
			HaveField("Shown", ConsistOf(ContainSubstring(`cluster="`+elsewhere+`"`))))))
		frozen := And(HaveField("Reason", ranv1alpha1.ReasonFleetFrozen),
			HaveField("Message", ContainSubstring("the fleet is frozen by the alert queries of FleetFreeze noc: "+query+" fires (1 series")))
		for _, c := range []*ranv1alpha1.ClusterGroupUpgrade{cguA, cguB} {
			Eventually(condition(ctx, c, ranv1alpha1.ConditionProgressing)).WithTimeout(settle).Should(frozen)
		}

		By("the running clusters finish; neither second batch starts")
		unstall(a[0])
		unstall(b[0])
		Eventually(version(a[0])).WithTimeout(settle).Should(Equal(to))
		Eventually(version(b[0])).WithTimeout(settle).Should(Equal(to))
		for _, c := range []*ranv1alpha1.ClusterGroupUpgrade{cguA, cguB} {
			Eventually(fleet.Stored(ctx, c)).WithTimeout(settle).Should(HaveField("Status.Waiting",
				And(Not(BeNil()), HaveField("Reason", ranv1alpha1.ReasonFleetFrozen), HaveField("Batch", 2))))
		}

		By("the alert clears while the endpoint is down: the freeze holds, failing closed")
		Expect(simulator.SetAlerts(elsewhere, nil)).To(Succeed())
		Eventually(func(g Gomega) bool { return strings.Contains(firingSeries(g), elsewhere) }).WithTimeout(settle).Should(BeFalse())
		Expect(p.Down()).To(Succeed())
		evaluated(ctx, ff, ranv1alpha1.ReasonQueryFailed)
		Expect(ff.Status.AlertsFrozen).To(BeTrue())
		Eventually(condition(ctx, cguA, ranv1alpha1.ConditionProgressing)).WithTimeout(settle).Should(And(
			HaveField("Reason", ranv1alpha1.ReasonFleetFrozen), HaveField("Message", ContainSubstring("The endpoint did not answer, so the fleet stays frozen"))))
		Expect(desired(a[1])(Default)).NotTo(Equal(to), "a cluster started during the freeze")
		Expect(desired(b[1])(Default)).NotTo(Equal(to), "a cluster started during the freeze")

		By("the endpoint back, the alert clear: both rollouts go on and complete")
		Expect(p.Up(ctx)).To(Succeed())
		evaluated(ctx, ff, ranv1alpha1.ReasonAlertsClear)
		Eventually(state(ctx, cguA)).WithTimeout(2 * settle).Should(Equal(ranv1alpha1.StateCompleted))
		Eventually(state(ctx, cguB)).WithTimeout(2 * settle).Should(Equal(ranv1alpha1.StateCompleted))
	})
})
