package clustergroupupgrade_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/cli"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
)

// waiting matches a CGU waiting between batches for reason before batch.
func waiting(reason string, batch int) OmegaMatcher {
	return And(
		HaveField("Status.State", ranv1alpha1.StateNotCompleted),
		HaveField("Status.Waiting", And(Not(BeNil()), HaveField("Reason", reason), HaveField("Batch", batch))),
	)
}

// kubectlCGU runs the plugin against the hub and returns its exit code and output.
func kubectlCGU(ctx SpecContext, args ...string) (int, string) {
	kubeconfig := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(hub.WriteKubeconfig(kubeconfig)).To(Succeed())
	var out, errOut bytes.Buffer
	o := cli.Options{IOStreams: genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut}, Now: clock.Now}
	code := cli.Run(ctx, o, append([]string{"--kubeconfig", kubeconfig}, args...))
	return code, out.String() + errOut.String()
}

var _ = Describe("Upgrade safety gates", func() {
	It("pause and resume: nothing new starts while paused, and the time paused does not count", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "pause", 2)
		p := placeUpgradePolicy(ctx, "pause", 2)
		stall(clusters[0])
		cgu := newCGU("cgu-pause", "upgrade", clusters, 1, p.Name)
		cgu.Spec.RemediationStrategy.Timeout = 60
		enableOnCreate(cgu)
		fleet.MustCreate(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(firstBatchShows(clusters[0], ranv1alpha1.ClusterInProgress))

		By("pausing with the plugin, then two hours, twice the timeout")
		code, out := kubectlCGU(ctx, "pause", cgu.Name, "-n", cgu.Namespace)
		Expect(code).To(BeZero(), out)
		Expect(out).To(Equal("Paused cgu-pause/upgrade\n"))
		Eventually(condition(ctx, cgu, ranv1alpha1.ConditionProgressing)).WithTimeout(settle).Should(HaveField("Reason", ranv1alpha1.ReasonPaused))
		advance(ctx, 2*time.Hour, cgu)
		Consistently(fleet.Stored(ctx, cgu)).WithTimeout(2*time.Second).Should(firstBatchShows(clusters[0], ranv1alpha1.ClusterInProgress),
			"nothing times out while paused")

		By("the cluster in flight finishes; the next batch does not start")
		unstall(clusters[0])
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(waiting(ranv1alpha1.ReasonPaused, 2))
		Consistently(desired(clusters[1])).WithTimeout(2 * time.Second).Should(BeEmpty())

		By("resuming with the plugin")
		code, out = kubectlCGU(ctx, "resume", cgu.Name, "-n", cgu.Namespace)
		Expect(code).To(BeZero(), out)
		Expect(out).To(Equal("Resumed cgu-pause/upgrade\n"))
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		final := fleet.Stored(ctx, cgu)(Default)
		Expect(final.Status.Counts.Completed).To(Equal(2))
		Expect(final.Status.PausedFor).To(HaveField("Duration", 2*time.Hour))
		Expect(final.Status.PausedAt).To(BeNil())
		Eventually(talmEvents(ctx, cgu)).Should(And(HaveKeyWithValue(talm.ActionPaused, 1), HaveKeyWithValue(talm.ActionResumed, 1)),
			"one event each for the pause and the resume")
	})

	It("approval after the canaries, given through the plugin and recorded with who and when", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "approve", 3)
		p := placeUpgradePolicy(ctx, "approve", 3)
		cgu := newCGU("cgu-approve", "upgrade", clusters, 2, p.Name)
		cgu.Spec.RemediationStrategy.Canaries = []string{clusters[0]}
		cgu.Spec.Approval = &ranv1alpha1.ApprovalGates{AfterCanaries: true}
		enableOnCreate(cgu)
		fleet.MustCreate(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(waiting(ranv1alpha1.ReasonWaitingForApproval, 2))
		Consistently(desired(clusters[1])).WithTimeout(2 * time.Second).Should(BeEmpty())
		code, out := kubectlCGU(ctx, "status", cgu.Name, "-n", cgu.Namespace)
		Expect(code).To(BeZero())
		Expect(out).To(ContainSubstring("Batch 2 waits for approval"))

		code, out = kubectlCGU(ctx, "approve", cgu.Name, "-n", cgu.Namespace)
		Expect(code).To(BeZero(), out)
		Expect(out).To(MatchRegexp(`^Approved batch 2 of cgu-approve/upgrade as \S+\n$`))
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		Expect(fleet.Stored(ctx, cgu)(Default).Status.Approvals).To(ConsistOf(And(
			HaveField("Batch", 2), HaveField("By", Not(BeEmpty())), HaveField("At.Time", BeTemporally("~", clock.Now(), time.Second)),
		)))

		code, _ = kubectlCGU(ctx, "approve", cgu.Name, "-n", cgu.Namespace)
		Expect(code).To(Equal(cli.ExitUsage), "nothing waits for an approval any more")
		Eventually(talmEvents(ctx, cgu)).Should(And(HaveKeyWithValue(talm.ActionBatchWaiting, 1), HaveKeyWithValue(talm.ActionBatchApproved, 1)))
		approved := talmEventsOf(ctx, cgu, talm.ActionBatchApproved)(Default)[0]
		Expect(approved.Annotations).To(HaveKeyWithValue(talm.AnnotationBatchIndex, "2"))
	})

	It("a maintenance window that closes between batches holds the next batch until the next window", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "window", 2)
		p := placeUpgradePolicy(ctx, "window", 2)
		stall(clusters[0])
		cgu := newCGU("cgu-window", "upgrade", clusters, 1, p.Name)
		cgu.Spec.RemediationStrategy.Timeout = 3000
		// Open every day for 90 minutes from about an hour ago on the operator's clock, in UTC.
		opened := clock.Now().Add(-time.Hour).Truncate(time.Minute)
		cgu.Spec.MaintenanceWindows = &ranv1alpha1.MaintenanceWindows{Windows: []ranv1alpha1.MaintenanceWindow{
			{Start: opened.Format("15:04"), Duration: metav1.Duration{Duration: 90 * time.Minute}},
		}}
		enableOnCreate(cgu)
		fleet.MustCreate(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(firstBatchShows(clusters[0], ranv1alpha1.ClusterInProgress))

		By("the window closes while batch 1 runs; batch 1 goes on and ends")
		advance(ctx, 31*time.Minute, cgu)
		unstall(clusters[0])
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			waiting(ranv1alpha1.ReasonOutsideMaintenanceWindow, 2),
			HaveField("Status.Waiting.Until.Time", BeTemporally("==", opened.Add(24*time.Hour))),
		))
		Consistently(desired(clusters[1])).WithTimeout(2 * time.Second).Should(BeEmpty())

		Eventually(talmEvents(ctx, cgu)).Should(HaveKeyWithValue(talm.ActionBatchWaiting, 1))
		Expect(talmEventsOf(ctx, cgu, talm.ActionBatchWaiting)(Default)[0].Note).To(ContainSubstring(ranv1alpha1.ReasonOutsideMaintenanceWindow))

		By("the next window opens")
		advance(ctx, opened.Add(24*time.Hour).Sub(clock.Now()), cgu)
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
	})

	It("startAt, then a window: the first batch waits for both, enforcing nothing, and starts when the window opens", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "startat", 1)
		p := placeUpgradePolicy(ctx, "startat", 1)
		cgu := newCGU("cgu-startat", "upgrade", clusters, 1, p.Name)
		startAt := clock.Now().Add(2 * time.Hour).Truncate(time.Minute).UTC()
		opens := startAt.Add(time.Hour) // a daily window, closed at startAt
		cgu.Spec.MaintenanceWindows = &ranv1alpha1.MaintenanceWindows{StartAt: &metav1.Time{Time: startAt},
			Windows: []ranv1alpha1.MaintenanceWindow{{Start: opens.Format("15:04"), Duration: metav1.Duration{Duration: time.Hour}}}}
		enableOnCreate(cgu)
		fleet.MustCreate(ctx, cgu)

		By("before startAt: not started, batch 1 waits for the window's opening after startAt")
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			HaveField("Status.State", ranv1alpha1.StateNotStarted),
			HaveField("Status.StartedAt", BeNil()),
			HaveField("Status.Waiting", And(Not(BeNil()), HaveField("Reason", ranv1alpha1.ReasonOutsideMaintenanceWindow),
				HaveField("Batch", 1), HaveField("Until.Time", BeTemporally("==", opens)))),
		))
		Consistently(desired(clusters[0])).WithTimeout(2 * time.Second).Should(BeEmpty())

		By("past startAt, the window still closed: it still waits")
		advance(ctx, startAt.Add(time.Minute).Sub(clock.Now()), cgu)
		Consistently(fleet.Stored(ctx, cgu)).WithTimeout(2 * time.Second).Should(HaveField("Status.State", ranv1alpha1.StateNotStarted))
		Expect(desired(clusters[0])(Default)).To(BeEmpty())

		By("the window opens: the rollout starts and completes")
		advance(ctx, opens.Sub(clock.Now()), cgu)
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		Expect(fleet.Stored(ctx, cgu)(Default).Status.StartedAt.Time).To(BeTemporally(">=", opens))
	})

	It("times a cluster out at its progress deadline, long before its batch's, and names it in an event", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "deadline", 2)
		p := placeUpgradePolicy(ctx, "deadline", 2)
		stall(clusters[0])
		cgu := newCGU("cgu-deadline", "upgrade", clusters, 2, p.Name)
		cgu.Spec.ClusterProgressDeadline = &metav1.Duration{Duration: 10 * time.Minute}
		enableOnCreate(cgu)
		fleet.MustCreate(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			firstBatchShows(clusters[0], ranv1alpha1.ClusterInProgress), firstBatchShows(clusters[1], ranv1alpha1.ClusterCompleted)))

		By("9 minutes in, the stalled cluster still runs")
		advance(ctx, 9*time.Minute, cgu)
		Consistently(fleet.Stored(ctx, cgu)).WithTimeout(2 * time.Second).Should(firstBatchShows(clusters[0], ranv1alpha1.ClusterInProgress))

		By("past 10 minutes it times out, 230 minutes before the batch would have")
		advance(ctx, 2*time.Minute, cgu)
		late := ranv1alpha1.ClusterFinalState{Name: clusters[0], State: "timedout", CurrentPolicy: &ranv1alpha1.PolicyStatus{Name: p.Name, Status: "NonCompliant"}}
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Status.Clusters", ContainElement(late)))
		Eventually(enforcedOn(ctx, cgu, p.Name)).WithTimeout(settle).Should(BeEmpty())
		Eventually(talmEvents(ctx, cgu)).Should(HaveKeyWithValue(talm.ActionClusterTimeout, 1))
		timedOut := talmEventsOf(ctx, cgu, talm.ActionClusterTimeout)(Default)[0]
		Expect(timedOut.Annotations).To(HaveKeyWithValue(talm.AnnotationClusterName, clusters[0]))
		unstall(clusters[0])
	})

	It("stops when the failure budget is exceeded, starting no new batch", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "budget", 3)
		p := placeUpgradePolicy(ctx, "budget", 3)
		stall(clusters[0])
		cgu := newCGU("cgu-budget", "upgrade", clusters, 1, p.Name)
		cgu.Spec.RemediationStrategy.Timeout = 60
		cgu.Spec.MaxFailures = ptr.To(intstr.FromInt32(0))
		enableOnCreate(cgu)
		fleet.MustCreate(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(firstBatchShows(clusters[0], ranv1alpha1.ClusterInProgress))
		advance(ctx, 21*time.Minute, cgu)
		Eventually(condition(ctx, cgu, ranv1alpha1.ConditionSucceeded)).WithTimeout(settle).Should(And(
			HaveField("Reason", ranv1alpha1.ReasonFailureBudgetExceeded),
			HaveField("Message", ContainSubstring("more than spec.maxFailures (0)")),
		))
		Expect(state(ctx, cgu)(Default)).To(Equal(ranv1alpha1.StateTimedOut))
		Consistently(desired(clusters[1])).WithTimeout(2 * time.Second).Should(BeEmpty())
	})

	It("soaks a finished batch before the next starts", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "bsoak", 2)
		p := placeUpgradePolicy(ctx, "bsoak", 2)
		cgu := newCGU("cgu-bsoak", "upgrade", clusters, 1, p.Name)
		cgu.Spec.BatchSoak = &metav1.Duration{Duration: 10 * time.Minute}
		enableOnCreate(cgu)
		fleet.MustCreate(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(waiting(ranv1alpha1.ReasonBatchSoaking, 1))
		Consistently(desired(clusters[1])).WithTimeout(2 * time.Second).Should(BeEmpty())
		advance(ctx, 11*time.Minute, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(waiting(ranv1alpha1.ReasonBatchSoaking, 2))
		Expect(version(clusters[1])(Default)).To(Equal(to))
		advance(ctx, 11*time.Minute, cgu)
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
	})
})

