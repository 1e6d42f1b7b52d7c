package cli_test

import (
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/cli"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

var _ = Describe("kubectl cgu ibgu", func() {
	It("lists and shows image-based group upgrades: the steps, the actions and the failed clusters", func(ctx SpecContext) {
		By("three clusters whose lifecycle agent runs Prep, the second failing it")
		i := 0
		_, err := fleet.JoinFleetWith(ctx, "cli-ibu", 3, func(s *sim.SpokeSpec) {
			s.LifecycleAgent = &sim.LifecycleAgentBehaviour{}
			if i == 1 {
				s.LifecycleAgent.Failures = map[string]string{sim.StagePrep: "failed to pull the seed image\nsee the agent's log"}
			}
			i++
		})
		Expect(err).NotTo(HaveOccurred())
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cgu-cli-ibgu"}}
		Expect(client.IgnoreAlreadyExists(hub.Client.Create(ctx, ns))).To(Succeed())
		g := &lcmv1alpha1.ImageBasedGroupUpgrade{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "to-4.18"},
			Spec: lcmv1alpha1.ImageBasedGroupUpgradeSpec{
				IBUSpec:               lcmv1alpha1.ImageBasedUpgradeSpec{SeedImageRef: lcmv1alpha1.SeedImageRef{Image: "quay.io/example/seed:4.18.1", Version: "4.18.1"}},
				ClusterLabelSelectors: []ranv1alpha1.ClusterLabelSelector{{MatchLabels: map[string]string{"fleet": "cli-ibu"}}},
				Plan: []lcmv1alpha1.PlanItem{
					{Actions: []string{"Prep"}, RolloutStrategy: lcmv1alpha1.RolloutStrategy{MaxConcurrency: 3, Timeout: 60}},
					{Actions: []string{"AbortOnFailure"}, RolloutStrategy: lcmv1alpha1.RolloutStrategy{MaxConcurrency: 3, Timeout: 30}},
					{Actions: []string{"Upgrade"}, RolloutStrategy: lcmv1alpha1.RolloutStrategy{MaxConcurrency: 1, Timeout: 120}},
				},
			},
		}
		Expect(hub.Client.Create(ctx, g)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			// The other spec's golden list -A shows its own CGU only. The test hub has no
			// garbage collector: the IBGU goes first, so that no step is made again, then
			// its steps.
			Expect(hub.Client.Delete(ctx, g)).To(Succeed())
			Expect(hub.Client.DeleteAllOf(ctx, &ranv1alpha1.ClusterGroupUpgrade{}, client.InNamespace(ns.Name))).To(Succeed())
			Eventually(func(gm Gomega) []ranv1alpha1.ClusterGroupUpgrade {
				var list ranv1alpha1.ClusterGroupUpgradeList
				gm.Expect(hub.Client.List(ctx, &list, client.InNamespace(ns.Name))).To(Succeed())
				return list.Items
			}).WithTimeout(settle).Should(BeEmpty())
		})
		Eventually(func(gm Gomega) string {
			read := &lcmv1alpha1.ImageBasedGroupUpgrade{}
			gm.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(g), read)).To(Succeed())
			return currentReason(read)
		}).WithTimeout(2 * settle).WithPolling(100 * time.Millisecond).Should(Equal("Completed"))

		matchGolden("ibgu-list", withoutAge(succeeds(ctx, "ibgu", "-n", ns.Name)))
		matchGolden("ibgu-show", succeeds(ctx, "ibgu", "to-4.18", "-n", ns.Name))

		var list struct {
			Kind  string                               `json:"kind"`
			Items []lcmv1alpha1.ImageBasedGroupUpgrade `json:"items"`
		}
		Expect(json.Unmarshal([]byte(succeeds(ctx, "ibgu", "-n", ns.Name, "-o", "json")), &list)).To(Succeed())
		Expect(list.Items).To(ConsistOf(And(HaveField("Kind", "ImageBasedGroupUpgrade"), HaveField("Status.Steps", HaveLen(3)))))

		r := kubectlCGU(ctx, "ibgu", "missing", "-n", ns.Name)
		Expect(r.code).To(Equal(cli.ExitNotFound))
		Expect(r.errOut).To(Equal("Error: ImageBasedGroupUpgrade cgu-cli-ibgu/missing not found\n"))
	})
})

// currentReason is the reason of an ImageBasedGroupUpgrade's Progressing condition.
func currentReason(g *lcmv1alpha1.ImageBasedGroupUpgrade) string {
	for _, c := range g.Status.Conditions {
		if c.Type == "Progressing" {
			return c.Reason
		}
	}
	return ""
}
