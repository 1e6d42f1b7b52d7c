package sim_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

// objectsPolicy is a policy whose one ConfigurationPolicy "<name>-config" must have objects.
func objectsPolicy(name string, action policyv1.RemediationAction, objects ...map[string]any) *policyv1.Policy {
	return world.NewPolicy(policyNS, name, action, world.ConfigPolicy{Name: name + "-config", Objects: objects})
}

// The spoke and operator namespace of the OLM scenario.
const olmCluster, olmNamespace = "olm-1", "openshift-sriov-network-operator"

// olmField returns a string field of an object in the OLM scenario's operator namespace, ""
// while it is absent.
func olmField(gvk schema.GroupVersionKind, name string, fields ...string) func(Gomega) string {
	return func(g Gomega) string {
		obj, err := simulator.Object(olmCluster, gvk, olmNamespace, name)
		g.Expect(err).NotTo(HaveOccurred())
		v, _, err := unstructured.NestedString(obj.Object, fields...)
		g.Expect(err).NotTo(HaveOccurred())
		return v
	}
}

var _ = Describe("Simulated spoke operators", func() {
	It("upgrade a cluster through the managed-upgrade-operator when a policy enforces an UpgradeConfig", func(ctx SpecContext) {
		joinFleet(ctx, "muo", sim.SpokeSpec{Name: "muo-1", Version: "4.16.10", Channel: "stable-4.16",
			Behaviour: sim.Behaviour{Duration: 3 * time.Second}, ManagedUpgrade: &sim.ManagedUpgradeBehaviour{}})
		uc := sim.NewUpgradeConfig(sim.UpgradeDesired{Version: "4.16.12", Channel: "stable-4.16"}, time.Now().Add(-time.Minute))
		uc.Object["status"] = map[string]any{"history": []any{map[string]any{"version": "4.16.12", "phase": "Upgraded"}}}
		placePolicy(ctx, objectsPolicy("muo-upgrade", policyv1.Enforce, uc.Object), "muo")

		By("commencing: the UpgradeConfig is Upgrading and the ClusterVersion asks for 4.16.12")
		Eventually(func(g Gomega) []string {
			_, status, err := simulator.UpgradeConfig("muo-1")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(status.History).NotTo(BeEmpty())
			cv, err := simulator.ClusterVersion("muo-1")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cv.Spec.DesiredUpdate).NotTo(BeNil())
			return []string{string(status.History[0].Phase), cv.Spec.DesiredUpdate.Version, string(cv.Status.History[0].State)}
		}).WithTimeout(30 * time.Second).Should(Equal([]string{"Upgrading", "4.16.12", "Partial"}))
		Expect(rootCompliance(ctx, "muo-upgrade")(Default)).NotTo(HaveKeyWithValue("muo-1", policyv1.Compliant))
		co, err := simulator.ClusterOperator("muo-1", "machine-config")
		Expect(err).NotTo(HaveOccurred())
		Expect(co.Status.Versions).To(ConsistOf(configv1.OperandVersion{Name: "operator", Version: "4.16.10"}))

		By("completing: Upgraded once the ClusterVersion history says Completed, then Compliant")
		Eventually(rootCompliance(ctx, "muo-upgrade")).WithTimeout(30 * time.Second).
			Should(HaveKeyWithValue("muo-1", policyv1.Compliant))
		_, status, err := simulator.UpgradeConfig("muo-1")
		Expect(err).NotTo(HaveOccurred())
		Expect(status.History[0].Phase).To(Equal(sim.UpgradePhaseUpgraded))
		Expect(status.History[0].CompleteTime).NotTo(BeNil())
		cv, err := simulator.ClusterVersion("muo-1")
		Expect(err).NotTo(HaveOccurred())
		Expect(cv.Status.History[0].State).To(Equal(configv1.CompletedUpdate))
		Expect(cv.Status.History[0].Version).To(Equal("4.16.12"))
		for _, name := range []string{"etcd", "machine-config"} {
			co, err := simulator.ClusterOperator("muo-1", name)
			Expect(err).NotTo(HaveOccurred())
			Expect(co.Status.Versions).To(ConsistOf(configv1.OperandVersion{Name: "operator", Version: "4.16.12"}), name)
		}
	})

	It("keep a managed upgrade waiting while a cluster operator is degraded", func(ctx SpecContext) {
		joinFleet(ctx, "muo-sick", sim.SpokeSpec{Name: "muo-sick-1", Version: "4.16.10", Channel: "stable-4.16",
			ManagedUpgrade: &sim.ManagedUpgradeBehaviour{},
			Alerts:         []sim.Alert{{Name: "Watchdog", Severity: "none", Since: time.Now()}}})
		Expect(simulator.SetClusterOperatorCondition("muo-sick-1", "ingress", configv1.OperatorDegraded,
			configv1.ConditionTrue, "IngressDegraded", "router pods crash")).To(Succeed())
		uc := sim.NewUpgradeConfig(sim.UpgradeDesired{Version: "4.16.12", Channel: "stable-4.16"}, time.Now().Add(-time.Minute))
		placePolicy(ctx, objectsPolicy("muo-sick-upgrade", policyv1.Enforce, uc.Object), "muo-sick")

		healthCheck := func(g Gomega) string {
			_, status, err := simulator.UpgradeConfig("muo-sick-1")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(status.History).NotTo(BeEmpty())
			g.Expect(status.History[0].Conditions).NotTo(BeEmpty())
			c := status.History[0].Conditions[0]
			return c.Type + " " + string(c.Status)
		}
		Eventually(healthCheck).WithTimeout(30 * time.Second).Should(Equal("ClusterHealthyBeforeUpgrade False"))
		Consistently(func(g Gomega) *configv1.Update {
			cv, err := simulator.ClusterVersion("muo-sick-1")
			g.Expect(err).NotTo(HaveOccurred())
			return cv.Spec.DesiredUpdate
		}).WithTimeout(time.Second).Should(BeNil())

		Expect(simulator.ClearClusterOperatorConditions("muo-sick-1", "ingress")).To(Succeed())
		Eventually(func(g Gomega) sim.UpgradePhase {
			_, status, err := simulator.UpgradeConfig("muo-sick-1")
			g.Expect(err).NotTo(HaveOccurred())
			return status.History[0].Phase
		}).WithTimeout(30 * time.Second).Should(Equal(sim.UpgradePhaseUpgraded))
	})

	It("upgrade an OLM operator when a policy approves its Manual InstallPlan", func(ctx SpecContext) {
		const ns, pkg, from, to = olmNamespace, "sriov-network-operator",
			"sriov-network-operator.v4.16.0", "sriov-network-operator.v4.16.1"
		joinFleet(ctx, "olm", sim.SpokeSpec{Name: olmCluster, Version: "4.16.10", Channel: "stable-4.16",
			Operators: []sim.InstalledOperator{{Package: pkg, Namespace: ns, Channel: "stable", InstalledCSV: from,
				Available: []string{to}, Approval: sim.ApprovalManual}}})

		By("the newer CSV waits for approval")
		Eventually(olmField(sim.SubscriptionGVK, pkg, "status", "state")).
			WithTimeout(30 * time.Second).Should(Equal(sim.SubscriptionStateUpgradePending))
		plan := olmField(sim.SubscriptionGVK, pkg, "status", "installPlanRef", "name")(Default)
		Expect(olmField(sim.InstallPlanGVK, plan, "status", "phase")(Default)).
			To(Equal(sim.InstallPlanPhaseRequiresApproval))

		csv := map[string]any{
			"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
			"metadata": map[string]any{"name": to, "namespace": ns},
			"status":   map[string]any{"phase": "Succeeded"},
		}
		placePolicy(ctx, objectsPolicy("olm-csv", policyv1.Inform, csv), "olm")
		Eventually(rootCompliance(ctx, "olm-csv")).WithTimeout(30 * time.Second).
			Should(HaveKeyWithValue(olmCluster, policyv1.NonCompliant))

		By("a policy approves the InstallPlan")
		approval := map[string]any{
			"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
			"metadata": map[string]any{"name": plan, "namespace": ns},
			"spec":     map[string]any{"approved": true},
		}
		placePolicy(ctx, objectsPolicy("olm-approve", policyv1.Enforce, approval), "olm")

		By("the operator upgrades: the CSV policy turns Compliant")
		Eventually(rootCompliance(ctx, "olm-csv")).WithTimeout(30 * time.Second).
			Should(HaveKeyWithValue(olmCluster, policyv1.Compliant))
		Eventually(rootCompliance(ctx, "olm-approve")).WithTimeout(30 * time.Second).
			Should(HaveKeyWithValue(olmCluster, policyv1.Compliant))
		Expect(olmField(sim.InstallPlanGVK, plan, "status", "phase")(Default)).To(Equal(sim.InstallPlanPhaseComplete))
		Expect(olmField(sim.SubscriptionGVK, pkg, "status", "installedCSV")(Default)).To(Equal(to))
		Expect(olmField(sim.SubscriptionGVK, pkg, "status", "state")(Default)).To(Equal(sim.SubscriptionStateAtLatest))
	})
})
