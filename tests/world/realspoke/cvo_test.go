package realspoke_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	clocktesting "k8s.io/utils/clock/testing"
	policiesv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/world/realspoke"
)

var _ = Describe("The cluster-version operator of a real spoke", Ordered, func() {
	const (
		cluster  = "spoke-cvo"
		duration = 10 * time.Minute
	)
	var (
		spoke *realspoke.Spoke
		clk   *clocktesting.FakeClock
	)

	BeforeAll(func(ctx SpecContext) {
		createClusterNamespace(ctx, cluster)
		clk = clocktesting.NewFakeClock(time.Now())
		var err error
		spoke, err = realspoke.Start(ctx, realspoke.Options{
			HubConfig:   hubCfg,
			ClusterName: cluster,
			Version:     "4.16.10",
			Channel:     "stable-4.16",
			Behaviour:   sim.Behaviour{Duration: duration},
			Clock:       clk,
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(spoke.Stop)
	})

	It("starts the update an enforced upgrade policy asks for and holds the policy NonCompliant while Partial", func(ctx SpecContext) {
		By("Given an enforced policy asking for desiredUpdate " + targetVersion + " and history Completed for it")
		policy := upgradePolicy(cluster)
		policy.Spec.RemediationAction = policiesv1.Enforce
		Expect(hub.Create(ctx, policy)).To(Succeed())

		By("Then the spoke's ClusterVersion starts the update: history Partial for " + targetVersion)
		Eventually(latestUpdate).WithContext(ctx).WithArguments(spoke).WithTimeout(timeout).WithPolling(poll).
			Should(SatisfyAll(
				HaveField("State", configv1.PartialUpdate),
				HaveField("Version", targetVersion),
			))
		cv, err := clusterVersion(ctx, spoke)
		Expect(err).NotTo(HaveOccurred())
		Expect(cv.Status.Desired.Version).To(Equal(targetVersion))
		Expect(cv.Status.History).To(HaveLen(2))
		Expect(cv.Status.History[1].Version).To(Equal("4.16.10"), "the installed version stays in history")

		By("And the hub replicated policy is NonCompliant, and stays so while the clock stands still")
		Eventually(hubPolicy).WithContext(ctx).WithArguments(cluster).WithTimeout(timeout).WithPolling(poll).
			Should(HaveField("Status.ComplianceState", policiesv1.NonCompliant))
		Consistently(hubPolicy).WithContext(ctx).WithArguments(cluster).WithTimeout(3 * time.Second).WithPolling(poll).
			Should(HaveField("Status.ComplianceState", policiesv1.NonCompliant))
		Expect(latestUpdate(ctx, spoke)).To(HaveField("State", configv1.PartialUpdate))
	})

	It("completes the update once its duration passed on its clock, and only then is the policy Compliant", func(ctx SpecContext) {
		By("When the clock moves on, a minute per poll")
		Eventually(func(g Gomega) {
			policy, err := hubPolicy(ctx, cluster)
			g.Expect(err).NotTo(HaveOccurred())
			// Read after the policy: a Compliant policy must already see the update Completed.
			update, err := latestUpdate(ctx, spoke)
			g.Expect(err).NotTo(HaveOccurred())
			if policy.Status.ComplianceState == policiesv1.Compliant && update.State != configv1.CompletedUpdate {
				StopTrying("the policy turned Compliant before the update completed").Now()
			}
			clk.Step(time.Minute)
			g.Expect(policy.Status.ComplianceState).To(Equal(policiesv1.Compliant))
		}).WithContext(ctx).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

		By("Then history says Completed for " + targetVersion + ", no sooner than the behaviour's duration")
		update, err := latestUpdate(ctx, spoke)
		Expect(err).NotTo(HaveOccurred())
		Expect(update.State).To(Equal(configv1.CompletedUpdate))
		Expect(update.Version).To(Equal(targetVersion))
		Expect(update.CompletionTime).NotTo(BeNil())
		Expect(update.CompletionTime.Sub(update.StartedTime.Time)).To(BeNumerically(">=", duration))

		By("And the hub's history ends with the Compliant notification")
		policy, err := hubPolicy(ctx, cluster)
		Expect(err).NotTo(HaveOccurred())
		Expect(latestMessage(policy)).To(Equal("Compliant; notification - clusterversions [version] found as specified"))
		Expect(historyMessages(policy)[1:]).To(HaveEach(HavePrefix("NonCompliant; ")))
		AddReportEntry("history of an enforced upgrade on a real spoke", historyMessages(policy))
	})
})

// upgradePolicy returns a replicated inform policy in the shape of a platform upgrade policy:
// the ClusterVersion must ask for targetVersion and report it Completed in its history.
func upgradePolicy(cluster string) *policiesv1.Policy {
	return replicatedClusterVersionPolicy(cluster, map[string]any{
		"apiVersion": "config.openshift.io/v1",
		"kind":       "ClusterVersion",
		"metadata":   map[string]any{"name": realspoke.ClusterVersionName},
		"spec":       map[string]any{"desiredUpdate": map[string]any{"version": targetVersion}},
		"status": map[string]any{"history": []any{
			map[string]any{"state": string(configv1.CompletedUpdate), "version": targetVersion},
		}},
	})
}

// latestUpdate returns the newest entry of a spoke's ClusterVersion history.
func latestUpdate(ctx context.Context, spoke *realspoke.Spoke) (configv1.UpdateHistory, error) {
	cv, err := clusterVersion(ctx, spoke)
	if err != nil || len(cv.Status.History) == 0 {
		return configv1.UpdateHistory{}, err
	}
	return cv.Status.History[0], nil
}
