package clustergroupupgrade_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"
	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/controllers/clustergroupupgrade"
	cgudecision "github.com/cgu-operator/cgu-operator/pkg/cgu"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

// The OLM operator of the InstallPlan scenarios: installed at csvFrom with Manual approval,
// its channel offering csvTo, so that OLM holds an InstallPlan for csvTo RequiresApproval on
// every cluster from the start.
const (
	olmNS, olmPkg  = "openshift-sriov-network-operator", "sriov-network-operator"
	csvFrom, csvTo = "sriov-network-operator.v4.16.0", "sriov-network-operator.v4.16.1"
)

// joinOLMFleet adds n clusters <label>-1..n, labelled fleet=<label>, whose spokes run the
// scenario's operator.
func joinOLMFleet(ctx context.Context, label string, n int) []string {
	names, err := fleet.JoinFleetWith(ctx, label, n, func(s *sim.SpokeSpec) {
		s.Operators = []sim.InstalledOperator{{Package: olmPkg, Namespace: olmNS, Channel: "stable",
			InstalledCSV: csvFrom, Available: []string{csvTo}, Approval: sim.ApprovalManual}}
	})
	Expect(err).NotTo(HaveOccurred())
	return names
}

// subscriptionUpgrade is the object of a policy that wants the operator's Subscription
// Manual in its channel, and compliance only once csvTo is installed.
func subscriptionUpgrade() map[string]any {
	return map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
		"metadata": map[string]any{"name": olmPkg, "namespace": olmNS},
		"spec": map[string]any{"name": olmPkg, "channel": "stable", "source": sim.DefaultCatalogSource,
			"sourceNamespace": sim.MarketplaceNamespace, "installPlanApproval": sim.ApprovalManual},
		"status": map[string]any{"installedCSV": csvTo, "state": sim.SubscriptionStateAtLatest},
	}
}

// olmString reads a string field of an OLM object of a simulated cluster.
func olmString(cluster string, gvk schema.GroupVersionKind, name string, fields ...string) func(Gomega) string {
	return func(g Gomega) string {
		obj, err := simulator.Object(cluster, gvk, olmNS, name)
		g.Expect(err).NotTo(HaveOccurred())
		v, _, err := unstructured.NestedString(obj.Object, fields...)
		g.Expect(err).NotTo(HaveOccurred())
		return v
	}
}

// pendingPlan waits until the cluster's Subscription refers to its InstallPlan for csvTo and
// returns the plan's name.
func pendingPlan(cluster string) string {
	Eventually(olmString(cluster, sim.SubscriptionGVK, olmPkg, "status", "currentCSV")).WithTimeout(settle).Should(Equal(csvTo))
	plan := olmString(cluster, sim.SubscriptionGVK, olmPkg, "status", "installPlanRef", "name")(Default)
	Expect(plan).NotTo(BeEmpty())
	return plan
}

// planState reads "<phase> approved=<spec.approved>" of an InstallPlan of a simulated cluster.
func planState(cluster, plan string) func(Gomega) string {
	return func(g Gomega) string {
		obj, err := simulator.Object(cluster, sim.InstallPlanGVK, olmNS, plan)
		g.Expect(err).NotTo(HaveOccurred())
		phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
		approved, _, _ := unstructured.NestedBool(obj.Object, "spec", "approved")
		return fmt.Sprintf("%s approved=%t", phase, approved)
	}
}

const waitingForApproval = sim.InstallPlanPhaseRequiresApproval + " approved=false"

