package clustergroupupgrade_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/ibgu"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/sim"
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

var _ = Describe("An image-based group upgrade on a real spoke", func() {
	It("takes a spoke running the real work agent through Prep, Upgrade and FinalizeUpgrade", func(ctx SpecContext) {
		const name = "real-ibu-1"
		Expect(hub.AddClusters(ctx, world.Cluster{Name: name, Labels: map[string]string{"fleet": "real-ibu"}})).To(Succeed())
		spoke, err := realspoke.Start(ctx, realspoke.Options{HubConfig: hub.Config, ClusterName: name, Version: from,
			LifecycleAgent: &sim.LifecycleAgentBehaviour{Durations: map[string]time.Duration{sim.StagePrep: time.Second, sim.StageUpgrade: time.Second}}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(spoke.Stop)

		g := newIBGU("ibgu-real", "real-ibu", step(1, "Prep"), step(1, "Upgrade", "FinalizeUpgrade"))
		createIBGU(ctx, g)
		Eventually(ibguStatus(ctx, g)).WithTimeout(3 * settle).Should(progressing(ibgu.ReasonCompleted))
		Expect(clusterActions(ibguStatus(ctx, g)(Default))).To(Equal(map[string]actions{
			name: {Completed: []lcmv1alpha1.Action{"Prep", "Upgrade", "FinalizeUpgrade"}}}))

		By("reading the ImageBasedUpgrade the real work agent applied and the agent moved")
		ibu := &unstructured.Unstructured{}
		ibu.SetGroupVersionKind(sim.ImageBasedUpgradeGVK)
		Expect(spoke.Client().Get(ctx, client.ObjectKey{Name: sim.ImageBasedUpgradeName}, ibu)).To(Succeed())
		Expect(stage(ibu)).To(Equal(sim.StageIdle))
		Expect(idleAgain(ibu)).To(BeTrue(), "finalized: Idle alone")
		image, _, _ := unstructured.NestedString(ibu.Object, "spec", "seedImageRef", "image")
		Expect(image).To(Equal(g.Spec.IBUSpec.SeedImageRef.Image))
		Eventually(ibguLabels(ctx, name)).WithTimeout(settle).Should(BeEmpty())

		By("the spoke's CRD admitting only the stages the agent offers, as the lifecycle agent's does")
		Expect(unstructured.SetNestedField(ibu.Object, sim.StageRollback, "spec", "stage")).To(Succeed())
		err = spoke.Client().Update(ctx, ibu)
		Expect(err).To(MatchError(ContainSubstring("the stage may only change to one of status.validNextStages")))
	})
})

var _ = Describe("A release-named upgrade on a real spoke", func() {
	It("takes a spoke running the real config-policy-controller through both updates of its path", func(ctx SpecContext) {
		const name = "real-mcu-1"
		Expect(hub.AddClusters(ctx, world.Cluster{Name: name, Labels: map[string]string{"fleet": "real-mcu"},
			Claims: map[string]string{sim.ClaimVersion: harness.EUSFrom}})).To(Succeed())
		spoke, err := realspoke.Start(ctx, realspoke.Options{HubConfig: hub.Config, ClusterName: name, Version: harness.EUSFrom, Channel: harness.EUSChannel,
			Behaviour: sim.Behaviour{Duration: mcuUpdate}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(spoke.Stop)

		m := newMCU("mcu-real", "real-mcu")
		createMCU(ctx, m)
		Eventually(func(g Gomega) bool {
			return meta.IsStatusConditionTrue(storedMCU(ctx, m)(g).Status.Conditions, ranv1alpha1.MCUConditionComplete)
		}).WithTimeout(3 * settle).Should(BeTrue())
		Expect(realVersion(ctx, spoke)(Default)).To(Equal(harness.To))
		cv := &configv1.ClusterVersion{}
		Expect(spoke.Client().Get(ctx, client.ObjectKey{Name: realspoke.ClusterVersionName}, cv)).To(Succeed())
		var history []string
		for _, h := range cv.Status.History {
			history = append(history, h.Version)
		}
		Expect(history).To(Equal([]string{harness.To, harness.EUSHop, harness.EUSFrom}))
		Expect(cv.Spec.Channel).To(Equal(harness.EUSChannel))
		Expect(storedMCU(ctx, m)(Default).Status.ClustersSummary).To(Equal(&ranv1alpha1.ClustersSummary{Total: 1, Initialized: 1, Complete: 1}))
		Eventually(state(ctx, &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name}})).
			WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
	})
})
