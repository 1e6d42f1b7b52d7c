package api_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var _ = Describe("The samples", Ordered, func() {
	var samples []sample

	BeforeAll(func() {
		var err error
		samples, err = loadSamples()
		Expect(err).NotTo(HaveOccurred())
		Expect(samples).NotTo(BeEmpty())
	})

	It("are accepted by the CRDs with strict field validation and stored as written", func(ctx SpecContext) {
		for _, s := range samples {
			Expect(ensureNamespace(ctx, s.obj.GetNamespace())).To(Succeed())
			Expect(k8s.Create(ctx, s.obj.DeepCopy(), client.FieldValidation("Strict"))).To(Succeed(), "%s", s)

			stored := &unstructured.Unstructured{}
			stored.SetGroupVersionKind(s.obj.GroupVersionKind())
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s.obj), stored)).To(Succeed())
			Expect(firstDifference("spec", asJSON(s.obj.Object["spec"]), asJSON(stored.Object["spec"]))).To(BeEmpty(),
				"%s: the stored object differs from the sample at this path", s)
		}
	})

	// talmSpecFields are the fields of TALM's ClusterGroupUpgrade spec (its API types), as
	// paths; "[]" marks a list's items.
	talmSpecFields := []string{
		"backup", "preCaching", "preCachingConfigRef", "enable", "clusters", "clusterSelector",
		"clusterLabelSelectors", "clusterLabelSelectors[].matchLabels", "clusterLabelSelectors[].matchExpressions",
		"managedPolicies", "manifestWorkTemplates", "blockingCRs", "blockingCRs[].name", "blockingCRs[].namespace",
		"remediationStrategy.canaries", "remediationStrategy.maxConcurrency", "remediationStrategy.timeout",
		"batchTimeoutAction",
		"actions.beforeEnable.addClusterLabels", "actions.beforeEnable.deleteClusterLabels", "actions.beforeEnable.removeClusterLabels",
		"actions.beforeEnable.addClusterAnnotations", "actions.beforeEnable.removeClusterAnnotations",
		"actions.afterCompletion.addClusterLabels", "actions.afterCompletion.deleteClusterLabels", "actions.afterCompletion.removeClusterLabels",
		"actions.afterCompletion.addClusterAnnotations", "actions.afterCompletion.removeClusterAnnotations", "actions.afterCompletion.deleteObjects",
	}

	It("write out every field of TALM's spec in samples/clustergroupupgrade-talm.yaml, as it says", func() {
		schema, err := crdSchema("ran.openshift.io_clustergroupupgrades.yaml")
		Expect(err).NotTo(HaveOccurred())
		specSchema := schema.Properties["spec"]
		set := map[string]bool{}
		for _, s := range samples {
			if s.file == "samples/clustergroupupgrade-talm.yaml" {
				valuePaths("", &specSchema, s.obj.Object["spec"], set)
			}
		}
		var missing []string
		for _, f := range talmSpecFields {
			if !set[f] {
				missing = append(missing, f)
			}
		}
		Expect(missing).To(BeEmpty(), "TALM's fields the sample leaves out")
	})

	DescribeTable("set every spec field of",
		func(kind, crdFile string) {
			schema, err := crdSchema(crdFile)
			Expect(err).NotTo(HaveOccurred())
			specSchema := schema.Properties["spec"]

			declared := map[string]bool{}
			schemaPaths("", &specSchema, declared)
			set := map[string]bool{}
			for _, s := range samples {
				if s.obj.GetKind() == kind {
					valuePaths("", &specSchema, s.obj.Object["spec"], set)
				}
			}
			var unset []string
			for path := range declared {
				if !set[path] {
					unset = append(unset, path)
				}
			}
			Expect(unset).To(BeEmpty(), "no sample sets these %s spec fields", kind)
		},
		Entry("ClusterGroupUpgrade", "ClusterGroupUpgrade", "ran.openshift.io_clustergroupupgrades.yaml"),
		Entry("PreCachingConfig", "PreCachingConfig", "ran.openshift.io_precachingconfigs.yaml"),
		Entry("ImageBasedGroupUpgrade", "ImageBasedGroupUpgrade", "lcm.openshift.io_imagebasedgroupupgrades.yaml"),
	)
})
