package clustergroupupgrade_test

import (
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/controllers/clustergroupupgrade"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/precache/pull"
	"github.com/cgu-operator/cgu-operator/pkg/precache/pull/pulltest"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/world"
	"github.com/cgu-operator/cgu-operator/tests/world/graphserver"
)

// preCachingConfig creates a PreCachingConfig whose overrides name the fixture's release,
// index and operators, and its additional image.
func preCachingConfig(ctx SpecContext, namespace, name string, f *pulltest.Fixture, changes ...func(*ranv1alpha1.PreCachingConfig)) ranv1alpha1.PreCachingConfigCR {
	spec := f.Spec()
	pc := &ranv1alpha1.PreCachingConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: ranv1alpha1.PreCachingConfigSpec{
			Overrides: ranv1alpha1.PrecacheOverrides{PlatformImage: spec.PlatformImage, OperatorsIndexes: spec.OperatorsIndexes,
				OperatorsPackagesAndChannels: spec.OperatorsPackagesAndChannels},
			AdditionalImages: spec.AdditionalImages, SpaceRequired: "1Mi",
		},
	}
	for _, change := range changes {
		change(pc)
	}
	Expect(hub.Client.Create(ctx, pc)).To(Succeed())
	return ranv1alpha1.PreCachingConfigCR{Name: name, Namespace: namespace}
}

// cached returns the images a simulated cluster's container storage holds.
func cached(cluster string) func(Gomega) []string {
	return func(g Gomega) []string {
		store, err := pull.NewOCILayout(fleet.PrecacheStore(cluster))
		g.Expect(err).NotTo(HaveOccurred())
		refs, err := store.Refs()
		g.Expect(err).NotTo(HaveOccurred())
		return refs
	}
}

// breakStore makes a simulated cluster's container storage unwritable, so that its precache
// Job fails.
func breakStore(cluster string) {
	Expect(os.WriteFile(fleet.PrecacheStore(cluster), []byte("not a directory"), 0o600)).To(Succeed())
}

