package controllers_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/tests/world"
	"github.com/cgu-operator/cgu-operator/tests/world/realspoke"
)

// realVersion returns the version a real spoke's ClusterVersion runs: its latest Completed
// update.
func realVersion(ctx context.Context, spoke *realspoke.Spoke) func(Gomega) string {
	return func(g Gomega) string {
		cv := &configv1.ClusterVersion{}
		g.Expect(spoke.Client().Get(ctx, client.ObjectKey{Name: realspoke.ClusterVersionName}, cv)).To(Succeed())
		for _, h := range cv.Status.History {
			if h.State == configv1.CompletedUpdate {
				return h.Version
			}
		}
		return ""
	}
}

var _ = Describe("A rollout on real spokes", func() {
	It("upgrades spokes running the real governance addon and config-policy-controller, one at a time", func(ctx SpecContext) {
		names := []string{"real-1", "real-2"}
		spokes := make([]*realspoke.Spoke, len(names))
		for i, name := range names {
			Expect(hub.AddClusters(ctx, world.Cluster{Name: name, Labels: map[string]string{"fleet": "real"}})).To(Succeed())
			spoke, err := realspoke.Start(ctx, realspoke.Options{HubConfig: hub.Config, ClusterName: name, Version: from, Channel: "stable-4.16"})
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(spoke.Stop)
			spokes[i] = spoke
		}
		p := world.UpgradePolicy(policyNS, "real-upgrade", to, policyv1.Inform)
		Expect(hub.PlacePolicy(ctx, p, metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "real"}})).To(Succeed())
		Eventually(rootCompliance(ctx, p.Name)).WithTimeout(2 * settle).Should(Equal(map[string]policyv1.ComplianceState{
			names[0]: policyv1.NonCompliant, names[1]: policyv1.NonCompliant,
		}))

		cgu := newCGU("cgu-real", "upgrade", names, 1, p.Name)
		enableOnCreate(cgu)
		fleet.MustCreate(ctx, cgu)
		Eventually(state(ctx, cgu)).WithTimeout(3 * settle).Should(Equal(ranv1alpha1.StateCompleted))
		for _, spoke := range spokes {
			Expect(realVersion(ctx, spoke)(Default)).To(Equal(to))
		}
		Eventually(leftovers(ctx, cgu)).WithTimeout(settle).Should(BeZero())
		Expect(fleet.Stored(ctx, cgu)(Default).Status.Counts).To(Equal(ranv1alpha1.ClusterCounts{Total: 2, Completed: 2}))
	})
})
