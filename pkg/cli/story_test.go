package cli_test

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/cli"
	"github.com/cgu-operator/cgu-operator/pkg/story"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

// clusterStory runs kubectl cgu status upgrade -n cgu-story --managed-cluster cluster, on the
// operator's fake clock; a failure is its exit code and what it wrote on stderr.
func clusterStory(ctx context.Context, cluster, output string) (string, int, string) {
	r := kubectlCGU(ctx, "status", "upgrade", "-n", "cgu-story", "--managed-cluster", cluster, "-o", output)
	return r.out, r.code, strings.TrimSpace(r.errOut)
}

// toldStory is the JSON story of cluster, for Eventually.
func toldStory(ctx context.Context, cluster string) func(Gomega) story.Story {
	return func(g Gomega) story.Story {
		out, code, stderr := clusterStory(ctx, cluster, "json")
		g.Expect(code).To(Equal(cli.ExitOK), stderr)
		var s story.Story
		g.Expect(json.Unmarshal([]byte(out), &s)).To(Succeed())
		return s
	}
}

func eventMessages(s story.Story) []string {
	out := make([]string, len(s.Events))
	for i, e := range s.Events {
		out[i] = e.Message
	}
	return out
}

var _ = Describe("Cluster story", func() {
	It("tells why a stalled cluster does not finish", func(ctx SpecContext) {
		By("four clusters in one batch, the second one's update stalling, the upgrade checks reading their ClusterVersions")
		clusters := joinFleet(ctx, "story", 4)
		p := placeUpgradePolicy(ctx, "story", 4)
		stalled := clusters[1]
		simulator.SetBehaviour(stalled, sim.Behaviour{Stall: true})
		cgu := &ranv1alpha1.ClusterGroupUpgrade{
			ObjectMeta: metav1.ObjectMeta{Namespace: "cgu-story", Name: "upgrade"},
			Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
				ClusterLabelSelectors: []ranv1alpha1.ClusterLabelSelector{{MatchLabels: map[string]string{"fleet": "story"}}},
				ManagedPolicies:       []string{p.Name},
				Enable:                ptr.To(true),
				RemediationStrategy:   &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: 4, Timeout: 240},
				UpgradeChecks:         &ranv1alpha1.UpgradeChecks{PathValidation: true},
			},
		}
		fleet.MustCreate(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(3 * settle).Should(And(
			batchShows(1, clusters[0], ranv1alpha1.ClusterCompleted), batchShows(1, stalled, ranv1alpha1.ClusterInProgress),
			batchShows(1, clusters[2], ranv1alpha1.ClusterCompleted), batchShows(1, clusters[3], ranv1alpha1.ClusterCompleted),
		))
		started := fleet.Stored(ctx, cgu)(Default).Status.CurrentBatch.StartedAt

		By("four minutes later, its story names its policy, its state since the start, its spoke's update and its own events")
		clock.Step(4 * time.Minute)
		Eventually(toldStory(ctx, stalled)).WithTimeout(settle).Should(And(
			HaveField("Spoke.Latest", And(Not(BeNil()), HaveField("Version", harness.To), HaveField("State", "Partial"))),
			WithTransform(eventMessages, ContainElement("ClusterGroupUpgrade upgrade: cluster "+stalled+" upgrade started")),
		))
		s := toldStory(ctx, stalled)(Default)
		Expect(s.Cluster).To(Equal(stalled))
		Expect(s.Batch).To(And(HaveField("Index", 1), HaveField("Current", 1)))
		Expect(s.State).To(Equal(ranv1alpha1.ClusterInProgress))
		Expect(s.Since.Time).To(BeTemporally("==", started.Time), "InProgress since its batch started")
		Expect(s.Policies).To(ConsistOf(And(HaveField("Name", p.Name), HaveField("Namespace", harness.PolicyNamespace),
			HaveField("Placed", true), HaveField("Compliance", "NonCompliant"), HaveField("Current", true), HaveField("Enforced", true))))
		Expect(s.WaitsFor).To(Equal(p.Name + " to become Compliant (NonCompliant, enforced)"))
		Expect(s.Spoke).To(And(HaveField("Answered", true), HaveField("Desired", harness.To),
			HaveField("Progressing", "Working towards "+harness.To)))
		for _, other := range []string{clusters[0], clusters[2], clusters[3]} {
			Expect(eventMessages(s)).NotTo(ContainElement(ContainSubstring("cluster "+other+" ")), "another cluster's events")
		}
		Expect(s.Timing).To(And(HaveField("Running", true), HaveField("Took.Duration", 4*time.Minute), HaveField("Completed", 3)))

		By("the same story for people")
		out, code, stderr := clusterStory(ctx, stalled, "table")
		Expect(code).To(Equal(cli.ExitOK), stderr)
		for _, line := range []string{
			"Cluster:      " + stalled + " in cgu-story/upgrade\n",
			"Batch:        1 of 1, started 4m ago\n",
			"State:        InProgress since 4m ago\n",
			"Waiting for:  " + p.Name + " to become Compliant (NonCompliant, enforced)\n",
			"Time:         working for 4m, from the start of batch 1; the 3 other clusters that completed took ",
			"Spoke:        desired " + harness.To + "; latest update " + harness.To + " Partial, started ",
			"Progressing:  Working towards " + harness.To + "\n",
			"  " + harness.PolicyNamespace + "/" + p.Name + "  NonCompliant  current, enforced\n",
			"ClusterGroupUpgrade upgrade: cluster " + stalled + " upgrade started\n",
		} {
			Expect(out).To(ContainSubstring(line))
		}
		Expect(out).NotTo(ContainSubstring("cluster " + clusters[0] + " "))

		By("a cluster the rollout does not select is a usage error saying how many it has")
		_, code, stderr = clusterStory(ctx, "nowhere-1", "table")
		Expect(code).To(Equal(cli.ExitUsage))
		Expect(stderr).To(ContainSubstring("ClusterGroupUpgrade cgu-story/upgrade does not select cluster nowhere-1: its plan has 4 clusters"))

		By("--exit-state follows the rollout, not a cluster: refused with --managed-cluster")
		r := kubectlCGU(ctx, "status", "upgrade", "-n", "cgu-story", "--managed-cluster", stalled, "--exit-state")
		Expect(r.code).To(Equal(cli.ExitUsage))
		Expect(r.errOut).To(ContainSubstring("does not go with --managed-cluster"))
	})
})
