package clustergroupupgrade_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

// upgradedEarlier sets a simulated ClusterVersion's spec.desiredUpdate to the target
// version, as an earlier upgrade to it left it.
func upgradedEarlier() func(configpolicy.Store) error {
	return func(objects configpolicy.Store) error {
		cv, err := objects.Get(configv1.GroupVersion.WithKind("ClusterVersion"), "", "version")
		if err != nil {
			return err
		}
		cv = cv.DeepCopy()
		if err := unstructured.SetNestedField(cv.Object, to, "spec", "desiredUpdate", "version"); err != nil {
			return err
		}
		return objects.Update(cv)
	}
}

var _ = Describe("Selection and validation", func() {
	It("names unknown clusters and starts nothing, even when enabled", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "unknown", 1)
		p := placeUpgradePolicy(ctx, "unknown", 1)
		cgu := newCGU("cgu-unknown", "upgrade", append(clusters, "ghost-1", "ghost-2"), 0, p.Name)
		cgu.Spec.Enable = ptr.To(true)
		fleet.MustCreate(ctx, cgu)
		Eventually(condition(ctx, cgu, ranv1alpha1.ConditionClustersSelected)).WithTimeout(settle).Should(And(
			HaveField("Status", metav1.ConditionFalse),
			HaveField("Reason", ranv1alpha1.ReasonClusterNotFound),
			HaveField("Message", "Clusters not found on the hub: ghost-1, ghost-2"),
		))
		Expect(state(ctx, cgu)(Default)).To(Equal(ranv1alpha1.StateCannotStart))
		Consistently(desired(clusters[0])).WithTimeout(2 * time.Second).Should(BeEmpty())
		Eventually(talmEvents(ctx, cgu)).Should(Equal(map[string]int{
			talm.ActionBuildingRemediationPlan: 1, talm.ActionOnHoldDueToValidationFailure: 1,
		}))
		failure := talmEventsOf(ctx, cgu, talm.ActionOnHoldDueToValidationFailure)(Default)[0]
		Expect(failure.Reason).To(Equal(talm.ReasonValidationFailure))
		Expect(failure.Annotations).To(And(
			HaveKeyWithValue(talm.AnnotationMissingClusters, "ghost-1,ghost-2"), HaveKeyWithValue(talm.AnnotationMissingClustersCnt, "2")))
	})

	It("reports missing and ambiguous managed policies", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "ambig", 2)
		p := placeUpgradePolicy(ctx, "ambig", 2)
		missing := newCGU("cgu-ambig", "missing", clusters, 0, p.Name, "no-such-policy")
		fleet.MustCreate(ctx, missing)
		Eventually(condition(ctx, missing, ranv1alpha1.ConditionValidated)).WithTimeout(settle).Should(And(
			HaveField("Reason", ranv1alpha1.ReasonNotAllManagedPoliciesExist),
			HaveField("Message", ContainSubstring("no-such-policy")),
		))

		By("the same policy name placed from a second namespace")
		Expect(hub.BindClusterSet(ctx, "policies-b")).To(Succeed())
		twin := world.UpgradePolicy("policies-b", p.Name, to, policyv1.Inform)
		Expect(hub.PlacePolicy(ctx, twin, metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "ambig"}})).To(Succeed())
		ambiguous := newCGU("cgu-ambig", "ambiguous", clusters, 0, p.Name)
		fleet.MustCreate(ctx, ambiguous)
		Eventually(condition(ctx, ambiguous, ranv1alpha1.ConditionValidated)).WithTimeout(settle).Should(And(
			HaveField("Reason", ranv1alpha1.ReasonAmbiguousManagedPoliciesNames),
			HaveField("Message", ContainSubstring(p.Name+" (in policies and policies-b)")),
		))
		Expect(fleet.Stored(ctx, ambiguous)(Default).Status.Plan).To(BeNil(), "no plan for an invalid spec")
	})

	It("leaves out clusters already compliant, and follows cluster list edits until enabled", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "edit", 3)
		Expect(hub.AddClusters(ctx, world.Cluster{Name: "edit-done", Labels: map[string]string{"fleet": "edit"}})).To(Succeed())
		Expect(simulator.AddSpokes(sim.SpokeSpec{Name: "edit-done", Version: to, Channel: "stable-4.16"})).To(Succeed())
		Expect(simulator.Mutate("edit-done", upgradedEarlier())).To(Succeed())
		p := placeUpgradePolicy(ctx, "edit", 4)
		Eventually(rootCompliance(ctx, p.Name)).WithTimeout(settle).Should(HaveKeyWithValue("edit-done", policyv1.Compliant))

		cgu := newCGU("cgu-edit", "upgrade", []string{clusters[0], "edit-done"}, 1, p.Name)
		fleet.MustCreate(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			HaveField("Status.Plan.Clusters", 1), HaveField("Status.Plan.SkippedCompliant", 1),
		))

		By("adding clusters before enable changes the plan")
		fleet.MustUpdate(ctx, cgu, func(c *ranv1alpha1.ClusterGroupUpgrade) {
			c.Spec.Clusters = append(c.Spec.Clusters, clusters[1], clusters[2])
		})
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Status.Plan.Batches", 3))

		By("once enabled the plan is frozen")
		enable(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Status.Plan.FrozenAt", Not(BeNil())))
		fleet.MustUpdate(ctx, cgu, func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.Clusters = c.Spec.Clusters[:1] })
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		final := fleet.Stored(ctx, cgu)(Default)
		Expect(final.Status.Plan.Batches).To(Equal(3))
		Expect(final.Status.Counts.Completed).To(Equal(3))
		for _, c := range clusters {
			Expect(version(c)(Default)).To(Equal(to))
		}
	})
})