var _ = Describe("Pre-caching", func() {
	It("pulls what the upgrade needs on every cluster before enable; a cluster that failed leaves the plan", func(ctx SpecContext) {
		f := pulltest.NewFixture(GinkgoT())
		clusters := joinFleet(ctx, "precache", 3)
		p := placeUpgradePolicy(ctx, "precache", 3)
		breakStore(clusters[2])

		cgu := newCGU("cgu-precache", "upgrade", clusters, 3, p.Name)
		cgu.Spec.PreCaching = true
		fleet.MustCreate(ctx, cgu)
		cgu.Spec.PreCachingConfigRef = preCachingConfig(ctx, cgu.Namespace, "precache-config", f)
		fleet.MustUpdate(ctx, cgu, func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.PreCachingConfigRef = cgu.Spec.PreCachingConfigRef })

		By("the spec comes from the PreCachingConfig; the program runs on each cluster while the rollout is not enabled")
		Eventually(condition(ctx, cgu, ranv1alpha1.ConditionPrecachingSucceeded)).WithTimeout(settle).Should(And(
			Not(BeNil()), HaveField("Status", metav1.ConditionTrue), HaveField("Reason", ranv1alpha1.ReasonPartiallyDone)))
		stored := fleet.Stored(ctx, cgu)(Default)
		Expect(stored.Status.State).To(Equal(ranv1alpha1.StateNotStarted))
		Expect(stored.Status.Precaching.Spec.PlatformImage).To(Equal(f.Release))
		Expect(stored.Status.Precaching.Counts).To(And(HaveKeyWithValue("Succeeded", 2), HaveKeyWithValue("Failed", 1)))
		Expect(condition(ctx, cgu, ranv1alpha1.ConditionPrecacheSpecValid)(Default)).To(HaveField("Status", metav1.ConditionTrue))
		for _, c := range clusters[:2] {
			Expect(cached(c)(Default)).To(ConsistOf(f.Want()), "the release payload, the operators and the extra image of %s", c)
		}
		Expect(desired(clusters[0])(Default)).To(BeEmpty(), "pre-caching enforces nothing")
		Expect(keptOutOfBackup(ctx, cgu)).To(HaveKey(HavePrefix("ManagedClusterView ")), "the Job's views, out of the hub backup")
		code, out := kubectlCGU(ctx, "preflight", cgu.Name, "-n", cgu.Namespace)
		Expect(code).To(BeZero(), out)
		Expect(out).To(And(MatchRegexp(clusters[0]+`\s.*\sSucceeded\n`), MatchRegexp(clusters[2]+`\s.*\sFailed\n`)))

		By("enabled, the rollout leaves the cluster that failed out of its plan")
		fleet.MustUpdate(ctx, cgu, func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.Enable = ptr.To(true) })
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		final := fleet.Stored(ctx, cgu)(Default)
		Expect(final.Status.Counts.Total).To(Equal(2))
		Expect(version(clusters[0])(Default)).To(Equal(to))
		Expect(desired(clusters[2])(Default)).To(BeEmpty())
	})

	It("completes on every cluster, then the enabled rollout starts on all of them", func(ctx SpecContext) {
		f := pulltest.NewFixture(GinkgoT())
		clusters := joinFleet(ctx, "precache-all", 2)
		p := placeUpgradePolicy(ctx, "precache-all", 2)
		cgu := newCGU("cgu-precache", "all", clusters, 1, p.Name)
		cgu.Spec.PreCaching = true
		cgu.Spec.Enable = ptr.To(true)
		fleet.MustCreate(ctx, cgu)
		Eventually(condition(ctx, cgu, ranv1alpha1.ConditionPrecacheSpecValid)).WithTimeout(settle).Should(And(
			Not(BeNil()), HaveField("Status", metav1.ConditionFalse)), "the policy's release is not in the test registry: no valid spec without a config")
		Expect(fleet.Stored(ctx, cgu)(Default).Status.State).To(Equal(ranv1alpha1.StateNotStarted), "an enabled rollout waits for pre-caching")

		cgu.Spec.PreCachingConfigRef = preCachingConfig(ctx, cgu.Namespace, "all-config", f)
		fleet.MustUpdate(ctx, cgu, func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.PreCachingConfigRef = cgu.Spec.PreCachingConfigRef })
		Eventually(state(ctx, cgu)).WithTimeout(2 * settle).Should(Equal(ranv1alpha1.StateCompleted))
		final := fleet.Stored(ctx, cgu)(Default)
		Expect(final.Status.Counts.Total).To(Equal(2))
		Expect(final.Status.Precaching.Counts).To(HaveKeyWithValue("Succeeded", 2))
		Expect(condition(ctx, cgu, ranv1alpha1.ConditionPrecachingSucceeded)(Default)).To(HaveField("Reason", ranv1alpha1.ReasonPrecachingCompleted))
		for _, c := range clusters {
			Expect(cached(c)(Default)).To(ConsistOf(f.Want()))
		}
	})

	It("starts the clusters a bandwidth budget has room for, learns what they pull from their reports, and plans the rest", func(ctx SpecContext) {
		f := pulltest.NewFixture(GinkgoT())
		clusters := joinFleet(ctx, "precache-pipe", 3)
		p := placeUpgradePolicy(ctx, "precache-pipe", 3)
		// One rack's 100 Mbit/s uplink: the first cluster on a line of 10, the others of 100.
		for i, c := range clusters {
			setClusterLabel(ctx, c, "example.com/rack", "rack-a")
			setClusterLabel(ctx, c, "example.com/line", map[bool]string{true: "10", false: "100"}[i == 0])
		}
		releases := []func(){fleet.SlowPrecache(clusters[0]), fleet.SlowPrecache(clusters[1])}
		DeferCleanup(func() {
			for _, release := range releases {
				release()
			}
		})
		cgu := newCGU("cgu-precache", "pipe", clusters, 3, p.Name)
		cgu.Spec.PreCaching = true
		// The rollout may start now: a plan that needs any time is late.
		start := metav1.NewTime(fleet.Clock.Now())
		cgu.Spec.MaintenanceWindows = &ranv1alpha1.MaintenanceWindows{StartAt: &start}
		fleet.MustCreate(ctx, cgu)
		cgu.Spec.PreCachingConfigRef = preCachingConfig(ctx, cgu.Namespace, "pipe-config", f, func(pc *ranv1alpha1.PreCachingConfig) {
			pc.Spec.Bandwidth = &ranv1alpha1.PrecacheBandwidth{LinkLabel: "example.com/rack", LineLabel: "example.com/line",
				Links: []ranv1alpha1.PrecacheLink{{Name: "rack-a", Mbps: 100}}}
		})
		fleet.MustUpdate(ctx, cgu, func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.PreCachingConfigRef = cgu.Spec.PreCachingConfigRef })
		precaching := func(g Gomega) *ranv1alpha1.PrecachingStatus {
			st := fleet.Stored(ctx, cgu)(g).Status.Precaching
			g.Expect(st).NotTo(BeNil())
			return st
		}

		By("the first two hold the uplink (10 and the 90 left); the third waits")
		running := Or(Equal("PreparingToStart"), Equal("Starting"), Equal("Active"))
		Eventually(precaching).WithTimeout(settle).Should(HaveField("Status", MatchAllKeys(Keys{
			clusters[0]: running, clusters[1]: running, clusters[2]: Equal("NotStarted")})))

		By("their reports, read through the report views, say what a cluster pulls: the plan has an ETA, bound by the slow line")
		Eventually(precaching).WithTimeout(settle).Should(HaveField("Plan", PointTo(MatchFields(IgnoreExtras, Fields{
			"ETA": Not(BeNil()), "Bytes": BeNumerically(">", 0), "Bound": Equal("line of " + clusters[0]),
			"Deadline": Not(BeNil()), "Late": Not(BeEmpty())}))))
		Expect(condition(ctx, cgu, ranv1alpha1.ConditionPrecachingSucceeded)(Default)).To(
			HaveField("Message", MatchRegexp(`the bandwidth plan ends at \S+, \S+ after the start at`)))
		Eventually(events(ctx, cgu)).WithTimeout(settle).Should(HaveKeyWithValue(clustergroupupgrade.EventPrecachingLate, 1))
		code, out := kubectlCGU(ctx, "preflight", cgu.Name, "-n", cgu.Namespace)
		Expect(code).To(BeZero(), out)
		Expect(out).To(MatchRegexp(`Pre-cache plan: ends at \S+, \S+ after the start at \S+ \(LATE\); bound by the line of ` + clusters[0]))
		Consistently(precaching).WithTimeout(2 * time.Second).Should(HaveField("Status", HaveKeyWithValue(clusters[2], "NotStarted")))

		By("once the second is done, the third takes its share")
		releases[1]()
		Eventually(precaching).WithTimeout(settle).Should(HaveField("Status", MatchAllKeys(Keys{
			clusters[0]: running, clusters[1]: Equal("Succeeded"), clusters[2]: Not(Equal("NotStarted"))})))
		releases[0]()
		Eventually(condition(ctx, cgu, ranv1alpha1.ConditionPrecachingSucceeded)).WithTimeout(settle).Should(And(
			Not(BeNil()), HaveField("Reason", ranv1alpha1.ReasonPrecachingCompleted)))
		Expect(precaching(Default).Plan).To(BeNil(), "nothing is left to plan")
		for _, c := range clusters {
			Expect(cached(c)(Default)).To(ConsistOf(f.Want()))
		}
	})

	It("times a cluster out when its Job runs past --precache-timeout; the others complete", func(ctx SpecContext) {
		f := pulltest.NewFixture(GinkgoT())
		clusters := joinFleet(ctx, "precache-slow", 2)
		p := placeUpgradePolicy(ctx, "precache-slow", 2)
		fleet.StallPrecache(clusters[1])
		cgu := newCGU("cgu-precache", "slow", clusters, 2, p.Name)
		cgu.Spec.PreCaching = true
		fleet.MustCreate(ctx, cgu)
		cgu.Spec.PreCachingConfigRef = preCachingConfig(ctx, cgu.Namespace, "slow-config", f)
		fleet.MustUpdate(ctx, cgu, func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.PreCachingConfigRef = cgu.Spec.PreCachingConfigRef })

		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(
			HaveField("Status.Precaching.Counts", And(HaveKeyWithValue("Succeeded", 1), HaveKeyWithValue("Active", 1))))
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(harness.PrecacheTimeout + settle).Should(
			HaveField("Status.Precaching.Counts", And(HaveKeyWithValue("Succeeded", 1), HaveKeyWithValue("Timeout", 1))))
		Expect(condition(ctx, cgu, ranv1alpha1.ConditionPrecachingSucceeded)(Default)).To(HaveField("Reason", ranv1alpha1.ReasonPartiallyDone))

		By("TALM's view of a partial pre-caching, then of the rollout it leaves")
		Eventually(talmConditions(ctx, cgu)).WithTimeout(settle).Should(Equal([]string{selected, validated,
			"PrecacheSpecValid True PrecacheSpecIsWellFormed", "PrecachingSuceeded True PartiallyDone", "Progressing False NotEnabled"}))
		Expect(fleet.Stored(ctx, cgu)(Default).Status.Precaching.Status).To(Equal(map[string]string{
			clusters[0]: "Succeeded", clusters[1]: "PrecacheTimeout"}))
		stall(clusters[0])
		enable(ctx, cgu)
		Eventually(talmConditions(ctx, cgu)).WithTimeout(settle).Should(Equal([]string{selected, validated,
			"PrecacheSpecValid True PrecacheSpecIsWellFormed", "PrecachingSuceeded True PartiallyDone", "Progressing True InProgress"}))
		Expect(fleet.Stored(ctx, cgu)(Default).Status.RemediationPlan).To(Equal([][]string{clusters[:1]}), "the cluster that timed out is left out")
		unstall(clusters[0])
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
	})

	It("cannot start when pre-caching failed on every cluster", func(ctx SpecContext) {
		f := pulltest.NewFixture(GinkgoT())
		clusters := joinFleet(ctx, "precache-fail", 2)
		p := placeUpgradePolicy(ctx, "precache-fail", 2)
		for _, c := range clusters {
			breakStore(c)
		}
		cgu := newCGU("cgu-precache", "all-fail", clusters, 2, p.Name)
		cgu.Spec.PreCaching = true
		cgu.Spec.Enable = ptr.To(true)
		fleet.MustCreate(ctx, cgu)
		cgu.Spec.PreCachingConfigRef = preCachingConfig(ctx, cgu.Namespace, "all-fail-config", f)
		fleet.MustUpdate(ctx, cgu, func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.PreCachingConfigRef = cgu.Spec.PreCachingConfigRef })

		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			HaveField("Status.State", ranv1alpha1.StateCannotStart),
			HaveField("Status.Message", ContainSubstring("Pre-caching failed or timed out on all 2 clusters")),
		))
		Expect(condition(ctx, cgu, ranv1alpha1.ConditionPrecachingSucceeded)(Default)).To(HaveField("Reason", ranv1alpha1.ReasonPrecachingFailed))
		Expect(talmConditions(ctx, cgu)(Default)).To(Equal([]string{selected, validated,
			"PrecacheSpecValid True PrecacheSpecIsWellFormed", "PrecachingSuceeded False Failed"}), "the spec stays valid; no Progressing, as TALM")
		Expect(fleet.Stored(ctx, cgu)(Default).Status.RemediationPlan).To(Equal([][]string{clusters}), "the plan stays on show")
		Eventually(talmEvents(ctx, cgu)).Should(And(HaveKeyWithValue(talm.ActionOnHoldDueToPrecachingFailures, 1),
			Not(HaveKey(talm.ActionOnHoldDueToValidationFailure))))
	})
})