// operatorUpgradeObjects returns the cluster namespaces holding the CGU's views or actions
// of InstallPlan approval, each once, sorted.
func operatorUpgradeObjects(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, list client.ObjectList) func(Gomega) []string {
	return func(g Gomega) []string {
		owner := ownership.Owner{Namespace: cgu.Namespace, Name: cgu.Name}
		g.Expect(hub.Client.List(ctx, list, client.MatchingLabels(owner.Labels()), client.HasLabels{cgudecision.LabelOperatorUpgrade})).To(Succeed())
		out := []string{}
		switch l := list.(type) {
		case *viewv1beta1.ManagedClusterViewList:
			for _, v := range l.Items {
				out = append(out, v.Namespace)
			}
		case *actionv1beta1.ManagedClusterActionList:
			for _, a := range l.Items {
				out = append(out, a.Namespace)
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
}

func viewsOf(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) []string {
	return operatorUpgradeObjects(ctx, cgu, &viewv1beta1.ManagedClusterViewList{})
}

func actionsOf(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) []string {
	return operatorUpgradeObjects(ctx, cgu, &actionv1beta1.ManagedClusterActionList{})
}

// hold keeps the approved InstallPlans of a cluster installing until release.
func hold(cluster string) {
	Expect(simulator.SetOLMBehaviour(cluster, sim.OLMBehaviour{InstallDuration: time.Hour})).To(Succeed())
}

func release(cluster string) {
	Expect(simulator.SetOLMBehaviour(cluster, sim.OLMBehaviour{})).To(Succeed())
}

var _ = Describe("InstallPlan approval", func() {
	It("approves each cluster's Manual InstallPlan only while its batch enforces the policy", func(ctx SpecContext) {
		clusters := joinOLMFleet(ctx, "olm-approve", 3)
		plans := make([]string, len(clusters))
		for i, c := range clusters {
			plans[i] = pendingPlan(c)
		}
		p := placeObjectPolicy(ctx, "olm-approve", "olm-approve-sub", subscriptionUpgrade())
		Eventually(rootCompliance(ctx, p.Name)).WithTimeout(settle).Should(Equal(map[string]policyv1.ComplianceState{
			clusters[0]: policyv1.NonCompliant, clusters[1]: policyv1.NonCompliant, clusters[2]: policyv1.NonCompliant}))
		hold(clusters[0])

		cgu := newCGU("cgu-installplan", "upgrade", clusters, 1, p.Name)
		fleet.MustCreate(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Status.ManagedPoliciesContent", HaveKeyWithValue(p.Name,
			MatchJSON(`[{"kind":"Subscription","name":"`+olmPkg+`","apiVersion":"operators.coreos.com/v1alpha1","namespace":"`+olmNS+`"}]`))),
			"TALM's managedPoliciesContent lists the policy's Subscriptions")
		Expect(fleet.Stored(ctx, cgu)(Default).Status.RemediationPlan).To(Equal([][]string{{clusters[0]}, {clusters[1]}, {clusters[2]}}))
		enable(ctx, cgu)

		By("batch 1: the first cluster's plan is approved and installs; the later batches' plans wait")
		Eventually(planState(clusters[0], plans[0])).WithTimeout(settle).Should(Equal(sim.InstallPlanPhaseInstalling + " approved=true"))
		Expect(fleet.Stored(ctx, cgu)(Default)).To(firstBatchShows(clusters[0], ranv1alpha1.ClusterInProgress))
		Consistently(func(g Gomega) []string {
			return []string{planState(clusters[1], plans[1])(g), planState(clusters[2], plans[2])(g)}
		}).WithTimeout(3 * time.Second).Should(Equal([]string{waitingForApproval, waitingForApproval}))
		Expect(viewsOf(ctx, cgu)(Default)).To(Equal([]string{clusters[0]}), "views only on the enforced cluster")
		Expect(actionsOf(ctx, cgu)(Default)).To(Equal([]string{clusters[0]}))
		Expect(olmString(clusters[1], sim.SubscriptionGVK, olmPkg, "status", "installedCSV")(Default)).To(Equal(csvFrom))
		Expect(fleet.Stored(ctx, cgu)(Default).Status.CurrentBatch.Index).To(Equal(1), "still batch 1 while its cluster installs")
		Expect(fleet.Stored(ctx, cgu)(Default).Status.Status).To(And(HaveField("CurrentBatch", 1),
			HaveField("CurrentBatchRemediationProgress", HaveKeyWithValue(clusters[0], PointTo(And(
				HaveField("State", ranv1alpha1.RemediationInProgress), HaveField("PolicyIndex", PointTo(Equal(0)))))))))
		Expect(talmConditions(ctx, cgu)(Default)).To(Equal([]string{selected, validated, "Progressing True InProgress"}))

		By("the install completes: each later batch gets its plan approved in turn, and the rollout completes")
		release(clusters[0])
		Eventually(state(ctx, cgu)).WithTimeout(2 * settle).Should(Equal(ranv1alpha1.StateCompleted))
		for i, c := range clusters {
			Expect(planState(c, plans[i])(Default)).To(Equal(sim.InstallPlanPhaseComplete+" approved=true"), c)
			Expect(olmString(c, sim.SubscriptionGVK, olmPkg, "status", "installedCSV")(Default)).To(Equal(csvTo), c)
			Expect(olmString(c, sim.ClusterServiceVersionGVK, csvTo, "status", "phase")(Default)).To(Equal(sim.CSVPhaseSucceeded), c)
		}
		Expect(fleet.Stored(ctx, cgu)(Default).Status.Counts).To(HaveField("Completed", 3))
		Expect(fleet.Stored(ctx, cgu)(Default).Status.Clusters).To(Equal([]ranv1alpha1.ClusterFinalState{
			{Name: clusters[0], State: "complete"}, {Name: clusters[1], State: "complete"}, {Name: clusters[2], State: "complete"}}))
		Eventually(events(ctx, cgu)).WithTimeout(settle).Should(HaveKeyWithValue(clustergroupupgrade.EventInstallPlanApproved, 3))
		Eventually(viewsOf(ctx, cgu)).WithTimeout(settle).Should(BeEmpty(), "deleted with the rollout's objects")
		Eventually(actionsOf(ctx, cgu)).WithTimeout(settle).Should(BeEmpty())
	})

	It("never approves the plan of an excluded Subscription: the cluster times out", func(ctx SpecContext) {
		clusters := joinOLMFleet(ctx, "olm-exclude", 1)
		plan := pendingPlan(clusters[0])
		p := placeObjectPolicy(ctx, "olm-exclude", "olm-exclude-sub", subscriptionUpgrade())
		Eventually(rootCompliance(ctx, p.Name)).WithTimeout(settle).Should(HaveKeyWithValue(clusters[0], policyv1.NonCompliant))

		cgu := newCGU("cgu-installplan", "exclude", clusters, 1, p.Name)
		cgu.Spec.RemediationStrategy.Timeout = 60
		cgu.Spec.OperatorUpgrades = &ranv1alpha1.OperatorUpgrades{Exclude: []ranv1alpha1.SubscriptionRef{{Name: olmPkg}}}
		fleet.MustCreate(ctx, cgu)
		enable(ctx, cgu)

		Eventually(enforcedOn(ctx, cgu, p.Name)).WithTimeout(settle).Should(Equal(clusters))
		Consistently(planState(clusters[0], plan)).WithTimeout(3 * time.Second).Should(Equal(waitingForApproval))
		Expect(viewsOf(ctx, cgu)(Default)).To(BeEmpty(), "an excluded Subscription is not even read")
		Expect(rootCompliance(ctx, p.Name)(Default)).To(HaveKeyWithValue(clusters[0], policyv1.NonCompliant))

		advance(ctx, 61*time.Minute, cgu)
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateTimedOut))
		Expect(fleet.Stored(ctx, cgu)(Default).Status.Counts).To(HaveField("TimedOut", 1))
		Expect(talmConditions(ctx, cgu)(Default)).To(Equal(timedOut))
		Expect(fleet.Stored(ctx, cgu)(Default).Status.Clusters).To(Equal([]ranv1alpha1.ClusterFinalState{{Name: clusters[0], State: "timedout",
			CurrentPolicy: &ranv1alpha1.PolicyStatus{Name: p.Name, Status: "NonCompliant"}}}))
		Expect(planState(clusters[0], plan)(Default)).To(Equal(waitingForApproval))
		Expect(olmString(clusters[0], sim.SubscriptionGVK, olmPkg, "status", "installedCSV")(Default)).To(Equal(csvFrom))
		Expect(events(ctx, cgu)(Default)).NotTo(HaveKey(clustergroupupgrade.EventInstallPlanApproved))
		Expect(actionsOf(ctx, cgu)(Default)).To(BeEmpty())
	})
})
