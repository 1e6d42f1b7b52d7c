package cli_test

import (
	"encoding/json"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/cli"
	"github.com/cgu-operator/cgu-operator/tests/golden"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

// batchShows matches a CGU running batch index with cluster in state.
func batchShows(index int, cluster string, st ranv1alpha1.ClusterState) OmegaMatcher {
	return And(
		HaveField("Status.State", ranv1alpha1.StateNotCompleted),
		HaveField("Status.CurrentBatch.Index", index),
		HaveField("Status.CurrentBatch.Clusters", ContainElement(And(HaveField("Name", cluster), HaveField("State", st)))),
	)
}

var _ = Describe("kubectl cgu", func() {
	It("shows a rollout before and while it runs", func(ctx SpecContext) {
		By("six clusters on " + harness.From + " and an inform policy upgrading them to " + harness.To)
		clusters := joinFleet(ctx, "cli", 6)
		p := placeUpgradePolicy(ctx, "cli", 6)

		By("a CGU with one canary and batches of two, not enabled")
		cgu := &ranv1alpha1.ClusterGroupUpgrade{
			ObjectMeta: metav1.ObjectMeta{Namespace: "cgu-cli", Name: "upgrade"},
			Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
				ClusterLabelSelectors: []ranv1alpha1.ClusterLabelSelector{{MatchLabels: map[string]string{"fleet": "cli"}}},
				ManagedPolicies:       []string{p.Name},
				Enable:                ptr.To(false),
				RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{
					MaxConcurrency: 2, Timeout: 240, Canaries: []string{clusters[5]},
				},
			},
		}
		fleet.MustCreate(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			HaveField("Status.State", ranv1alpha1.StateNotStarted),
			HaveField("Status.Plan.Batches", 4),
			HaveField("Status.Conditions", ContainElement(And(
				HaveField("Type", ranv1alpha1.ConditionValidated), HaveField("Status", metav1.ConditionTrue)))),
		))

		By("list, status and the previewed plan")
		matchGolden("list-not-started", withoutAge(succeeds(ctx, "list", "-n", "cgu-cli")))
		matchGolden("status-not-started", succeeds(ctx, "status", "upgrade", "-n", "cgu-cli"))
		matchGolden("plan-preview", succeeds(ctx, "plan", "upgrade", "-n", "cgu-cli"))

		By("enabling it with the plugin, with " + clusters[2] + " stalled: batch 3 waits on it")
		simulator.SetBehaviour(clusters[2], sim.Behaviour{Stall: true})
		Expect(succeeds(ctx, "enable", "upgrade", "-n", "cgu-cli")).To(Equal("Enabled cgu-cli/upgrade\n"))
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(3 * settle).Should(And(
			batchShows(3, clusters[3], ranv1alpha1.ClusterCompleted),
			batchShows(3, clusters[2], ranv1alpha1.ClusterInProgress),
		))
		By("the records of batches 1 and 2 ended, batch 3's shows " + clusters[3] + " completed")
		Eventually(func(g Gomega) {
			var records ranv1alpha1.ClusterGroupUpgradeBatchList
			g.Expect(hub.Client.List(ctx, &records, client.InNamespace(cgu.Namespace))).To(Succeed())
			var progress []ranv1alpha1.ClusterProgress
			ended := 0
			for _, r := range records.Items {
				progress = append(progress, r.Status.Clusters...)
				if r.Spec.Index < 3 && r.Status.FinishedAt != nil {
					ended++
				}
			}
			g.Expect(ended).To(Equal(2))
			g.Expect(progress).To(ContainElement(And(HaveField("Name", clusters[3]), HaveField("State", ranv1alpha1.ClusterCompleted))))
		}).Should(Succeed())

		By("four minutes later")
		clock.Step(4 * time.Minute)
		// The clock's step may wake the operator, which writes its status again: the output
		// must settle on the golden text.
		Eventually(func() error {
			return golden.Check("status-running", succeeds(ctx, "status", "upgrade", "-n", "cgu-cli"))
		}).WithTimeout(settle).Should(Succeed())
		frozenAt := fleet.Stored(ctx, cgu)(Default).Status.Plan.FrozenAt
		Expect(frozenAt).NotTo(BeNil())
		// When the plan froze depends on where the suite's clock stood when this spec began
		// (other specs move it): the golden text says it in words.
		matchGolden("plan-frozen", strings.Replace(succeeds(ctx, "plan", "upgrade", "-n", "cgu-cli"),
			frozenAt.UTC().Format(time.RFC3339), "<frozen at>", 1))
		matchGolden("plan-frozen-json", succeeds(ctx, "plan", "upgrade", "-n", "cgu-cli", "-o", "json"))
		// Other specs' rollouts, which may have run before this one, are left out.
		matchGolden("list-all-namespaces", rowsOf(withoutAge(succeeds(ctx, "list", "-A")), "cgu-cli"))

		By("status -o yaml is the CGU object")
		var read ranv1alpha1.ClusterGroupUpgrade
		Expect(yaml.UnmarshalStrict([]byte(succeeds(ctx, "status", "upgrade", "-n", "cgu-cli", "-o", "yaml")), &read)).To(Succeed())
		Expect(read.Kind).To(Equal("ClusterGroupUpgrade"))
		Expect(read.APIVersion).To(Equal(ranv1alpha1.GroupVersion.String()))
		Expect(read.Name).To(Equal("upgrade"))
		Expect(read.Status.State).To(Equal(ranv1alpha1.StateNotCompleted))
		Expect(read.Status.CurrentBatch).NotTo(BeNil())
		Expect(read.Status.CurrentBatch.Index).To(Equal(3))

		By("list -o json is a List of the CGU objects")
		var list struct {
			Kind  string                            `json:"kind"`
			Items []ranv1alpha1.ClusterGroupUpgrade `json:"items"`
		}
		Expect(json.Unmarshal([]byte(succeeds(ctx, "ls", "-n", "cgu-cli", "-o", "json")), &list)).To(Succeed())
		Expect(list.Kind).To(Equal("List"))
		Expect(list.Items).To(ConsistOf(And(HaveField("Name", "upgrade"), HaveField("Kind", "ClusterGroupUpgrade"),
			HaveField("ManagedFields", BeEmpty()), HaveField("Status.Progress.Batch", "3/4"))))

		By("exit codes a script can use")
		r := kubectlCGU(ctx, "status", "upgrade", "-n", "cgu-cli", "--exit-state")
		Expect(r.code).To(Equal(cli.ExitRunning))
		Expect(r.out).To(ContainSubstring("State:        NotCompleted"))
		Expect(r.errOut).To(BeEmpty())

		r = kubectlCGU(ctx, "status", "missing", "-n", "cgu-cli")
		Expect(r.code).To(Equal(cli.ExitNotFound))
		Expect(r.errOut).To(Equal("Error: ClusterGroupUpgrade cgu-cli/missing not found\n"))

		r = kubectlCGU(ctx, "status", "-n", "cgu-cli")
		Expect(r.code).To(Equal(cli.ExitUsage))
		Expect(r.out).To(BeEmpty())
	})
})
