package clustergroupupgrade_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

var _ = Describe("Cleanup", func() {
	It("with deleteObjects false keeps the objects of a completed rollout, enforcing nothing", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "keep", 2)
		p := placeUpgradePolicy(ctx, "keep", 2)
		cgu := newCGU("cgu-keep", "upgrade", clusters, 1, p.Name)
		cgu.Spec.Enforcement = ranv1alpha1.EnforcementCopy // its copy is one of the objects kept
		cgu.Spec.Actions.AfterCompletion = &ranv1alpha1.AfterCompletion{DeleteObjects: ptr.To(false)}
		enableOnCreate(cgu)
		fleet.MustCreate(ctx, cgu)
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		Consistently(leftovers(ctx, cgu)).WithTimeout(2*time.Second).Should(Equal(3), "the copy, its Placement and its PlacementBinding")
		Eventually(enforcedOn(ctx, cgu, p.Name)).WithTimeout(settle).Should(BeEmpty())
		var decisions clusterv1beta1.PlacementDecisionList
		Expect(hub.Client.List(ctx, &decisions, client.InNamespace(cgu.Namespace))).To(Succeed())
		for _, d := range decisions.Items {
			Expect(d.Status.Decisions).To(BeEmpty(), d.Name)
		}
	})

	DescribeTable("deleting a CGU mid-rollout leaves nothing enforcing",
		func(ctx SpecContext, label string, mode ranv1alpha1.EnforcementMode) {
			_, p, cgu := stalledRollout(ctx, label, mode, 0)

			By("every object it made is kept out of the hub backup, as TALM's Placements and bindings are")
			Expect(keptOutOfBackup(ctx, cgu)).To(And(HaveKey(HavePrefix("Placement ")), HaveKey(HavePrefix("PlacementBinding "))))

			Expect(hub.Client.Delete(ctx, cgu)).To(Succeed())
			Eventually(func() error {
				return hub.Client.Get(ctx, keyOf(cgu), &ranv1alpha1.ClusterGroupUpgrade{})
			}).WithTimeout(settle).Should(MatchError(ContainSubstring("not found")))
			Expect(leftovers(ctx, cgu)(Default)).To(BeZero())
			Eventually(enforcedOn(ctx, cgu, p.Name)).WithTimeout(settle).Should(BeEmpty())
			Expect(rootCompliance(ctx, p.Name)(Default)).To(HaveLen(2), "the inform policy keeps reporting")
		},
		Entry("in Copy mode", "delcopy", ranv1alpha1.EnforcementCopy),
		Entry("in Override mode", "delover", ranv1alpha1.EnforcementOverride),
	)
})

var _ = Describe("Hub templates in Copy mode", func() {
	It("copy the ConfigMaps the templates read, and roll out with the values they hold", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "hubtpl", 2)
		Expect(hub.Client.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: policyNS, Name: "site-data"},
			Data:       map[string]string{"release": to},
		})).To(Succeed())
		p := placeTemplatedPolicy(ctx, "hubtpl", `{{hub fromConfigMap "" "site-data" "release" hub}}`, 2)

		cgu := newCGU("cgu-hubtpl", "upgrade", clusters, 0, p.Name)
		cgu.Spec.Enforcement = ranv1alpha1.EnforcementCopy
		enableOnCreate(cgu)
		fleet.MustCreate(ctx, cgu)
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		for _, c := range clusters {
			Expect(version(c)(Default)).To(Equal(to))
		}
		Eventually(func() error {
			return hub.Client.Get(ctx, client.ObjectKey{Namespace: cgu.Namespace, Name: "site-data"}, &corev1.ConfigMap{})
		}).WithTimeout(settle).Should(MatchError(ContainSubstring("not found")), "the copied ConfigMap goes with the copy")
	})

	It("refuse a template reading a Secret, naming it", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "secret", 1)
		p := placeTemplatedPolicy(ctx, "secret", `{{hub fromSecret "" "creds" "release" hub}}`, 1)

		cgu := newCGU("cgu-secret", "upgrade", clusters, 0, p.Name)
		cgu.Spec.Enforcement = ranv1alpha1.EnforcementCopy
		fleet.MustCreate(ctx, cgu)
		Eventually(condition(ctx, cgu, ranv1alpha1.ConditionValidated)).WithTimeout(settle).Should(And(
			HaveField("Reason", ranv1alpha1.ReasonUnsupportedHubTemplate),
			HaveField("Message", And(ContainSubstring("policies/secret-upgrade"), ContainSubstring("fromSecret"))),
		))
	})
})
