package rbac_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/mcu"
)

// mcuNS is the namespace of the release-named rollout: one of the operator's policy
// namespaces, since it writes its policies there.
const mcuNS = "mcu-rbac"

var _ = Describe("The release-named upgrade with the operator's grants", func() {
	It("writes its policies, Placements, bindings, template and ClusterGroupUpgrade, completes, and deletes them when deleted", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "mcu", 2, false, nil)
		Expect(simulator.AddNamespace("openshift-adp", clusters...)).To(Succeed())
		Expect(hub.BindClusterSet(ctx, mcuNS)).To(Succeed()) // makes the namespace, which the train's spec shares
		m := &ranv1alpha1.ManagedClustersUpgrade{
			ObjectMeta: metav1.ObjectMeta{Namespace: mcuNS, Name: "to-" + to},
			Spec: ranv1alpha1.ManagedClustersUpgradeSpec{
				ClusterSelector: &ranv1alpha1.MCUClusterSelector{MatchLabels: map[string]string{"fleet": "mcu"}},
				ClusterVersion:  ranv1alpha1.MCUClusterVersion{Channel: channel, Version: to},
				UpgradeStrategy: ranv1alpha1.MCUUpgradeStrategy{MaxConcurrency: 2},
				PreUpgradeAction: &ranv1alpha1.UpgradeAction{ManifestWork: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{
					Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Object: &corev1.ConfigMap{
						TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
						ObjectMeta: metav1.ObjectMeta{Namespace: "openshift-adp", Name: "upgrade-started"},
					}}}}}}},
			},
		}
		create(ctx, m)
		stored := func(g Gomega) *ranv1alpha1.ManagedClustersUpgrade {
			out := &ranv1alpha1.ManagedClustersUpgrade{}
			g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(m), out)).To(Succeed())
			return out
		}
		Eventually(func(g Gomega) bool {
			return meta.IsStatusConditionTrue(stored(g).Status.Conditions, ranv1alpha1.MCUConditionComplete)
		}).WithTimeout(3*settle).Should(BeTrue(), "every cluster on %s", to)
		Expect(stored(Default).Status.ClustersSummary).To(Equal(&ranv1alpha1.ClustersSummary{Total: 2, Initialized: 2, Complete: 2}))

		Expect(hub.Client.Delete(ctx, m)).To(Succeed())
		Eventually(func() error {
			return hub.Client.Get(ctx, client.ObjectKeyFromObject(m), &ranv1alpha1.ManagedClustersUpgrade{})
		}).WithTimeout(settle).Should(MatchError(ContainSubstring("not found")))
		var cgus ranv1alpha1.ClusterGroupUpgradeList
		Expect(hub.Client.List(ctx, &cgus, client.InNamespace(mcuNS), client.MatchingLabels(mcu.Labels(m)))).To(Succeed())
		Expect(cgus.Items).To(BeEmpty())
	})
})
