package clustergroupupgrade_test

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gstruct"
	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
	"github.com/cgu-operator/cgu-operator/tests/harness"
)

// checkOf returns the verdict status.upgradeChecks lists for a cluster, nil when it lists none.
func checkOf(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, cluster string) func(Gomega) *ranv1alpha1.ClusterCheck {
	return func(g Gomega) *ranv1alpha1.ClusterCheck {
		st := fleet.Stored(ctx, cgu)(g).Status.UpgradeChecks
		if st == nil {
			return nil
		}
		for _, c := range st.Clusters {
			if c.Name == cluster {
				return &c
			}
		}
		return nil
	}
}

var _ = Describe("Upgrade checks", func() {
	It("hold a cluster exposed to a conditional-update risk and one whose risk is unknown, let another proceed, and accept a risk by name", func(ctx SpecContext) {
		clusters := fleet.MustJoinFleetOn(ctx, "risky", 3, harness.RiskyChannel)
		exposed, safe, unknown := clusters[0], clusters[1], clusters[2]
		fleet.ExposeToRisk(true, exposed)
		fleet.RiskUnknown(unknown)
		p := placeUpgradePolicy(ctx, "risky", 3)

		cgu := newCGU("cgu-checks", "upgrade", clusters, 3, p.Name)
		cgu.Spec.UpgradeChecks = &ranv1alpha1.UpgradeChecks{PathValidation: true}
		fleet.MustCreate(ctx, cgu)

		By("the verdicts are in status before the rollout is enabled")
		Eventually(checkOf(ctx, cgu, exposed)).WithTimeout(settle).Should(And(
			Not(BeNil()),
			HaveField("Outcome", string(upgradecheck.Hold)),
			HaveField("Reason", upgradecheck.ReasonNotRecommended),
			HaveField("Message", And(ContainSubstring(harness.Risk), ContainSubstring("https://issues.example.com/"+harness.Risk))),
		))
		Eventually(checkOf(ctx, cgu, unknown)).WithTimeout(settle).Should(And(
			Not(BeNil()), HaveField("Outcome", string(upgradecheck.Hold)), HaveField("Reason", upgradecheck.ReasonRiskUnknown)))
		By("the safe cluster's verdict follows once its ClusterVersion is read; until then it is held as unknown")
		Eventually(func(g Gomega) map[string]int {
			st := fleet.Stored(ctx, cgu)(g).Status.UpgradeChecks
			g.Expect(st).NotTo(BeNil())
			return st.Counts
		}).WithTimeout(settle).Should(Equal(map[string]int{"Proceed": 1, "Hold": 2}))
		stored := fleet.Stored(ctx, cgu)(Default)
		Expect(stored.Status.State).To(Equal(ranv1alpha1.StateNotStarted))
		Expect(condition(ctx, cgu, ranv1alpha1.ConditionUpgradeChecked)(Default)).To(gstruct.PointTo(gstruct.MatchFields(gstruct.IgnoreExtras, gstruct.Fields{
			"Status": Equal(metav1.ConditionFalse), "Reason": Equal(ranv1alpha1.ReasonClustersHeld),
		})))

		By("enabled, the safe cluster upgrades and the two others are held, not failed")
		enable(ctx, cgu)
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		final := fleet.Stored(ctx, cgu)(Default)
		Expect(final.Status.Counts).To(HaveField("Completed", 1))
		Expect(final.Status.Counts).To(HaveField("Held", 2))
		Expect(final.Status.Counts).To(HaveField("Failed", 0))
		Expect(final.Status.Counts).To(HaveField("TimedOut", 0))
		Expect(condition(ctx, cgu, ranv1alpha1.ConditionSucceeded)(Default)).To(gstruct.PointTo(gstruct.MatchFields(gstruct.IgnoreExtras, gstruct.Fields{
			"Status": Equal(metav1.ConditionFalse), "Reason": Equal(ranv1alpha1.ReasonClustersHeld),
		})))
		Expect(version(safe)(Default)).To(Equal(to))
		Expect(desired(exposed)(Default)).To(BeEmpty(), "a held cluster is never enforced")
		Expect(desired(unknown)(Default)).To(BeEmpty(), "an unknown risk fails closed")
		Eventually(events(ctx, cgu)).WithTimeout(settle).Should(HaveKeyWithValue("ClusterHeld", 2))

		By("a second rollout accepts the risk by name")
		accept := newCGU("cgu-checks", "upgrade-accepting", []string{exposed, unknown}, 2, p.Name)
		accept.Spec.UpgradeChecks = &ranv1alpha1.UpgradeChecks{PathValidation: true, AcceptRisks: []string{harness.Risk}}
		fleet.MustCreate(ctx, accept)
		Eventually(checkOf(ctx, accept, exposed)).WithTimeout(settle).Should(And(
			Not(BeNil()), HaveField("Outcome", string(upgradecheck.Proceed)), HaveField("AcceptedRisks", ConsistOf(harness.Risk))))
		Eventually(condition(ctx, accept, ranv1alpha1.ConditionUpgradeChecked)).WithTimeout(settle).Should(
			HaveField("Status", metav1.ConditionTrue))
		enable(ctx, accept)
		Eventually(state(ctx, accept)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		Expect(version(exposed)(Default)).To(Equal(to))
		Expect(version(unknown)(Default)).To(Equal(to))
		Eventually(events(ctx, accept)).WithTimeout(settle).Should(HaveKeyWithValue(
			"UpgradeRisksAccepted", 2), "one event per cluster names the accepted risk")
		Expect(fleet.Stored(ctx, accept)(Default).Status.UpgradeChecks).To(BeNil(), "no verdicts are left once every cluster started")
	})

	It("hold a cluster asked to downgrade and one asked for an update it is not offered", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "paths", 1)
		p := placeUpgradePolicy(ctx, "paths", 1)
		cgu := newCGU("cgu-checks", "paths", clusters, 1, p.Name)
		cgu.Spec.UpgradeChecks = &ranv1alpha1.UpgradeChecks{PathValidation: true}
		fleet.MustCreate(ctx, cgu)
		Eventually(condition(ctx, cgu, ranv1alpha1.ConditionUpgradeChecked)).WithTimeout(settle).Should(And(
			Not(BeNil()), HaveField("Status", metav1.ConditionTrue)), "4.16.10 to 4.16.12 is offered on stable-4.16")

		By("a policy asking for an older release, and one asking for a release the channel does not offer")
		for _, target := range []struct{ version, reason string }{
			{"4.16.9", upgradecheck.ReasonDowngrade},
			{"4.16.99", upgradecheck.ReasonNotInAvailableUpdates},
		} {
			q := placeVersionPolicy(ctx, "paths", target.version)
			other := newCGU("cgu-checks", "paths-"+strings.ToLower(target.reason), clusters, 1, q.Name)
			other.Spec.UpgradeChecks = &ranv1alpha1.UpgradeChecks{PathValidation: true}
			fleet.MustCreate(ctx, other)
			Eventually(checkOf(ctx, other, clusters[0])).WithTimeout(settle).Should(And(
				Not(BeNil()), HaveField("Outcome", string(upgradecheck.Reject)), HaveField("Reason", target.reason)))
		}
		Consistently(desired(clusters[0])).WithTimeout(time.Second).Should(BeEmpty())
	})

	It("judge a y-stream target against the update graph of its channel, and hold a cluster that is not Upgradeable", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "minor", 2)
		inChannel := placeObjectPolicy(ctx, "minor", "minor-in-channel", nextMinor(harness.NextMinorChannel))
		noChannel := placeObjectPolicy(ctx, "minor", "minor-no-channel", nextMinor(""))

		By("the target's channel lists the edge: proceed; the cluster's channel does not list the target: reject")
		ok := newCGU("cgu-checks", "minor-in-channel", clusters, 2, inChannel.Name)
		ok.Spec.UpgradeChecks = &ranv1alpha1.UpgradeChecks{PathValidation: true}
		fleet.MustCreate(ctx, ok)
		Eventually(condition(ctx, ok, ranv1alpha1.ConditionUpgradeChecked)).WithTimeout(settle).Should(And(
			Not(BeNil()), HaveField("Status", metav1.ConditionTrue)))
		Expect(fleet.Stored(ctx, ok)(Default).Status.UpgradeChecks.Counts).To(Equal(map[string]int{"Proceed": 2}))
		bad := newCGU("cgu-checks", "minor-no-channel", clusters, 2, noChannel.Name)
		bad.Spec.UpgradeChecks = &ranv1alpha1.UpgradeChecks{PathValidation: true}
		fleet.MustCreate(ctx, bad)
		Eventually(checkOf(ctx, bad, clusters[0])).WithTimeout(settle).Should(And(
			Not(BeNil()), HaveField("Outcome", string(upgradecheck.Reject)), HaveField("Reason", upgradecheck.ReasonNotInGraph)))

		By("a cluster operator says Upgradeable=False: that cluster is held for the y-stream")
		Expect(simulator.SetClusterOperatorCondition(clusters[1], "kube-apiserver", configv1.OperatorUpgradeable, configv1.ConditionFalse,
			"AdminAckRequired", "Kubernetes 1.30 removes APIs this cluster uses")).To(Succeed())
		Eventually(checkOf(ctx, ok, clusters[1])).WithTimeout(settle).Should(And(
			Not(BeNil()), HaveField("Outcome", string(upgradecheck.Hold)), HaveField("Reason", upgradecheck.ReasonUpgradeableFalse),
			HaveField("Message", ContainSubstring("removes APIs"))))
	})
})
