package reliability_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
)

var _ = Describe("A rollout deleted while the operator is down, its finalizer removed by hand", func() {
	It("leaves nothing enforcing once the operator is back: its Override Placement and binding are swept", func(ctx SpecContext) {
		names, cgu, _ := upgradeRollout(ctx, "orphan", 4, 2, time.Hour)
		cgu.Spec.Enforcement = ranv1alpha1.EnforcementOverride
		fleet.MustCreate(ctx, cgu)
		Eventually(enforcedOn(ctx, names)).WithTimeout(settle).Should(HaveLen(2), "batch 1 enforced")

		By("stopping the operator, removing the finalizer and deleting the rollout")
		Expect(fleet.StopOperator(true)).To(Succeed())
		stale := stored(ctx, cgu)(Default)
		stale.Finalizers = nil
		Expect(fleet.Hub.Client.Update(ctx, stale)).To(Succeed())
		Expect(fleet.Hub.Client.Delete(ctx, stale)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(fleet.Hub.Client.Get(ctx, keyOf(cgu), &ranv1alpha1.ClusterGroupUpgrade{}))
		}).WithTimeout(settle).Should(BeTrue())
		Consistently(enforcedOn(ctx, names)).WithTimeout(time.Second).Should(HaveLen(2),
			"with nobody to clean up, the binding in the policies' namespace goes on enforcing")

		By("the objects left carry the owner labels the uninstall procedure selects them by")
		var bindings policyv1.PlacementBindingList
		Expect(fleet.Hub.Client.List(ctx, &bindings, client.HasLabels{ownership.LabelUpgradeNamespace})).To(Succeed())
		Expect(bindings.Items).To(ContainElement(HaveField("ObjectMeta.Labels", HaveKeyWithValue(ownership.LabelUpgradeNamespace, cgu.Namespace))))
		Expect(leftovers(ctx, cgu)(Default)).To(BeNumerically(">=", 2))

		By("starting the operator again")
		_, err := fleet.StartOperator()
		Expect(err).NotTo(HaveOccurred())
		Eventually(leftovers(ctx, cgu)).WithTimeout(settle).Should(BeZero())
		expectNothingEnforcing(ctx, cgu, names)
	})
})
