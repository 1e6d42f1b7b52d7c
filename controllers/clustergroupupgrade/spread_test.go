package clustergroupupgrade_test

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

var _ = Describe("A spread over sites", func() {
	It("plans batches that never hold two clusters of a site, and refuses a spread it cannot honour before the start", func(ctx SpecContext) {
		By("twelve clusters over four sites, listed site by site")
		clusters := joinFleet(ctx, "spread", 12)
		p := placeUpgradePolicy(ctx, "spread", 12)
		site := map[string]string{}
		for i, c := range clusters {
			site[c] = fmt.Sprintf("site-%c", 'a'+i/3) // spread-1..3 in site-a, spread-4..6 in site-b, ...
			mc := &clusterv1.ManagedCluster{}
			Expect(hub.Client.Get(ctx, client.ObjectKey{Name: c}, mc)).To(Succeed())
			mc.Labels["site"] = site[c]
			Expect(hub.Client.Update(ctx, mc)).To(Succeed())
		}

		By("a spread key no cluster carries is refused, naming it; nothing starts")
		typo := newCGU("cgu-spread", "typo", clusters, 4, p.Name)
		typo.Spec.RemediationStrategy.Spread = []ranv1alpha1.SpreadConstraint{{LabelKey: "stie", MaxPerBatch: 1}}
		enableOnCreate(typo)
		fleet.MustCreate(ctx, typo)
		Eventually(condition(ctx, typo, ranv1alpha1.ConditionValidated)).WithTimeout(settle).Should(And(
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", ranv1alpha1.ReasonInvalidSpread),
			HaveField("Message", ContainSubstring(`no cluster to spread carries the label: "stie"`))))
		Expect(fleet.Stored(ctx, typo)(Default).Status.StartedAt).To(BeNil())

		By("a spread that needs more batches than the timeout has minutes is refused with the counts")
		short := newCGU("cgu-spread", "short", clusters, 12, p.Name)
		short.Spec.RemediationStrategy.AntiAffinity = []string{"site"}
		short.Spec.RemediationStrategy.Timeout = 2
		enableOnCreate(short)
		fleet.MustCreate(ctx, short)
		Eventually(condition(ctx, short, ranv1alpha1.ConditionValidated)).WithTimeout(settle).Should(And(
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", ranv1alpha1.ReasonInvalidSpread),
			HaveField("Message", ContainSubstring("it needs 3 batches (maxConcurrency alone makes 1) and spec.remediationStrategy.timeout gives 2 minutes"))))
		Expect(fleet.Stored(ctx, short)(Default).Status.StartedAt).To(BeNil())
		Expect(enforcedOn(ctx, short, p.Name)(Default)).To(BeEmpty())

		By("batches of four, at most one cluster a site: three batches, one of each site, as the preview says")
		cgu := newCGU("cgu-spread", "upgrade", clusters, 4, p.Name)
		cgu.Spec.RemediationStrategy.Spread = []ranv1alpha1.SpreadConstraint{{LabelKey: "site", MaxPerBatch: 1}}
		fleet.MustCreate(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			HaveField("Status.Plan.Batches", 3),
			HaveField("Status.Plan.Spread", ConsistOf(ranv1alpha1.SpreadSummary{LabelKey: "site", MaxPerBatch: 1, Values: 4, Largest: 3})),
		))
		code, out := kubectlCGU(ctx, "plan", cgu.Name, "-n", cgu.Namespace)
		Expect(code).To(BeZero(), out)
		Expect(out).To(ContainSubstring("Spread by site: at most 1 cluster per value in a batch (4 values, the largest with 3 clusters); the spread added no batch"))
		Expect(out).To(ContainSubstring(fmt.Sprintf("Batch 1: %s %s %s %s\n", clusters[0], clusters[3], clusters[6], clusters[9])))
		code, out = kubectlCGU(ctx, "preflight", cgu.Name, "-n", cgu.Namespace)
		Expect(code).To(BeZero(), out)
		Expect(out).To(ContainSubstring("preview of 3 batches, 12 clusters\nSpread by site: at most 1 cluster per value in a batch"))

		By("started, the records freeze those batches and the status keeps the spread")
		enable(ctx, cgu)
		var records ranv1alpha1.ClusterGroupUpgradeBatchList
		Eventually(func(g Gomega) int {
			g.Expect(hub.Client.List(ctx, &records, client.InNamespace(cgu.Namespace),
				client.MatchingLabels{ranv1alpha1.LabelUpgradeName: cgu.Name})).To(Succeed())
			return len(records.Items)
		}).WithTimeout(settle).Should(Equal(3))
		for _, r := range records.Items {
			seen := map[string]string{}
			for _, c := range r.Spec.Clusters {
				Expect(seen).NotTo(HaveKey(site[c]), "batch %d holds %s and %s of %s", r.Spec.Index, seen[site[c]], c, site[c])
				seen[site[c]] = c
			}
			Expect(seen).To(HaveLen(4), "batch %d: %v", r.Spec.Index, seen)
		}
		Eventually(state(ctx, cgu)).WithTimeout(3 * settle).Should(Equal(ranv1alpha1.StateCompleted))
		Expect(fleet.Stored(ctx, cgu)(Default).Status.Plan.Spread).To(HaveLen(1), "the spread is kept once the plan froze")
		code, out = kubectlCGU(ctx, "plan", cgu.Name, "-n", cgu.Namespace)
		Expect(code).To(BeZero(), out)
		Expect(strings.Count(out, "Spread by site")).To(Equal(1), out)
	})
})