var _ = Describe("Overlapping rollouts", func() {
	It("a cluster another CGU is remediating waits for it, with a condition naming it, and is never enforced twice", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "overlap", 2)
		p := placeUpgradePolicy(ctx, "overlap", 2)
		stall(clusters[0])
		// Copy mode: each rollout's enforcement shows as its own copy (enforcedOn).
		first := newCGU("cgu-overlap", "first", clusters[:1], 0, p.Name)
		first.Spec.Enforcement = ranv1alpha1.EnforcementCopy
		enableOnCreate(first)
		fleet.MustCreate(ctx, first)
		Eventually(fleet.Stored(ctx, first)).WithTimeout(settle).Should(firstBatchShows(clusters[0], ranv1alpha1.ClusterInProgress))

		second := newCGU("cgu-overlap", "second", clusters, 0, p.Name)
		second.Spec.Enforcement = ranv1alpha1.EnforcementCopy
		enableOnCreate(second)
		fleet.MustCreate(ctx, second)
		Eventually(condition(ctx, second, ranv1alpha1.ConditionProgressing)).WithTimeout(settle).Should(And(
			HaveField("Reason", ranv1alpha1.ReasonWaitingForOtherUpgrade),
			HaveField("Message", ContainSubstring("cluster "+clusters[0]+" waits for cgu-overlap/first")),
		))
		Expect(fleet.Stored(ctx, second)(Default).Status.CurrentBatch.Clusters).To(ContainElement(And(
			HaveField("Name", clusters[0]), HaveField("State", ranv1alpha1.ClusterPending),
			HaveField("Reason", ranv1alpha1.ReasonWaitingForOtherUpgrade),
		)))
		Eventually(version(clusters[1])).WithTimeout(settle).Should(Equal(to), "the free cluster goes ahead")
		Consistently(enforcedOn(ctx, second, p.Name)).WithTimeout(2*time.Second).ShouldNot(ContainElement(clusters[0]),
			"the second rollout does not enforce the busy cluster")

		unstall(clusters[0])
		Eventually(state(ctx, first)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		Eventually(state(ctx, second)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
	})
})

