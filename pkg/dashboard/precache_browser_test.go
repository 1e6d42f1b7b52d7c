package dashboard_test

import (
	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/precache/pull/pulltest"
)

var _ = Describe("The dashboard's pre-caching", func() {
	It("shows where the pre-caching of a rollout not started stands, and its bandwidth plan", func(ctx SpecContext) {
		f := pulltest.NewFixture(GinkgoT())
		clusters := fleet.MustJoinFleet(ctx, "web-pipe", 2)
		p := fleet.MustPlaceUpgradePolicy(ctx, "web-pipe", 2, settle)
		for _, c := range clusters {
			Eventually(func(g Gomega) {
				mc := &clusterv1.ManagedCluster{}
				g.Expect(fleet.Hub.Client.Get(ctx, client.ObjectKey{Name: c}, mc)).To(Succeed())
				mc.Labels["example.com/line"] = "50"
				g.Expect(fleet.Hub.Client.Update(ctx, mc)).To(Succeed())
			}).Should(Succeed())
		}
		release := fleet.SlowPrecache(clusters[0])
		DeferCleanup(release)
		cgu := &ranv1alpha1.ClusterGroupUpgrade{
			ObjectMeta: metav1.ObjectMeta{Namespace: "cgu-web-pipe", Name: "pipe"},
			Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
				Clusters: clusters, ManagedPolicies: []string{p.Name}, Enable: ptr.To(false), PreCaching: true,
				RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: 2, Timeout: 240},
			},
		}
		fleet.MustCreate(ctx, cgu)
		spec := f.Spec()
		Expect(fleet.Hub.Client.Create(ctx, &ranv1alpha1.PreCachingConfig{
			ObjectMeta: metav1.ObjectMeta{Namespace: cgu.Namespace, Name: "pipe"},
			Spec: ranv1alpha1.PreCachingConfigSpec{
				Overrides: ranv1alpha1.PrecacheOverrides{PlatformImage: spec.PlatformImage, OperatorsIndexes: spec.OperatorsIndexes,
					OperatorsPackagesAndChannels: spec.OperatorsPackagesAndChannels},
				SpaceRequired: "1Mi",
				// A mirror of 50 Mbit/s: the second site waits for the first.
				Bandwidth: &ranv1alpha1.PrecacheBandwidth{RegistryMbps: 50, LineLabel: "example.com/line"},
			},
		})).To(Succeed())
		fleet.MustUpdate(ctx, cgu, func(c *ranv1alpha1.ClusterGroupUpgrade) {
			c.Spec.PreCachingConfigRef = ranv1alpha1.PreCachingConfigCR{Name: "pipe"}
		})
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Status.Precaching.Plan.ETA", Not(BeNil())))

		admin := serveDashboard(ctx)
		tab := browser(ctx)
		Expect(within(tab, chromedp.Navigate(admin), chromedp.WaitVisible(chromedp.CSS(`tr[data-name="pipe"]`)))).To(Succeed())
		Expect(within(tab, chromedp.Click(chromedp.CSS(`tr[data-name="pipe"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#precache .precache-plan`)))).To(Succeed())
		Expect(text(tab, `#precache .precache-counts`)).To(And(ContainSubstring("1 NotStarted"), Not(ContainSubstring("Succeeded"))),
			"the second site waits for the mirror")
		Expect(text(tab, `#precache .precache-plan`)).To(MatchRegexp(`^Pre-cache plan: ends at \S+; bound by the registry; [0-9.]+ [KMG]iB left to pull$`))
		screenshot(tab, "dashboard-precache")

		By("once the slow pull ends, the second site pulls and the section says so")
		release()
		Eventually(func() (string, error) { return text(tab, `#precache .precache-counts`) }).WithTimeout(settle).Should(Equal("2 Succeeded"))
	})
})
