package clustergroupupgrade_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/gates"
	"github.com/cgu-operator/cgu-operator/tests/prom"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

// The analysis gates run against a real Prometheus scraping the simulator's metrics
// endpoint, where each simulated cluster reports its API error ratio, labelled by cluster.
var _ = Describe("Analysis gates", Serial, func() {
	// errorQuery is the error ratio of the clusters measured.
	errorQuery := fmt.Sprintf(`%s{cluster=~"{{clusters}}"}`, sim.MetricErrorRatio)

	// errorRatio is what Prometheus shows of a cluster's error ratio.
	errorRatio := func(ctx SpecContext, p *prom.Prometheus, cluster string) func() (map[string]float64, error) {
		return func() (map[string]float64, error) {
			return prom.Values(ctx, p.URL(), fmt.Sprintf(`%s{cluster=%q}`, sim.MetricErrorRatio, cluster), "cluster")
		}
	}
	// measured moves the operator's clock on by the gates' interval and wakes the rollout,
	// as its timer would, and returns the rollout's state: polled, every poll is the next
	// measurement.
	measured := func(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) ranv1alpha1.UpgradeState {
		return func(g Gomega) ranv1alpha1.UpgradeState {
			advance(ctx, 10*time.Second, cgu)
			return state(ctx, cgu)(g)
		}
	}
	// notes are the notes of the CGU's events of a reason.
	notes := func(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, reason string) func(Gomega) []string {
		return func(g Gomega) []string {
			var list eventsv1.EventList
			g.Expect(hub.Client.List(ctx, &list, client.InNamespace(cgu.Namespace))).To(Succeed())
			var out []string
			for _, e := range list.Items {
				if e.Regarding.Name == cgu.Name && e.Reason == reason {
					out = append(out, e.Note)
				}
			}
			return out
		}
	}
	// batchRecord is the first record of a batch (1-based).
	batchRecord := func(ctx SpecContext, cgu *ranv1alpha1.ClusterGroupUpgrade, index int) func(Gomega) ranv1alpha1.ClusterGroupUpgradeBatchStatus {
		return func(g Gomega) ranv1alpha1.ClusterGroupUpgradeBatchStatus {
			for _, r := range records(ctx, cgu)(g) {
				if r.Spec.Index == index && r.Spec.Part == 0 {
					return r.Status
				}
			}
			return ranv1alpha1.ClusterGroupUpgradeBatchStatus{}
		}
	}
	absolute := func(url string) *ranv1alpha1.Analysis {
		return &ranv1alpha1.Analysis{Prometheus: ranv1alpha1.AnalysisSource{URL: url}, Gates: []ranv1alpha1.AnalysisGate{{
			Name: "api-errors", Query: errorQuery, SuccessCondition: "< 0.05", Interval: "10s", Measurements: 2}}}
	}

	It("refuses before the start a query that does not parse, conditions that contradict and a Secret that is missing, naming each; nothing starts", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "analysis-bad", 2)
		pol := placeUpgradePolicy(ctx, "analysis-bad", 2)
		refused := func(name string, a *ranv1alpha1.Analysis, message string) *ranv1alpha1.ClusterGroupUpgrade {
			cgu := newCGU("cgu-analysis", name, clusters, 1, pol.Name)
			cgu.Spec.Analysis = a
			enableOnCreate(cgu)
			fleet.MustCreate(ctx, cgu)
			Eventually(condition(ctx, cgu, ranv1alpha1.ConditionValidated)).WithTimeout(settle).Should(And(
				HaveField("Status", metav1.ConditionFalse), HaveField("Reason", ranv1alpha1.ReasonInvalidAnalysis),
				HaveField("Message", ContainSubstring(message))))
			Expect(fleet.Stored(ctx, cgu)(Default).Status.StartedAt).To(BeNil())
			Expect(enforcedOn(ctx, cgu, pol.Name)(Default)).To(BeEmpty())
			return cgu
		}
		unparsed := absolute("http://127.0.0.1:1")
		unparsed.Gates[0].Query = `rate(` + errorQuery
		refused("unparsed", unparsed, "spec.analysis cannot run: gate api-errors: the query does not parse as PromQL")

		contradict := absolute("http://127.0.0.1:1")
		contradict.Gates[0].FailureCondition = "> 0.01"
		refused("contradict", contradict,
			`gate api-errors: successCondition "< 0.05" and failureCondition "> 0.01" contradict: a value of 0.03 meets both`)

		missing := absolute("https://thanos.example.com")
		missing.Prometheus.SecretRef = &ranv1alpha1.LocalSecretReference{Name: "thanos-query"}
		cgu := refused("no-secret", missing,
			"the Secret cgu-analysis/thanos-query that spec.analysis.prometheus.secretRef names does not exist")

		By("the Secret made: the rollout is valid at its next look, and starts")
		Expect(hub.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "cgu-analysis", Name: "thanos-query"},
			Data: map[string][]byte{"token": []byte("t0ken")}})).To(Succeed())
		advance(ctx, gates.SecretRecheck, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Status.StartedAt", Not(BeNil())))
		Expect(hub.Client.Delete(ctx, cgu)).To(Succeed()) // its query API is nowhere: it would wait to its deadline
	})

	It("fails the clusters that degrade after their upgrade: the batch ends, the next never starts, status and events name the query and the cluster", func(ctx SpecContext) {
		p := startPrometheus(ctx)
		clusters := joinFleet(ctx, "analysis-abs", 4)
		pol := placeUpgradePolicy(ctx, "analysis-abs", 4)
		bad := clusters[1]
		simulator.SetBehaviour(bad, sim.Behaviour{DegradeAfterUpgrade: 0.2})
		cgu := newCGU("cgu-analysis", "absolute", clusters, 2, pol.Name)
		cgu.Spec.Analysis = absolute(p.URL())
		enableOnCreate(cgu)
		fleet.MustCreate(ctx, cgu)

		By("the first batch upgrades, and Prometheus sees one of its clusters degrade")
		Eventually(version(bad)).WithTimeout(settle).Should(Equal(to))
		Eventually(errorRatio(ctx, p, bad)).WithTimeout(settle).Should(HaveKeyWithValue(bad, 0.2))

		By("the gate fails the degraded cluster; onFailure Abort ends the rollout")
		Eventually(measured(ctx, cgu)).WithTimeout(settle).WithPolling(2 * time.Second).Should(Equal(ranv1alpha1.StateTimedOut))
		Expect(condition(ctx, cgu, ranv1alpha1.ConditionProgressing)(Default)).To(And(
			HaveField("Reason", ranv1alpha1.ReasonClustersFailed),
			HaveField("Message", And(ContainSubstring("Batch 1 failed its analysis and spec.analysis.onFailure is Abort"),
				ContainSubstring("api-errors failed"), ContainSubstring(bad+" missed value < 0.05")))))
		first := batchRecord(ctx, cgu, 1)(Default)
		Expect(first.Clusters).To(ContainElements(
			And(HaveField("Name", bad), HaveField("State", ranv1alpha1.ClusterFailed), HaveField("Reason", ranv1alpha1.ReasonAnalysisFailed)),
			And(HaveField("Name", clusters[0]), HaveField("State", ranv1alpha1.ClusterCompleted))))
		Expect(first.Analysis).NotTo(BeNil())
		Expect(first.Analysis.Gates).To(ConsistOf(And(HaveField("Name", "api-errors"), HaveField("Query", errorQuery),
			HaveField("Phase", ranv1alpha1.AnalysisFailed), HaveField("Clusters", ConsistOf(bad)),
			HaveField("Measurements", ContainElement(And(HaveField("Outcome", ranv1alpha1.AnalysisFailed), HaveField("Value", "0.2")))))))
		Expect(first.EndsRollout).To(BeTrue())

		By("the second batch never started")
		Expect(batchRecord(ctx, cgu, 2)(Default).StartedAt).To(BeNil())
		Consistently(desired(clusters[2])).WithTimeout(2 * time.Second).ShouldNot(Equal(to))
		Expect(notes(ctx, cgu, "AnalysisFailed")(Default)).To(ConsistOf(And(
			ContainSubstring("Batch 1: api-errors failed"), ContainSubstring(bad), ContainSubstring("query "+errorQuery))))
	})

	It("holds the batch while the endpoint is down, inconclusive, never a pass, and goes on once it answers", func(ctx SpecContext) {
		p := startPrometheus(ctx)
		clusters := joinFleet(ctx, "analysis-down", 4)
		pol := placeUpgradePolicy(ctx, "analysis-down", 4)
		cgu := newCGU("cgu-analysis", "down", clusters, 2, pol.Name)
		cgu.Spec.Analysis = absolute(p.URL())
		Expect(p.Down()).To(Succeed())
		enableOnCreate(cgu)
		fleet.MustCreate(ctx, cgu)

		By("the first batch upgrades; its gate cannot measure: inconclusive, the rollout holds with a condition")
		Eventually(version(clusters[1])).WithTimeout(settle).Should(Equal(to))
		Eventually(func(g Gomega) *ranv1alpha1.BatchStatus {
			advance(ctx, 10*time.Second, cgu)
			return fleet.Stored(ctx, cgu)(g).Status.CurrentBatch
		}).WithTimeout(settle).WithPolling(2 * time.Second).Should(HaveField("Analysis", And(Not(BeNil()),
			HaveField("Gates", ConsistOf(And(HaveField("Phase", ranv1alpha1.AnalysisInconclusive),
				HaveField("Message", ContainSubstring("the endpoint gave no answer"))))))))
		Expect(condition(ctx, cgu, ranv1alpha1.ConditionProgressing)(Default)).To(And(
			HaveField("Reason", ranv1alpha1.ReasonAnalysisInconclusive),
			HaveField("Message", ContainSubstring("Batch 1 is analysed before it ends: api-errors is inconclusive"))))
		Expect(fleet.Stored(ctx, cgu)(Default).Status.Waiting).To(And(Not(BeNil()),
			HaveField("Reason", ranv1alpha1.ReasonAnalysisInconclusive), HaveField("Batch", 1)))
		for range 3 {
			advance(ctx, 10*time.Second, cgu)
		}
		Consistently(desired(clusters[2])).WithTimeout(2 * time.Second).ShouldNot(Equal(to))
		Expect(state(ctx, cgu)(Default)).To(Equal(ranv1alpha1.StateNotCompleted))

		By("the endpoint back: both batches pass their gate and the rollout completes")
		Expect(p.Up(ctx)).To(Succeed())
		Eventually(errorRatio(ctx, p, clusters[0])).WithTimeout(settle).Should(HaveKey(clusters[0]))
		Eventually(measured(ctx, cgu)).WithTimeout(2 * settle).WithPolling(2 * time.Second).Should(Equal(ranv1alpha1.StateCompleted))
		Expect(batchRecord(ctx, cgu, 1)(Default).Analysis.Gates).To(ConsistOf(And(HaveField("Phase", ranv1alpha1.AnalysisPassed),
			HaveField("Conclusive", 2), HaveField("Inconclusives", BeNumerically(">=", 1)))))
		Expect(events(ctx, cgu)(Default)).To(And(HaveKeyWithValue("AnalysisPassed", 2), HaveKeyWithValue("AnalysisInconclusive", 1)))
	})

	DescribeTable("compares the upgraded clusters with those not upgraded yet",
		func(ctx SpecContext, label, tolerance string, fails bool) {
			p := startPrometheus(ctx)
			clusters := joinFleet(ctx, label, 6)
			pol := placeUpgradePolicy(ctx, label, 6)
			for _, c := range clusters {
				// Healthy clusters report 0.010 to 0.015; every upgraded one 0.03.
				simulator.SetBehaviour(c, sim.Behaviour{DegradeAfterUpgrade: 0.03})
			}
			cgu := newCGU("cgu-analysis", label, clusters, 3, pol.Name)
			cgu.Spec.Analysis = &ranv1alpha1.Analysis{Prometheus: ranv1alpha1.AnalysisSource{URL: p.URL()}, Gates: []ranv1alpha1.AnalysisGate{{
				Name: "vs-baseline", Query: errorQuery, Mode: ranv1alpha1.AnalysisComparison, Interval: "10s", Measurements: 1,
				Comparison: &ranv1alpha1.ComparisonTest{HigherIsWorse: ptr.To(true), Tolerance: tolerance, MinSamples: 3}}}}
			enableOnCreate(cgu)
			fleet.MustCreate(ctx, cgu)
			Eventually(version(clusters[2])).WithTimeout(settle).Should(Equal(to))
			for _, c := range clusters[:3] {
				Eventually(errorRatio(ctx, p, c)).WithTimeout(settle).Should(HaveKeyWithValue(c, 0.03))
			}
			if fails {
				By("beyond the tolerance: every upgraded cluster fails, the rollout ends")
				Eventually(measured(ctx, cgu)).WithTimeout(settle).WithPolling(2 * time.Second).Should(Equal(ranv1alpha1.StateTimedOut))
				Expect(batchRecord(ctx, cgu, 1)(Default).Analysis.Gates).To(ConsistOf(And(HaveField("Phase", ranv1alpha1.AnalysisFailed),
					HaveField("Message", ContainSubstring("the upgraded clusters are worse than the baseline (Mann-Whitney U 9.0")),
					HaveField("Measurements", ConsistOf(And(HaveField("Value", "0.03"), HaveField("Baseline", Not(BeEmpty()))))))))
				Expect(batchRecord(ctx, cgu, 1)(Default).Clusters).To(HaveEach(HaveField("State", ranv1alpha1.ClusterFailed)))
				Expect(batchRecord(ctx, cgu, 2)(Default).StartedAt).To(BeNil())
				return
			}
			By("within the tolerance: the batch passes; the last batch, with no baseline left, skips the comparison")
			Eventually(measured(ctx, cgu)).WithTimeout(2 * settle).WithPolling(2 * time.Second).Should(Equal(ranv1alpha1.StateCompleted))
			Expect(batchRecord(ctx, cgu, 1)(Default).Analysis.Gates).To(ConsistOf(HaveField("Phase", ranv1alpha1.AnalysisPassed)))
			Expect(batchRecord(ctx, cgu, 2)(Default).Analysis.Gates).To(ConsistOf(And(HaveField("Phase", ranv1alpha1.AnalysisSkipped),
				HaveField("Message", ContainSubstring("0 not upgraded yet")))))
			Expect(events(ctx, cgu)(Default)).To(And(HaveKeyWithValue("AnalysisPassed", 1), HaveKeyWithValue("AnalysisSkipped", 1)))
		},
		Entry("worse than the baseline beyond a tolerance of 0", "analysis-worse", "0", true),
		Entry("worse, but within a tolerance of 0.05", "analysis-within", "0.05", false),
	)
})
