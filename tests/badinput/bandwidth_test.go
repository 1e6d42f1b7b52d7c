package badinput_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A PreCachingConfig's bandwidth budget is checked by the API server: a budget that bounds
// nothing, link capacities without the label that names the links, and capacities that
// are not positive are refused; a budget that is whole is stored.
var _ = Describe("A PreCachingConfig's bandwidth", func() {
	DescribeTable("is refused when malformed, with the field named",
		func(ctx SpecContext, bandwidth, rejected string) {
			seq++
			text := fmt.Sprintf("apiVersion: ran.openshift.io/v1alpha1\nkind: PreCachingConfig\nmetadata:\n  name: bandwidth-%d\n  namespace: %s\nspec:\n  bandwidth:\n%s",
				seq, namespace, bandwidth)
			obj := &unstructured.Unstructured{}
			Expect(utilyaml.Unmarshal([]byte(text), &obj.Object)).To(Succeed())
			err := fleet.Hub.Client.Create(ctx, obj, client.FieldValidation("Strict"))
			if rejected == "" {
				Expect(err).NotTo(HaveOccurred())
				return
			}
			Expect(err).To(MatchError(ContainSubstring(rejected)))
		},
		Entry("an empty budget", "    {}", "spec.bandwidth bounds nothing"),
		Entry("only a link label", "    linkLabel: example.com/rack", "spec.bandwidth bounds nothing"),
		Entry("links without the label", "    links: [{name: rack-a, mbps: 1000}]", "need linkLabel"),
		Entry("a default link capacity without the label", "    registryMbps: 10000\n    defaultLinkMbps: 1000", "need linkLabel"),
		Entry("a registry of zero", "    registryMbps: 0", "spec.bandwidth.registryMbps"),
		Entry("a negative link", "    linkLabel: example.com/rack\n    links: [{name: rack-a, mbps: -1}]", "mbps"),
		Entry("a link named twice", "    linkLabel: example.com/rack\n    links: [{name: rack-a, mbps: 1}, {name: rack-a, mbps: 2}]", "Duplicate value"),
		Entry("a payload that is not a size", "    registryMbps: 10000\n    payloadSize: lots", "payloadSize"),
		Entry("a whole budget", "    registryMbps: 10000\n    linkLabel: example.com/rack\n    links: [{name: rack-a, mbps: 2000}]\n    defaultLinkMbps: 1000\n    lineLabel: example.com/line\n    payloadSize: 16Gi", ""),
	)
})
