package world_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/tests/world"
)

var _ = Describe("The hub", func() {
	It("selects clusters with the real placement controller and replicates policies with the real propagator", func(ctx SpecContext) {
		Expect(hub.AddClusters(ctx,
			world.Cluster{Name: "prop-1", Labels: map[string]string{"ring": "a"}},
			world.Cluster{Name: "prop-2", Labels: map[string]string{"ring": "a"}},
			world.Cluster{Name: "prop-3", Labels: map[string]string{"ring": "b"}},
		)).To(Succeed())
		Expect(hub.BindClusterSet(ctx, "policies")).To(Succeed())

		policy := world.NewPolicy("policies", "upgrade", policyv1.Inform, world.ConfigPolicy{
			Name: "upgrade-cv", Objects: []map[string]any{world.ClusterVersionUpdated("4.16.12")},
		})
		Expect(hub.PlacePolicy(ctx, policy, metav1.LabelSelector{MatchLabels: map[string]string{"ring": "a"}})).To(Succeed())

		By("getting a decision for each ring-a cluster")
		Eventually(func(g Gomega) []string {
			var decisions clusterv1beta1.PlacementDecisionList
			g.Expect(hub.Client.List(ctx, &decisions, client.InNamespace("policies"),
				client.MatchingLabels{clusterv1beta1.PlacementLabel: "upgrade"})).To(Succeed())
			var names []string
			for _, d := range decisions.Items {
				for _, c := range d.Status.Decisions {
					names = append(names, c.ClusterName)
				}
			}
			return names
		}).WithTimeout(30 * time.Second).Should(ConsistOf("prop-1", "prop-2"))

		By("replicating the policy into each selected cluster's namespace")
		for _, c := range []string{"prop-1", "prop-2"} {
			Eventually(func() error {
				return hub.Client.Get(ctx, client.ObjectKey{Namespace: c, Name: "policies.upgrade"}, &policyv1.Policy{})
			}).WithTimeout(30*time.Second).Should(Succeed(), "replicated policy in %s", c)
		}
		Consistently(func() error {
			return hub.Client.Get(ctx, client.ObjectKey{Namespace: "prop-3", Name: "policies.upgrade"}, &policyv1.Policy{})
		}).WithTimeout(2 * time.Second).ShouldNot(Succeed())
	})
})
