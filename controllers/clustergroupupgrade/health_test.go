package clustergroupupgrade_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/spokehealth"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

var _ = Describe("Health checks", func() {
	It("hold a cluster unhealthy before its upgrade and fail one unhealthy after it, running on the clusters", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "health", 3)
		healthy, degraded, alerting := clusters[0], clusters[1], clusters[2]
		p := placeUpgradePolicy(ctx, "health", 3)
		Expect(simulator.SetClusterOperatorCondition(degraded, "dns", configv1.OperatorDegraded, configv1.ConditionTrue,
			"DNSDegraded", "DNS default is not ready")).To(Succeed())
		stall(alerting)

		cgu := newCGU("cgu-health", "upgrade", clusters, 3, p.Name)
		cgu.Spec.UpgradeChecks = &ranv1alpha1.UpgradeChecks{Health: &ranv1alpha1.HealthChecks{BeforeUpgrade: true, AfterUpgrade: true}}
		fleet.MustCreate(ctx, cgu)

		By("before enable, the check runs on every planned cluster and status shows the unhealthy one")
		Eventually(checkOf(ctx, cgu, degraded)).WithTimeout(settle).Should(And(
			Not(BeNil()), HaveField("Outcome", string(upgradecheck.Hold)),
			HaveField("Reason", upgradecheck.ReasonClusterOperatorsUnhealthy), HaveField("Message", ContainSubstring("dns (Degraded)"))))
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(
			HaveField("Status.UpgradeChecks.Counts", Equal(map[string]int{"Proceed": 2, "Hold": 1})))
		code, out := kubectlCGU(ctx, "preflight", cgu.Name, "-n", cgu.Namespace)
		Expect(code).To(BeZero(), out)
		Expect(out).To(MatchRegexp(degraded + `\s+1\s+-\s+-\s+-\s+ClusterOperatorsUnhealthy`))
		fleet.MustUpdate(ctx, cgu, func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.Enable = ptr.To(true) })

		By("the health check runs on each cluster before it starts: the degraded one is held")
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			firstBatchShows(alerting, ranv1alpha1.ClusterInProgress),
			HaveField("Status.CurrentBatch.Clusters", ContainElement(And(
				HaveField("Name", degraded), HaveField("State", ranv1alpha1.ClusterPending),
				HaveField("Reason", upgradecheck.ReasonClusterOperatorsUnhealthy)))),
		))
		Expect(fleet.Stored(ctx, cgu)(Default).Status.Message).To(ContainSubstring("dns (Degraded)"))

		By("a critical alert fires on a cluster while it upgrades: its check after the upgrade fails it")
		Expect(simulator.SetAlerts(alerting, []sim.Alert{{Name: "KubeAPIErrorBudgetBurn", Severity: sim.SeverityCritical}})).To(Succeed())
		unstall(alerting)
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateTimedOut))
		final := fleet.Stored(ctx, cgu)(Default)
		Expect(final.Status.Counts).To(And(HaveField("Completed", 1), HaveField("Failed", 1), HaveField("Held", 1)))
		Expect(condition(ctx, cgu, ranv1alpha1.ConditionSucceeded)(Default)).To(HaveField("Reason", ranv1alpha1.ReasonClustersFailed))
		Expect(version(healthy)(Default)).To(Equal(to))
		Expect(version(alerting)(Default)).To(Equal(to), "the upgrade itself went through; the cluster is unhealthy after it")
		Expect(desired(degraded)(Default)).To(BeEmpty(), "a held cluster is never enforced")
		Eventually(events(ctx, cgu)).WithTimeout(settle).Should(HaveKeyWithValue("ClusterHeld", 1))

		By("the batch record says why; the reports were written on the clusters by their Jobs")
		var records ranv1alpha1.ClusterGroupUpgradeBatchList
		Expect(hub.Client.List(ctx, &records, client.InNamespace(cgu.Namespace))).To(Succeed())
		var recorded []ranv1alpha1.ClusterProgress
		for _, r := range records.Items {
			recorded = append(recorded, r.Status.Clusters...)
		}
		Expect(recorded).To(ContainElements(
			And(HaveField("Name", alerting), HaveField("State", ranv1alpha1.ClusterFailed), HaveField("Reason", upgradecheck.ReasonCriticalAlertsFiring)),
			And(HaveField("Name", degraded), HaveField("State", ranv1alpha1.ClusterHeld), HaveField("Reason", upgradecheck.ReasonClusterOperatorsUnhealthy)),
			And(HaveField("Name", healthy), HaveField("State", ranv1alpha1.ClusterCompleted)),
		))
		reports, err := simulator.Objects(alerting, corev1.SchemeGroupVersion.WithKind("ConfigMap"), spokejob.Namespace)
		Expect(err).NotTo(HaveOccurred())
		Expect(reports).To(ContainElement(WithTransform(func(u *unstructured.Unstructured) string {
			data, _, _ := unstructured.NestedString(u.Object, "data", spokehealth.DataKey)
			return data
		}, ContainSubstring("KubeAPIErrorBudgetBurn"))))
	})
})
