package cli_test

import (
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/cli"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

var _ = Describe("kubectl cgu mcu", func() {
	It("lists and shows release-named upgrades: the release, the plan's updates, the summaries and the held clusters", func(ctx SpecContext) {
		By("three clusters: one two minors behind, one a z-stream behind, one the graph strands")
		versions := []string{harness.EUSFrom, harness.From, harness.Stranded}
		i := 0
		_, err := fleet.JoinFleetWith(ctx, "cli-mcu", len(versions), func(s *sim.SpokeSpec) {
			// Updates of a few seconds, as in the ManagedClustersUpgrade specs.
			s.Version, s.Channel, s.Behaviour.Duration = versions[i], harness.EUSChannel, 3*time.Second
			i++
		})
		Expect(err).NotTo(HaveOccurred())
		const ns = "cgu-cli-mcu"
		Expect(client.IgnoreAlreadyExists(hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
		Expect(hub.BindClusterSet(ctx, ns)).To(Succeed())
		m := &ranv1alpha1.ManagedClustersUpgrade{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "to-" + harness.To},
			Spec: ranv1alpha1.ManagedClustersUpgradeSpec{
				ClusterSelector: &ranv1alpha1.MCUClusterSelector{MatchLabels: map[string]string{"fleet": "cli-mcu"}},
				ClusterVersion:  ranv1alpha1.MCUClusterVersion{Channel: harness.EUSChannel, Version: harness.To},
				UpgradeStrategy: ranv1alpha1.MCUUpgradeStrategy{MaxConcurrency: 2},
				AcceptedRisks: []ranv1alpha1.AcceptedRisk{{Name: "SRIOVFirmware", AcceptedBy: "jane@example.com",
					Until: &metav1.Time{Time: time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)}}},
			},
		}
		Expect(hub.Client.Create(ctx, m)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(hub.Client.Delete(ctx, m)).To(Succeed())
			Eventually(func() error {
				return hub.Client.Get(ctx, client.ObjectKeyFromObject(m), &ranv1alpha1.ManagedClustersUpgrade{})
			}).WithTimeout(settle).Should(MatchError(ContainSubstring("not found")))
		})
		Eventually(func(g Gomega) []metav1.Condition {
			read := &ranv1alpha1.ManagedClustersUpgrade{}
			g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(m), read)).To(Succeed())
			return read.Status.Conditions
		}).WithTimeout(2 * settle).WithPolling(100 * time.Millisecond).Should(ContainElement(And(
			HaveField("Type", ranv1alpha1.MCUConditionInProgress), HaveField("Reason", "UpgradeEnded"))))

		matchGolden("mcu-list", withoutAge(succeeds(ctx, "mcu", "-n", ns)))
		matchGolden("mcu-show", succeeds(ctx, "mcu", m.Name, "-n", ns))

		var list struct {
			Kind  string                               `json:"kind"`
			Items []ranv1alpha1.ManagedClustersUpgrade `json:"items"`
		}
		Expect(json.Unmarshal([]byte(succeeds(ctx, "mcu", "-n", ns, "-o", "json")), &list)).To(Succeed())
		Expect(list.Items).To(ConsistOf(And(HaveField("Kind", "ManagedClustersUpgrade"), HaveField("Status.Stages", HaveLen(3)))))
		Expect(meta.IsStatusConditionFalse(list.Items[0].Status.Conditions, ranv1alpha1.MCUConditionComplete)).To(BeTrue())

		r := kubectlCGU(ctx, "mcu", "missing", "-n", ns)
		Expect(r.code).To(Equal(cli.ExitNotFound))
		Expect(r.errOut).To(Equal("Error: ManagedClustersUpgrade cgu-cli-mcu/missing not found\n"))
	})
})
