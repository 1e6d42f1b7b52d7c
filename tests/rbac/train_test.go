package rbac_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/train"
)

var _ = Describe("The release train with the operator's grants", func() {
	It("runs a ring's rollout, replaces it for a newer release, and deletes it with the train", func(ctx SpecContext) {
		joinFleet(ctx, "train", 1, false, nil)
		Expect(hub.BindClusterSet(ctx, mcuNS)).To(Succeed()) // makes the namespace, which the release-named upgrade's spec shares
		t := &ranv1alpha1.ReleaseTrain{
			ObjectMeta: metav1.ObjectMeta{Namespace: mcuNS, Name: "train"},
			Spec: ranv1alpha1.ReleaseTrainSpec{
				Releases: ranv1alpha1.TrainReleases{Channel: channel, Versions: []string{to}},
				Rings: []ranv1alpha1.TrainRing{{Name: "all",
					ClusterSelector: &ranv1alpha1.MCUClusterSelector{MatchLabels: map[string]string{"fleet": "train"}}}},
			},
		}
		create(ctx, t)
		stored := func(g Gomega) *ranv1alpha1.ReleaseTrain {
			out := &ranv1alpha1.ReleaseTrain{}
			g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(t), out)).To(Succeed())
			return out
		}
		Eventually(func(g Gomega) ranv1alpha1.ReleaseState {
			l := stored(g).Status.Ledger
			g.Expect(l).NotTo(BeEmpty())
			return l[0].State
		}).WithTimeout(3*settle).Should(Equal(ranv1alpha1.ReleaseDelivered), "the cluster on %s", to)

		By("a newer release named by hand replaces the ring's ended rollout")
		newer := "4.16.99"
		// The train's controller writes its status meanwhile: the update is retried on a conflict.
		Expect(retry.RetryOnConflict(retry.DefaultBackoff, func() error {
			cur := stored(Default)
			cur.Spec.Releases.Versions = append(cur.Spec.Releases.Versions, newer)
			return hub.Client.Update(ctx, cur)
		})).To(Succeed())
		rollouts := func(g Gomega) []string {
			var list ranv1alpha1.ManagedClustersUpgradeList
			g.Expect(hub.Client.List(ctx, &list, client.InNamespace(mcuNS), client.MatchingLabels{train.LabelTrain: t.Name})).To(Succeed())
			var out []string
			for _, m := range list.Items {
				out = append(out, m.Name)
			}
			return out
		}
		Eventually(rollouts).WithTimeout(settle).Should(ConsistOf(train.RolloutName(t.Name, "all", newer)))

		By("deleting the train deletes its rollout")
		Expect(hub.Client.Delete(ctx, t)).To(Succeed())
		Eventually(func() error {
			return hub.Client.Get(ctx, client.ObjectKeyFromObject(t), &ranv1alpha1.ReleaseTrain{})
		}).WithTimeout(settle).Should(MatchError(ContainSubstring("not found")))
		Expect(rollouts(Default)).To(BeEmpty())
	})
})
