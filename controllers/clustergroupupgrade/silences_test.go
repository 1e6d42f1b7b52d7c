package clustergroupupgrade_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/cgu"
	"github.com/cgu-operator/cgu-operator/pkg/silences"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

// The silences go to the suite's real Alertmanager (the operator's --alertmanager-url); the
// fleet freeze reads a real Prometheus scraping the simulated clusters' ALERTS.
var _ = Describe("Quiet while upgrading", Serial, func() {
	It("silences a cluster's alerts while it upgrades and expires the silence once it completed; its silenced alert does not freeze the fleet, the same alert of another cluster does", func(ctx SpecContext) {
		// The Alertmanager runs on real time: the operator's clock is moved to it first, so
		// that a silence ending at a batch's deadline ends in the future.
		if now := time.Now(); clock.Now().Before(now) {
			clock.SetTime(now)
		}
		am := silences.Client{URL: alertmanager.URL()}
		ours := func(g Gomega) []silences.Silence {
			list, err := am.List(ctx, cgu.SilenceCreatedBy)
			g.Expect(err).NotTo(HaveOccurred())
			return list
		}

		By("a real Prometheus scraping the simulated clusters, and a FleetFreeze on critical alerts")
		p := startPrometheus(ctx)
		// Only this spec's clusters: other specs leave alerts firing on theirs.
		const query = `ALERTS{alertstate="firing",severity="critical",cluster=~"quiet-.*"}`
		ff := alertFreeze(ctx, "quiet", p, query)
		// evaluatedOn runs the freeze's query once Prometheus's answer holds series.
		evaluatedOn := func(reason, series string) {
			Eventually(promAnswer(ctx, p, query)).WithTimeout(settle).Should(ContainSubstring(series))
			evaluated(ctx, ff, reason)
		}

		By("a rollout of two clusters, one at a time, with silenceAlerts on; the first stalls mid-upgrade")
		clusters := joinFleet(ctx, "quiet", 2)
		elsewhere := joinFleet(ctx, "quiet-x", 1)[0]
		pol := placeUpgradePolicy(ctx, "quiet", 2)
		stall(clusters[0])
		upgrade := newCGU("cgu-quiet", "upgrade", clusters, 1, pol.Name)
		upgrade.Spec.SilenceAlerts = &ranv1alpha1.SilenceAlerts{Enabled: true}
		enableOnCreate(upgrade)
		fleet.MustCreate(ctx, upgrade)
		Eventually(enforcedOn(ctx, upgrade, pol.Name)).WithTimeout(settle).Should(Equal([]string{clusters[0]}))

		By("the upgrading cluster has a silence of its critical, warning and info alerts until its batch's deadline, listed in status")
		Eventually(ours).WithTimeout(settle).Should(ConsistOf(And(
			HaveField("Matchers", ConsistOf(
				silences.Matcher{Name: "cluster", Value: clusters[0], IsEqual: true},
				silences.Matcher{Name: "severity", Value: "critical|warning|info", IsRegex: true, IsEqual: true})),
			HaveField("State", "active"))))
		Eventually(fleet.Stored(ctx, upgrade)).WithTimeout(settle).Should(HaveField("Status.Silences", Not(BeNil())))
		st := fleet.Stored(ctx, upgrade)(Default).Status
		Expect(st.Silences.Clusters).To(ConsistOf(And(HaveField("Cluster", clusters[0]), HaveField("ID", ours(Default)[0].ID))))
		Expect(st.Silences.Clusters[0].EndsAt.Time).To(BeTemporally("~", st.CurrentBatch.TimeoutAt.Time, time.Second))
		Expect(ours(Default)[0].EndsAt).To(BeTemporally("~", st.CurrentBatch.TimeoutAt.Time, time.Second))

		By("the upgrading cluster's critical alert fires: its silence covers it, the fleet is not frozen")
		Expect(simulator.SetAlerts(clusters[0], []sim.Alert{{Name: "KubeAPIDown", Severity: sim.SeverityCritical, Since: clock.Now()}})).To(Succeed())
		evaluatedOn(ranv1alpha1.ReasonAlertsClear, `"cluster":"`+clusters[0]+`"`)
		Expect(ff.Status.AlertsFrozen).To(BeFalse())

		By("the same alert of a cluster that is not upgrading freezes the fleet")
		Expect(simulator.SetAlerts(elsewhere, []sim.Alert{{Name: "KubeAPIDown", Severity: sim.SeverityCritical, Since: clock.Now()}})).To(Succeed())
		evaluatedOn(ranv1alpha1.ReasonAlertsFiring, `"cluster":"`+elsewhere+`"`)
		Expect(ff.Status.Firing).To(ConsistOf(And(HaveField("Series", 1), HaveField("Shown", ConsistOf(ContainSubstring(`cluster="`+elsewhere+`"`))))))

		By("both alerts clear; the first cluster completes: its silence is expired")
		Expect(simulator.SetAlerts(elsewhere, nil)).To(Succeed())
		Expect(simulator.SetAlerts(clusters[0], nil)).To(Succeed())
		Eventually(promAnswer(ctx, p, query)).WithTimeout(settle).ShouldNot(ContainSubstring(`"cluster"`))
		evaluated(ctx, ff, ranv1alpha1.ReasonAlertsClear)
		unstall(clusters[0])
		Eventually(version(clusters[0])).WithTimeout(settle).Should(Equal(to))
		Eventually(ours).WithTimeout(settle).ShouldNot(ContainElement(HaveField("Matchers", ContainElement(HaveField("Value", clusters[0])))))

		By("the rollout completes: no silence of it is left, and status lists none")
		Eventually(state(ctx, upgrade)).WithTimeout(2 * settle).Should(Equal(ranv1alpha1.StateCompleted))
		Eventually(ours).WithTimeout(settle).Should(BeEmpty())
		Expect(fleet.Stored(ctx, upgrade)(Default).Status.Silences).To(BeNil())
	})
})
