package clustergroupupgrade_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/preview"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

// talmConditions are the CGU's conditions as TALM's scenarios compare them: type, status and
// reason, in order.
func talmConditions(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) []string {
	return func(g Gomega) []string {
		var out []string
		for _, c := range fleet.Stored(ctx, cgu)(g).Status.Conditions {
			out = append(out, c.Type+" "+string(c.Status)+" "+c.Reason)
		}
		return out
	}
}

const (
	selected  = "ClustersSelected True ClusterSelectionCompleted"
	validated = "Validated True ValidationCompleted"
)

// timeoutZero sets the CGU's timeout to 0, as TALM users stop a rollout. It sends a merge
// patch, as `oc patch` does: the Go type omits a zero timeout, which the API server would
// default back to 240.
func timeoutZero(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) {
	GinkgoHelper()
	Expect(hub.Client.Patch(ctx, fleet.Stored(ctx, cgu)(Default),
		client.RawPatch(types.MergePatchType, []byte(`{"spec":{"remediationStrategy":{"timeout":0}}}`)))).To(Succeed())
}

// ztpActions are the cluster actions ZTP's CGUs carry: ztp-running before, ztp-done after.
func ztpActions() ranv1alpha1.Actions {
	return ranv1alpha1.Actions{
		BeforeEnable:    &ranv1alpha1.BeforeEnable{ClusterActions: ranv1alpha1.ClusterActions{AddClusterLabels: map[string]ranv1alpha1.LabelValue{"ztp-running": ""}}},
		AfterCompletion: &ranv1alpha1.AfterCompletion{ClusterActions: ranv1alpha1.ClusterActions{AddClusterLabels: map[string]ranv1alpha1.LabelValue{"ztp-done": ""}, RemoveClusterLabels: []string{"ztp-running"}}},
	}
}

// timedOut matches TALM's conditions of a rollout that timed out.
var timedOut = []string{selected, validated, "Progressing False TimedOut", "Succeeded False TimedOut"}

