package clustergroupupgrade_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/tests/prom"
)

// startPrometheus runs a real Prometheus scraping the simulated clusters' metrics every
// second, until the spec ends.
func startPrometheus(ctx SpecContext) *prom.Prometheus {
	addr, err := simulator.ServeMetrics(ctx)
	Expect(err).NotTo(HaveOccurred())
	p, err := prom.StartPrometheus(ctx, prom.PrometheusOptions{Dir: GinkgoT().TempDir(), Targets: []string{addr}})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { _ = p.Stop() })
	return p
}

// promAnswer returns the body of Prometheus's answer to an instant query.
func promAnswer(ctx context.Context, p *prom.Prometheus, query string) func(Gomega) string {
	return func(g Gomega) string {
		body, err := prom.Query(ctx, p.URL(), query)
		g.Expect(err).NotTo(HaveOccurred())
		return string(body)
	}
}

// alertFreeze makes a FleetFreeze running query on p every 10 seconds, deleted when the spec
// ends.
func alertFreeze(ctx SpecContext, name string, p *prom.Prometheus, query string) *ranv1alpha1.FleetFreeze {
	ff := &ranv1alpha1.FleetFreeze{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: ranv1alpha1.FleetFreezeSpec{
		Alerts: &ranv1alpha1.FreezeAlerts{Prometheus: ranv1alpha1.PrometheusSource{URL: p.URL()}, Queries: []string{query}, Interval: "10s"}}}
	Expect(hub.Client.Create(ctx, ff)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(hub.Client.Delete(ctx, ff))).To(Succeed()) })
	return ff
}

// evaluated runs ff's queries once more and waits for the reason they give: they run every
// 10 seconds of the operator's clock, so the clock moves on and the controller is woken, as
// its timer would. ff is read back.
func evaluated(ctx context.Context, ff *ranv1alpha1.FleetFreeze, reason string) {
	GinkgoHelper()
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
