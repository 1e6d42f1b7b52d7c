package hubcap_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/operator"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/harness/suite"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

// The hub-cap suite runs the operator with --max-clusters-in-progress, which the controller
// suite's operator leaves off.

func TestHubCap(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Hub-wide cap suite")
}

const (
	capacity = 2
	settle   = 60 * time.Second
)

var fleet *harness.Env

var _ = BeforeSuite(func(ctx SpecContext) {
	log := suite.Logging()
	var err error
	fleet, err = harness.StartWith(ctx, log, func(o *operator.Options) { o.MaxClustersInProgress = capacity })
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(fleet.Hub.Stop()).To(Succeed()) })
})

// inProgress counts the clusters the batch records of every rollout show InProgress.
func inProgress(ctx context.Context) func(Gomega) int {
	return func(g Gomega) int {
		var list ranv1alpha1.ClusterGroupUpgradeBatchList
		g.Expect(fleet.Hub.Client.List(ctx, &list)).To(Succeed())
		n := 0
		for _, b := range list.Items {
			for _, c := range b.Status.Clusters {
				if c.State == ranv1alpha1.ClusterInProgress {
					n++
				}
			}
		}
		return n
	}
}

// gauge reads a gauge without labels from controller-runtime's registry, where the operator
// registers its metrics; -1 when there is none of that name.
func gauge(name string) func(Gomega) float64 {
	return func(g Gomega) float64 {
		families, err := ctrlmetrics.Registry.Gather()
		g.Expect(err).NotTo(HaveOccurred())
		for _, f := range families {
			if f.GetName() == name && len(f.GetMetric()) == 1 {
				return f.GetMetric()[0].GetGauge().GetValue()
			}
		}
		return -1
	}
}

func rollout(name string, clusters []string, policy string) *ranv1alpha1.ClusterGroupUpgrade {
	return &ranv1alpha1.ClusterGroupUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: "cgu-hubcap", Name: name},
		Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
			Clusters: clusters, ManagedPolicies: []string{policy}, Enable: ptr.To(true),
			RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: len(clusters), Timeout: 240},
		},
	}
}

var _ = Describe("The hub-wide cap on clusters under remediation", func() {
	It("holds the clusters beyond the cap, across rollouts, until room is made", func(ctx SpecContext) {
		a := fleet.MustJoinFleet(ctx, "cap-a", 2)
		b := fleet.MustJoinFleet(ctx, "cap-b", 2)
		pa := fleet.MustPlaceUpgradePolicy(ctx, "cap-a", 2, settle)
		pb := fleet.MustPlaceUpgradePolicy(ctx, "cap-b", 2, settle)
		for _, c := range append(append([]string{}, a...), b...) {
			fleet.Sim.SetBehaviour(c, sim.Behaviour{Stall: true})
		}

		By("the first rollout takes the whole cap")
		first := rollout("first", a, pa.Name)
		fleet.MustCreate(ctx, first)
		Eventually(inProgress(ctx)).WithTimeout(settle).Should(Equal(capacity))

		By("the second waits, saying why, and nothing goes over the cap")
		second := rollout("second", b, pb.Name)
		fleet.MustCreate(ctx, second)
		Eventually(fleet.Stored(ctx, second)).WithTimeout(settle).Should(And(
			HaveField("Status.State", ranv1alpha1.StateNotCompleted),
			HaveField("Status.Conditions", ContainElement(And(
				HaveField("Type", ranv1alpha1.ConditionProgressing), HaveField("Reason", ranv1alpha1.ReasonHubCapacityReached)))),
			HaveField("Status.CurrentBatch.Clusters", HaveEach(And(
				HaveField("State", ranv1alpha1.ClusterPending), HaveField("Reason", ranv1alpha1.ReasonHubCapacityReached)))),
		))
		Consistently(inProgress(ctx)).WithTimeout(2 * time.Second).Should(Equal(capacity))

		By("the hub capacity gauges show the cap reached")
		Eventually(gauge("cgu_operator_hub_clusters_in_progress")).WithTimeout(settle).Should(BeEquivalentTo(capacity))
		Expect(gauge("cgu_operator_hub_clusters_in_progress_limit")(Default)).To(BeEquivalentTo(capacity))

		By("one cluster of the first rollout completes: one of the second starts")
		fleet.Sim.SetBehaviour(a[0], sim.Behaviour{})
		Eventually(inProgress(ctx)).WithTimeout(settle).Should(Equal(capacity))
		Eventually(func(g Gomega) int {
			n := 0
			for _, c := range fleet.Stored(ctx, second)(g).Status.CurrentBatch.Clusters {
				if c.State == ranv1alpha1.ClusterInProgress {
					n++
				}
			}
			return n
		}).WithTimeout(settle).Should(Equal(1))
		Consistently(inProgress(ctx)).WithTimeout(2 * time.Second).Should(BeNumerically("<=", capacity))

		By("everything completes once the spokes finish")
		for _, c := range append(append([]string{}, a...), b...) {
			fleet.Sim.SetBehaviour(c, sim.Behaviour{})
		}
		for _, cgu := range []client.Object{first, second} {
			Eventually(fleet.Stored(ctx, cgu.(*ranv1alpha1.ClusterGroupUpgrade))).WithTimeout(settle).Should(
				HaveField("Status.State", ranv1alpha1.StateCompleted))
		}
	})
})
