package ztp_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/ztp"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

// The operator's production binary, ZTP controller on, SIGKILLed while new clusters go
// through their waves: each cluster still gets one ZTP rollout that completes, ends
// ztp-done and not ztp-running, and nothing is left enforcing on it. The suite's in-process
// operator is stopped meanwhile.
var _ = Describe("The ZTP flow with the operator's binary SIGKILLed", func() {
	It("takes every new cluster to ztp-done once, leaving nothing enforcing", func(ctx SpecContext) {
		bins, err := fleet.BuildBinary(ctx, GinkgoT().TempDir(), GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Expect(fleet.StopOperator(false)).To(Succeed())
		DeferCleanup(func() {
			_, err := fleet.StartOperator()
			Expect(err).NotTo(HaveOccurred())
		})
		proc, err := bins.Start()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(proc.Stop()).To(Succeed()) })
		killAt := func(what string, point func(Gomega) bool) {
			GinkgoHelper()
			By("SIGKILL " + what)
			Eventually(point).WithTimeout(settle).Should(BeTrue(), what)
			Expect(proc.Kill()).To(Succeed())
			proc, err = bins.Start()
			Expect(err).NotTo(HaveOccurred())
		}

		placeWave(ctx, "binztp", "binztp-config", "2", namespace("binztp-config"))
		placeWave(ctx, "binztp", "binztp-upgrade", "10", world.ClusterVersionUpdated(harness.To))
		names := fleet.MustJoinFleet(ctx, "binztp", 3)
		for _, n := range names[:1] {
			fleet.Sim.SetBehaviour(n, sim.Behaviour{Stall: true})
		}
		onAny := func(f func(Gomega, string) bool) func(Gomega) bool {
			return func(g Gomega) bool {
				for _, n := range names {
					if f(g, n) {
						return true
					}
				}
				return false
			}
		}
		killAt("once a cluster's ZTP rollout exists", onAny(func(g Gomega, n string) bool { return hasUpgrade(ctx, n)(g) }))
		killAt("once a cluster is ztp-running", onAny(func(g Gomega, n string) bool {
			_, ok := clusterLabels(ctx, n)(g)[ztp.RunningLabel]
			return ok
		}))
		killAt("while a cluster's platform upgrade is enforced", func(g Gomega) bool { return currentPolicy(ctx, names[0])(g) == "binztp-upgrade" })
		fleet.Sim.SetBehaviour(names[0], sim.Behaviour{})
		killAt("once a cluster is ztp-done", onAny(func(g Gomega, n string) bool {
			_, ok := clusterLabels(ctx, n)(g)[ztp.DoneLabel]
			return ok
		}))

		for _, n := range names {
			Eventually(clusterLabels(ctx, n)).WithTimeout(settle).Should(And(HaveKey(ztp.DoneLabel), Not(HaveKey(ztp.RunningLabel))), n)
			Eventually(upgrade(ctx, n)).WithTimeout(settle).Should(HaveField("Status.State", ranv1alpha1.StateCompleted), n)
			Expect(spokeNamespaces(n)(Default)).To(ContainElement("binztp-config"), n)
		}
		Eventually(func(g Gomega) []string {
			var list policyv1.PolicyList
			g.Expect(fleet.Hub.Client.List(ctx, &list, client.HasLabels{sim.RootPolicyLabel})).To(Succeed())
			var out []string
			for _, p := range list.Items {
				if strings.EqualFold(string(p.Spec.RemediationAction), string(policyv1.Enforce)) && strings.HasPrefix(p.Namespace, "binztp-") {
					out = append(out, p.Namespace+"/"+p.Name)
				}
			}
			return out
		}).WithTimeout(settle).Should(BeEmpty(), "nothing left enforcing")
	})
})