var _ = Describe("TALM's status contract", func() {
	It("shows an upgrade as TALM does: a cluster compliant from the start, batches, a timeout lowered to 0", func(ctx SpecContext) {
		By("three clusters, the third already on " + to + ", and a policy upgrading them")
		all, err := fleet.JoinFleetWith(ctx, "talmup", 3, func(s *sim.SpokeSpec) {
			if s.Name == "talmup-3" {
				s.Version = harness.To
			}
		})
		Expect(err).NotTo(HaveOccurred())
		clusters, done := all[:2], all[2:]
		Expect(simulator.Mutate(done[0], upgradedEarlier())).To(Succeed())
		p := placeUpgradePolicy(ctx, "talmup", 3)
		Eventually(rootCompliance(ctx, p.Name)).WithTimeout(settle).Should(HaveKeyWithValue(done[0], policyv1.Compliant))

		By("a CGU with batches of one and TALM's ZTP actions, not enabled")
		cgu := newCGU("cgu-talmup", "upgrade", append(clusters, done[0]), 1, p.Name)
		cgu.Spec.Actions = ztpActions()
		fleet.MustCreate(ctx, cgu)
		Eventually(talmConditions(ctx, cgu)).WithTimeout(settle).Should(Equal([]string{selected, validated, "Progressing False NotEnabled"}))
		before := fleet.Stored(ctx, cgu)(Default).Status
		Expect(before.ComputedMaxConcurrency).To(Equal(1))
		Expect(before.Enforcement).To(Equal(ranv1alpha1.EnforcementOverride),
			"the test hub's PlacementBindings have binding overrides: the default is Override, as TALM enforces")
		Expect(before.RemediationPlan).To(Equal([][]string{{clusters[0]}, {clusters[1]}}), "the compliant cluster is left out")
		Expect(before.ManagedPoliciesForUpgrade).To(ConsistOf(And(HaveField("Name", p.Name), HaveField("Namespace", policyNS))))
		Expect(before.ManagedPoliciesCompliantBeforeUpgrade).To(BeEmpty())
		Expect(before.ManagedPoliciesNs).To(Equal(map[string]string{p.Name: policyNS}))
		Expect(before.Placements).To(HaveLen(1))
		Expect(before.PlacementBindings).To(Equal(before.Placements))
		Expect(before.Status).To(Equal(ranv1alpha1.UpgradeStatus{}), "status.status is empty before the start")
		Expect(before.Clusters).To(BeEmpty())

		By("enabling it with the second cluster stalled")
		simulator.SetBehaviour(clusters[1], sim.Behaviour{Stall: true})
		enable(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(3 * settle).Should(And(
			HaveField("Status.Status.CurrentBatch", 2),
			HaveField("Status.Status.CurrentBatchRemediationProgress", HaveKeyWithValue(clusters[1],
				PointTo(And(HaveField("State", ranv1alpha1.RemediationInProgress), HaveField("PolicyIndex", PointTo(Equal(0))))))),
			HaveField("Status.Clusters", Equal([]ranv1alpha1.ClusterFinalState{
				{Name: done[0], State: "complete"}, {Name: clusters[0], State: "complete"},
			})),
		))
		running := fleet.Stored(ctx, cgu)(Default).Status
		Expect(running.Status.StartedAt).NotTo(BeNil())
		Expect(running.Status.CurrentBatchStartedAt).NotTo(BeNil())
		Expect(running.Status.CompletedAt).To(BeNil())
		Expect(talmConditions(ctx, cgu)(Default)).To(Equal([]string{selected, validated, "Progressing True InProgress"}))
		Expect(clusterLabels(ctx, done[0])(Default)).To(HaveKey("ztp-done"), "a cluster compliant from the start is done at the start")
		Expect(clusterLabels(ctx, done[0])(Default)).NotTo(HaveKey("ztp-running"))
		Expect(clusterLabels(ctx, clusters[0])(Default)).To(HaveKey("ztp-done"))
		Expect(clusterLabels(ctx, clusters[1])(Default)).To(HaveKey("ztp-running"))

		By("lowering the timeout to 0, as TALM users stop a rollout")
		timeoutZero(ctx, cgu)
		Eventually(talmConditions(ctx, cgu)).WithTimeout(settle).Should(Equal(timedOut))
		ended := fleet.Stored(ctx, cgu)(Default).Status
		Expect(ended.State).To(Equal(ranv1alpha1.StateTimedOut))
		Expect(ended.Clusters).To(Equal([]ranv1alpha1.ClusterFinalState{
			{Name: done[0], State: "complete"}, {Name: clusters[0], State: "complete"},
			{Name: clusters[1], State: "timedout", CurrentPolicy: &ranv1alpha1.PolicyStatus{Name: p.Name, Status: "NonCompliant"}},
		}))
		Expect(ended.Status.CurrentBatch).To(BeZero())
		Expect(ended.Status.CurrentBatchRemediationProgress).To(BeNil())
		Expect(ended.Status.CompletedAt).NotTo(BeNil())
		Expect(ended.RemediationPlan).To(Equal([][]string{{clusters[0]}, {clusters[1]}}))
		Expect(clusterLabels(ctx, clusters[1])(Default)).NotTo(HaveKey("ztp-done"), "a timed-out cluster gets no afterCompletion")

		By("TALM's events marked each transition once")
		Eventually(talmEvents(ctx, cgu)).Should(Equal(map[string]int{
			talm.ActionBuildingRemediationPlan: 1, talm.ActionRemediationStarted: 1,
			talm.ActionBatchStarted: 2, talm.ActionBatchCompleted: 1, talm.ActionBatchTimeout: 1,
			talm.ActionClusterStarted: 2, talm.ActionClusterCompleted: 1, talm.ActionClusterTimeout: 1,
			talm.ActionRemediationTimeout: 1,
		}))
		timeout := talmEventsOf(ctx, cgu, talm.ActionRemediationTimeout)(Default)[0]
		Expect(timeout.Annotations).To(And(HaveKeyWithValue(talm.AnnotationEventType, talm.EventTypeGlobal),
			HaveKeyWithValue(talm.AnnotationTimedOutClusters, clusters[1]), HaveKeyWithValue(talm.AnnotationTotalClustersCount, "2")))
		Eventually(enforcedOn(ctx, cgu, p.Name)).WithTimeout(settle).Should(BeEmpty())
		simulator.SetBehaviour(clusters[1], sim.Behaviour{})
	})

	It("leaves out the policies every cluster complies with, and completes at once when nothing is left", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "talmskip", 2)
		current := placeObjectPolicy(ctx, "talmskip", "talmskip-channel", map[string]any{
			"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion", "metadata": map[string]any{"name": "version"},
			"spec": map[string]any{"channel": harness.Channel},
		})
		Eventually(rootCompliance(ctx, current.Name)).WithTimeout(settle).Should(Equal(map[string]policyv1.ComplianceState{
			clusters[0]: policyv1.Compliant, clusters[1]: policyv1.Compliant,
		}))
		upgrade := placeUpgradePolicy(ctx, "talmskip", 2)

		By("a CGU over a policy they comply with and one they do not")
		cgu := newCGU("cgu-talmskip", "skip", clusters, 2, current.Name, upgrade.Name)
		fleet.MustCreate(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			HaveField("Status.ManagedPoliciesCompliantBeforeUpgrade", Equal([]string{current.Name})),
			HaveField("Status.ManagedPoliciesForUpgrade", ConsistOf(HaveField("Name", upgrade.Name))),
			HaveField("Status.ManagedPoliciesNs", Equal(map[string]string{upgrade.Name: policyNS})),
			HaveField("Status.RemediationPlan", Equal([][]string{clusters})),
		))

		By("a CGU over the compliant policy only, enabled")
		only := newCGU("cgu-talmskip", "nothing-left", clusters, 2, current.Name)
		only.Spec.Enable = ptr.To(true)
		fleet.MustCreate(ctx, only)
		Eventually(talmConditions(ctx, only)).WithTimeout(settle).Should(Equal([]string{
			selected, validated, "Progressing False Completed", "Succeeded True Completed",
		}))
		st := fleet.Stored(ctx, only)(Default).Status
		Expect(st.RemediationPlan).To(BeEmpty())
		Expect(st.Clusters).To(Equal([]ranv1alpha1.ClusterFinalState{{Name: clusters[0], State: "complete"}, {Name: clusters[1], State: "complete"}}))
	})

	It("completes at once a rollout whose clusters all comply, asking neither pre-caching nor backup of them", func(ctx SpecContext) {
		clusters, err := fleet.JoinFleetWith(ctx, "talmstarts", 1, func(s *sim.SpokeSpec) { s.Version = harness.To })
		Expect(err).NotTo(HaveOccurred())
		Expect(simulator.Mutate(clusters[0], upgradedEarlier())).To(Succeed())
		p := placeUpgradePolicy(ctx, "talmstarts", 1)
		channel := placeObjectPolicy(ctx, "talmstarts", "talmstarts-channel", map[string]any{
			"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion", "metadata": map[string]any{"name": "version"},
			"spec": map[string]any{"channel": harness.Channel},
		})
		for _, name := range []string{p.Name, channel.Name} {
			Eventually(rootCompliance(ctx, name)).WithTimeout(settle).Should(HaveKeyWithValue(clusters[0], policyv1.Compliant))
		}

		cgu := newCGU("cgu-talmstarts", "starts-complete", clusters, 1, p.Name, channel.Name)
		cgu.Spec.Backup, cgu.Spec.PreCaching = true, true
		cgu.Spec.Actions.AfterCompletion = &ranv1alpha1.AfterCompletion{ClusterActions: ranv1alpha1.ClusterActions{AddClusterLabels: map[string]ranv1alpha1.LabelValue{"ztp-done": ""}}}
		fleet.MustCreate(ctx, cgu)
		Eventually(talmConditions(ctx, cgu)).WithTimeout(settle).Should(Equal([]string{selected, validated, "Progressing False NotEnabled"}))
		st := fleet.Stored(ctx, cgu)(Default).Status
		Expect(st.ManagedPoliciesCompliantBeforeUpgrade).To(Equal([]string{channel.Name}))
		Expect(st.ManagedPoliciesForUpgrade).To(ConsistOf(HaveField("Name", p.Name)), "a policy stating an object's status is never skipped, as in TALM")
		Expect(st.RemediationPlan).To(BeEmpty())
		Expect(st.Precaching).To(BeNil(), "nothing to pre-cache")

		enable(ctx, cgu)
		Eventually(talmConditions(ctx, cgu)).WithTimeout(settle).Should(Equal([]string{
			selected, validated, "Progressing False Completed", "Succeeded True Completed",
		}))
		Expect(fleet.Stored(ctx, cgu)(Default).Status.Clusters).To(Equal([]ranv1alpha1.ClusterFinalState{{Name: clusters[0], State: "complete"}}))
		Expect(clusterLabels(ctx, clusters[0])(Default)).To(HaveKey("ztp-done"))
	})

	It("answers a dependency order and runs a backup as TALM does", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "talmdep", 1)
		first := placeUpgradePolicy(ctx, "talmdep", 1)
		second := world.UpgradePolicy(policyNS, "talmdep-second", harness.To, policyv1.Inform)
		second.Spec.Dependencies = []policyv1.PolicyDependency{{TypeMeta: metav1.TypeMeta{Kind: policyv1.Kind, APIVersion: policyv1.GroupVersion.String()},
			Name: first.Name, Namespace: policyNS, Compliance: policyv1.Compliant}}
		Expect(hub.PlacePolicy(ctx, second, metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "talmdep"}})).To(Succeed())
		Eventually(rootCompliance(ctx, second.Name)).WithTimeout(settle).ShouldNot(BeEmpty())

		By("a policy listed before one it depends on: Validated False, no Progressing")
		cgu := newCGU("cgu-talmdep", "order", clusters, 1, second.Name, first.Name)
		fleet.MustCreate(ctx, cgu)
		Eventually(talmConditions(ctx, cgu)).WithTimeout(settle).Should(Equal([]string{selected, "Validated False UnresolvableDenpendency"}))

		By("put in order: valid, not enabled")
		fleet.MustUpdate(ctx, cgu, func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.ManagedPolicies = []string{first.Name, second.Name} })
		Eventually(talmConditions(ctx, cgu)).WithTimeout(settle).Should(Equal([]string{selected, validated, "Progressing False NotEnabled"}))

		By("a backup asked for: the clusters backed up, then upgraded")
		backup := newCGU("cgu-talmdep", "backup", clusters, 1, first.Name)
		backup.Spec.Backup, backup.Spec.Enable = true, ptr.To(true)
		fleet.MustCreate(ctx, backup)
		Eventually(talmConditions(ctx, backup)).WithTimeout(2 * settle).Should(Equal([]string{
			selected, validated, "BackupSuceeded True BackupCompleted", "Progressing False Completed", "Succeeded True Completed",
		}))
	})
})

