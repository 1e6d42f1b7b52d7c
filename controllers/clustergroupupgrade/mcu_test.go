package clustergroupupgrade_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/mcu"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

// The release-named rollouts run in the harness's EUS channel.
const (
	mcuChannel = harness.EUSChannel
	mcuTarget  = harness.To
	mcuHop     = harness.EUSHop
	// mcuUpdate is how long a simulated update of these specs takes.
	mcuUpdate = 3 * time.Second
)

// joinMixedFleet adds clusters labelled fleet=<label> on the versions given, in order, whose
// updates take mcuUpdate; a stalled one never finishes an update.
func joinMixedFleet(ctx context.Context, label string, versions []string, stalled ...int) []string {
	GinkgoHelper()
	return joinMixedFleetTaking(ctx, label, mcuUpdate, versions, stalled...)
}

// joinMixedFleetTaking is joinMixedFleet with updates that take duration.
func joinMixedFleetTaking(ctx context.Context, label string, duration time.Duration, versions []string, stalled ...int) []string {
	GinkgoHelper()
	i := 0
	clusters, err := fleet.JoinFleetWith(ctx, label, len(versions), func(s *sim.SpokeSpec) {
		s.Version, s.Channel, s.Behaviour.Duration = versions[i], mcuChannel, duration
		for _, j := range stalled {
			if j == i {
				s.Behaviour.Stall = true
			}
		}
		i++
	})
	Expect(err).NotTo(HaveOccurred())
	return clusters
}

func newMCU(ns, label string) *ranv1alpha1.ManagedClustersUpgrade {
	return &ranv1alpha1.ManagedClustersUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "to-4.16"},
		Spec: ranv1alpha1.ManagedClustersUpgradeSpec{
			ClusterSelector: &ranv1alpha1.MCUClusterSelector{MatchLabels: map[string]string{"fleet": label}},
			ClusterVersion:  ranv1alpha1.MCUClusterVersion{Channel: mcuChannel, Version: mcuTarget},
			UpgradeStrategy: ranv1alpha1.MCUUpgradeStrategy{MaxConcurrency: 2},
		},
	}
}

// createMCU creates the rollout's namespace, binds the global cluster set to it (as any
// policy's namespace needs), and the rollout.
func createMCU(ctx context.Context, m *ranv1alpha1.ManagedClustersUpgrade) {
	GinkgoHelper()
	Expect(client.IgnoreAlreadyExists(hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: m.Namespace}}))).To(Succeed())
	Expect(hub.BindClusterSet(ctx, m.Namespace)).To(Succeed())
	Expect(hub.Client.Create(ctx, m)).To(Succeed())
}

func storedMCU(ctx context.Context, m *ranv1alpha1.ManagedClustersUpgrade) func(Gomega) *ranv1alpha1.ManagedClustersUpgrade {
	return func(g Gomega) *ranv1alpha1.ManagedClustersUpgrade {
		out := &ranv1alpha1.ManagedClustersUpgrade{}
		g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(m), out)).To(Succeed())
		return out
	}
}

// mcuConditions are the rollout's conditions as "Type Status Reason", in order.
func mcuConditions(ctx context.Context, m *ranv1alpha1.ManagedClustersUpgrade) func(Gomega) []string {
	return func(g Gomega) []string {
		var out []string
		for _, c := range storedMCU(ctx, m)(g).Status.Conditions {
			out = append(out, strings.Join([]string{c.Type, string(c.Status), c.Reason}, " "))
		}
		return out
	}
}

func mcuSummary(ctx context.Context, m *ranv1alpha1.ManagedClustersUpgrade) func(Gomega) ranv1alpha1.ClustersSummary {
	return func(g Gomega) ranv1alpha1.ClustersSummary {
		s := storedMCU(ctx, m)(g).Status.ClustersSummary
		g.Expect(s).NotTo(BeNil())
		return *s
	}
}

// made counts what the rollout made that is still on the hub: its ClusterGroupUpgrade,
// policies, Placements and PlacementBindings.
func made(ctx context.Context, m *ranv1alpha1.ManagedClustersUpgrade) func(Gomega) int {
	return func(g Gomega) int {
		n := 0
		for _, list := range []client.ObjectList{&ranv1alpha1.ClusterGroupUpgradeList{}, &policyv1.PolicyList{},
			&clusterv1beta1.PlacementList{}, &policyv1.PlacementBindingList{}} {
			g.Expect(hub.Client.List(ctx, list, client.InNamespace(m.Namespace), client.MatchingLabels(mcu.Labels(m)))).To(Succeed())
			n += meta.LenList(list)
		}
		return n
	}
}