var _ = Describe("Pre-caching as TALM derives it", func() {
	It("pre-caches on every cluster the release a ClusterVersion policy's version and channel resolve to through the update graph", func(ctx SpecContext) {
		f := pulltest.NewFixture(GinkgoT())
		By("a channel of the update service whose release " + to + " is the test registry's")
		const channel = "precache-e2e-4.16"
		g, err := graphserver.NewGraph(channel).Edge(harness.From, to).Build()
		Expect(err).NotTo(HaveOccurred())
		for i := range g.Nodes {
			if g.Nodes[i].Version == to {
				g.Nodes[i].Payload = f.Release
			}
		}
		Expect(fleet.Graphs.SetGraph(channel, g)).To(Succeed())
		DeferCleanup(fleet.Graphs.RemoveChannel, channel)

		clusters := joinFleet(ctx, "derive", 2)
		cv := world.ClusterVersionUpdated(to)
		cv["spec"].(map[string]any)["channel"] = channel // version and channel, no image
		p := placeObjectPolicy(ctx, "derive", "derive-upgrade", cv)
		cgu := newCGU("cgu-derive", "upgrade", clusters, 2, p.Name)
		cgu.Spec.PreCaching = true
		Expect(hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cgu.Namespace}})).To(Succeed())
		Expect(hub.Client.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: cgu.Namespace, Name: precache.OverridesConfigMap},
			Data:       map[string]string{"precache.spaceRequired": "1Mi"},
		})).To(Succeed())
		fleet.MustCreate(ctx, cgu)

		Eventually(talmConditions(ctx, cgu)).WithTimeout(settle).Should(Equal([]string{selected, validated,
			"PrecacheSpecValid True PrecacheSpecIsWellFormed", "PrecachingSuceeded True PrecachingCompleted", "Progressing False NotEnabled"}))
		st := fleet.Stored(ctx, cgu)(Default).Status
		Expect(st.Precaching.Spec).To(PointTo(HaveField("PlatformImage", f.Release)))
		Expect(st.Precaching.Status).To(Equal(map[string]string{clusters[0]: "Succeeded", clusters[1]: "Succeeded"}))
		for _, c := range clusters {
			Expect(cached(c)(Default)).To(ConsistOf(pulltest.Union([]string{f.Release}, f.ReleaseImages)), "the release payload on %s", c)
		}
	})

	It("pre-caches the release a ClusterVersion policy names on every cluster, honouring the overrides ConfigMap with a warning", func(ctx SpecContext) {
		f := pulltest.NewFixture(GinkgoT())
		clusters := joinFleet(ctx, "cvpre", 2)
		cv := world.ClusterVersionUpdated(to)
		cv["spec"].(map[string]any)["desiredUpdate"].(map[string]any)["image"] = f.Release
		p := placeObjectPolicy(ctx, "cvpre", "cvpre-upgrade", cv)
		cgu := newCGU("cgu-cvpre", "upgrade", clusters, 2, p.Name)
		cgu.Spec.PreCaching = true
		Expect(hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cgu.Namespace}})).To(Succeed())
		Expect(hub.Client.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: cgu.Namespace, Name: precache.OverridesConfigMap},
			Data: map[string]string{"platform.image": "this/should/be/ignored:latest", "excludePrecachePatterns": "aws\nazure\n",
				"precache.spaceRequired": "1Mi"},
		})).To(Succeed())
		fleet.MustCreate(ctx, cgu)

		Eventually(condition(ctx, cgu, ranv1alpha1.ConditionPrecachingSucceeded)).WithTimeout(settle).Should(And(
			Not(BeNil()), HaveField("Status", metav1.ConditionTrue), HaveField("Reason", ranv1alpha1.ReasonPrecachingCompleted)))
		st := fleet.Stored(ctx, cgu)(Default).Status
		Expect(st.Precaching.Spec).To(PointTo(And(HaveField("PlatformImage", f.Release),
			HaveField("ExcludePrecachePatterns", Equal([]string{"aws", "azure"})))))
		Expect(st.Precaching.Status).To(Equal(map[string]string{clusters[0]: "Succeeded", clusters[1]: "Succeeded"}))
		for _, c := range clusters {
			Expect(cached(c)(Default)).To(ConsistOf(pulltest.Union([]string{f.Release}, f.ReleaseImages)), "the release payload on %s", c)
		}
		Eventually(events(ctx, cgu)).Should(HaveKeyWithValue(clustergroupupgrade.EventOverridesDeprecated, 1))
	})
})
