package clustergroupupgrade_test

import (
	"context"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/yaml"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/testenv"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

// samplePolicy reads a policy sample of samples/policies, renamed for the fleet label and put
// in the policy namespace, with change applied to its one object definition.
func samplePolicy(file, label string, change func(obj map[string]any)) *policyv1.Policy {
	root, err := testenv.Root()
	Expect(err).NotTo(HaveOccurred())
	data, err := os.ReadFile(filepath.Join(root, "samples", "policies", file))
	Expect(err).NotTo(HaveOccurred())
	p := &policyv1.Policy{}
	Expect(yaml.UnmarshalStrict(data, p)).To(Succeed())
	p.Name, p.Namespace = label+"-sample", policyNS
	if change != nil {
		var cp map[string]any
		Expect(yaml.Unmarshal(p.Spec.PolicyTemplates[0].ObjectDefinition.Raw, &cp)).To(Succeed())
		templates, _, _ := unstructured.NestedSlice(cp, "spec", "object-templates")
		change(templates[0].(map[string]any)["objectDefinition"].(map[string]any))
		Expect(unstructured.SetNestedSlice(cp, templates, "spec", "object-templates")).To(Succeed())
		raw, err := yaml.Marshal(cp)
		Expect(err).NotTo(HaveOccurred())
		json, err := yaml.YAMLToJSON(raw)
		Expect(err).NotTo(HaveOccurred())
		p.Spec.PolicyTemplates[0].ObjectDefinition = runtime.RawExtension{Raw: json}
	}
	return p
}

// rollOutSample places a sample policy on clusters labelled fleet=label and rolls it out.
func rollOutSample(ctx context.Context, p *policyv1.Policy, label string, clusters []string) {
	Expect(hub.PlacePolicy(ctx, p, metav1.LabelSelector{MatchLabels: map[string]string{"fleet": label}})).To(Succeed())
	Eventually(rootCompliance(ctx, p.Name)).WithTimeout(settle).Should(HaveLen(len(clusters)))
	cgu := newCGU("cgu-samples", label, clusters, len(clusters), p.Name)
	enableOnCreate(cgu)
	fleet.MustCreate(ctx, cgu)
	Eventually(state(ctx, cgu)).WithTimeout(2 * settle).Should(Equal(ranv1alpha1.StateCompleted))
}

var _ = Describe("The upgrade policy samples", func() {
	It("roll out a z-stream upgrade", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "sample-z", 2)
		rollOutSample(ctx, samplePolicy("clusterversion-z-stream.yaml", "sample-z", nil), "sample-z", clusters)
		for _, c := range clusters {
			Expect(version(c)(Default)).To(Equal("4.16.12"))
		}
	})

	It("roll out a y-stream upgrade with its channel change", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "sample-y", 1)
		rollOutSample(ctx, samplePolicy("clusterversion-y-stream.yaml", "sample-y", nil), "sample-y", clusters)
		Expect(version(clusters[0])(Default)).To(Equal(harness.NextMinor))
		cv, err := simulator.ClusterVersion(clusters[0])
		Expect(err).NotTo(HaveOccurred())
		Expect(cv.Spec.Channel).To(Equal(harness.NextMinorChannel))
	})

	It("roll out an upgrade through the managed-upgrade-operator", func(ctx SpecContext) {
		const label = "sample-muo"
		name := label + "-1"
		Expect(hub.AddClusters(ctx, world.Cluster{Name: name, Labels: map[string]string{"fleet": label}})).To(Succeed())
		Expect(simulator.AddSpokes(sim.SpokeSpec{Name: name, Version: harness.From, Channel: harness.Channel,
			ManagedUpgrade: &sim.ManagedUpgradeBehaviour{}})).To(Succeed())
		p := samplePolicy("upgradeconfig.yaml", label, func(obj map[string]any) {
			// The sample starts on 2026-12-01; the simulated operator runs on real time.
			Expect(unstructured.SetNestedField(obj, time.Now().Add(-time.Minute).UTC().Format(time.RFC3339), "spec", "upgradeAt")).To(Succeed())
		})
		rollOutSample(ctx, p, label, []string{name})
		Expect(version(name)(Default)).To(Equal("4.16.12"))
		_, status, err := simulator.UpgradeConfig(name)
		Expect(err).NotTo(HaveOccurred())
		Expect(status.History).To(ContainElement(And(HaveField("Version", "4.16.12"), HaveField("Phase", sim.UpgradePhaseUpgraded))))
	})
})