var _ = Describe("TALM's timeout-not-block-next-batch scenario", func() {
	It("times the running batch out when the timeout drops to a minute, runs the next batch, and times out at the deadline", func(ctx SpecContext) {
		all, err := fleet.JoinFleetWith(ctx, "tnb", 3, func(s *sim.SpokeSpec) {
			if s.Name == "tnb-3" {
				s.Version = harness.To
			}
		})
		Expect(err).NotTo(HaveOccurred())
		late, next, done := all[0], all[1], all[2]
		Expect(simulator.Mutate(done, upgradedEarlier())).To(Succeed())
		p := placeUpgradePolicy(ctx, "tnb", 3)
		Eventually(rootCompliance(ctx, p.Name)).WithTimeout(settle).Should(HaveKeyWithValue(done, policyv1.Compliant))
		stall(late)
		cgu := newCGU("cgu-tnb", "upgrade", all, 1, p.Name)
		cgu.Spec.Actions = ztpActions()
		cgu.Annotations = map[string]string{ranv1alpha1.AnnotationNameSuffix: "kuttl"} // as TALM's scenarios set it
		fleet.MustCreate(ctx, cgu)
		enable(ctx, cgu)
		placement := "upgrade-" + p.Name + "-placement-kuttl"
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			HaveField("Status.RemediationPlan", Equal([][]string{{late}, {next}})),
			HaveField("Status.Status.CurrentBatch", 1),
			HaveField("Status.Clusters", Equal([]ranv1alpha1.ClusterFinalState{{Name: done, State: "complete"}})),
			HaveField("Status.Placements", Equal([]string{placement})), HaveField("Status.PlacementBindings", Equal([]string{placement})),
			HaveField("Status.SafeResourceNames", Equal(map[string]string{policyNS + "/upgrade-" + p.Name + "-placement": placement})),
		))
		Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: policyNS, Name: placement}, &clusterv1beta1.Placement{})).To(Succeed(),
			"the Placement has TALM's name with the name-suffix annotation")

		By("the timeout lowered to 1 minute and maxConcurrency to 0, as the scenario patches them")
		Expect(hub.Client.Patch(ctx, fleet.Stored(ctx, cgu)(Default), client.RawPatch(types.MergePatchType,
			[]byte(`{"spec":{"remediationStrategy":{"timeout":1,"maxConcurrency":0}}}`)))).To(Succeed())
		advance(ctx, 31*time.Second, cgu)
		lateOne := ranv1alpha1.ClusterFinalState{Name: late, State: "timedout", CurrentPolicy: &ranv1alpha1.PolicyStatus{Name: p.Name, Status: "NonCompliant"}}
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Status.Clusters", ConsistOf(
			ranv1alpha1.ClusterFinalState{Name: done, State: "complete"}, lateOne, ranv1alpha1.ClusterFinalState{Name: next, State: "complete"})))
		Expect(talmConditions(ctx, cgu)(Default)).To(Equal([]string{selected, validated, "Progressing True InProgress"}))
		Expect(clusterLabels(ctx, late)(Default)).To(And(HaveKey("ztp-running"), Not(HaveKey("ztp-done"))))
		Expect(clusterLabels(ctx, next)(Default)).To(And(HaveKey("ztp-done"), Not(HaveKey("ztp-running"))))
		Expect(clusterLabels(ctx, done)(Default)).To(HaveKey("ztp-done"))

		By("at the overall deadline the rollout times out, the late cluster still listed")
		advance(ctx, 30*time.Second, cgu)
		Eventually(talmConditions(ctx, cgu)).WithTimeout(settle).Should(Equal(timedOut))
		Expect(fleet.Stored(ctx, cgu)(Default).Status.Clusters).To(ContainElement(lateOne))
		unstall(late)
	})
})

