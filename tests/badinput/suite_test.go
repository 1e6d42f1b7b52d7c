package badinput_test

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/harness/suite"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

// The bad-input suite feeds the operator malformed and hostile ClusterGroupUpgrades on its
// own hub world: each is refused by the API server with a message naming the field, or
// stored and answered by a condition saying precisely what is wrong, and none of them
// starts enforcing anything or makes the operator panic.

func TestBadInput(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Bad input suite")
}

const (
	namespace = "cgu-badinput"
	// fleetLabel labels the suite's clusters; policy is the inform upgrade policy placed on
	// them.
	fleetLabel = "bad"
	policy     = fleetLabel + "-upgrade"
	// elsewhereNS holds a policy of its own, placed on none of the suite's clusters.
	elsewhereNS     = "policies-elsewhere"
	elsewherePolicy = "elsewhere-upgrade"
	settle          = 60 * time.Second
)

// longCluster is a managed cluster whose name has the 63 characters a namespace name allows.
var longCluster = "long-" + strings.Repeat("c", 58)

var fleet *harness.Env

var _ = BeforeSuite(func(ctx SpecContext) {
	fleet = suite.Start(ctx)
	Expect(ensureNamespace(ctx, namespace)).To(Succeed())

	clusters := fleet.MustJoinFleet(ctx, fleetLabel, 3)
	Expect(fleet.Hub.AddClusters(ctx, world.Cluster{Name: longCluster, Labels: map[string]string{"fleet": fleetLabel}})).To(Succeed())
	Expect(fleet.Sim.AddSpokes(sim.SpokeSpec{Name: longCluster, Version: harness.From, Channel: harness.Channel})).To(Succeed())
	// No spoke ever finishes: a rollout that starts by mistake stays visible.
	for _, c := range append(clusters, longCluster) {
		fleet.Sim.SetBehaviour(c, sim.Behaviour{Stall: true})
	}
	fleet.MustPlaceUpgradePolicy(ctx, fleetLabel, 4, settle)

	Expect(fleet.Hub.BindClusterSet(ctx, elsewhereNS)).To(Succeed())
	other := world.UpgradePolicy(elsewhereNS, elsewherePolicy, harness.To, policyv1.Inform)
	Expect(fleet.Hub.PlacePolicy(ctx, other, matchFleet("nobody"))).To(Succeed())
})

// reconcilePanics is the number of reconciles, of any controller in the process, that
// panicked (controller-runtime recovers them and counts them).
func reconcilePanics() (float64, error) {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return 0, err
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_panics_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			total += counterValue(m)
		}
	}
	return total, nil
}

func counterValue(m *dto.Metric) float64 {
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return 0
}

var _ = AfterEach(func() {
	n, err := reconcilePanics()
	Expect(err).NotTo(HaveOccurred())
	Expect(n).To(BeZero(), "reconciles panicked")
})

// ensureNamespace creates a namespace unless it exists.
func ensureNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	return client.IgnoreAlreadyExists(fleet.Hub.Client.Create(ctx, ns))
}

func matchFleet(label string) metav1.LabelSelector {
	return metav1.LabelSelector{MatchLabels: map[string]string{"fleet": label}}
}
