package ztp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/operator"
	"github.com/cgu-operator/cgu-operator/pkg/ztp"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/harness/suite"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

// The ZTP suite runs the operator with the ZTP controller, which the other suites leave off,
// and a short --ztp-settle. The operator runs on the real clock here: the settle period
// counts from the Available condition's lastTransitionTime, which the hub test world writes
// on real time, and a new cluster's clock never needs to jump.

func TestZTP(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "ZTP controller suite")
}

const (
	// settle bounds how long the hub takes to carry a change through the operator, the
	// propagator and the simulated spokes.
	settle = 60 * time.Second
	// ztpSettle is the operator's --ztp-settle.
	ztpSettle = 5 * time.Second
	policyNS  = harness.PolicyNamespace
)

var fleet *harness.Env

var _ = BeforeSuite(func(ctx SpecContext) {
	log := suite.Logging()
	var err error
	fleet, err = harness.StartWith(ctx, log, func(o *operator.Options) {
		o.ZTP, o.ZTPSettle, o.Clock = true, ztpSettle, clock.RealClock{}
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(fleet.Hub.Stop()).To(Succeed()) })
})

// placeWave places on the clusters labelled fleet=label an inform policy that asks for obj,
// with the ZTP wave annotation unless wave is empty.
func placeWave(ctx context.Context, label, name, wave string, obj map[string]any) {
	p := world.NewPolicy(policyNS, name, policyv1.Inform, world.ConfigPolicy{Name: name, Objects: []map[string]any{obj}})
	if wave != "" {
		p.Annotations = map[string]string{ztp.WaveAnnotation: wave}
	}
	ExpectWithOffset(1, fleet.Hub.PlacePolicy(ctx, p, metav1.LabelSelector{MatchLabels: map[string]string{"fleet": label}})).To(Succeed())
}

func namespace(name string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}
}

// cluster reads a ManagedCluster.
func cluster(ctx context.Context, name string) func(Gomega) *clusterv1.ManagedCluster {
	return func(g Gomega) *clusterv1.ManagedCluster {
		mc := &clusterv1.ManagedCluster{}
		g.Expect(fleet.Hub.Client.Get(ctx, client.ObjectKey{Name: name}, mc)).To(Succeed())
		return mc
	}
}

// clusterLabels returns a ManagedCluster's labels.
func clusterLabels(ctx context.Context, name string) func(Gomega) map[string]string {
	return func(g Gomega) map[string]string { return cluster(ctx, name)(g).Labels }
}

// upgrade reads the cluster's ZTP ClusterGroupUpgrade; it fails while there is none.
func upgrade(ctx context.Context, name string) func(Gomega) *ranv1alpha1.ClusterGroupUpgrade {
	return func(g Gomega) *ranv1alpha1.ClusterGroupUpgrade {
		cgu := &ranv1alpha1.ClusterGroupUpgrade{}
		g.Expect(fleet.Hub.Client.Get(ctx, client.ObjectKey{Namespace: ztp.Namespace, Name: name}, cgu)).To(Succeed())
		return cgu
	}
}

// hasUpgrade tells whether the cluster has a ZTP ClusterGroupUpgrade.
func hasUpgrade(ctx context.Context, name string) func(Gomega) bool {
	return func(g Gomega) bool {
		err := fleet.Hub.Client.Get(ctx, client.ObjectKey{Namespace: ztp.Namespace, Name: name}, &ranv1alpha1.ClusterGroupUpgrade{})
		if apierrors.IsNotFound(err) {
			return false
		}
		g.Expect(err).NotTo(HaveOccurred())
		return true
	}
}

// marks lists what the ZTP flow left on a cluster: its CGU, its ZTP labels.
func marks(ctx context.Context, name string) func(Gomega) []string {
	return func(g Gomega) []string {
		var out []string
		if hasUpgrade(ctx, name)(g) {
			out = append(out, "CGU")
		}
		labels := clusterLabels(ctx, name)(g)
		for _, l := range []string{ztp.DoneLabel, ztp.RunningLabel} {
			if _, ok := labels[l]; ok {
				out = append(out, l)
			}
		}
		return out
	}
}