var _ = Describe("Status on every pass", func() {
	It("says why a reconcile failed, and forgets it once one succeeds", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "failpass", 1)
		p := placeUpgradePolicy(ctx, "failpass", 1)
		cgu := newCGU("cgu-failpass", "upgrade", clusters, 1, p.Name)
		cgu.Spec.Enforcement = ranv1alpha1.EnforcementCopy // its PlacementBinding lives in the CGU's namespace
		fleet.MustCreate(ctx, cgu)
		Eventually(talmConditions(ctx, cgu)).WithTimeout(settle).Should(Equal([]string{selected, validated, "Progressing False NotEnabled"}))

		By("someone else's object with the name of the rollout's PlacementBinding")
		squatter := &policyv1.PlacementBinding{
			ObjectMeta:   metav1.ObjectMeta{Namespace: cgu.Namespace, Name: names.Placement(cgu.Namespace, cgu.Name, p.Name)},
			PlacementRef: policyv1.PlacementSubject{APIGroup: "cluster.open-cluster-management.io", Kind: "Placement", Name: "elsewhere"},
			Subjects:     []policyv1.Subject{{APIGroup: policyv1.SchemeGroupVersion.Group, Kind: policyv1.Kind, Name: "nothing"}},
		}
		Expect(hub.Client.Create(ctx, squatter)).To(Succeed())
		enable(ctx, cgu)
		Eventually(condition(ctx, cgu, ranv1alpha1.ConditionReconciled)).WithTimeout(settle).Should(PointTo(And(
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", ranv1alpha1.ReasonReconcileFailed),
			HaveField("Message", ContainSubstring(squatter.Name)),
		)))
		Expect(talmConditions(ctx, cgu)(Default)).To(HaveLen(4), "TALM's conditions stay, ours is added")
		Expect(talm.Last(fleet.Stored(ctx, cgu)(Default).Status.Conditions).Type).NotTo(Equal(ranv1alpha1.ConditionReconciled),
			"`oc get cgu` still shows TALM's last condition")

		By("once the name is free the rollout goes on, and the condition goes")
		Expect(hub.Client.Delete(ctx, squatter)).To(Succeed())
		Eventually(state(ctx, cgu)).WithTimeout(3 * settle).Should(Equal(ranv1alpha1.StateCompleted))
		Expect(condition(ctx, cgu, ranv1alpha1.ConditionReconciled)(Default)).To(BeNil())
	})
})