// capacityPhases reads a MachineSet journal as its distinct phases, in order: the replicas
// asked, whether all are ready ("ready") or only some ("asked"), and the worker pool's
// config. A journal of before and before+surge machines only; any other count is a phase of
// its own ("N other"), which the expectations never hold.
func capacityPhases(journal []sim.WorkerCapacity, before, surged int64) []string {
	var out []string
	for _, e := range journal {
		phase := fmt.Sprintf("%d other", e.Replicas)
		switch {
		case (e.Replicas == before || e.Replicas == surged) && e.Ready == e.Replicas:
			phase = fmt.Sprintf("%d ready on %s", e.Replicas, e.WorkerConfig)
		case e.Replicas == surged && e.Ready == before:
			phase = fmt.Sprintf("%d asked on %s", e.Replicas, e.WorkerConfig)
		}
		if len(out) == 0 || out[len(out)-1] != phase {
			out = append(out, phase)
		}
	}
	return out
}

var _ = Describe("ManagedClustersUpgrade", func() {
	var jobs *jobGate
	BeforeEach(func() {
		jobs = newJobGate()
		fleet.PlayJobs(jobs.play)
		DeferCleanup(func() { fleet.PlayJobs(nil) })
	})

	It("takes clusters on mixed versions to the named release, through the odd minor where the graph needs it, canary first", func(ctx SpecContext) {
		versions := []string{harness.EUSFrom, harness.From, mcuTarget, harness.Stranded, harness.From}
		clusters := joinMixedFleet(ctx, "mcuhops", versions)
		twoHops, canary, current, stranded, badBackup := clusters[0], clusters[1], clusters[2], clusters[3], clusters[4]
		withNamespace(hooksNamespace, clusters...)
		for _, c := range []string{twoHops, canary, badBackup} {
			jobs.gate(c, "backup")
		}
		const ns = "mcu-hops"
		m := newMCU(ns, "mcuhops")
		m.Spec.UpgradeStrategy.CanaryClusters = &ranv1alpha1.CanaryClusters{ClusterSelector: metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "name", Operator: metav1.LabelSelectorOpIn, Values: []string{canary}}}}}
		m.Spec.PreUpgradeAction = &ranv1alpha1.UpgradeAction{ManifestWork: actionTemplates(ns)["backup"].Spec.ManifestWorkTemplate}
		createMCU(ctx, m)

		By("the plan: one update for the clusters on 4.16, two for the one on 4.14; the one on 4.12 held, naming why")
		Eventually(storedMCU(ctx, m)).WithTimeout(settle).Should(HaveField("Status.Upgrade", m.Name))
		st := storedMCU(ctx, m)(Default).Status
		hopPolicy, targetPolicy := mcu.PolicyName(m, mcuHop), mcu.PolicyName(m, mcuTarget)
		Expect(st.Stages).To(Equal([]ranv1alpha1.MCUStage{
			{Index: 1, Version: mcuHop, Clusters: 1, Policy: hopPolicy},
			{Index: 1, Version: mcuTarget, Clusters: 2, Policy: targetPolicy},
			{Index: 2, Version: mcuTarget, Clusters: 1, Policy: targetPolicy},
		}))
		Expect(st.Held).To(ConsistOf(And(HaveField("Cluster", stranded), HaveField("Reason", "NoUpdatePath"),
			HaveField("Message", ContainSubstring("from "+harness.Stranded+" to "+mcuTarget)))))
		cgu := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: m.Name}}
		stored := fleet.Stored(ctx, cgu)(Default)
		Expect(stored.Spec.ManagedPolicies).To(Equal([]string{hopPolicy, targetPolicy}), "every path goes up: version order is each cluster's order")
		Expect(stored.Spec.Clusters).To(ConsistOf(twoHops, canary, badBackup), "neither the cluster on the target nor the held one")
		Expect(stored.Spec.RemediationStrategy.Canaries).To(Equal([]string{canary}))
		Expect(stored.Spec.PreUpgradeActions).To(HaveLen(1))

		By("the canary waits for its pre-upgrade action, then upgrades alone")
		Consistently(mcuSummary(ctx, m)).WithTimeout(2*time.Second).Should(HaveField("Complete", 1), "only the cluster already on the target")
		Expect(storedMCU(ctx, m)(Default).Status.PreUpgradeActionSummary).To(PointTo(HaveField("Total", 1)))
		jobs.release(canary, "backup", sim.JobSucceeded("backed up"))
		Eventually(version(canary)).WithTimeout(settle).Should(Equal(mcuTarget))
		Expect(version(twoHops)(Default)).To(Equal(harness.EUSFrom), "the others wait for the canary")
		Eventually(storedMCU(ctx, m)).WithTimeout(settle).Should(HaveField("Status.CanaryClustersSummary",
			PointTo(And(HaveField("Total", 1), HaveField("Complete", 1)))))

		By("the next batch: one cluster takes both updates in order, the other's failed backup holds it")
		jobs.release(twoHops, "backup", sim.JobSucceeded("backed up"))
		jobs.release(badBackup, "backup", sim.JobFailed("snapshot failed"))
		Eventually(version(twoHops)).WithTimeout(settle).Should(Equal(mcuTarget))
		cv, err := simulator.ClusterVersion(twoHops)
		Expect(err).NotTo(HaveOccurred())
		var history []string
		for _, h := range cv.Status.History {
			history = append(history, h.Version)
		}
		Expect(history).To(Equal([]string{mcuTarget, mcuHop, harness.EUSFrom}), "through the odd minor, newest first")

		Eventually(mcuSummary(ctx, m)).WithTimeout(settle).Should(Equal(ranv1alpha1.ClustersSummary{
			Total: 5, Initialized: 2, Complete: 3, Held: 2}))
		Eventually(mcuConditions(ctx, m)).WithTimeout(settle).Should(Equal([]string{
			"Selected True " + mcu.ReasonSelected, "Applied True " + mcu.ReasonApplied, "InProgress False " + mcu.ReasonEnded,
			"Complete False " + mcu.ReasonClustersHeld, "Failed False " + mcu.ReasonNoFailures}))
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted),
			"the two-update cluster no longer runs the intermediate release, whose policy does not hold the rollout")
		Expect(version(badBackup)(Default)).To(Equal(harness.From))
		Expect(version(current)(Default)).To(Equal(mcuTarget))
		// The failed backup counts as degraded, whether the MCU saw its work's last report or
		// only the batch record of the cluster it held (the works go as the rollout ends).
		Eventually(storedMCU(ctx, m)).WithTimeout(settle).Should(HaveField("Status.PreUpgradeActionSummary",
			PointTo(And(HaveField("Degraded", 1), HaveField("Available", 2)))))
		Eventually(func(g Gomega) string {
			var mc clusterv1.ManagedCluster
			g.Expect(hub.Client.Get(ctx, client.ObjectKey{Name: twoHops}, &mc)).To(Succeed())
			for _, c := range mc.Status.ClusterClaims {
				if c.Name == sim.ClaimVersion {
					return c.Value
				}
			}
			return ""
		}).WithTimeout(settle).Should(Equal(mcuTarget), "the spoke reports its new version, as the klusterlet does")

		By("deleting it deletes what it made")
		Expect(hub.Client.Delete(ctx, m)).To(Succeed())
		Eventually(made(ctx, m)).WithTimeout(settle).Should(BeZero())
	})

	It("hands a cluster from one update of its path to the next only once the hub stopped asking for the first, however fast the updates", func(ctx SpecContext) {
		// Updates of a second: the second one would be over before the propagator made the
		// first update's replica inform, were both enforced at once (the rollout then stuck,
		// a cluster asked for the intermediate release again).
		clusters := joinMixedFleetTaking(ctx, "mcufast", time.Second, []string{harness.EUSFrom, harness.EUSFrom, harness.EUSFrom, harness.EUSFrom})
		m := newMCU("mcu-fast", "mcufast")
		createMCU(ctx, m)
		cgu := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name}}
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		for _, c := range clusters {
			cv, err := simulator.ClusterVersion(c)
			Expect(err).NotTo(HaveOccurred())
			var history []string
			for _, h := range cv.Status.History {
				history = append(history, h.Version)
			}
			Expect(history).To(Equal([]string{mcuTarget, mcuHop, harness.EUSFrom}), "%s: each release asked for once, in order, newest first", c)
		}
	})

	It("pauses the workers of a multi-node cluster across its two updates, so that they reboot once, into the target", func(ctx SpecContext) {
		workers := map[int]int{0: 2} // the first cluster has two workers; the second is single-node
		i := 0
		clusters, err := fleet.JoinFleetWith(ctx, "mcumcp", 2, func(s *sim.SpokeSpec) {
			s.Version, s.Channel, s.Behaviour.Duration, s.Workers = harness.EUSFrom, mcuChannel, mcuUpdate, workers[i]
			i++
		})
		Expect(err).NotTo(HaveOccurred())
		multiNode, singleNode := clusters[0], clusters[1]
		m := newMCU("mcu-mcp", "mcumcp")
		createMCU(ctx, m)
		cgu := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name}}
		Eventually(storedMCU(ctx, m)).WithTimeout(settle).Should(HaveField("Status.Upgrade", m.Name))
		Expect(fleet.Stored(ctx, cgu)(Default).Spec.ManagedPolicies).To(Equal([]string{mcu.PausePolicyName(m),
			mcu.PolicyName(m, mcuHop), mcu.PolicyName(m, mcuTarget), mcu.ResumePolicyName(m)}))
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))

		pool := func(cluster, name string) []string {
			configs, err := simulator.PoolConfigs(cluster, name)
			Expect(err).NotTo(HaveOccurred())
			return configs
		}
		Expect(pool(multiNode, sim.PoolWorker)).To(Equal([]string{sim.RenderedConfig(sim.PoolWorker, harness.EUSFrom),
			sim.RenderedConfig(sim.PoolWorker, mcuTarget)}), "the workers skipped the intermediate release")
		Expect(pool(multiNode, sim.PoolMaster)).To(HaveLen(3), "the control plane took both updates")
		Expect(pool(singleNode, sim.PoolWorker)).To(HaveLen(3), "a single-node cluster's pool is never paused")
		Expect(version(multiNode)(Default)).To(Equal(mcuTarget))
		Expect(version(singleNode)(Default)).To(Equal(mcuTarget))
	})

	It("adds worker capacity to its multi-node clusters before their workers upgrade and removes it after, going on without machines that never become ready", func(ctx SpecContext) {
		// A multi-node cluster taking two updates (its workers paused across them), one
		// taking one update whose new machines never become ready, a single-node cluster.
		specs := []struct {
			version  string
			workers  int
			machines sim.MachineBehaviour
		}{{harness.EUSFrom, 2, sim.MachineBehaviour{ReadyAfter: time.Second}}, {harness.From, 3, sim.MachineBehaviour{NeverReady: true}}, {harness.From, 0, sim.MachineBehaviour{}}}
		i := 0
		clusters, err := fleet.JoinFleetWith(ctx, "mcucap", len(specs), func(s *sim.SpokeSpec) {
			s.Version, s.Channel, s.Behaviour.Duration = specs[i].version, mcuChannel, mcuUpdate
			s.Workers, s.Machines = specs[i].workers, specs[i].machines
			i++
		})
		Expect(err).NotTo(HaveOccurred())
		ready, neverReady, singleNode := clusters[0], clusters[1], clusters[2]
		m := newMCU("mcu-cap", "mcucap")
		m.Spec.UpgradeStrategy.MaxConcurrency = 3
		m.Spec.UpgradeStrategy.WorkerCapacity = &ranv1alpha1.WorkerCapacity{ScaleTimeout: &metav1.Duration{Duration: 10 * time.Minute}}
		createMCU(ctx, m)
		cgu := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name}}
		Eventually(storedMCU(ctx, m)).WithTimeout(settle).Should(HaveField("Status.Upgrade", m.Name))
		up, down := mcu.ScaleUpPolicyName(m), mcu.ScaleDownPolicyName(m)
		Expect(fleet.Stored(ctx, cgu)(Default).Spec.ManagedPolicies).To(Equal([]string{mcu.PausePolicyName(m), up,
			mcu.PolicyName(m, mcuHop), mcu.PolicyName(m, mcuTarget), mcu.ResumePolicyName(m), down}))

		By("the cluster whose machines come up goes on; the other waits for them until the scale timeout")
		Eventually(version(ready)).WithTimeout(settle).Should(Equal(mcuTarget))
		Eventually(version(singleNode)).WithTimeout(settle).Should(Equal(mcuTarget))
		Consistently(version(neverReady)).WithTimeout(3 * mcuUpdate).Should(Equal(harness.From))
		Expect(storedMCU(ctx, m)(Default).Status.WorkerCapacity).To(PointTo(MatchFields(IgnoreExtras, Fields{
			"Total": Equal(2), "NotReady": BeZero()})))
		advance(ctx, 11*time.Minute, cgu)
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		Expect(version(neverReady)(Default)).To(Equal(mcuTarget))
		Eventually(storedMCU(ctx, m)).WithTimeout(settle).Should(HaveField("Status.WorkerCapacity",
			&ranv1alpha1.CapacitySummary{Total: 2, Added: 1, NotReady: 1, Removed: 2}))
		Expect(talmEventsOf(ctx, cgu, "RemediationInClusterSoftTimeout")(Default)).To(ConsistOf(
			HaveField("Note", ContainSubstring("cluster "+neverReady+" went on without policy "+up))))
		var records ranv1alpha1.ClusterGroupUpgradeBatchList
		Expect(hub.Client.List(ctx, &records, client.InNamespace(m.Namespace), client.MatchingLabels{ranv1alpha1.LabelUpgradeName: m.Name})).To(Succeed())
		Expect(records.Items).To(HaveLen(1))
		Expect(records.Items[0].Status.Clusters).To(ContainElement(MatchFields(IgnoreExtras, Fields{
			"Name": Equal(neverReady), "State": Equal(ranv1alpha1.ClusterCompleted), "SoftTimedOut": Equal([]string{up})})))

		By("the spokes' MachineSets went up before the workers moved, and down after")
		journal := func(cluster string) []sim.WorkerCapacity {
			j, err := simulator.MachineSetJournal(cluster)
			Expect(err).NotTo(HaveOccurred())
			return j
		}
		from, to := sim.RenderedConfig(sim.PoolWorker, harness.EUSFrom), sim.RenderedConfig(sim.PoolWorker, mcuTarget)
		Expect(capacityPhases(journal(ready), 2, 3)).To(Equal([]string{"2 ready on " + from, "3 asked on " + from, "3 ready on " + from, "3 ready on " + to, "2 ready on " + to}),
			"%+v", journal(ready))
		from = sim.RenderedConfig(sim.PoolWorker, harness.From)
		Expect(capacityPhases(journal(neverReady), 3, 4)).To(Equal([]string{"3 ready on " + from, "4 asked on " + from, "4 asked on " + to, "3 ready on " + to}),
			"%+v", journal(neverReady))
		Expect(journal(singleNode)).To(BeEmpty(), "a single-node cluster has no worker MachineSet")
	})

	It("stops enforcing when deleted mid-rollout", func(ctx SpecContext) {
		clusters := joinMixedFleet(ctx, "mcudel", []string{harness.From, harness.From}, 0, 1)
		const ns = "mcu-del"
		m := newMCU(ns, "mcudel")
		createMCU(ctx, m)
		cgu := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: m.Name}}
		root := ns + "." + mcu.PolicyName(m, mcuTarget)
		Eventually(enforcedThrough(ctx, root, copyRoot(cgu, mcu.PolicyName(m, mcuTarget)))).WithTimeout(settle).Should(Equal(clusters))
		Eventually(mcuConditions(ctx, m)).WithTimeout(settle).Should(ContainElement("InProgress True " + mcu.ReasonInProgress))

		Expect(hub.Client.Delete(ctx, m)).To(Succeed())
		Eventually(func() error {
			return hub.Client.Get(ctx, client.ObjectKeyFromObject(m), &ranv1alpha1.ManagedClustersUpgrade{})
		}).WithTimeout(settle).Should(MatchError(ContainSubstring("not found")))
		Expect(made(ctx, m)(Default)).To(BeZero())
		Expect(enforcedThrough(ctx, root, copyRoot(cgu, mcu.PolicyName(m, mcuTarget)))(Default)).To(BeEmpty())
	})

	It("approves the included operator's upgrade after the platform's, and leaves the excluded one's waiting", func(ctx SpecContext) {
		const included, excluded = "sriov-network-operator", "ptp-operator"
		clusters, err := fleet.JoinFleetWith(ctx, "mcuolm", 1, func(s *sim.SpokeSpec) {
			s.Version, s.Channel = harness.From, mcuChannel
			for _, pkg := range []string{included, excluded} {
				s.Operators = append(s.Operators, sim.InstalledOperator{Package: pkg, Namespace: olmNS, Channel: "stable",
					InstalledCSV: pkg + ".v4.16.0", Available: []string{pkg + ".v4.16.1"}, Approval: sim.ApprovalManual})
			}
		})
		Expect(err).NotTo(HaveOccurred())
		cluster := clusters[0]
		m := newMCU("mcu-olm", "mcuolm")
		m.Spec.OCPOperators = &ranv1alpha1.OCPOperators{
			Include: []ranv1alpha1.OperatorReference{{Name: included, Namespace: olmNS}},
			Exclude: []ranv1alpha1.OperatorReference{{Name: excluded, Namespace: olmNS}},
		}
		createMCU(ctx, m)

		Eventually(func(g Gomega) bool {
			return meta.IsStatusConditionTrue(storedMCU(ctx, m)(g).Status.Conditions, ranv1alpha1.MCUConditionComplete)
		}).WithTimeout(settle).Should(BeTrue())
		Expect(version(cluster)(Default)).To(Equal(mcuTarget))
		Expect(olmString(cluster, sim.SubscriptionGVK, included, "status", "installedCSV")(Default)).To(Equal(included + ".v4.16.1"))
		Expect(olmString(cluster, sim.SubscriptionGVK, excluded, "status", "installedCSV")(Default)).To(Equal(excluded+".v4.16.0"), "never approved")
		Expect(olmString(cluster, sim.SubscriptionGVK, excluded, "status", "state")(Default)).To(Equal(sim.SubscriptionStateUpgradePending))
		Expect(fleet.Stored(ctx, &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name}})(Default).Spec.ManagedPolicies).To(
			Equal([]string{mcu.PolicyName(m, mcuTarget), mcu.OperatorsPolicyName(m)}), "the operators after the platform")
	})

	It("approves every operator's upgrade but the excluded one's, each cluster listing its own Subscriptions", func(ctx SpecContext) {
		const excluded = "ptp-operator"
		approved := []string{"sriov-network-operator", "cluster-logging"}
		clusters, err := fleet.JoinFleetWith(ctx, "mcuall", 2, func(s *sim.SpokeSpec) {
			s.Version, s.Channel = harness.From, mcuChannel
			for _, pkg := range append([]string{excluded}, approved...) {
				s.Operators = append(s.Operators, sim.InstalledOperator{Package: pkg, Namespace: olmNS, Channel: "stable",
					InstalledCSV: pkg + ".v4.16.0", Available: []string{pkg + ".v4.16.1"}, Approval: sim.ApprovalManual})
			}
		})
		Expect(err).NotTo(HaveOccurred())
		m := newMCU("mcu-all", "mcuall")
		m.Spec.OCPOperators = &ranv1alpha1.OCPOperators{ApproveAllUpgrades: true,
			Exclude: []ranv1alpha1.OperatorReference{{Name: excluded, Namespace: olmNS}}}
		createMCU(ctx, m)

		Eventually(func(g Gomega) bool {
			return meta.IsStatusConditionTrue(storedMCU(ctx, m)(g).Status.Conditions, ranv1alpha1.MCUConditionComplete)
		}).WithTimeout(settle).Should(BeTrue())
		for _, cluster := range clusters {
			Expect(version(cluster)(Default)).To(Equal(mcuTarget))
			for _, pkg := range approved {
				Expect(olmString(cluster, sim.SubscriptionGVK, pkg, "status", "installedCSV")(Default)).To(Equal(pkg+".v4.16.1"), cluster)
			}
			Expect(olmString(cluster, sim.SubscriptionGVK, excluded, "status", "installedCSV")(Default)).To(Equal(excluded+".v4.16.0"), "never approved")
			Expect(olmString(cluster, sim.SubscriptionGVK, excluded, "status", "state")(Default)).To(Equal(sim.SubscriptionStateUpgradePending))
		}
		stored := fleet.Stored(ctx, &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name}})(Default)
		Expect(stored.Spec.ManagedPolicies).To(Equal([]string{mcu.PolicyName(m, mcuTarget), mcu.OperatorsPolicyName(m)}), "the operators after the platform")
		Expect(stored.Spec.OperatorUpgrades).To(BeNil(), "the clusters approve their plans as the policy is enforced there")
		cgu := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name}}
		root := m.Namespace + "." + mcu.OperatorsPolicyName(m)
		Eventually(enforcedThrough(ctx, root, copyRoot(cgu, mcu.OperatorsPolicyName(m)))).WithTimeout(settle).Should(BeEmpty(),
			"nothing left enforcing once the rollout completed")
	})

	DescribeTable("answers what it cannot do with a condition naming it, and starts nothing",
		func(ctx SpecContext, ns string, change func(*ranv1alpha1.ManagedClustersUpgrade), want string) {
			joinMixedFleet(ctx, ns, []string{harness.From})
			m := newMCU(ns, ns)
			change(m)
			createMCU(ctx, m)
			Eventually(mcuConditions(ctx, m)).WithTimeout(settle).Should(ContainElement(want))
			Consistently(made(ctx, m)).WithTimeout(2 * time.Second).Should(BeZero())
		},
		Entry("a release the channel does not have", "mcu-unknown", func(m *ranv1alpha1.ManagedClustersUpgrade) {
			m.Spec.ClusterVersion.Version = "4.16.99"
		}, "Applied False "+mcu.ReasonVersionNotFound),
		Entry("a channel the update service does not serve", "mcu-channel", func(m *ranv1alpha1.ManagedClustersUpgrade) {
			m.Spec.ClusterVersion.Channel = "eus-4.98"
		}, "Applied False "+mcu.ReasonChannelNotServed),
		Entry("a selection of no cluster", "mcu-empty", func(m *ranv1alpha1.ManagedClustersUpgrade) {
			m.Spec.ClusterSelector.MatchLabels = map[string]string{"fleet": "nobody"}
		}, "Selected False "+mcu.ReasonNoClusters),
		Entry("an operator both included and excluded", "mcu-operators", func(m *ranv1alpha1.ManagedClustersUpgrade) {
			op := ranv1alpha1.OperatorReference{Name: "sriov-network-operator-subscription", Namespace: "openshift-sriov-network-operator"}
			m.Spec.OCPOperators = &ranv1alpha1.OCPOperators{Include: []ranv1alpha1.OperatorReference{op}, Exclude: []ranv1alpha1.OperatorReference{op}}
		}, "Applied False "+mcu.ReasonInvalidOperators),
		Entry("a Placement that does not exist", "mcu-noplacement", func(m *ranv1alpha1.ManagedClustersUpgrade) {
			m.Spec.Placement = []ranv1alpha1.PlacementReference{{Name: "missing"}}
		}, "Selected False "+mcu.ReasonPlacementNotFound),
	)

	It("refuses at admission what is malformed", func(ctx SpecContext) {
		const ns = "mcu-admission"
		Expect(client.IgnoreAlreadyExists(hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
		op := ranv1alpha1.OperatorReference{Name: "sriov-network-operator-subscription", Namespace: "openshift-sriov-network-operator"}
		for message, change := range map[string]func(*ranv1alpha1.ManagedClustersUpgrade){
			"approveAllUpgrades approves every operator": func(m *ranv1alpha1.ManagedClustersUpgrade) {
				m.Spec.OCPOperators = &ranv1alpha1.OCPOperators{ApproveAllUpgrades: true, Include: []ranv1alpha1.OperatorReference{op}}
			},
			"select clusters: spec.placement or spec.clusterSelector": func(m *ranv1alpha1.ManagedClustersUpgrade) { m.Spec.ClusterSelector = nil },
			"spec.clusterVersion.version":                             func(m *ranv1alpha1.ManagedClustersUpgrade) { m.Spec.ClusterVersion.Version = "latest" },
			"spec.clusterSelector selects every cluster": func(m *ranv1alpha1.ManagedClustersUpgrade) {
				m.Spec.ClusterSelector = &ranv1alpha1.MCUClusterSelector{}
			},
			"spec.upgradeStrategy.workerCapacity.scaleTimeout must be at least 10s": func(m *ranv1alpha1.ManagedClustersUpgrade) {
				m.Spec.UpgradeStrategy.WorkerCapacity = &ranv1alpha1.WorkerCapacity{ScaleTimeout: &metav1.Duration{Duration: 5 * time.Second}}
			},
			"spec.upgradeStrategy.workerCapacity.surge: Invalid value: 11": func(m *ranv1alpha1.ManagedClustersUpgrade) {
				m.Spec.UpgradeStrategy.WorkerCapacity = &ranv1alpha1.WorkerCapacity{Surge: 11}
			},
		} {
			m := newMCU(ns, "any")
			change(m)
			Expect(hub.Client.Create(ctx, m)).To(MatchError(ContainSubstring(message)))
		}
	})
})
