package rbac_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/ibgu"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

var _ = Describe("The image-based group upgrade with the operator's grants", func() {
	It("sends the Prep content (a ConfigMap and the pull Secret, read by name), runs each step as a CGU, and deletes the ended steps' ManifestWorks", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "ibgu", 2, false, func(s *sim.SpokeSpec) {
			s.LifecycleAgent = &sim.LifecycleAgentBehaviour{Durations: map[string]time.Duration{sim.StagePrep: 300 * time.Millisecond, sim.StageUpgrade: time.Second}}
		})
		for _, ns := range []string{"openshift-adp", "openshift-lifecycle-agent"} {
			Expect(simulator.AddNamespace(ns, clusters...)).To(Succeed())
		}
		const ns = "ibgu-rbac"
		create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "openshift-adp"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "openshift-adp", Name: "oadp-backup"}, Data: map[string]string{"backup.yaml": "kind: Backup"}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "seed-pull"}, Data: map[string][]byte{".dockerconfigjson": []byte(`{"auths":{}}`)}})
		step := func(actions ...lcmv1alpha1.Action) lcmv1alpha1.PlanItem {
			return lcmv1alpha1.PlanItem{Actions: actions, RolloutStrategy: lcmv1alpha1.RolloutStrategy{MaxConcurrency: 2, Timeout: 60}}
		}
		g := &lcmv1alpha1.ImageBasedGroupUpgrade{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "to-4.18"},
			Spec: lcmv1alpha1.ImageBasedGroupUpgradeSpec{
				IBUSpec: lcmv1alpha1.ImageBasedUpgradeSpec{
					SeedImageRef: lcmv1alpha1.SeedImageRef{Image: "quay.io/example/seed:4.18.1", Version: "4.18.1",
						PullSecretRef: &lcmv1alpha1.PullSecretRef{Name: "seed-pull"}},
					OADPContent: []lcmv1alpha1.ConfigMapRef{{Namespace: "openshift-adp", Name: "oadp-backup"}},
				},
				ClusterLabelSelectors: []ranv1alpha1.ClusterLabelSelector{{MatchLabels: map[string]string{"fleet": "ibgu"}}},
				Plan:                  []lcmv1alpha1.PlanItem{step("Prep"), step("Upgrade", "FinalizeUpgrade")},
			},
		}
		create(ctx, g)
		Eventually(func(gm Gomega) []metav1.Condition {
			out := &lcmv1alpha1.ImageBasedGroupUpgrade{}
			gm.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(g), out)).To(Succeed())
			return out.Status.Conditions
		}).WithTimeout(3 * settle).Should(ContainElement(And(HaveField("Type", ibgu.ConditionProgressing), HaveField("Reason", ibgu.ReasonCompleted))))
		for _, c := range clusters {
			_, err := simulator.Object(c, corev1.SchemeGroupVersion.WithKind("Secret"), "openshift-lifecycle-agent", "seed-pull")
			Expect(err).NotTo(HaveOccurred(), "the pull secret reached %s", c)
		}
	})
})