var _ = Describe("TALM's blocking-mechanisms scenario", func() {
	It("holds a rollout behind an incomplete one, leaves compliant canaries out, and labels the compliant clusters at the start", func(ctx SpecContext) {
		all, err := fleet.JoinFleetWith(ctx, "talmblk", 3, func(s *sim.SpokeSpec) {
			if s.Name != "talmblk-3" {
				s.Version = harness.To
			}
		})
		Expect(err).NotTo(HaveOccurred())
		for _, c := range all[:2] {
			Expect(simulator.Mutate(c, upgradedEarlier())).To(Succeed())
		}
		p := placeUpgradePolicy(ctx, "talmblk", 3)
		Eventually(rootCompliance(ctx, p.Name)).WithTimeout(settle).Should(And(
			HaveKeyWithValue(all[0], policyv1.Compliant), HaveKeyWithValue(all[1], policyv1.Compliant)))

		By("cgu-c over the third cluster, not enabled; cgu-a over all three, blocked by cgu-c")
		blocker := newCGU("cgu-talmblk", "cgu-c", all[2:], 1, p.Name)
		fleet.MustCreate(ctx, blocker)
		blocked := newCGU("cgu-talmblk", "cgu-a", all, 2, p.Name)
		blocked.Spec.RemediationStrategy.Canaries = all[:1]
		blocked.Spec.BlockingCRs = []ranv1alpha1.BlockingCR{{Name: blocker.Name, Namespace: blocker.Namespace}}
		blocked.Spec.Actions.AfterCompletion = &ranv1alpha1.AfterCompletion{ClusterActions: ranv1alpha1.ClusterActions{AddClusterLabels: map[string]ranv1alpha1.LabelValue{"finish": ""}}}
		enableOnCreate(blocked)
		fleet.MustCreate(ctx, blocked)
		Eventually(talmConditions(ctx, blocked)).WithTimeout(settle).Should(Equal([]string{selected, validated, "Progressing False IncompleteBlockingCR"}))
		st := fleet.Stored(ctx, blocked)(Default).Status
		Expect(st.RemediationPlan).To(Equal([][]string{{all[2]}}), "the compliant canary gets no batch")
		Expect(st.Status).To(Equal(ranv1alpha1.UpgradeStatus{}))
		Expect(clusterLabels(ctx, all[0])(Default)).NotTo(HaveKey("finish"))
		Eventually(talmEvents(ctx, blocked)).Should(HaveKeyWithValue(talm.ActionOnHoldDueToBlockingCR, 1))

		By("cgu-c completes; cgu-a starts with nothing left to do, and every cluster is done")
		enable(ctx, blocker)
		Eventually(state(ctx, blocker)).WithTimeout(3 * settle).Should(Equal(ranv1alpha1.StateCompleted))
		Eventually(talmConditions(ctx, blocked)).WithTimeout(settle).Should(Equal([]string{
			selected, validated, "Progressing False Completed", "Succeeded True Completed",
		}))
		for _, c := range all {
			Expect(clusterLabels(ctx, c)(Default)).To(HaveKey("finish"), c)
		}
		Expect(fleet.Stored(ctx, blocked)(Default).Status.Clusters).To(ConsistOf(
			ranv1alpha1.ClusterFinalState{Name: all[0], State: "complete"}, ranv1alpha1.ClusterFinalState{Name: all[1], State: "complete"},
			ranv1alpha1.ClusterFinalState{Name: all[2], State: "complete"}))
	})
})

