package sim_test

import (
	"context"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

const policyNS = "policies"

// upgradePolicy is a platform upgrade policy to 4.16.12 in the policies namespace.
func upgradePolicy(name string, action policyv1.RemediationAction) *policyv1.Policy {
	return world.UpgradePolicy(policyNS, name, "4.16.12", action)
}

// placePolicy binds a policy to the clusters that joinFleet labelled with fleet.
func placePolicy(ctx context.Context, p *policyv1.Policy, fleet string) {
	selector := metav1.LabelSelector{MatchLabels: map[string]string{"fleet": fleet}}
	ExpectWithOffset(1, hub.PlacePolicy(ctx, p, selector)).To(Succeed())
}

// joinFleet adds clusters to the hub and a simulated spoke for each.
func joinFleet(ctx context.Context, label string, specs ...sim.SpokeSpec) {
	clusters := make([]world.Cluster, len(specs))
	for i, s := range specs {
		clusters[i] = world.Cluster{Name: s.Name, Labels: map[string]string{"fleet": label}}
	}
	ExpectWithOffset(1, hub.AddClusters(ctx, clusters...)).To(Succeed())
	ExpectWithOffset(1, simulator.AddSpokes(specs...)).To(Succeed())
}

// rootCompliance returns each cluster's compliance as the root policy's status shows it.
func rootCompliance(ctx context.Context, name string) func(Gomega) map[string]policyv1.ComplianceState {
	return func(g Gomega) map[string]policyv1.ComplianceState {
		out, err := hub.Compliance(ctx, policyNS, name)
		g.Expect(err).NotTo(HaveOccurred())
		return out
	}
}
