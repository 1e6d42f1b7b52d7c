package cli_test

import (
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/cli"
	"github.com/cgu-operator/cgu-operator/tests/harness"
)

var _ = Describe("kubectl cgu preflight", func() {
	It("shows each cluster's verdict, risks, health and precache, the plan and an estimate", func(ctx SpecContext) {
		clusters := fleet.MustJoinFleetOn(ctx, "preflight", 3, harness.RiskyChannel)
		fleet.ExposeToRisk(true, clusters[2])
		p := placeUpgradePolicy(ctx, "preflight", 3)
		cgu := &ranv1alpha1.ClusterGroupUpgrade{
			ObjectMeta: metav1.ObjectMeta{Namespace: "cgu-preflight", Name: "upgrade"},
			Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
				Clusters: clusters, ManagedPolicies: []string{p.Name}, Enable: ptr.To(false),
				RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: 1, Timeout: 240},
				UpgradeChecks:       &ranv1alpha1.UpgradeChecks{PathValidation: true},
			},
		}
		fleet.MustCreate(ctx, cgu)
		DeferCleanup(func(ctx SpecContext) { // the other spec's golden list -A shows its own CGU only
			Expect(hub.Client.Delete(ctx, cgu)).To(Succeed())
			Eventually(func() error {
				return hub.Client.Get(ctx, client.ObjectKeyFromObject(cgu), &ranv1alpha1.ClusterGroupUpgrade{})
			}).WithTimeout(settle).Should(MatchError(ContainSubstring("not found")))
		})
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(
			HaveField("Status.UpgradeChecks.Counts", Equal(map[string]int{"Proceed": 2, "Hold": 1})))

		matchGolden("preflight-preview", succeeds(ctx, "preflight", "upgrade", "-n", "cgu-preflight"))

		var out cli.PreflightOutput
		Expect(json.Unmarshal([]byte(succeeds(ctx, "preflight", "upgrade", "-n", "cgu-preflight", "-o", "json")), &out)).To(Succeed())
		Expect(out.PathValidation).To(BeTrue())
		Expect(out.Plan.Batches).To(HaveLen(3))
		Expect(out.Clusters).To(HaveLen(3))
		held := out.Clusters[2]
		Expect(held.Name).To(Equal(clusters[2]))
		Expect(held.Check).NotTo(BeNil())
		Expect(held.Check.Outcome).To(Equal("Hold"))
		Expect(held.Check.Risks).To(ConsistOf(HaveField("Name", harness.Risk)))
		Expect(out.Estimate.UpperBound).To(BeTrue())
		Expect(out.Estimate.BatchesLeft).To(Equal(3))

		By("once the rollout is over, no cluster is left to start")
		fleet.MustUpdate(ctx, cgu, func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.Enable = ptr.To(true) })
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(3 * settle).Should(HaveField("Status.State", ranv1alpha1.StateCompleted))
		Expect(succeeds(ctx, "preflight", "upgrade", "-n", "cgu-preflight")).To(And(
			ContainSubstring("frozen plan of 3 batches"), ContainSubstring("No cluster is left to start")))
	})
})