var _ = Describe("TALM's invalid managed policies", func() {
	It("refuses a policy whose replica still holds a hub template the propagator could not resolve, naming it in the event, until it resolves", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "talminv", 2)
		p := placeTemplatedPolicy(ctx, "talminv", `{{hub fromConfigMap "" "talminv-data" "release" hub}}`, 2)

		cgu := newCGU("cgu-talminv", "upgrade", clusters, 1, p.Name)
		fleet.MustCreate(ctx, cgu)
		Eventually(condition(ctx, cgu, ranv1alpha1.ConditionValidated)).WithTimeout(settle).Should(And(Not(BeNil()),
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", ranv1alpha1.ReasonNotAllManagedPoliciesExist),
			HaveField("Message", And(HavePrefix("Invalid managed policies: "+p.Name), ContainSubstring(clusters[0]+", "+clusters[1])))))
		Eventually(func(g Gomega) map[string]string {
			events := talmEventsOf(ctx, cgu, talm.ActionOnHoldDueToValidationFailure)(g)
			g.Expect(events).NotTo(BeEmpty())
			return events[0].Annotations
		}).WithTimeout(settle).Should(HaveKeyWithValue(talm.AnnotationInvalidPolicies, p.Name))

		By("the ConfigMap the template reads created: the propagator resolves it, the CGU is valid")
		Expect(hub.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: policyNS, Name: "talminv-data"},
			Data: map[string]string{"release": to}})).To(Succeed())
		for _, c := range clusters {
			Eventually(func(g Gomega) string {
				var replica policyv1.Policy
				g.Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: c, Name: policyNS + "." + p.Name}, &replica)).To(Succeed())
				return string(replica.Spec.PolicyTemplates[0].ObjectDefinition.Raw)
			}).WithTimeout(settle).ShouldNot(ContainSubstring("{{hub"), "the propagator resolved the template on %s", c)
		}
		advance(ctx, preview.HubTemplateRecheck, cgu) // the operator looks again, as its timer would
		Eventually(talmConditions(ctx, cgu)).WithTimeout(settle).Should(Equal([]string{selected, validated, "Progressing False NotEnabled"}))
	})
})

