package trains_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/mcu"
	"github.com/cgu-operator/cgu-operator/pkg/train"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/prom"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/world/graphserver"
)

// The releases the suite publishes in the harness's channel after To.
const (
	next  = "4.16.13"
	later = "4.16.14"
)

// publish serves the harness's channel with the given releases after To, each reachable from
// From and from the one before, on the global hub's update service and the regional hubs'.
func publish(releases ...string) {
	GinkgoHelper()
	b := graphserver.NewGraph(harness.Channel).Edge(harness.From, "4.16.11", harness.To).Edge("4.16.11", harness.To)
	prev := harness.To
	for _, r := range releases {
		b = b.Edge(prev, r).Edge(harness.From, r)
		prev = r
	}
	g, err := b.Build()
	Expect(err).NotTo(HaveOccurred())
	for _, e := range []*harness.Env{global, east.env, west.env} {
		Expect(e.Graphs.SetGraph(harness.Channel, g)).To(Succeed())
	}
}

func newTrain(name string, rings ...ranv1alpha1.TrainRing) *ranv1alpha1.ReleaseTrain {
	return &ranv1alpha1.ReleaseTrain{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: ranv1alpha1.ReleaseTrainSpec{
			Releases: ranv1alpha1.TrainReleases{Channel: harness.Channel, CheckInterval: &metav1.Duration{Duration: time.Minute}},
			Rings:    rings,
		},
	}
}

// versionOf returns the version a simulated cluster of env runs: the latest Completed in its
// ClusterVersion history.
func versionOf(env *harness.Env, name string) func(Gomega) string {
	return func(g Gomega) string {
		cv, err := env.Sim.ClusterVersion(name)
		g.Expect(err).NotTo(HaveOccurred())
		for _, h := range cv.Status.History {
			if h.State == configv1.CompletedUpdate {
				return h.Version
			}
		}
		return ""
	}
}

// eventReasons counts the events of a train by reason, each as often as it was recorded: the
// operator records a pass's events once its status is written, so each happens once however
// many passes conflict on the way.
func eventReasons(ctx context.Context, t *ranv1alpha1.ReleaseTrain) func(Gomega) map[string]int {
	return func(g Gomega) map[string]int {
		var list corev1.EventList
		g.Expect(global.Hub.Client.List(ctx, &list, client.InNamespace(t.Namespace))).To(Succeed())
		out := map[string]int{}
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == "ReleaseTrain" && e.InvolvedObject.Name == t.Name {
				out[e.Reason] += occurrences(e)
			}
		}
		return out
	}
}

// occurrences is how many times an event was recorded: a recorder that sees the same event
// again within minutes counts it in the event's series rather than making another.
func occurrences(e corev1.Event) int {
	switch {
	case e.Series != nil:
		return int(e.Series.Count)
	case e.Count > 1:
		return int(e.Count)
	}
	return 1
}

// asked are the clusters among names whose ClusterVersion was asked for an update.
func asked(names []string) []string {
	GinkgoHelper()
	var out []string
	for _, c := range names {
		cv, err := global.Sim.ClusterVersion(c)
		Expect(err).NotTo(HaveOccurred())
		if cv.Spec.DesiredUpdate != nil {
			out = append(out, c)
		}
	}
	return out
}

// deleteTrain deletes a train and waits until it, its rollouts and their ClusterGroupUpgrades
// are gone.
func deleteTrain(ctx context.Context, t *ranv1alpha1.ReleaseTrain) {
	GinkgoHelper()
	Expect(global.Hub.Client.Delete(ctx, t)).To(Succeed())
	Eventually(func(g Gomega) []string {
		var out []string
		var mcus ranv1alpha1.ManagedClustersUpgradeList
		g.Expect(global.Hub.Client.List(ctx, &mcus, client.InNamespace(ns))).To(Succeed())
		var cgus ranv1alpha1.ClusterGroupUpgradeList
		g.Expect(global.Hub.Client.List(ctx, &cgus, client.InNamespace(ns))).To(Succeed())
		for _, o := range append(mcuItems(mcus), cguItems(cgus)...) {
			if strings.HasPrefix(o.GetName(), t.Name+"-") {
				out = append(out, o.GetName())
			}
		}
		return out
	}).WithTimeout(settle).Should(BeEmpty(), "the train's rollouts and their ClusterGroupUpgrades are deleted")
	Eventually(func() error {
		return global.Hub.Client.Get(ctx, client.ObjectKeyFromObject(t), &ranv1alpha1.ReleaseTrain{})
	}).WithTimeout(settle).Should(Satisfy(apierrors.IsNotFound), "the train is gone")
}

