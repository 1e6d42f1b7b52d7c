package scale_test

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

// The scale suite checks that a fleet of simulated spokes settles: every cluster's
// compliance reaches the root policy through the real propagator and stays there.

func TestScale(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Scale suite")
}

// fleetSize is the number of simulated clusters; SCALE_CLUSTERS overrides it.
func fleetSize() int {
	if n, err := strconv.Atoi(os.Getenv("SCALE_CLUSTERS")); err == nil && n > 0 {
		return n
	}
	return 1000
}

var _ = Describe("A fleet of simulated spokes", func() {
	It("reaches stable compliance on the root policy", func(ctx SpecContext) {
		log := zap.New(zap.WriteTo(GinkgoWriter))
		hub, err := world.StartHub(ctx, world.Options{Logger: log})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(hub.Stop)
		simulator, err := sim.Start(ctx, hub, sim.Options{Logger: log})
		Expect(err).NotTo(HaveOccurred())

		n := fleetSize()
		start := time.Now()
		clusters := make([]world.Cluster, n)
		spokes := make([]sim.SpokeSpec, n)
		for i := range n {
			name := fmt.Sprintf("sno-%05d", i)
			version := "4.16.10"
			if i%4 == 0 {
				version = "4.16.12"
			}
			clusters[i] = world.Cluster{Name: name, Labels: map[string]string{"fleet": "scale"}}
			spokes[i] = sim.SpokeSpec{Name: name, Version: version, Channel: "stable-4.16"}
		}
		Expect(hub.AddClusters(ctx, clusters...)).To(Succeed())
		Expect(simulator.AddSpokes(spokes...)).To(Succeed())
		joined := time.Since(start)

		Expect(hub.BindClusterSet(ctx, "policies")).To(Succeed())
		placeInformPolicy(ctx, hub)
		want := n - (n+3)/4 // clusters not at 4.16.12
		Eventually(func(g Gomega) {
			compliant, nonCompliant := rootCounts(ctx, g, hub)
			g.Expect(nonCompliant).To(Equal(want))
			g.Expect(compliant).To(Equal(n - want))
		}).WithTimeout(10 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		settled := time.Since(start)
		Consistently(func(g Gomega) {
			compliant, nonCompliant := rootCounts(ctx, g, hub)
			g.Expect(nonCompliant).To(Equal(want))
			g.Expect(compliant).To(Equal(n - want))
		}).WithTimeout(5 * time.Second).WithPolling(time.Second).Should(Succeed())

		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		report := fmt.Sprintf("%d clusters: joined in %s, compliance settled after %s; Go heap %d MiB, peak RSS %s",
			n, joined.Round(time.Second), settled.Round(time.Second), m.HeapAlloc>>20, peakRSS())
		AddReportEntry("scale", report)
		GinkgoWriter.Println(report)
	})
})

// placeInformPolicy places on every cluster an inform policy that holds for clusters whose
// history reports 4.16.12 Completed.
func placeInformPolicy(ctx SpecContext, hub *world.Hub) {
	atTarget := map[string]any{
		"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion", "metadata": map[string]any{"name": "version"},
		"status": map[string]any{"history": []any{map[string]any{"state": "Completed", "version": "4.16.12"}}},
	}
	policy := world.NewPolicy("policies", "at-4-16-12", policyv1.Inform, world.ConfigPolicy{Name: "at-4-16-12", Objects: []map[string]any{atTarget}})
	Expect(hub.PlacePolicy(ctx, policy, metav1.LabelSelector{})).To(Succeed())
}

func rootCounts(ctx SpecContext, g Gomega, hub *world.Hub) (compliant, nonCompliant int) {
	root := &policyv1.Policy{}
	g.Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: "policies", Name: "at-4-16-12"}, root)).To(Succeed())
	for _, s := range root.Status.Status {
		switch s.ComplianceState {
		case policyv1.Compliant:
			compliant++
		case policyv1.NonCompliant:
			nonCompliant++
		}
	}
	return compliant, nonCompliant
}

// peakRSS reads the process's peak resident set size from /proc.
func peakRSS() string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:"))
		}
	}
	return "unknown"
}