var _ = Describe("TALM's cluster-selector and duplicated-managed-policy-name scenarios", func() {
	It("plans the listed clusters, then the selected ones by name, leaving out those no policy is placed on", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "talmsel", 4)
		p := placeUpgradePolicy(ctx, "talmsel", 4)
		outside := joinFleet(ctx, "talmsel-out", 1) // selected, but the policy is not placed on it
		for _, c := range append([]string{clusters[1], clusters[3]}, outside...) {
			setClusterLabel(ctx, c, "upgrade2", "true")
		}
		cgu := newCGU("cgu-talmsel", "upgrade", []string{clusters[2], clusters[0]}, 2, p.Name)
		cgu.Spec.ClusterLabelSelectors = []ranv1alpha1.ClusterLabelSelector{{MatchLabels: map[string]string{"upgrade2": "true"}}}
		fleet.MustCreate(ctx, cgu)
		Eventually(talmConditions(ctx, cgu)).WithTimeout(settle).Should(Equal([]string{selected, validated, "Progressing False NotEnabled"}))
		st := fleet.Stored(ctx, cgu)(Default).Status
		Expect(st.RemediationPlan).To(Equal([][]string{{clusters[2], clusters[0]}, {clusters[1], clusters[3]}}))
		Expect(st.ComputedMaxConcurrency).To(Equal(2))

		By("maxConcurrency above the clusters selected: computed down to them (TALM's adjust-max-concurrency)")
		adjusted := newCGU("cgu-talmsel", "adjusted", clusters[:1], 3, p.Name)
		fleet.MustCreate(ctx, adjusted)
		Eventually(talmConditions(ctx, adjusted)).WithTimeout(settle).Should(Equal([]string{selected, validated, "Progressing False NotEnabled"}))
		Expect(fleet.Stored(ctx, adjusted)(Default).Status).To(And(HaveField("ComputedMaxConcurrency", 1),
			HaveField("RemediationPlan", Equal([][]string{clusters[:1]})), HaveField("Status", ranv1alpha1.UpgradeStatus{})))
	})

	It("refuses a managed policy name found in two namespaces, then goes on once it is unique", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "talmdup", 1)
		p := placeUpgradePolicy(ctx, "talmdup", 1)
		Expect(hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "talmdup-other"}})).To(Succeed())
		Expect(hub.BindClusterSet(ctx, "talmdup-other")).To(Succeed())
		twin := world.UpgradePolicy("talmdup-other", p.Name, to, policyv1.Inform)
		Expect(hub.PlacePolicy(ctx, twin, metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "talmdup"}})).To(Succeed())
		Eventually(func(g Gomega) map[string]policyv1.ComplianceState {
			out, err := hub.Compliance(ctx, "talmdup-other", p.Name)
			g.Expect(err).NotTo(HaveOccurred())
			return out
		}).WithTimeout(settle).ShouldNot(BeEmpty())

		cgu := newCGU("cgu-talmdup", "upgrade", clusters, 1, p.Name)
		fleet.MustCreate(ctx, cgu)
		Eventually(talmConditions(ctx, cgu)).WithTimeout(settle).Should(Equal([]string{selected, "Validated False AmbiguousManagedPoliciesNames"}))
		Eventually(talmEventsOf(ctx, cgu, talm.ActionOnHoldDueToValidationFailure)).Should(ConsistOf(
			HaveField("ObjectMeta.Annotations", HaveKeyWithValue(talm.AnnotationAmbiguousPolicies, p.Name))))

		By("the twin deleted")
		Expect(hub.Client.Delete(ctx, twin)).To(Succeed())
		Eventually(talmConditions(ctx, cgu)).WithTimeout(settle).Should(Equal([]string{selected, validated, "Progressing False NotEnabled"}))
		Expect(fleet.Stored(ctx, cgu)(Default).Status.ManagedPoliciesNs).To(Equal(map[string]string{p.Name: policyNS}))
	})
})

var _ = Describe("TALM's soaking scenario", func() {
	It("keeps a compliant cluster on its policy, with firstCompliantAt, until the soak ends, then completes with ztp-done", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "talmsoak", 1)
		p := placeUpgradePolicy(ctx, "talmsoak", 1)
		setSoak(ctx, p, 5*time.Second)
		cgu := newCGU("cgu-talmsoak", "soaking", clusters, 1, p.Name)
		cgu.Spec.Actions = ztpActions()
		enableOnCreate(cgu)
		fleet.MustCreate(ctx, cgu)

		By("compliant, soaking")
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Status.Status.CurrentBatchRemediationProgress",
			HaveKeyWithValue(clusters[0], PointTo(And(HaveField("State", ranv1alpha1.RemediationInProgress),
				HaveField("PolicyIndex", PointTo(Equal(0))), HaveField("FirstCompliantAt", Not(BeNil())))))))
		Expect(talmConditions(ctx, cgu)(Default)).To(Equal([]string{selected, validated, "Progressing True InProgress"}))
		Expect(clusterLabels(ctx, clusters[0])(Default)).To(HaveKey("ztp-running"))

		By("after the soak")
		advance(ctx, 6*time.Second, cgu)
		Eventually(talmConditions(ctx, cgu)).WithTimeout(settle).Should(Equal([]string{
			selected, validated, "Progressing False Completed", "Succeeded True Completed",
		}))
		st := fleet.Stored(ctx, cgu)(Default).Status
		Expect(st.Clusters).To(Equal([]ranv1alpha1.ClusterFinalState{{Name: clusters[0], State: "complete"}}))
		Expect(st.Status.CurrentBatch).To(BeZero())
		Expect(clusterLabels(ctx, clusters[0])(Default)).To(And(HaveKey("ztp-done"), Not(HaveKey("ztp-running"))))
	})
})