// currentPolicy is the policy the cluster works on in its ZTP ClusterGroupUpgrade.
func currentPolicy(ctx context.Context, name string) func(Gomega) string {
	return func(g Gomega) string {
		batch := upgrade(ctx, name)(g).Status.CurrentBatch
		if batch == nil || len(batch.Clusters) == 0 {
			return ""
		}
		return batch.Clusters[0].CurrentPolicy
	}
}

// spokeNamespaces lists the namespaces of a simulated spoke.
func spokeNamespaces(name string) func(Gomega) []string {
	return func(g Gomega) []string {
		objs, err := fleet.Sim.Objects(name, configpolicy.NamespaceGVK, "")
		g.Expect(err).NotTo(HaveOccurred())
		out := make([]string, 0, len(objs))
		for _, o := range objs {
			out = append(out, o.GetName())
		}
		return out
	}
}

// clusterEvents maps the reasons of the events regarding a ManagedCluster to their notes.
func clusterEvents(ctx context.Context, name string) func(Gomega) map[string]string {
	return func(g Gomega) map[string]string {
		var list eventsv1.EventList
		g.Expect(fleet.Hub.Client.List(ctx, &list)).To(Succeed())
		out := map[string]string{}
		for _, e := range list.Items {
			if e.Regarding.Kind == "ManagedCluster" && e.Regarding.Name == name {
				out[e.Reason] = e.Note
			}
		}
		return out
	}
}

