package trains_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/train"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

// mcuOn reads a rollout as stored on a hub.
func mcuOn(ctx context.Context, h *world.Hub, name string) func(Gomega) *ranv1alpha1.ManagedClustersUpgrade {
	return func(g Gomega) *ranv1alpha1.ManagedClustersUpgrade {
		out := &ranv1alpha1.ManagedClustersUpgrade{}
		g.Expect(h.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, out)).To(Succeed())
		return out
	}
}

// batchStarts maps each batch record of a rollout on a regional hub to when it started.
func batchStarts(ctx context.Context, h *world.Hub, upgrade string) func(Gomega) map[int]time.Time {
	return func(g Gomega) map[int]time.Time {
		var list ranv1alpha1.ClusterGroupUpgradeBatchList
		g.Expect(h.Client.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		out := map[int]time.Time{}
		for _, r := range list.Items {
			if r.Spec.Upgrade != upgrade || r.Status.StartedAt == nil {
				continue
			}
			_, seen := out[r.Spec.Index]
			g.Expect(seen).To(BeFalse(), "batch %d recorded twice", r.Spec.Index)
			out[r.Spec.Index] = r.Status.StartedAt.Time
		}
		return out
	}
}

// updatesTo counts the updates to version a simulated cluster of env started.
func updatesTo(env *harness.Env, name, version string) int {
	GinkgoHelper()
	cv, err := env.Sim.ClusterVersion(name)
	Expect(err).NotTo(HaveOccurred())
	n := 0
	for _, h := range cv.Status.History {
		if h.Version == version {
			n++
		}
	}
	return n
}

func hubRing(name, hub string) ranv1alpha1.TrainRing {
	r := harness.TrainRing(name, "region", 0)
	r.Hubs = []string{hub}
	return r
}

var _ = Describe("A release train across regional hubs", Ordered, func() {
	It("runs each ring on its hub, holds the ring of a hub that stops reporting, and resumes without repeating a batch", func(ctx SpecContext) {
		eastClusters, err := east.env.JoinFleet(ctx, "region", 2)
		Expect(err).NotTo(HaveOccurred())
		westClusters, err := west.env.JoinFleet(ctx, "region", 3)
		Expect(err).NotTo(HaveOccurred())
		west.env.Sim.SetBehaviour(westClusters[1], sim.Behaviour{Stall: true})
		t := newTrain("regions", hubRing("east", east.name), hubRing("west", west.name))
		t.Spec.Releases.Versions = []string{harness.To}
		Expect(global.Hub.Client.Create(ctx, t)).To(Succeed())
		rollout := func(ring string) string { return train.RolloutName(t.Name, ring, harness.To) }

		By("ring east runs on hub-east; once its clusters run the release, ring west runs on hub-west")
		Eventually(mcuNames(ctx, east.env.Hub)).WithTimeout(settle).Should(ConsistOf(rollout("east")))
		Eventually(ledger(ctx, t)).WithTimeout(settle).Should(Equal([]string{harness.To + " Rolling east:Qualified,west:Rolling"}))
		for _, c := range eastClusters {
			Expect(versionOf(east.env, c)(Default)).To(Equal(harness.To), c)
		}
		Expect(mcuNames(ctx, global.Hub)(Default)).To(BeEmpty(), "the global hub runs no rollout itself")

		By("hub-west's rollout holds at its stalled second cluster, and the hub stops reporting")
		Eventually(mcuOn(ctx, west.env.Hub, rollout("west"))).WithTimeout(settle).Should(
			HaveField("Status.ClustersSummary.Complete", 1))
		Eventually(func(g Gomega) int {
			return storedTrain(ctx, t)(g).Status.Ledger[0].Rings[1].Complete
		}).WithTimeout(settle).Should(Equal(1), "the global hub reads hub-west's progress from the work's feedback")
		mcuUID := mcuOn(ctx, west.env.Hub, rollout("west"))(Default).UID
		work := &workv1.ManifestWork{}
		Expect(global.Hub.Client.Get(ctx, types.NamespacedName{Namespace: west.name, Name: rollout("west")}, work)).To(Succeed())
		before := batchStarts(ctx, west.env.Hub, rollout("west"))(Default)
		Expect(before).To(HaveLen(2), "batches 1 and 2 started")
		Expect(west.agent.DisconnectCluster(ctx)).To(Succeed())
		Eventually(storedTrain(ctx, t)).WithTimeout(settle).Should(And(
			HaveField("Status.Conditions", ContainElement(And(HaveField("Type", ranv1alpha1.TrainConditionHubsReporting),
				HaveField("Status", metav1.ConditionFalse), HaveField("Reason", ranv1alpha1.TrainReasonHubUnreachable)))),
			HaveField("Status.Rings", ContainElement(And(HaveField("Name", "west"), HaveField("Unreachable", ConsistOf(west.name))))),
		))
		Eventually(eventReasons(ctx, t)).Should(HaveKeyWithValue(train.EventHubUnreachable, Equal(1)))

		By("hub-west goes on by itself while away; the global hub holds ring west where it stood")
		west.env.Sim.SetBehaviour(westClusters[1], sim.Behaviour{})
		Eventually(mcuOn(ctx, west.env.Hub, rollout("west"))).WithTimeout(settle).Should(
			HaveField("Status.ClustersSummary.Complete", 3))
		Consistently(ledger(ctx, t)).WithTimeout(2 * time.Second).Should(Equal([]string{harness.To + " Rolling east:Qualified,west:Rolling"}))

		By("reconnected, the train catches up; nothing started twice")
		Expect(west.agent.ReconnectCluster(ctx)).To(Succeed())
		Eventually(ledger(ctx, t)).WithTimeout(settle).Should(Equal([]string{harness.To + " Delivered east:Qualified,west:Qualified"}))
		Expect(storedTrain(ctx, t)(Default).Status.Conditions).To(ContainElement(And(
			HaveField("Type", ranv1alpha1.TrainConditionHubsReporting), HaveField("Status", metav1.ConditionTrue))))
		Expect(mcuOn(ctx, west.env.Hub, rollout("west"))(Default).UID).To(Equal(mcuUID), "the rollout on hub-west was made once")
		again := &workv1.ManifestWork{}
		Expect(global.Hub.Client.Get(ctx, client.ObjectKeyFromObject(work), again)).To(Succeed())
		Expect(again.UID).To(Equal(work.UID))
		Expect(again.Generation).To(Equal(work.Generation), "the work was never rewritten")
		after := batchStarts(ctx, west.env.Hub, rollout("west"))(Default)
		Expect(after).To(HaveLen(3))
		for index, at := range before {
			Expect(after).To(HaveKeyWithValue(index, at), "batch %d started once", index)
		}
		for _, c := range westClusters {
			Expect(versionOf(west.env, c)(Default)).To(Equal(harness.To), c)
			Expect(updatesTo(west.env, c, harness.To)).To(Equal(1), "%s updated once", c)
		}

		By("deleting the train deletes the rollouts on the regional hubs")
		deleteTrain(ctx, t)
		Expect(mcuNames(ctx, east.env.Hub)(Default)).To(BeEmpty())
		Expect(mcuNames(ctx, west.env.Hub)(Default)).To(BeEmpty())
	})
})

var _ = Describe("A release train whose operators restart", func() {
	It("starts nothing twice when the global hub's operator and a regional hub's are killed mid-ring", func(ctx SpecContext) {
		eastClusters, err := east.env.JoinFleet(ctx, "restarts", 1)
		Expect(err).NotTo(HaveOccurred())
		westClusters, err := west.env.JoinFleet(ctx, "restarts", 2)
		Expect(err).NotTo(HaveOccurred())
		west.env.Sim.SetBehaviour(westClusters[0], sim.Behaviour{Stall: true})
		first, second := harness.TrainRing("east", "restarts", 0), harness.TrainRing("west", "restarts", 0)
		first.Hubs, second.Hubs = []string{east.name}, []string{west.name}
		t := newTrain("restarts", first, second)
		t.Spec.Releases.Versions = []string{harness.To}
		Expect(global.Hub.Client.Create(ctx, t)).To(Succeed())
		rollout := func(ring string) string { return train.RolloutName(t.Name, ring, harness.To) }

		By("ring east qualifies; ring west holds at its first batch, whose cluster stalls")
		Eventually(ledger(ctx, t)).WithTimeout(settle).Should(Equal([]string{harness.To + " Rolling east:Qualified,west:Rolling"}))
		Eventually(batchStarts(ctx, west.env.Hub, rollout("west"))).WithTimeout(settle).Should(HaveLen(1))
		uids := map[string]types.UID{
			"east": mcuOn(ctx, east.env.Hub, rollout("east"))(Default).UID,
			"west": mcuOn(ctx, west.env.Hub, rollout("west"))(Default).UID,
		}
		works := map[string]*workv1.ManifestWork{}
		for ring, hub := range map[string]string{"east": east.name, "west": west.name} {
			works[ring] = &workv1.ManifestWork{}
			Expect(global.Hub.Client.Get(ctx, types.NamespacedName{Namespace: hub, Name: rollout(ring)}, works[ring])).To(Succeed())
		}
		before := batchStarts(ctx, west.env.Hub, rollout("west"))(Default)

		By("the global hub's operator and hub-west's are killed and start again")
		_, err = global.RestartOperator(true)
		Expect(err).NotTo(HaveOccurred())
		_, err = west.env.RestartOperator(true)
		Expect(err).NotTo(HaveOccurred())
		Consistently(ledger(ctx, t)).WithTimeout(2*time.Second).Should(Equal([]string{harness.To + " Rolling east:Qualified,west:Rolling"}),
			"the restarted train takes the ledger as it stood")

		By("the stalled cluster goes on: the release is delivered, each rollout made once and each batch started once")
		west.env.Sim.SetBehaviour(westClusters[0], sim.Behaviour{})
		Eventually(ledger(ctx, t)).WithTimeout(settle).Should(Equal([]string{harness.To + " Delivered east:Qualified,west:Qualified"}))
		Expect(mcuOn(ctx, east.env.Hub, rollout("east"))(Default).UID).To(Equal(uids["east"]))
		Expect(mcuOn(ctx, west.env.Hub, rollout("west"))(Default).UID).To(Equal(uids["west"]))
		for ring, work := range works {
			again := &workv1.ManifestWork{}
			Expect(global.Hub.Client.Get(ctx, client.ObjectKeyFromObject(work), again)).To(Succeed())
			Expect(again.UID).To(Equal(work.UID), "ring %s's work made once", ring)
			Expect(again.Generation).To(Equal(work.Generation), "ring %s's work never rewritten", ring)
		}
		after := batchStarts(ctx, west.env.Hub, rollout("west"))(Default)
		Expect(after).To(HaveLen(2))
		Expect(after).To(HaveKeyWithValue(1, before[1]), "batch 1 started once")
		for env, clusters := range map[*harness.Env][]string{east.env: eastClusters, west.env: westClusters} {
			for _, c := range clusters {
				Expect(updatesTo(env, c, harness.To)).To(Equal(1), "%s updated once", c)
			}
		}
		deleteTrain(ctx, t)
	})
})

var _ = Describe("A release train that cannot roll out", func() {
	It("says what blocks each ring: no cluster selected on this hub, no namespace on a regional hub", func(ctx SpecContext) {
		nobody := harness.TrainRing("nobody", "no-such-fleet", 0)
		t := newTrain("blocked", nobody)
		t.Spec.Releases.Versions = []string{harness.To}
		Expect(global.Hub.Client.Create(ctx, t)).To(Succeed())
		Eventually(func(g Gomega) []ranv1alpha1.RingStatus { return storedTrain(ctx, t)(g).Status.Rings }).WithTimeout(settle).Should(
			ConsistOf(HaveField("Message", "NoClustersSelected: nothing is applied: the placements and the cluster selector select no ManagedCluster")))

		away := hubRing("away", east.name)
		away.HubNamespace = "no-such-namespace"
		far := newTrain("far", away)
		far.Spec.Releases.Versions = []string{harness.To}
		Expect(global.Hub.Client.Create(ctx, far)).To(Succeed())
		Eventually(func(g Gomega) []ranv1alpha1.RingStatus { return storedTrain(ctx, far)(g).Status.Rings }).WithTimeout(settle).Should(
			ConsistOf(HaveField("Message", And(HavePrefix(east.name+": its ManifestWork is not applied: "), ContainSubstring("no-such-namespace")))))
		deleteTrain(ctx, t)
		deleteTrain(ctx, far)
	})
})
