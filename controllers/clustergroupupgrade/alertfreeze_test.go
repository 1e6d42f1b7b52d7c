package clustergroupupgrade_test

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/tests/prom"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

// The alert freeze runs against a real Prometheus scraping the simulator's metrics endpoint,
// where every simulated cluster's firing alerts are ALERTS series labelled by cluster.
var _ = Describe("A fleet freeze on alerts", Serial, func() {
	It("freezes two running rollouts while an alert fires, stays frozen while the endpoint is down, and frees both once it answers that the alert cleared", func(ctx SpecContext) {
		By("a real Prometheus scraping the simulated clusters every second")
		addr, err := simulator.ServeMetrics(ctx)
		Expect(err).NotTo(HaveOccurred())
		p, err := prom.StartPrometheus(ctx, prom.PrometheusOptions{Dir: GinkgoT().TempDir(), Targets: []string{addr}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = p.Stop() })
		const query = `ALERTS{alertname="KubeAPIDown",alertstate="firing"}`
		firingSeries := func(g Gomega) string {
			body, err := prom.Query(ctx, p.URL(), query)
			g.Expect(err).NotTo(HaveOccurred())
			return string(body)
		}

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
		ff := &ranv1alpha1.FleetFreeze{ObjectMeta: metav1.ObjectMeta{Name: "noc"}, Spec: ranv1alpha1.FleetFreezeSpec{
			Alerts: &ranv1alpha1.FreezeAlerts{Prometheus: ranv1alpha1.PrometheusSource{URL: p.URL()}, Queries: []string{query}, Interval: "10s"}}}
		Expect(hub.Client.Create(ctx, ff)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(hub.Client.Delete(ctx, ff))).To(Succeed()) })
		evaluated := func(reason string) {
			// The queries run every 10 seconds of the operator's clock: move it on and wake the
			// controller, as its timer would.
			clock.Step(10 * time.Second)
			Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(ff), ff)).To(Succeed())
			patch := client.MergeFrom(ff.DeepCopy())
			ff.Annotations = map[string]string{"test/poke": clock.Now().String()}
			Expect(hub.Client.Patch(ctx, ff, patch)).To(Succeed())
			Eventually(func(g Gomega) string {
				g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(ff), ff)).To(Succeed())
				for _, c := range ff.Status.Conditions {
					if c.Type == ranv1alpha1.ConditionAlertsEvaluated && ff.Status.CheckedAt != nil && !ff.Status.CheckedAt.Time.Before(clock.Now().Add(-time.Second)) {
						return c.Reason
					}
				}
				return ""
			}).WithTimeout(settle).Should(Equal(reason))
		}
		evaluated(ranv1alpha1.ReasonAlertsClear)

		By("KubeAPIDown fires on a cluster of neither rollout: both freeze, naming the alert")
		Expect(simulator.SetAlerts(elsewhere, []sim.Alert{{Name: "KubeAPIDown", Severity: sim.SeverityCritical, Since: clock.Now()}})).To(Succeed())
		Eventually(firingSeries).WithTimeout(settle).Should(ContainSubstring(`"cluster":"` + elsewhere + `"`))
		evaluated(ranv1alpha1.ReasonAlertsFiring)
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
		evaluated(ranv1alpha1.ReasonQueryFailed)
		Expect(ff.Status.AlertsFrozen).To(BeTrue())
		Eventually(condition(ctx, cguA, ranv1alpha1.ConditionProgressing)).WithTimeout(settle).Should(And(
			HaveField("Reason", ranv1alpha1.ReasonFleetFrozen), HaveField("Message", ContainSubstring("The endpoint did not answer, so the fleet stays frozen"))))
		Expect(desired(a[1])(Default)).NotTo(Equal(to), "a cluster started during the freeze")
		Expect(desired(b[1])(Default)).NotTo(Equal(to), "a cluster started during the freeze")

		By("the endpoint back, the alert clear: both rollouts go on and complete")
		Expect(p.Up(ctx)).To(Succeed())
		evaluated(ranv1alpha1.ReasonAlertsClear)
		Eventually(state(ctx, cguA)).WithTimeout(2 * settle).Should(Equal(ranv1alpha1.StateCompleted))
		Eventually(state(ctx, cguB)).WithTimeout(2 * settle).Should(Equal(ranv1alpha1.StateCompleted))
	})
})
