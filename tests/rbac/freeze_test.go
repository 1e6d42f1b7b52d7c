package rbac_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/tests/prom"
)

// A FleetFreeze is hub-wide: the spec is Serial, its query never fires, and the FleetFreeze
// goes at the end.
var _ = Describe("The fleet freeze's alert queries with the operator's grants", Serial, func() {
	It("read the Secret of the query API and write the FleetFreeze's status", func(ctx SpecContext) {
		p, err := prom.StartPrometheus(ctx, prom.PrometheusOptions{Dir: GinkgoT().TempDir()})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = p.Stop() })
		create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "observability"}})
		create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "observability", Name: "query-token"},
			Data: map[string][]byte{"token": []byte("not checked by this Prometheus")}})
		ff := &ranv1alpha1.FleetFreeze{ObjectMeta: metav1.ObjectMeta{Name: "rbac-alerts"}, Spec: ranv1alpha1.FleetFreezeSpec{
			Alerts: &ranv1alpha1.FreezeAlerts{Queries: []string{"vector(0)"}, Prometheus: ranv1alpha1.PrometheusSource{URL: p.URL(),
				SecretRef: &ranv1alpha1.SecretReference{Namespace: "observability", Name: "query-token"}}}}}
		create(ctx, ff)
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(hub.Client.Delete(ctx, ff))).To(Succeed()) })
		Eventually(func(g Gomega) *metav1.Condition {
			g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(ff), ff)).To(Succeed())
			return meta.FindStatusCondition(ff.Status.Conditions, ranv1alpha1.ConditionAlertsEvaluated)
		}).WithTimeout(settle).Should(And(Not(BeNil()), HaveField("Reason", ranv1alpha1.ReasonAlertsClear)))
		Expect(ff.Status.AlertsFrozen).To(BeFalse())
	})
})