func mcuItems(l ranv1alpha1.ManagedClustersUpgradeList) []client.Object {
	var out []client.Object
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out
}

func cguItems(l ranv1alpha1.ClusterGroupUpgradeList) []client.Object {
	var out []client.Object
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out
}

var _ = Describe("A release train on one hub", Ordered, func() {
	It("takes the channel's newest release through three rings, each once the one before qualified", func(ctx SpecContext) {
		canary, err := global.JoinFleet(ctx, "tr-canary", 1)
		Expect(err).NotTo(HaveOccurred())
		early, err := global.JoinFleet(ctx, "tr-early", 2)
		Expect(err).NotTo(HaveOccurred())
		late, err := global.JoinFleet(ctx, "tr-late", 3)
		Expect(err).NotTo(HaveOccurred())
		t := newTrain("three", harness.TrainRing("canary", "tr-canary", time.Hour), harness.TrainRing("early", "tr-early", 30*time.Minute), harness.TrainRing("late", "tr-late", 0))
		Expect(global.Hub.Client.Create(ctx, t)).To(Succeed())

		By("the newest release of the channel enters the canary ring, and soaks there once its cluster runs it")
		Eventually(ledger(ctx, t)).WithTimeout(settle).Should(Equal([]string{harness.To + " Rolling canary:Soaking"}))
		Expect(versionOf(global, canary[0])(Default)).To(Equal(harness.To))
		Expect(mcuNames(ctx, global.Hub)(Default)).To(ContainElement("three-canary-4.16.12"))
		advance(ctx, 59*time.Minute, t)
		Consistently(mcuNames(ctx, global.Hub)).WithTimeout(2*time.Second).ShouldNot(ContainElement("three-early-4.16.12"),
			"ring early waits for the canary ring's hour of soak")

		By("an hour of soak: it qualifies, enters ring early, and soaks there")
		advance(ctx, time.Minute, t)
		Eventually(ledger(ctx, t)).WithTimeout(settle).Should(Equal([]string{harness.To + " Rolling canary:Qualified,early:Soaking"}))
		Consistently(mcuNames(ctx, global.Hub)).WithTimeout(2 * time.Second).ShouldNot(ContainElement("three-late-4.16.12"))

		By("half an hour later, ring late; the release is delivered once its clusters run it")
		advance(ctx, 30*time.Minute, t)
		Eventually(ledger(ctx, t)).WithTimeout(settle).Should(Equal([]string{harness.To + " Delivered canary:Qualified,early:Qualified,late:Qualified"}))
		for _, c := range append(append(canary, early...), late...) {
			Expect(versionOf(global, c)(Default)).To(Equal(harness.To), c)
		}
		st := storedTrain(ctx, t)(Default).Status
		Expect(st.Ledger[0].Rings).To(HaveExactElements(
			And(HaveField("Clusters", 1), HaveField("Complete", 1), HaveField("Failed", 0)),
			And(HaveField("Clusters", 2), HaveField("Complete", 2)),
			And(HaveField("Clusters", 3), HaveField("Complete", 3)),
		))
		Expect(st.Newest).To(Equal(harness.To))
		Eventually(func(g Gomega) []ranv1alpha1.RingStatus { return storedTrain(ctx, t)(g).Status.Rings }).WithTimeout(settle).Should(HaveExactElements(
			And(HaveField("Name", "canary"), HaveField("Release", harness.To), HaveField("Ended", true)),
			And(HaveField("Name", "early"), HaveField("Ended", true)),
			And(HaveField("Name", "late"), HaveField("Rollout", "three-late-4.16.12"), HaveField("Ended", true)),
		))
		Eventually(eventReasons(ctx, t)).Should(And(
			HaveKeyWithValue(train.EventReleaseFound, Equal(1)), HaveKeyWithValue(train.EventReleaseEntered, Equal(3)),
			HaveKeyWithValue(train.EventReleaseQualified, Equal(3)), HaveKeyWithValue(train.EventReleaseDelivered, Equal(1))))

		By("deleting the train deletes its rollouts")
		deleteTrain(ctx, t)
	})

	It("keeps a release in a ring with analysis gates until they judged it, and stops it there when one fails", func(ctx SpecContext) {
		canary, err := global.JoinFleet(ctx, "tg-canary", 2)
		Expect(err).NotTo(HaveOccurred())
		_, err = global.JoinFleet(ctx, "tg-rest", 1)
		Expect(err).NotTo(HaveOccurred())
		global.Sim.SetBehaviour(canary[1], sim.Behaviour{DegradeAfterUpgrade: 0.2})
		metrics, err := global.Sim.ServeMetrics(ctx)
		Expect(err).NotTo(HaveOccurred())
		prometheus, err := prom.StartPrometheus(ctx, prom.PrometheusOptions{Dir: GinkgoT().TempDir(), Targets: []string{metrics}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = prometheus.Stop() })
		first := harness.TrainRing("canary", "tg-canary", 0)
		first.UpgradeStrategy.MaxConcurrency = 2
		first.Rollout = &ranv1alpha1.MCURollout{Analysis: &ranv1alpha1.Analysis{
			Prometheus: ranv1alpha1.AnalysisSource{URL: prometheus.URL()}, OnFailure: ranv1alpha1.AnalysisContinue,
			Gates: []ranv1alpha1.AnalysisGate{{Name: "api-errors", Query: fmt.Sprintf(`%s{cluster=~"{{clusters}}"}`, sim.MetricErrorRatio),
				SuccessCondition: "< 0.05", Interval: "10s", Measurements: 1}},
		}}
		t := newTrain("gated", first, harness.TrainRing("rest", "tg-rest", 0))
		Expect(global.Hub.Client.Create(ctx, t)).To(Succeed())

		By("both canaries run the release before the gate measured them: it soaks, kept out of ring rest")
		Eventually(ledger(ctx, t)).WithTimeout(settle).Should(Equal([]string{harness.To + " Rolling canary:Soaking"}))
		for _, c := range canary {
			Expect(versionOf(global, c)(Default)).To(Equal(harness.To), c)
		}
		Consistently(mcuNames(ctx, global.Hub)).WithTimeout(2*time.Second).ShouldNot(ContainElement("gated-rest-4.16.12"),
			"the soak of 0 has passed, the gate has not judged")

		By("the gate measures ten seconds on the operator's clock later: the degraded canary fails it, and the release stops in ring canary")
		upgrade := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gated-canary-4.16.12"}}
		Eventually(func(g Gomega) []string {
			global.Advance(ctx, 10*time.Second, upgrade)
			return ledger(ctx, t)(g)
		}).WithTimeout(settle).WithPolling(2 * time.Second).Should(Equal([]string{harness.To + " Stopped canary:Failed"}))
		Expect(storedTrain(ctx, t)(Default).Status.Ledger[0].Message).To(Equal("stopped: 1 cluster failed in ring canary, more than its budget of 0"))
		Expect(mcuNames(ctx, global.Hub)(Default)).NotTo(ContainElement("gated-rest-4.16.12"))
		deleteTrain(ctx, t)
	})

	It("stops a release that fails the first ring, spreads it no further there, and lets a newer one through", func(ctx SpecContext) {
		canary, err := global.JoinFleet(ctx, "tf-canary", 2)
		Expect(err).NotTo(HaveOccurred())
		rest, err := global.JoinFleet(ctx, "tf-rest", 2)
		Expect(err).NotTo(HaveOccurred())
		for _, c := range canary {
			global.Sim.SetBehaviour(c, sim.Behaviour{Stall: true})
		}
		// One cluster a batch, a minute each: two batches.
		first := harness.TrainRing("canary", "tf-canary", 0)
		first.UpgradeStrategy.ClusterUpgradeTimeout = &metav1.Duration{Duration: time.Minute}
		t := newTrain("stop", first, harness.TrainRing("rest", "tf-rest", 0))
		Expect(global.Hub.Client.Create(ctx, t)).To(Succeed())

		By("the first canary's upgrade times out: the release stops in the canary ring")
		upgrade := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stop-canary-4.16.12"}}
		Eventually(global.Stored(ctx, upgrade)).WithTimeout(settle).Should(HaveField("Status.State", ranv1alpha1.StateNotCompleted))
		// The rollout is NotCompleted as soon as it enforces; the spoke is asked once the propagator
		// and the policy agent caught up.
		Eventually(func() []string { return asked(canary) }).WithTimeout(settle).Should(HaveLen(1), "one cluster a batch")
		Consistently(func() []string { return asked(canary) }).WithTimeout(2*time.Second).Should(HaveLen(1), "one cluster a batch")
		// Past the first batch's minute, short of the rollout's two.
		global.Advance(ctx, 90*time.Second, upgrade)
		Eventually(ledger(ctx, t)).WithTimeout(settle).Should(Equal([]string{harness.To + " Stopped canary:Failed"}))
		Expect(storedTrain(ctx, t)(Default).Status.Ledger[0].Message).To(Equal("stopped: 1 cluster failed in ring canary, more than its budget of 0"))
		Consistently(mcuNames(ctx, global.Hub)).WithTimeout(2*time.Second).ShouldNot(ContainElement("stop-rest-4.16.12"),
			"a release stopped in ring canary never enters ring rest")
		Eventually(eventReasons(ctx, t)).Should(HaveKeyWithValue(train.EventReleaseFailed, Equal(1)))

		By("the ring's rollout takes the ring's failure budget: it starts no second batch, and ends")
		Eventually(mcuOn(ctx, global.Hub, "stop-canary-4.16.12")).WithTimeout(settle).Should(HaveField("Status.Conditions", ContainElement(And(
			HaveField("Type", ranv1alpha1.MCUConditionInProgress), HaveField("Reason", mcu.ReasonEnded)))))
		Consistently(func() []string { return asked(canary) }).WithTimeout(2*time.Second).Should(HaveLen(1),
			"the second canary is never asked for the stopped release")

		By(next + " appears in the channel: it starts the train, qualifies and passes")
		for _, c := range canary {
			global.Sim.SetBehaviour(c, sim.Behaviour{})
		}
		publish(next)
		advance(ctx, 6*time.Minute, t) // past the train's check interval and the graph cache's five minutes
		Eventually(ledger(ctx, t)).WithTimeout(settle).Should(Equal([]string{
			next + " Delivered canary:Qualified,rest:Qualified",
			harness.To + " Stopped canary:Failed",
		}))
		for _, c := range append(canary, rest...) {
			Expect(versionOf(global, c)(Default)).To(Equal(next), c)
		}
		Expect(mcuNames(ctx, global.Hub)(Default)).NotTo(ContainElement("stop-canary-4.16.12"), "the ended rollout made way")
		deleteTrain(ctx, t)
	})

	It("holds a new release for an approval", func(ctx SpecContext) {
		clusters, err := global.JoinFleet(ctx, "tap", 2)
		Expect(err).NotTo(HaveOccurred())
		t := newTrain("approve", harness.TrainRing("all", "tap", 0))
		t.Spec.Approval = &ranv1alpha1.TrainApproval{Required: true}
		Expect(global.Hub.Client.Create(ctx, t)).To(Succeed())
		Eventually(ledger(ctx, t)).WithTimeout(settle).Should(Equal([]string{next + " AwaitingApproval"}))
		Expect(storedTrain(ctx, t)(Default).Status.Conditions).To(ContainElement(And(
			HaveField("Type", ranv1alpha1.TrainConditionProgressing), HaveField("Reason", ranv1alpha1.TrainReasonAwaitingApproval))))
		Consistently(mcuNames(ctx, global.Hub)).WithTimeout(2 * time.Second).ShouldNot(ContainElement("approve-all-4.16.13"))

		By("approved, it rolls out")
		patch := client.MergeFrom(t.DeepCopy())
		t.Spec.Approval.Approved = []string{next}
		Expect(global.Hub.Client.Patch(ctx, t, patch)).To(Succeed())
		Eventually(ledger(ctx, t)).WithTimeout(settle).Should(Equal([]string{next + " Delivered all:Qualified"}))

		By(later + " appears: it waits for its own approval")
		publish(next, later)
		advance(ctx, 6*time.Minute, t)
		Eventually(ledger(ctx, t)).WithTimeout(settle).Should(Equal([]string{later + " AwaitingApproval", next + " Delivered all:Qualified"}))
		Eventually(eventReasons(ctx, t)).Should(HaveKeyWithValue(train.EventReleaseFound, Equal(2)))
		for _, c := range clusters {
			Expect(versionOf(global, c)(Default)).To(Equal(next), c)
		}
		deleteTrain(ctx, t)
	})
})