var _ = Describe("A managed policy edited during the rollout", func() {
	It("holds the next batch until approved, and the approval accepts the new version of the policy", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "edited", 2)
		p := placeUpgradePolicy(ctx, "edited", 2)
		stall(clusters[0])
		cgu := newCGU("cgu-edited", "upgrade", clusters, 1, p.Name)
		cgu.Spec.Enforcement = ranv1alpha1.EnforcementCopy
		enableOnCreate(cgu)
		fleet.MustCreate(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(firstBatchShows(clusters[0], ranv1alpha1.ClusterInProgress))
		accepted := fleet.Stored(ctx, cgu)(Default).Status.ManagedPoliciesForUpgrade[0].Generation

		By("someone edits the policy while batch 1 runs")
		Eventually(func(g Gomega) {
			cur := &policyv1.Policy{}
			g.Expect(hub.Client.Get(ctx, keyOf(p), cur)).To(Succeed())
			cur.Spec.PolicyTemplates[0].ObjectDefinition.Raw = bytes.Replace(cur.Spec.PolicyTemplates[0].ObjectDefinition.Raw,
				[]byte(`"severity":"high"`), []byte(`"severity":"critical"`), 1)
			g.Expect(hub.Client.Update(ctx, cur)).To(Succeed())
		}).Should(Succeed())
		By("the running batch keeps enforcing the accepted content")
		copyKey := client.ObjectKey{Namespace: cgu.Namespace, Name: names.PolicyCopy(cgu.Namespace, cgu.Name, p.Name)}
		copyTemplate := func(g Gomega) string {
			cp := &policyv1.Policy{}
			g.Expect(hub.Client.Get(ctx, copyKey, cp)).To(Succeed())
			return string(cp.Spec.PolicyTemplates[0].ObjectDefinition.Raw)
		}
		advance(ctx, time.Second, cgu)
		Consistently(copyTemplate).WithTimeout(2 * time.Second).Should(And(
			ContainSubstring(`"severity":"high"`), Not(ContainSubstring(`"severity":"critical"`))))

		unstall(clusters[0])
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(waiting(ranv1alpha1.ReasonManagedPolicyChanged, 2))
		Expect(fleet.Stored(ctx, cgu)(Default).Status.Message).To(ContainSubstring(
			fmt.Sprintf("Managed policy policies/%s changed since the rollout accepted it (generation %d, now %d)", p.Name, accepted, accepted+1)))
		Consistently(desired(clusters[1])).WithTimeout(2 * time.Second).Should(BeEmpty())

		By("approved, batch 2 enforces the new content")
		stall(clusters[1])
		code, out := kubectlCGU(ctx, "approve", cgu.Name, "-n", cgu.Namespace)
		Expect(code).To(BeZero(), out)
		Eventually(copyTemplate).WithTimeout(settle).Should(ContainSubstring(`"severity":"critical"`))
		unstall(clusters[1])
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		Expect(fleet.Stored(ctx, cgu)(Default).Status.ManagedPoliciesForUpgrade[0].Generation).To(Equal(accepted + 1))
	})
})