// removeLabel removes a label from a ManagedCluster, as a user would.
func removeLabel(ctx context.Context, name, label string) {
	patch := []byte(`{"metadata":{"labels":{"` + label + `":null}}}`)
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	ExpectWithOffset(1, fleet.Hub.Client.Patch(ctx, mc, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
}

var _ = Describe("The ZTP controller", func() {
	It("creates the ztp-install namespace when it starts", func(ctx SpecContext) {
		Eventually(func() error {
			return fleet.Hub.Client.Get(ctx, client.ObjectKey{Name: ztp.Namespace}, &corev1.Namespace{})
		}).WithTimeout(settle).Should(Succeed())
	})

	It("takes a new cluster through its wave policies, wave then name, one at a time, to ztp-done", func(ctx SpecContext) {
		By("given three wave policies and one without a wave, placed on the fleet before a cluster joins")
		placeWave(ctx, "wave", "wave-du-upgrade", "10", world.ClusterVersionUpdated(harness.To))
		placeWave(ctx, "wave", "wave-common-sub", "2", namespace("wave-sub"))
		placeWave(ctx, "wave", "wave-common-config", "2", namespace("wave-config"))
		placeWave(ctx, "wave", "wave-plain", "", namespace("wave-plain"))

		By("when a cluster joins, whose platform upgrade stalls until the test lets it finish")
		name := fleet.MustJoinFleet(ctx, "wave", 1)[0]
		fleet.Sim.SetBehaviour(name, sim.Behaviour{Stall: true})
		mc := cluster(ctx, name)(Default)

		By("then its ZTP CGU appears, owned by the cluster, over the wave policies in order, one cluster at a time")
		Eventually(upgrade(ctx, name)).WithTimeout(settle).Should(And(
			HaveField("Spec.Clusters", Equal([]string{name})),
			HaveField("Spec.ManagedPolicies", Equal([]string{"wave-common-config", "wave-common-sub", "wave-du-upgrade"})),
			HaveField("Spec.RemediationStrategy.MaxConcurrency", 1),
			HaveField("OwnerReferences", ConsistOf(And(
				HaveField("Kind", "ManagedCluster"), HaveField("Name", name), HaveField("UID", mc.UID)))),
		))

		By("and the cluster runs: ztp-running, the wave 2 policies applied before wave 10 is enforced")
		Eventually(clusterLabels(ctx, name)).WithTimeout(settle).Should(And(
			HaveKey(ztp.RunningLabel), Not(HaveKey(ztp.DoneLabel))))
		Eventually(currentPolicy(ctx, name)).WithTimeout(settle).Should(Equal("wave-du-upgrade"))
		Expect(spokeNamespaces(name)(Default)).To(ContainElements("wave-config", "wave-sub"))
		Eventually(func() (string, error) { return fleet.Sim.DesiredVersion(name) }).WithTimeout(settle).Should(Equal(harness.To))
		Expect(upgrade(ctx, name)(Default).Status.State).NotTo(Equal(ranv1alpha1.StateCompleted))
		Expect(clusterLabels(ctx, name)(Default)).NotTo(HaveKey(ztp.DoneLabel))

		By("when the upgrade finishes, the CGU completes and the cluster is ztp-done, no longer ztp-running")
		fleet.Sim.SetBehaviour(name, sim.Behaviour{})
		Eventually(upgrade(ctx, name)).WithTimeout(settle).Should(HaveField("Status.State", ranv1alpha1.StateCompleted))
		Eventually(clusterLabels(ctx, name)).WithTimeout(settle).Should(And(
			HaveKey(ztp.DoneLabel), Not(HaveKey(ztp.RunningLabel))))
		Expect(clusterEvents(ctx, name)(Default)).To(HaveKeyWithValue(ztp.EventZTPStarted,
			ContainSubstring("wave-common-config, wave-common-sub, wave-du-upgrade")))

		By("and the policy without a wave was never enforced")
		Expect(spokeNamespaces(name)(Default)).NotTo(ContainElement("wave-plain"))
	})

	It("says on the cluster why its flow cannot start, and starts it once the cause is gone", func(ctx SpecContext) {
		By("given a wave policy, and a quota that lets no ClusterGroupUpgrade into ztp-install")
		placeWave(ctx, "quota", "quota-config", "1", namespace("quota-config"))
		quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ztp.Namespace, Name: "no-cgus"},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/clustergroupupgrades.ran.openshift.io": resource.MustParse("0")}}}
		Expect(fleet.Hub.Client.Create(ctx, quota)).To(Succeed())
		// The test hub runs no quota controller: its status is written as that controller would.
		quota.Status = corev1.ResourceQuotaStatus{Hard: quota.Spec.Hard, Used: corev1.ResourceList{"count/clustergroupupgrades.ran.openshift.io": resource.MustParse("0")}}
		Expect(fleet.Hub.Client.Status().Update(ctx, quota)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(fleet.Hub.Client.Delete(ctx, quota))).To(Succeed())
		})

		By("when a cluster joins, its ClusterGroupUpgrade is refused, and a Warning event on the cluster names the refusal")
		name := fleet.MustJoinFleet(ctx, "quota", 1)[0]
		Eventually(clusterEvents(ctx, name)).WithTimeout(settle).Should(HaveKeyWithValue(ztp.EventZTPFailed,
			And(ContainSubstring("creating the ZTP ClusterGroupUpgrade"), ContainSubstring("no-cgus"))))
		Expect(marks(ctx, name)(Default)).To(BeEmpty(), "nothing is started, nothing labelled")

		By("once the quota is gone, the flow starts")
		Expect(fleet.Hub.Client.Delete(ctx, quota)).To(Succeed())
		Eventually(upgrade(ctx, name)).WithTimeout(settle).Should(HaveField("Spec.ManagedPolicies", Equal([]string{"quota-config"})))
		Eventually(clusterLabels(ctx, name)).WithTimeout(settle).Should(HaveKey(ztp.DoneLabel))
	})

	It("labels a cluster without wave policies ztp-done once it has settled, leaving no CGU", func(ctx SpecContext) {
		By("given a policy without a wave and one whose wave is not a number")
		placeWave(ctx, "nowave", "nowave-plain", "", namespace("nowave-plain"))
		placeWave(ctx, "nowave", "nowave-bad", "first", namespace("nowave-bad"))

		By("when a cluster joins, it is left alone for the settle period")
		name := fleet.MustJoinFleet(ctx, "nowave", 1)[0]
		Consistently(clusterLabels(ctx, name)).WithTimeout(ztpSettle / 2).ShouldNot(HaveKey(ztp.DoneLabel))

		By("then it is labelled ztp-done, without a CGU, and warned of the policy with a bad wave")
		Eventually(clusterLabels(ctx, name)).WithTimeout(settle).Should(And(
			HaveKey(ztp.DoneLabel), Not(HaveKey(ztp.RunningLabel))))
		Expect(hasUpgrade(ctx, name)(Default)).To(BeFalse())
		Eventually(clusterEvents(ctx, name)).WithTimeout(settle).Should(And(
			HaveKeyWithValue(ztp.EventInvalidWave, ContainSubstring(policyNS+"/nowave-bad")),
			HaveKey(ztp.EventZTPDone)))
		Consistently(hasUpgrade(ctx, name)).WithTimeout(2 * time.Second).Should(BeFalse())
	})

	It("runs a cluster again when its ztp-done label is removed", func(ctx SpecContext) {
		By("given a cluster that went through its wave policy")
		placeWave(ctx, "rerun", "rerun-config", "1", namespace("rerun-ns"))
		name := fleet.MustJoinFleet(ctx, "rerun", 1)[0]
		Eventually(clusterLabels(ctx, name)).WithTimeout(settle).Should(HaveKey(ztp.DoneLabel))
		Eventually(upgrade(ctx, name)).WithTimeout(settle).Should(HaveField("Status.State", ranv1alpha1.StateCompleted))
		first := upgrade(ctx, name)(Default)

		compliance := func(g Gomega) policyv1.ComplianceState {
			out, err := fleet.Hub.Compliance(ctx, policyNS, "rerun-config")
			g.Expect(err).NotTo(HaveOccurred())
			return out[name]
		}
		Eventually(compliance).WithTimeout(settle).Should(Equal(policyv1.Compliant))
		// The rollout's enforcement has ended on the cluster: its replicated policy is inform
		// again (else the drift below would be remediated at once).
		Eventually(func(g Gomega) string {
			replica := &policyv1.Policy{}
			g.Expect(fleet.Hub.Client.Get(ctx, client.ObjectKey{Namespace: name, Name: policyNS + ".rerun-config"}, replica)).To(Succeed())
			return strings.ToLower(string(replica.Spec.RemediationAction))
		}).WithTimeout(settle).Should(Equal("inform"))

		By("when its configuration drifts and the user removes ztp-done")
		Expect(fleet.Sim.Mutate(name, func(objects configpolicy.Store) error {
			return objects.Delete(configpolicy.NamespaceGVK, "", "rerun-ns")
		})).To(Succeed())
		Eventually(compliance).WithTimeout(settle).Should(Equal(policyv1.NonCompliant))
		removeLabel(ctx, name, ztp.DoneLabel)

		By("then a new CGU runs it through the policy again, to ztp-done")
		Eventually(upgrade(ctx, name)).WithTimeout(settle).Should(HaveField("UID", Not(Equal(first.UID))))
		Eventually(upgrade(ctx, name)).WithTimeout(settle).Should(HaveField("Status.State", ranv1alpha1.StateCompleted))
		Eventually(clusterLabels(ctx, name)).WithTimeout(settle).Should(And(
			HaveKey(ztp.DoneLabel), Not(HaveKey(ztp.RunningLabel))))
		Expect(spokeNamespaces(name)(Default)).To(ContainElement("rerun-ns"))
		Expect(clusterEvents(ctx, name)(Default)).To(HaveKey(ztp.EventZTPRerun))

		By("when ztp-done is removed again with nothing to do, the cluster is ztp-done again and no CGU is left")
		removeLabel(ctx, name, ztp.DoneLabel)
		Eventually(marks(ctx, name)).WithTimeout(settle).Should(Equal([]string{ztp.DoneLabel}))
		Consistently(marks(ctx, name)).WithTimeout(2 * time.Second).Should(Equal([]string{ztp.DoneLabel}))
		Expect(clusterEvents(ctx, name)(Default)).To(HaveKeyWithValue(ztp.EventZTPDone, ContainSubstring("Already compliant")))
	})

	It("leaves a cluster that is not Available alone until it becomes Available", func(ctx SpecContext) {
		const name = "late-1"
		placeWave(ctx, "late", "late-config", "1", namespace("late-ns"))

		By("given a cluster registered whose agent has not reported (Available Unknown)")
		Expect(fleet.Hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: name, Labels: map[string]string{clusterv1.ClusterNameLabelKey: name}}})).To(Succeed())
		Expect(fleet.Hub.Client.Create(ctx, &clusterv1.ManagedCluster{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"fleet": "late", "name": name}},
			Spec:       clusterv1.ManagedClusterSpec{HubAcceptsClient: true, LeaseDurationSeconds: 60},
		})).To(Succeed())
		Expect(fleet.Hub.SetAvailable(ctx, name, metav1.ConditionUnknown)).To(Succeed())
		Expect(fleet.Sim.AddSpokes(sim.SpokeSpec{Name: name, Version: harness.From, Channel: harness.Channel})).To(Succeed())

		By("then it gets neither a CGU nor a label, past the settle period")
		Consistently(marks(ctx, name)).WithTimeout(ztpSettle + 3*time.Second).Should(BeEmpty())

		By("when it becomes Available, it goes through its wave policy to ztp-done")
		Expect(fleet.Hub.SetAvailable(ctx, name, metav1.ConditionTrue)).To(Succeed())
		Eventually(upgrade(ctx, name)).WithTimeout(settle).Should(HaveField("Spec.ManagedPolicies", Equal([]string{"late-config"})))
		Eventually(clusterLabels(ctx, name)).WithTimeout(settle).Should(And(
			HaveKey(ztp.DoneLabel), Not(HaveKey(ztp.RunningLabel))))
		Expect(spokeNamespaces(name)(Default)).To(ContainElement("late-ns"))
	})

	It("leaves alone a cluster labelled ztp-done when it joins, and the hub itself", func(ctx SpecContext) {
		By("given a wave policy placed on both")
		placeWave(ctx, "skip", "skip-config", "1", namespace("skip-ns"))
		done, hub := "skip-1", "local-cluster"
		Expect(fleet.Hub.AddClusters(ctx,
			world.Cluster{Name: done, Labels: map[string]string{"fleet": "skip", ztp.DoneLabel: ""}},
			world.Cluster{Name: hub, Labels: map[string]string{"fleet": "skip", ztp.HubLabel: "true"}},
		)).To(Succeed())
		Expect(fleet.Sim.AddSpokes(
			sim.SpokeSpec{Name: done, Version: harness.From, Channel: harness.Channel},
			sim.SpokeSpec{Name: hub, Version: harness.From, Channel: harness.Channel},
		)).To(Succeed())
		Eventually(func(g Gomega) map[string]policyv1.ComplianceState {
			out, err := fleet.Hub.Compliance(ctx, policyNS, "skip-config")
			g.Expect(err).NotTo(HaveOccurred())
			return out
		}).WithTimeout(settle).Should(And(HaveKey(done), HaveKey(hub)))

		By("then neither gets a CGU or a ZTP label, past the settle period")
		Consistently(func(g Gomega) map[string][]string {
			return map[string][]string{done: marks(ctx, done)(g), hub: marks(ctx, hub)(g)}
		}).WithTimeout(ztpSettle + 3*time.Second).Should(Equal(map[string][]string{done: {ztp.DoneLabel}, hub: nil}))
	})
})