var _ = Describe("TALM's partial batch timeout scenario", func() {
	It("moves each cluster of a batch through the policies by policyIndex, and times out the one left when the timeout drops to 0", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "talmpart", 2)
		up := placeUpgradePolicy(ctx, "talmpart", 2)
		config := placeObjectPolicy(ctx, "talmpart", "talmpart-config", map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "release", "namespace": "talmpart"},
			"data": map[string]any{"version": harness.To},
		})
		Eventually(rootCompliance(ctx, config.Name)).WithTimeout(settle).Should(Equal(map[string]policyv1.ComplianceState{
			clusters[0]: policyv1.NonCompliant, clusters[1]: policyv1.NonCompliant}))
		withNamespace("talmpart", clusters[0]) // the second cluster's ConfigMap cannot be made: no namespace

		cgu := newCGU("cgu-talmpart", "upgrade", clusters, 2, up.Name, config.Name)
		cgu.Spec.Actions.AfterCompletion = &ranv1alpha1.AfterCompletion{ClusterActions: ranv1alpha1.ClusterActions{AddClusterLabels: map[string]ranv1alpha1.LabelValue{"ztp-done": ""}}}
		enableOnCreate(cgu)
		fleet.MustCreate(ctx, cgu)

		By("the first cluster completes both policies; the second stays on the second one")
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(2 * settle).Should(And(
			HaveField("Status.Status.CurrentBatch", 1),
			HaveField("Status.Status.CurrentBatchRemediationProgress", And(
				HaveKeyWithValue(clusters[0], PointTo(And(HaveField("State", ranv1alpha1.RemediationCompleted), HaveField("PolicyIndex", BeNil())))),
				HaveKeyWithValue(clusters[1], PointTo(And(HaveField("State", ranv1alpha1.RemediationInProgress), HaveField("PolicyIndex", PointTo(Equal(1)))))),
			)),
			HaveField("Status.Clusters", Equal([]ranv1alpha1.ClusterFinalState{{Name: clusters[0], State: "complete"}})),
		))
		Expect(talmConditions(ctx, cgu)(Default)).To(Equal([]string{selected, validated, "Progressing True InProgress"}))
		Expect(fleet.Stored(ctx, cgu)(Default).Status.ManagedPoliciesForUpgrade).To(HaveExactElements(
			HaveField("Name", up.Name), HaveField("Name", config.Name)), "in the spec's order")
		Expect(version(clusters[1])(Default)).To(Equal(to), "its first policy is done")
		Expect(clusterLabels(ctx, clusters[0])(Default)).To(HaveKey("ztp-done"))

		By("timeout 0: the batch times out with the second cluster on the second policy")
		timeoutZero(ctx, cgu)
		Eventually(talmConditions(ctx, cgu)).WithTimeout(settle).Should(Equal(timedOut))
		Expect(fleet.Stored(ctx, cgu)(Default).Status.Clusters).To(Equal([]ranv1alpha1.ClusterFinalState{
			{Name: clusters[0], State: "complete"},
			{Name: clusters[1], State: "timedout", CurrentPolicy: &ranv1alpha1.PolicyStatus{Name: config.Name, Status: "NonCompliant"}},
		}))
		Expect(clusterLabels(ctx, clusters[1])(Default)).NotTo(HaveKey("ztp-done"))
		Eventually(talmEvents(ctx, cgu)).Should(Equal(map[string]int{
			talm.ActionBuildingRemediationPlan: 1, talm.ActionRemediationStarted: 1, talm.ActionBatchStarted: 1,
			talm.ActionClusterStarted: 2, talm.ActionClusterCompleted: 1, talm.ActionClusterTimeout: 1,
			talm.ActionBatchTimeout: 1, talm.ActionRemediationTimeout: 1,
		}))
		Expect(talmEventsOf(ctx, cgu, talm.ActionBatchTimeout)(Default)[0].Annotations).To(And(
			HaveKeyWithValue(talm.AnnotationEventType, talm.EventTypeBatch), HaveKeyWithValue(talm.AnnotationTimedOutClusters, clusters[1])))
		Eventually(enforcedOn(ctx, cgu, config.Name)).WithTimeout(settle).Should(BeEmpty())
	})
})
