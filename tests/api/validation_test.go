package api_test

import (
	"fmt"
	"strings"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

const validationNS = "validation"

var nameSeq atomic.Int64

// cguYAML is a valid ClusterGroupUpgrade that each case changes in one place.
func cguYAML(name, spec string) *unstructured.Unstructured {
	return fromYAML(fmt.Sprintf(`
apiVersion: ran.openshift.io/v1alpha1
kind: ClusterGroupUpgrade
metadata:
  name: %s
  namespace: %s
spec:
%s`, name, validationNS, spec))
}

func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, nameSeq.Add(1))
}

var _ = Describe("ClusterGroupUpgrade validation", func() {
	BeforeEach(func(ctx SpecContext) {
		Expect(ensureNamespace(ctx, validationNS)).To(Succeed())
	})

	DescribeTable("rejects an invalid spec with a message naming the field",
		func(ctx SpecContext, spec, message string) {
			obj := cguYAML(uniqueName("invalid"), spec)
			err := k8s.Create(ctx, obj, client.FieldValidation("Strict"))
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(message))
		},
		Entry("negative maxConcurrency", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: -1}`,
			"spec.remediationStrategy.maxConcurrency must not be negative"),
		Entry("an unknown rollout mode", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 2, mode: Sideways}`,
			`spec.remediationStrategy.mode: Unsupported value: "Sideways"`),
		Entry("progressive steps and a factor", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 2, mode: Progressive, progressive: {steps: [1], factor: 2}}`,
			"spec.remediationStrategy.progressive takes steps or a factor, not both"),
		Entry("a zero progressive step", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 2, mode: Progressive, progressive: {steps: [0]}}`,
			"spec.remediationStrategy.progressive.steps must be positive counts or percentages up to 100% such as 5%"),
		Entry("a progressive step that is not a percentage", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 2, mode: Progressive, progressive: {steps: ["5 percent"]}}`,
			"spec.remediationStrategy.progressive.steps must be positive counts or percentages up to 100% such as 5%"),
		Entry("a progressive step above 100%", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 2, mode: Progressive, progressive: {steps: ["150%"]}}`,
			"spec.remediationStrategy.progressive.steps must be positive counts or percentages up to 100% such as 5%"),
		Entry("a growth factor of one", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 2, mode: Progressive, progressive: {factor: 1}}`,
			"spec.remediationStrategy.progressive.factor"),
		Entry("an unknown onUnhealthy", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 2, mode: Progressive, progressive: {onUnhealthy: Ignore}}`,
			`spec.remediationStrategy.progressive.onUnhealthy: Unsupported value: "Ignore"`),
		Entry("progressive without its mode", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 2, mode: Window, progressive: {factor: 2}}`,
			"spec.remediationStrategy.progressive is set only with mode Progressive"),
		Entry("an analysis query without {{clusters}}", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  analysis: {prometheus: {url: "https://thanos.example.com"}, gates: [{name: errors, query: "up", successCondition: "< 1"}]}`,
			"the query must contain {{clusters}}, which stands for the clusters measured"),
		Entry("an Absolute gate without a success condition", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  analysis: {prometheus: {url: "https://thanos.example.com"}, gates: [{name: errors, query: 'x{cluster=~"{{clusters}}"}'}]}`,
			"an Absolute gate needs successCondition, failureCondition or both; a Comparison gate takes neither"),
		Entry("a Comparison gate with a success condition", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  analysis: {prometheus: {url: "https://thanos.example.com"}, gates: [{name: c, mode: Comparison, query: 'x{cluster=~"{{clusters}}"}', successCondition: "< 1"}]}`,
			"an Absolute gate needs successCondition, failureCondition or both; a Comparison gate takes neither"),
		Entry("a Comparison gate with a failure condition", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  analysis: {prometheus: {url: "https://thanos.example.com"}, gates: [{name: c, mode: Comparison, query: 'x{cluster=~"{{clusters}}"}', failureCondition: "> 1"}]}`,
			"an Absolute gate needs successCondition, failureCondition or both; a Comparison gate takes neither"),
		Entry("comparison settings on an Absolute gate", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  analysis: {prometheus: {url: "https://thanos.example.com"}, gates: [{name: e, query: 'x{cluster=~"{{clusters}}"}', successCondition: "< 1", comparison: {minSamples: 5}}]}`,
			"comparison is only for a gate of mode Comparison"),
		Entry("a failure limit a gate can never exceed", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  analysis: {prometheus: {url: "https://thanos.example.com"}, gates: [{name: e, query: 'x{cluster=~"{{clusters}}"}', successCondition: "< 1", measurements: 2, failureLimit: 2}]}`,
			"failureLimit must be below measurements: the gate could never fail"),
		Entry("a success condition that is no comparison", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  analysis: {prometheus: {url: "https://thanos.example.com"}, gates: [{name: e, query: 'x{cluster=~"{{clusters}}"}', successCondition: "== 1"}]}`,
			"spec.analysis.gates[0].successCondition: Invalid value"),
		Entry("an interval below 5s", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  analysis: {prometheus: {url: "https://thanos.example.com"}, gates: [{name: e, query: 'x{cluster=~"{{clusters}}"}', successCondition: "< 1", interval: 1s}]}`,
			"interval must be a duration of at least 5s"),
		Entry("an alpha above 0.5", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  analysis: {prometheus: {url: "https://thanos.example.com"}, gates: [{name: c, mode: Comparison, query: 'x{cluster=~"{{clusters}}"}', comparison: {alpha: "0.9"}}]}`,
			"alpha must be above 0 and at most 0.5"),
		Entry("an analysis URL that is no URL", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  analysis: {prometheus: {url: "thanos:9090"}, gates: [{name: e, query: 'x{cluster=~"{{clusters}}"}', successCondition: "< 1"}]}`,
			"spec.analysis.prometheus.url must be an http or https URL"),
		Entry("two gates of one name", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  analysis: {prometheus: {url: "https://thanos.example.com"}, gates: [{name: e, query: 'x{cluster=~"{{clusters}}"}', successCondition: "< 1"}, {name: e, query: 'y{cluster=~"{{clusters}}"}', successCondition: "< 1"}]}`,
			"spec.analysis.gates[1]: Duplicate value"),
		Entry("a spread with the Window mode", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 2, mode: Window, spread: [{labelKey: site, maxPerBatch: 1}]}`,
			"spec.remediationStrategy.spread and antiAffinity shape batches: they are set only with mode Batches"),
		Entry("anti-affinity with the Progressive mode", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 2, mode: Progressive, antiAffinity: [pair]}`,
			"spec.remediationStrategy.spread and antiAffinity shape batches: they are set only with mode Batches"),
		Entry("a spread of zero per batch", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 2, spread: [{labelKey: site, maxPerBatch: 0}]}`,
			"spec.remediationStrategy.spread[0].maxPerBatch: Invalid value: 0"),
		Entry("a spread key twice", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 2, spread: [{labelKey: site, maxPerBatch: 1}, {labelKey: site, maxPerBatch: 2}]}`,
			`spec.remediationStrategy.spread[1]: Duplicate value: {"labelKey":"site"}`),
		Entry("a key both spread and anti-affine", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 2, spread: [{labelKey: site, maxPerBatch: 2}], antiAffinity: [site]}`,
			"spec.remediationStrategy.antiAffinity names a label key spread also names"),
		Entry("a spread key that is no label key", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 2, spread: [{labelKey: "site name", maxPerBatch: 1}]}`,
			"spec.remediationStrategy.spread[].labelKey must be a valid label key"),
		Entry("an anti-affinity key that is no label key", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 2, antiAffinity: ["-pair"]}`,
			"spec.remediationStrategy.antiAffinity: every key must be a valid label key"),
		Entry("maxConcurrency that is not a number", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: two}`,
			"spec.remediationStrategy.maxConcurrency: Invalid value"),
		Entry("missing maxConcurrency", `
  clusters: [a]
  remediationStrategy: {timeout: 60}`,
			"spec.remediationStrategy.maxConcurrency: Required value"),
		Entry("missing remediationStrategy", `
  clusters: [a]`,
			"spec.remediationStrategy: Required value"),
		Entry("negative timeout", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1, timeout: -5}`,
			"spec.remediationStrategy.timeout must not be negative"),
		Entry("timeout beyond ten years", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1, timeout: 999999999}`,
			"spec.remediationStrategy.timeout must be at most 5256000 minutes"),
		Entry("unknown batchTimeoutAction", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  batchTimeoutAction: abort`,
			"spec.batchTimeoutAction must be Continue or Abort"),
		Entry("a failure budget that is neither a count nor a percentage", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  maxFailures: some`,
			"spec.maxFailures must be a non-negative count or a percentage such as 10%"),
		Entry("a negative failure budget", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  maxFailures: -1`,
			"spec.maxFailures must be a non-negative count or a percentage such as 10%"),
		Entry("a maintenance window starting at no time of day", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  maintenanceWindows: {windows: [{start: "25:00", duration: 4h}]}`,
			"spec.maintenanceWindows.windows[0].start"),
		Entry("accepted risks without path validation", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  upgradeChecks: {acceptRisks: [SRIOVFirmware]}`,
			"spec.upgradeChecks.acceptRisks and allowNotRecommended need pathValidation: true"),
		Entry("not recommended updates allowed without path validation", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  upgradeChecks: {allowNotRecommended: true}`,
			"spec.upgradeChecks.acceptRisks and allowNotRecommended need pathValidation: true"),
		Entry("an update service that is not a URL", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  upgradeChecks: {pathValidation: true, updateService: "osus.example.com"}`,
			"spec.upgradeChecks.updateService"),
		Entry("an empty cluster name", `
  clusters: [a, ""]
  remediationStrategy: {maxConcurrency: 1}`,
			"spec.clusters must not contain an empty name"),
		Entry("an empty canary name", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1, canaries: [""]}`,
			"spec.remediationStrategy.canaries must not contain an empty name"),
		Entry("an empty managed policy name", `
  clusters: [a]
  managedPolicies: [p1, ""]
  remediationStrategy: {maxConcurrency: 1}`,
			"spec.managedPolicies must not contain an empty name"),
		Entry("an empty ManifestWork template name", `
  clusters: [a]
  manifestWorkTemplates: [""]
  remediationStrategy: {maxConcurrency: 1}`,
			"spec.manifestWorkTemplates must not contain an empty name"),
		Entry("a blocking CR without a name", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  blockingCRs: [{namespace: default}]`,
			"spec.blockingCRs[].name must not be empty"),
		Entry("a preCachingConfigRef with an empty name", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  preCachingConfigRef: {name: ""}`,
			"spec.preCachingConfigRef.name must not be empty"),
		Entry("a preCachingConfigRef with a namespace and no name", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  preCachingConfigRef: {namespace: ztp}`,
			"spec.preCachingConfigRef.namespace needs spec.preCachingConfigRef.name"),
		Entry("a label selector with an unknown operator", `
  clusterLabelSelectors: [{matchLabels: {site: a}}, {matchExpressions: [{key: fleet, operator: Near, values: [a]}]}]
  remediationStrategy: {maxConcurrency: 1}`,
			`spec.clusterLabelSelectors[1].matchExpressions[0].operator: Unsupported value: "Near": supported values: "In", "NotIn", "Exists", "DoesNotExist"`),
		Entry("a label selector In without values", `
  clusterLabelSelectors: [{matchExpressions: [{key: fleet, operator: In}]}]
  remediationStrategy: {maxConcurrency: 1}`,
			"spec.clusterLabelSelectors[0].matchExpressions[0]: Invalid value: values must not be empty for operator In or NotIn"),
		Entry("a label selector Exists with values", `
  clusterLabelSelectors: [{matchExpressions: [{key: fleet, operator: Exists, values: [a]}]}]
  remediationStrategy: {maxConcurrency: 1}`,
			"spec.clusterLabelSelectors[0].matchExpressions[0]: Invalid value: values must be empty for operator Exists or DoesNotExist"),
		Entry("a label key with a space", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  actions: {afterCompletion: {addClusterLabels: {"ztp done": ""}}}`,
			"spec.actions.afterCompletion.addClusterLabels: Invalid value: every key must be a valid label key: an optional DNS subdomain prefix"),
		Entry("a label key with a bad prefix", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  actions: {beforeEnable: {addClusterLabels: {"Example.COM/x": "y"}}}`,
			"spec.actions.beforeEnable.addClusterLabels: Invalid value: every key must be a valid label key"),
		Entry("a label value with a slash", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  actions: {afterCompletion: {addClusterLabels: {upgraded: "4.18/ok"}}}`,
			"spec.actions.afterCompletion.addClusterLabels.upgraded: Invalid value: \"4.18/ok\": spec.actions.afterCompletion.addClusterLabels.upgraded in body should match"),
		Entry("a label value of 64 characters", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  actions: {afterCompletion: {addClusterLabels: {upgraded: "`+strings.Repeat("v", 64)+`"}}}`,
			"spec.actions.afterCompletion.addClusterLabels.upgraded: Too long: may not be more than 63 bytes"),
		Entry("a deprecated deleteClusterLabels key ending in a dash", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  actions: {afterCompletion: {deleteClusterLabels: {"ztp-running-": ""}}}`,
			"spec.actions.afterCompletion.deleteClusterLabels: Invalid value: every key must be a valid label key"),
		Entry("a label to remove that is no key", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  actions: {afterCompletion: {removeClusterLabels: ["ztp running"]}}`,
			"spec.actions.afterCompletion.removeClusterLabels[0]: Invalid value: \"ztp running\""),
		Entry("an annotation key with two slashes", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  actions: {beforeEnable: {addClusterAnnotations: {"a/b/c": "any value / at all"}}}`,
			"spec.actions.beforeEnable.addClusterAnnotations: Invalid value: every key must be a valid annotation key"),
		Entry("an annotation to remove of 318 characters", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  actions: {beforeEnable: {removeClusterAnnotations: ["`+strings.Repeat("a", 318)+`"]}}`,
			"spec.actions.beforeEnable.removeClusterAnnotations[0]: Too long: may not be more than 317 bytes"),
		Entry("65 labels to add", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  actions: {afterCompletion: {addClusterLabels: {`+manyLabels(65)+`}}}`,
			"spec.actions.afterCompletion.addClusterLabels: Too many: 65: must have at most 64 items"),
		Entry("a misspelt field", `
  clusters: [a]
  remediationStrategy: {maxConcurency: 1}`,
			`unknown field "spec.remediationStrategy.maxConcurency"`),
		Entry("clusters that are not a list", `
  clusters: a
  remediationStrategy: {maxConcurrency: 1}`,
			"spec.clusters: Invalid value"),
	)

	It("rejects a ClusterGroupUpgrade that blocks itself", func(ctx SpecContext) {
		obj := cguYAML("blocks-itself", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  blockingCRs: [{name: blocks-itself}]`)
		err := k8s.Create(ctx, obj)
		Expect(err).To(MatchError(ContainSubstring("spec.blockingCRs must not name the ClusterGroupUpgrade itself")))
	})

	DescribeTable("accepts what TALM accepts",
		func(ctx SpecContext, spec string) {
			Expect(k8s.Create(ctx, cguYAML(uniqueName("accepted"), spec), client.FieldValidation("Strict"))).To(Succeed())
		},
		Entry("maxConcurrency 0 (one batch)", `
  clusters: [a, b]
  remediationStrategy: {maxConcurrency: 0}`),
		Entry("a spread and an anti-affinity key with the default mode (an addition)", `
  clusters: [a, b, c]
  remediationStrategy: {maxConcurrency: 2, spread: [{labelKey: site, maxPerBatch: 1}, {labelKey: example.com/region, maxPerBatch: 3}], antiAffinity: [pair]}`),
		Entry("analysis gates, absolute and comparison (an addition)", `
  clusters: [a, b, c]
  remediationStrategy: {maxConcurrency: 1}
  analysis:
    prometheus: {url: "https://rbac-query-proxy.open-cluster-management-observability.svc:8443", secretRef: {name: thanos}}
    onFailure: Continue
    gates:
    - {name: api-errors, query: 'cluster:apiserver_request_error_ratio:rate5m{cluster=~"{{clusters}}"}', successCondition: "< 0.05", failureCondition: ">= 0.1", interval: 2m, measurements: 5, failureLimit: 1}
    - {name: restarts, query: 'x{cluster=~"{{clusters}}"}', failureCondition: "> 3"}
    - {name: vs-baseline, mode: Comparison, query: 'x{cluster=~"{{clusters}}"}', comparison: {higherIsWorse: true, tolerance: "0.01", alpha: ".05", minSamples: 10}}`),
		Entry("a spread with mode Batches stated (an addition)", `
  clusters: [a, b, c]
  remediationStrategy: {maxConcurrency: 2, mode: Batches, antiAffinity: [pair]}`),
		Entry("the Window mode (an addition)", `
  clusters: [a, b, c]
  remediationStrategy: {maxConcurrency: 2, mode: Window}`),
		Entry("the Progressive mode with its default growth (an addition)", `
  clusters: [a, b, c]
  remediationStrategy: {maxConcurrency: 2, mode: Progressive}`),
		Entry("the Progressive mode with stated steps", `
  clusters: [a, b, c]
  remediationStrategy: {maxConcurrency: 2, mode: Progressive, progressive: {steps: [1, "0.5%", "25%", "100%"], onUnhealthy: Stop}}`),
		Entry("the Progressive mode with a factor", `
  clusters: [a, b, c]
  remediationStrategy: {maxConcurrency: 2, mode: Progressive, progressive: {factor: 4, onUnhealthy: Reset}}`),
		Entry("timeout 0 (the default)", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1, timeout: 0}`),
		Entry("maxConcurrency above the cluster count", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 500}`),
		Entry("no clusters and no policies yet", `
  remediationStrategy: {maxConcurrency: 1}`),
		Entry("an explicit empty batchTimeoutAction", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  batchTimeoutAction: ""`),
		Entry("an empty preCachingConfigRef and actions", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  preCachingConfigRef: {}
  actions: {}`),
		Entry("upgrade checks with accepted risks", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  upgradeChecks: {pathValidation: true, acceptRisks: [SRIOVFirmware], updateService: "https://osus.example.com/api/upgrades_info/v1/graph"}`),
		Entry("a preCachingConfigRef with a name and no namespace", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  preCachingConfigRef: {name: settings}`),
		Entry("cluster actions with the labels ZTP and people write, 64 of them at most", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  actions:
    beforeEnable:
      addClusterLabels: {ztp-running: "", "example.com/upgrade-wave": "wave_2.a", `+manyLabels(62)+`}
      addClusterAnnotations: {"import.open-cluster-management.io/disable-auto-import": "true", "Example.COM/Note": "any text / at all"}
    afterCompletion:
      addClusterLabels: {ztp-done: ""}
      deleteClusterLabels: {ztp-running: ""}
      removeClusterLabels: [ztp-running, "example.com/upgrade-wave"]
      removeClusterAnnotations: ["import.open-cluster-management.io/disable-auto-import", "Example.COM/Note"]`),
		Entry("label selectors with every operator", `
  clusterLabelSelectors:
  - matchLabels: {common: "true"}
    matchExpressions:
    - {key: a, operator: In, values: [x]}
    - {key: b, operator: NotIn, values: [v, w]}
    - {key: c, operator: Exists}
    - {key: d, operator: DoesNotExist, values: []}
  remediationStrategy: {maxConcurrency: 1}`),
		Entry("duplicate clusters, canaries and managed policies, as generated lists have them (TALM accepts them)", `
  clusters: [a, b, a]
  managedPolicies: [p1, p2, p1]
  remediationStrategy: {maxConcurrency: 1, canaries: [a, a]}`),
		Entry("300 label selectors of 50 requirements each, and 2,000 blocking CRs (TALM sets no cap)", `
  clusterLabelSelectors: [`+strings.Repeat("{matchExpressions: ["+strings.Repeat("{key: a, operator: In, values: [x]}, ", 49)+"{key: b, operator: Exists}]}, ", 299)+`{matchLabels: {a: b}}]
  blockingCRs: [`+strings.Repeat("{name: other, namespace: default}, ", 1999)+`{name: last}]
  remediationStrategy: {maxConcurrency: 1}`),
		Entry("empty upgrade checks", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  upgradeChecks: {}`),
	)

	It("accepts a blocking CR of the same name in another namespace", func(ctx SpecContext) {
		obj := cguYAML("same-name", `
  clusters: [a]
  remediationStrategy: {maxConcurrency: 1}
  blockingCRs: [{name: same-name, namespace: elsewhere}]`)
		Expect(k8s.Create(ctx, obj)).To(Succeed())
	})
})

var _ = Describe("ClusterGroupUpgrade defaults", func() {
	It("applies the documented defaults", func(ctx SpecContext) {
		Expect(ensureNamespace(ctx, validationNS)).To(Succeed())
		cgu := &ranv1alpha1.ClusterGroupUpgrade{
			ObjectMeta: metav1.ObjectMeta{Name: "defaults", Namespace: validationNS},
			Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
				Clusters:            []string{"a"},
				RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: 1},
				Actions:             ranv1alpha1.Actions{AfterCompletion: &ranv1alpha1.AfterCompletion{}},
			},
		}
		Expect(k8s.Create(ctx, cgu)).To(Succeed())

		got := &ranv1alpha1.ClusterGroupUpgrade{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cgu), got)).To(Succeed())
		Expect(got.Spec.Enable).To(Equal(ptr.To(true)))
		Expect(got.Spec.RemediationStrategy.Timeout).To(Equal(ranv1alpha1.DefaultTimeoutMinutes))
		Expect(got.Spec.PreCaching).To(BeFalse())
		Expect(got.Spec.Backup).To(BeFalse())
		Expect(got.Spec.Actions.AfterCompletion.DeleteObjects).To(Equal(ptr.To(true)))
		Expect(got.Spec.BatchTimeoutAction).To(BeEmpty(), "an absent batchTimeoutAction stays absent and means Continue")
	})

	It("keeps explicit values over defaults", func(ctx SpecContext) {
		Expect(ensureNamespace(ctx, validationNS)).To(Succeed())
		cgu := &ranv1alpha1.ClusterGroupUpgrade{
			ObjectMeta: metav1.ObjectMeta{Name: "explicit", Namespace: validationNS},
			Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
				Clusters:            []string{"a"},
				Enable:              ptr.To(false),
				RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: 1, Timeout: 30},
				Actions: ranv1alpha1.Actions{AfterCompletion: &ranv1alpha1.AfterCompletion{
					DeleteObjects: ptr.To(false),
				}},
			},
		}
		Expect(k8s.Create(ctx, cgu)).To(Succeed())

		got := &ranv1alpha1.ClusterGroupUpgrade{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cgu), got)).To(Succeed())
		Expect(got.Spec.Enable).To(Equal(ptr.To(false)))
		Expect(got.Spec.RemediationStrategy.Timeout).To(Equal(30))
		Expect(got.Spec.Actions.AfterCompletion.DeleteObjects).To(Equal(ptr.To(false)))
	})
})

// manyLabels writes n labels of a YAML flow map.
func manyLabels(n int) string {
	labels := make([]string, n)
	for i := range labels {
		labels[i] = fmt.Sprintf("l%d: v", i)
	}
	return strings.Join(labels, ", ")
}

var _ = Describe("FleetFreeze validation", func() {
	It("refuses a freeze that does not say why, and accepts a lifted one without a reason", func(ctx SpecContext) {
		for _, reason := range []string{"", "   "} {
			ff := &ranv1alpha1.FleetFreeze{ObjectMeta: metav1.ObjectMeta{Name: uniqueName("freeze")},
				Spec: ranv1alpha1.FleetFreezeSpec{Frozen: true, Reason: reason}}
			err := k8s.Create(ctx, ff)
			Expect(err).To(HaveOccurred(), "reason %q", reason)
			Expect(err.Error()).To(ContainSubstring("spec.reason must say why the fleet is frozen"))
		}
		lifted := &ranv1alpha1.FleetFreeze{ObjectMeta: metav1.ObjectMeta{Name: uniqueName("freeze")}}
		Expect(k8s.Create(ctx, lifted, client.FieldValidation("Strict"))).To(Succeed())
	})

	DescribeTable("refuses alert queries it cannot run, naming the field",
		func(ctx SpecContext, alerts ranv1alpha1.FreezeAlerts, want string) {
			ff := &ranv1alpha1.FleetFreeze{ObjectMeta: metav1.ObjectMeta{Name: uniqueName("freeze")}, Spec: ranv1alpha1.FleetFreezeSpec{Alerts: &alerts}}
			err := k8s.Create(ctx, ff)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("no query", ranv1alpha1.FreezeAlerts{Prometheus: ranv1alpha1.PrometheusSource{URL: "https://thanos.example"}},
			"spec.alerts.queries: Required value"),
		Entry("a URL that is not http or https", ranv1alpha1.FreezeAlerts{Prometheus: ranv1alpha1.PrometheusSource{URL: "thanos:9090"}, Queries: []string{"up == 0"}},
			"the Prometheus url must be an http or https URL"),
		Entry("an interval under five seconds", ranv1alpha1.FreezeAlerts{Prometheus: ranv1alpha1.PrometheusSource{URL: "https://thanos.example"}, Queries: []string{"up == 0"}, Interval: "1s"},
			"spec.alerts.interval must be a duration of at least 5s"),
		Entry("an interval that is no duration", ranv1alpha1.FreezeAlerts{Prometheus: ranv1alpha1.PrometheusSource{URL: "https://thanos.example"}, Queries: []string{"up == 0"}, Interval: "often"},
			"spec.alerts.interval must be a duration of at least 5s"),
		Entry("a secret without a name", ranv1alpha1.FreezeAlerts{Prometheus: ranv1alpha1.PrometheusSource{URL: "https://thanos.example",
			SecretRef: &ranv1alpha1.SecretReference{Namespace: "observability"}}, Queries: []string{"up == 0"}},
			"spec.alerts.prometheus.secretRef.name"),
	)

	It("accepts alert queries with a Secret and an interval", func(ctx SpecContext) {
		ff := &ranv1alpha1.FleetFreeze{ObjectMeta: metav1.ObjectMeta{Name: uniqueName("freeze")}, Spec: ranv1alpha1.FleetFreezeSpec{Alerts: &ranv1alpha1.FreezeAlerts{
			Prometheus: ranv1alpha1.PrometheusSource{URL: "https://rbac-query-proxy.open-cluster-management-observability.svc:8443",
				SecretRef: &ranv1alpha1.SecretReference{Namespace: "open-cluster-management-observability", Name: "thanos-token"}},
			Queries: []string{`ALERTS{alertstate="firing",severity="critical"}`}, Interval: "30s"}}}
		Expect(k8s.Create(ctx, ff, client.FieldValidation("Strict"))).To(Succeed())
	})
})
