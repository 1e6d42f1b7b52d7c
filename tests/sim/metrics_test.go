package sim_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	"github.com/cgu-operator/cgu-operator/tests/prom"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

var _ = Describe("The metrics endpoint", func() {
	It("shows a real Prometheus each spoke's error ratio, version and alerts, degraded once an upgrade completed", func(ctx SpecContext) {
		joinFleet(ctx, "metrics",
			sim.SpokeSpec{Name: "metrics-1", Version: "4.16.10", Channel: "stable-4.16",
				Alerts: []sim.Alert{{Name: "KubeAPIErrorBudgetBurn", Severity: sim.SeverityCritical}}},
			sim.SpokeSpec{Name: "metrics-2", Version: "4.16.10", Channel: "stable-4.16",
				Behaviour: sim.Behaviour{DegradeAfterUpgrade: 0.3}})
		addr, err := simulator.ServeMetrics(ctx)
		Expect(err).NotTo(HaveOccurred())
		p, err := prom.StartPrometheus(ctx, prom.PrometheusOptions{Dir: GinkgoT().TempDir(), Targets: []string{addr}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(p.Stop)
		errorRatio := series(ctx, p, sim.MetricErrorRatio+`{cluster=~"metrics-.*"}`, "cluster")
		versions := series(ctx, p, sim.MetricVersionInfo+`{cluster=~"metrics-.*"}`, "cluster", "version")

		By("a healthy baseline for each cluster, its version and its firing alert")
		Eventually(errorRatio).WithTimeout(30 * time.Second).Should(Equal(map[string]float64{
			"metrics-1": sim.BaselineErrorRatio("metrics-1"), "metrics-2": sim.BaselineErrorRatio("metrics-2")}))
		Expect(versions()).To(Equal(map[string]float64{"metrics-1 4.16.10": 1, "metrics-2 4.16.10": 1}))
		Expect(series(ctx, p, `ALERTS{cluster=~"metrics-.*",alertstate="firing"}`, "cluster", "alertname", "severity")()).
			To(Equal(map[string]float64{"metrics-1 KubeAPIErrorBudgetBurn critical": 1}))

		By("the upgrade completing: metrics-2 degrades, metrics-1 keeps its baseline")
		placePolicy(ctx, upgradePolicy("metrics-upgrade", policyv1.Enforce), "metrics")
		Eventually(versions).WithTimeout(30 * time.Second).Should(Equal(map[string]float64{"metrics-1 4.16.12": 1, "metrics-2 4.16.12": 1}))
		Eventually(errorRatio).WithTimeout(30 * time.Second).Should(Equal(map[string]float64{
			"metrics-1": sim.BaselineErrorRatio("metrics-1"), "metrics-2": 0.3}))

		By("an unreachable cluster's series going stale")
		Expect(simulator.SetReachable(ctx, "metrics-1", false)).To(Succeed())
		Eventually(errorRatio).WithTimeout(30 * time.Second).Should(Equal(map[string]float64{"metrics-2": 0.3}))
	})
})

// series returns a function that queries Prometheus and returns the value of each series
// selected, keyed by the values of labels joined by spaces.
func series(ctx context.Context, p *prom.Prometheus, promql string, labels ...string) func() (map[string]float64, error) {
	return func() (map[string]float64, error) { return prom.Values(ctx, p.URL(), promql, labels...) }
}
