package clustergroupupgrade_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

var _ = Describe("Cluster actions and Placement selection", func() {
	It("labels clusters when the rollout starts and as each completes", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "acts", 2)
		p := placeUpgradePolicy(ctx, "acts", 2)
		stall(clusters[1])
		cgu := newCGU("cgu-acts", "upgrade", clusters, 0, p.Name)
		cgu.Spec.Actions = ranv1alpha1.Actions{
			BeforeEnable: &ranv1alpha1.BeforeEnable{ClusterActions: ranv1alpha1.ClusterActions{
				AddClusterLabels: map[string]ranv1alpha1.LabelValue{"upgrade-running": ""},
			}},
			AfterCompletion: &ranv1alpha1.AfterCompletion{ClusterActions: ranv1alpha1.ClusterActions{
				AddClusterLabels: map[string]ranv1alpha1.LabelValue{"upgrade-done": ""}, RemoveClusterLabels: []string{"upgrade-running"},
				AddClusterAnnotations: map[string]string{"upgraded-to": to},
			}},
		}
		enableOnCreate(cgu)
		fleet.MustCreate(ctx, cgu)
		Eventually(clusterLabels(ctx, clusters[0])).WithTimeout(settle).Should(And(HaveKey("upgrade-done"), Not(HaveKey("upgrade-running"))))
		Expect(clusterLabels(ctx, clusters[1])(Default)).To(And(HaveKey("upgrade-running"), Not(HaveKey("upgrade-done"))),
			"the stalled cluster has not completed")
		mc := &clusterv1.ManagedCluster{}
		Expect(hub.Client.Get(ctx, client.ObjectKey{Name: clusters[0]}, mc)).To(Succeed())
		Expect(mc.Annotations).To(HaveKeyWithValue("upgraded-to", to))

		unstall(clusters[1])
		Eventually(clusterLabels(ctx, clusters[1])).WithTimeout(settle).Should(And(HaveKey("upgrade-done"), Not(HaveKey("upgrade-running"))))
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
	})

	It("selects the clusters a Placement decides, and follows its decisions until enabled", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "placed", 3)
		p := placeUpgradePolicy(ctx, "placed", 3)
		Expect(hub.BindClusterSet(ctx, "cgu-placed")).To(Succeed())
		placement := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: "cgu-placed", Name: "wave-1"}}
		placement.Spec.Predicates = []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "placed", "wave": "1"}},
		}}}
		Expect(hub.Client.Create(ctx, placement)).To(Succeed())

		cgu := newCGU("cgu-placed", "upgrade", nil, 0, p.Name)
		cgu.Spec.PlacementRef = &ranv1alpha1.LocalPlacementReference{Name: "wave-1"}
		fleet.MustCreate(ctx, cgu)
		Eventually(condition(ctx, cgu, ranv1alpha1.ConditionClustersSelected)).WithTimeout(settle).
			Should(HaveField("Reason", ranv1alpha1.ReasonNoClustersSelected))

		By("labelling two clusters into the wave")
		for _, c := range clusters[:2] {
			setClusterLabel(ctx, c, "wave", "1")
		}
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Status.Plan.Clusters", 2))
		enable(ctx, cgu)
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		Expect(desired(clusters[2])(Default)).To(BeEmpty())
	})

	It("reports missing ManifestWork templates and a missing Placement", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "mwt", 1)
		p := placeUpgradePolicy(ctx, "mwt", 1)
		withTemplates := newCGU("cgu-mwt", "templates", clusters, 0, p.Name)
		withTemplates.Spec.ManifestWorkTemplates = []string{"pre-upgrade", "post-upgrade"}
		fleet.MustCreate(ctx, withTemplates)
		Eventually(condition(ctx, withTemplates, ranv1alpha1.ConditionValidated)).WithTimeout(settle).Should(And(
			HaveField("Reason", ranv1alpha1.ReasonNotAllManifestTemplatesExist),
			HaveField("Message", "ManifestWorkReplicaSets not found in cgu-mwt: pre-upgrade, post-upgrade"),
		))
		noPlacement := newCGU("cgu-mwt", "placement", nil, 0, p.Name)
		noPlacement.Spec.PlacementRef = &ranv1alpha1.LocalPlacementReference{Name: "absent"}
		fleet.MustCreate(ctx, noPlacement)
		Eventually(condition(ctx, noPlacement, ranv1alpha1.ConditionClustersSelected)).WithTimeout(settle).Should(And(
			HaveField("Reason", ranv1alpha1.ReasonPlacementNotFound),
			HaveField("Message", "spec.placementRef: Placement cgu-mwt/absent does not exist"),
		))
	})
})

// clusterLabels returns a ManagedCluster's labels.
func clusterLabels(ctx SpecContext, name string) func(Gomega) map[string]string {
	return func(g Gomega) map[string]string {
		mc := &clusterv1.ManagedCluster{}
		g.Expect(hub.Client.Get(ctx, client.ObjectKey{Name: name}, mc)).To(Succeed())
		return mc.Labels
	}
}

// setClusterLabel sets a label on a ManagedCluster.
func setClusterLabel(ctx SpecContext, name, key, value string) {
	EventuallyWithOffset(1, func(g Gomega) {
		mc := &clusterv1.ManagedCluster{}
		g.Expect(hub.Client.Get(ctx, client.ObjectKey{Name: name}, mc)).To(Succeed())
		mc.Labels[key] = value
		g.Expect(hub.Client.Update(ctx, mc)).To(Succeed())
	}).Should(Succeed())
}
