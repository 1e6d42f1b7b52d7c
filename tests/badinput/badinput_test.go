package badinput_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// statusLimit is what a ClusterGroupUpgrade's status may weigh, whatever its spec: far below
// the API server's 1.5 MiB object limit, so that lists and watches of many stay cheap.
const statusLimit = 256 << 10

// hostile is one malformed or hostile ClusterGroupUpgrade and the answer it must get.
type hostile struct {
	// name is metadata.name; empty picks a unique one, unless emptyName.
	name      string
	emptyName bool
	// spec is the spec, in YAML, indented by two spaces.
	spec string
	// companions are other ClusterGroupUpgrades, by name, created first (a blocking cycle).
	companions map[string]string

	// rejected is a substring of the API server's refusal; empty when the CGU is stored.
	rejected string
	// Otherwise the operator answers with this condition.
	condition       string
	status          metav1.ConditionStatus
	reason, message string
	// runs is true for a CGU that is valid after all and starts: the check that nothing is
	// enforced is skipped.
	runs bool
	// also checks more of the stored CGU.
	also types.GomegaMatcher
}

func refused(message string) hostile { return hostile{rejected: message} }

func answered(condition string, status metav1.ConditionStatus, reason, message string) hostile {
	return hostile{condition: condition, status: status, reason: reason, message: message}
}

// countedOnce is the answer to a spec that lists an entry twice, which TALM accepts: it is
// valid, the Validated message says which entries repeat, it runs, and also holds.
func countedOnce(message string, also types.GomegaMatcher) hostile {
	h := answered(ranv1alpha1.ConditionValidated, metav1.ConditionTrue, ranv1alpha1.ReasonValidationCompleted, message)
	h.runs, h.also = true, also
	return h
}

func (h hostile) withSpec(spec string) hostile { h.spec = spec; return h }

func (h hostile) named(name string) hostile { h.name = name; return h }

var seq int

// base is a spec that is valid but for what an entry changes.
const base = `
  clusters: [bad-1, bad-2]
  managedPolicies: [bad-upgrade]
  enable: true
  remediationStrategy: {maxConcurrency: 1}
`

func cguObject(name, spec string) (*unstructured.Unstructured, error) {
	text := fmt.Sprintf("apiVersion: ran.openshift.io/v1alpha1\nkind: ClusterGroupUpgrade\nmetadata:\n  name: %q\n  namespace: %s\nspec:\n%s",
		name, namespace, spec)
	obj := &unstructured.Unstructured{}
	// Numbers stay int64 where they fit, so that 2^63-1 reaches the API server intact.
	if err := utilyaml.Unmarshal([]byte(text), &obj.Object); err != nil {
		return nil, err
	}
	return obj, nil
}

// leftovers counts the governance objects made for the CGU, in every namespace: enforce
// copies of policies, Placements and PlacementBindings.
func leftovers(ctx context.Context, name string) func(Gomega) int {
	return func(g Gomega) int {
		n, err := fleet.Leftovers(ctx, namespace, name)
		g.Expect(err).NotTo(HaveOccurred())
		return n
	}
}

func stored(ctx context.Context, name string) func(Gomega) *ranv1alpha1.ClusterGroupUpgrade {
	return fleet.Stored(ctx, &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}})
}

func create(ctx context.Context, name, spec string) error {
	obj, err := cguObject(name, spec)
	if err != nil {
		return err
	}
	return fleet.Hub.Client.Create(ctx, obj, client.FieldValidation("Strict"))
}

func conditionOf(cgu *ranv1alpha1.ClusterGroupUpgrade, kind string) *metav1.Condition {
	for i := range cgu.Status.Conditions {
		if cgu.Status.Conditions[i].Type == kind {
			return &cgu.Status.Conditions[i]
		}
	}
	return nil
}

var _ = Describe("Malformed and hostile ClusterGroupUpgrades", func() {
	DescribeTable("are refused by the API server or answered precisely, and start nothing",
		func(ctx SpecContext, h hostile) {
			seq++
			name := h.name
			if name == "" && !h.emptyName {
				name = fmt.Sprintf("hostile-%d", seq)
			}
			for other, spec := range h.companions {
				Expect(create(ctx, other, spec)).To(Succeed())
			}
			err := create(ctx, name, h.spec)
			if h.rejected != "" {
				Expect(err).To(MatchError(ContainSubstring(h.rejected)))
				GinkgoWriter.Printf("Refused: %v\n", err)
				return
			}
			Expect(err).NotTo(HaveOccurred())

			Eventually(func(g Gomega) *metav1.Condition {
				return conditionOf(stored(ctx, name)(g), h.condition)
			}).WithTimeout(settle).Should(And(
				Not(BeNil()),
				HaveField("Status", h.status),
				HaveField("Reason", h.reason),
				HaveField("Message", ContainSubstring(h.message)),
			))
			cgu := stored(ctx, name)(Default)
			if h.also != nil {
				Expect(cgu).To(h.also)
			}
			status, err := json.Marshal(cgu.Status)
			Expect(err).NotTo(HaveOccurred())
			Expect(len(status)).To(BeNumerically("<", statusLimit), "status size")
			if h.runs {
				return
			}
			Expect(cgu.Status.State).NotTo(Equal(ranv1alpha1.StateNotCompleted))
			Expect(cgu.Status.StartedAt).To(BeNil())
			names := []string{name}
			for other := range h.companions {
				names = append(names, other)
			}
			Consistently(func(g Gomega) int {
				n := 0
				for _, c := range names {
					n += leftovers(ctx, c)(g)
				}
				return n
			}).WithTimeout(time.Second).Should(BeZero(), "objects made to enforce")
		},

		// Numbers.
		Entry("a negative maxConcurrency", refused("spec.remediationStrategy.maxConcurrency must not be negative").withSpec(`
  clusters: [bad-1]
  remediationStrategy: {maxConcurrency: -1}`)),
		Entry("a negative timeout", refused("spec.remediationStrategy.timeout must not be negative").withSpec(`
  clusters: [bad-1]
  remediationStrategy: {maxConcurrency: 1, timeout: -5}`)),
		Entry("a timeout one minute above ten years", refused("spec.remediationStrategy.timeout must be at most 5256000 minutes (ten years)").withSpec(`
  clusters: [bad-1]
  remediationStrategy: {maxConcurrency: 1, timeout: 5256001}`)),
		Entry("a timeout beyond int64", refused("spec.remediationStrategy.timeout").withSpec(`
  clusters: [bad-1]
  remediationStrategy: {maxConcurrency: 1, timeout: 99999999999999999999}`)),
		Entry("a maxConcurrency of 2^31-1: one batch", answered(ranv1alpha1.ConditionProgressing, metav1.ConditionFalse,
			ranv1alpha1.ReasonNotEnabled, "Not enabled").withSpec(`
  clusters: [bad-1, bad-2]
  managedPolicies: [bad-upgrade]
  enable: false
  remediationStrategy: {maxConcurrency: 2147483647}`)),
		Entry("a maxConcurrency of 2^63-1: one batch", answered(ranv1alpha1.ConditionValidated, metav1.ConditionTrue,
			ranv1alpha1.ReasonValidationCompleted, "").withSpec(`
  clusters: [bad-1, bad-2]
  managedPolicies: [bad-upgrade]
  enable: false
  remediationStrategy: {maxConcurrency: 9223372036854775807}`)),
		Entry("a maxConcurrency beyond int64", refused("spec.remediationStrategy.maxConcurrency").withSpec(`
  clusters: [bad-1]
  remediationStrategy: {maxConcurrency: 9223372036854775808}`)),
		Entry("a fractional maxConcurrency", refused("spec.remediationStrategy.maxConcurrency: Invalid value").withSpec(`
  clusters: [bad-1]
  remediationStrategy: {maxConcurrency: 1.5}`)),

		// Unknown values.
		Entry("an unknown batchTimeoutAction", refused("spec.batchTimeoutAction must be Continue or Abort").withSpec(base+`
  batchTimeoutAction: abort`)),
		Entry("an unknown enforcement mode", refused(`spec.enforcement: Unsupported value: "Patch": supported values: "Copy", "Override"`).withSpec(base+`
  enforcement: Patch`)),
		Entry("maxFailures ten", refused("spec.maxFailures must be a non-negative count or a percentage such as 10%").withSpec(base+`
  maxFailures: ten`)),
		Entry(`maxFailures "-1"`, refused("spec.maxFailures must be a non-negative count or a percentage such as 10%").withSpec(base+`
  maxFailures: "-1"`)),
		Entry("maxFailures -1", refused("spec.maxFailures must be a non-negative count or a percentage such as 10%").withSpec(base+`
  maxFailures: -1`)),
		Entry("maxFailures 150%", refused("spec.maxFailures must be a non-negative count or a percentage such as 10% (at most 2147483647, or 100%)").withSpec(base+`
  maxFailures: 150%`)),
		Entry("maxFailures beyond int32, which the operator could not decode", refused("spec.maxFailures must be a non-negative count").withSpec(base+`
  maxFailures: 3000000000`)),
		Entry("maxFailures of 10^20 percent", refused("spec.maxFailures must be a non-negative count").withSpec(base+`
  maxFailures: "100000000000000000000%"`)),

		// Canaries, duplicates, empty names.
		Entry("a canary outside the selection", answered(ranv1alpha1.ConditionValidated, metav1.ConditionFalse,
			ranv1alpha1.ReasonInvalidCanaries, "Canaries that are not selected clusters: bad-3").withSpec(`
  clusters: [bad-1, bad-2]
  managedPolicies: [bad-upgrade]
  enable: true
  remediationStrategy: {maxConcurrency: 1, canaries: [bad-1, bad-3]}`)),
		// Duplicates are accepted, as TALM accepts them, and counted once.
		Entry("a canary listed twice", countedOnce("2 clusters in 2 batches; each counted once: spec.remediationStrategy.canaries lists bad-1 2 times",
			HaveField("Status.RemediationPlan", Equal([][]string{{"bad-1"}, {"bad-2"}}))).withSpec(`
  clusters: [bad-1, bad-2]
  managedPolicies: [bad-upgrade]
  remediationStrategy: {maxConcurrency: 1, canaries: [bad-1, bad-1]}`)),
		Entry("a cluster listed twice", countedOnce("2 clusters in 2 batches; each counted once: spec.clusters lists bad-1 2 times",
			HaveField("Status.RemediationPlan", Equal([][]string{{"bad-1"}, {"bad-2"}}))).withSpec(`
  clusters: [bad-1, bad-2, bad-1]
  managedPolicies: [bad-upgrade]
  remediationStrategy: {maxConcurrency: 1}`)),
		Entry("a managed policy listed twice", countedOnce("1 managed policy resolved; 1 cluster in 1 batch; each counted once: spec.managedPolicies lists bad-upgrade 2 times",
			And(HaveField("Status.ManagedPoliciesForUpgrade", HaveLen(1)), HaveField("Status.Placements", HaveLen(1)))).withSpec(`
  clusters: [bad-1]
  managedPolicies: [bad-upgrade, bad-upgrade]
  remediationStrategy: {maxConcurrency: 1}`)),
		Entry("an empty cluster name", refused("spec.clusters must not contain an empty name").withSpec(`
  clusters: [bad-1, ""]
  remediationStrategy: {maxConcurrency: 1}`)),
		Entry("an empty ClusterGroupUpgrade name", hostile{emptyName: true, rejected: "metadata.name: Required value: name or generateName is required"}.withSpec(base)),

		// Sizes and length limits.
		Entry("10,000 clusters in spec.clusters, none on the hub", answered(ranv1alpha1.ConditionClustersSelected, metav1.ConditionFalse,
			ranv1alpha1.ReasonClusterNotFound, "Clusters not found on the hub: ghost-00001, ghost-00002").withSpec(manyClusters(10000))),
		Entry("a 253-character name over a 63-character cluster: valid, it runs", hostile{
			name: strings.Repeat("n", 253), runs: true,
			condition: ranv1alpha1.ConditionProgressing, status: metav1.ConditionTrue, reason: ranv1alpha1.ReasonInProgress,
			also: HaveField("Status.CurrentBatch.Clusters", ConsistOf(HaveField("Name", longCluster))),
		}.withSpec(fmt.Sprintf(`
  clusters: [%s]
  managedPolicies: [bad-upgrade]
  enable: true
  remediationStrategy: {maxConcurrency: 1}`, longCluster))),
		Entry("a 254-character name", refused("metadata.name: Invalid value").named(strings.Repeat("n", 254)).withSpec(base)),
		Entry("a 64-character cluster name no cluster can have", answered(ranv1alpha1.ConditionClustersSelected, metav1.ConditionFalse,
			ranv1alpha1.ReasonClusterNotFound, "Clusters not found on the hub: "+strings.Repeat("c", 64)).withSpec(fmt.Sprintf(`
  clusters: [bad-1, %s]
  managedPolicies: [bad-upgrade]
  enable: true
  remediationStrategy: {maxConcurrency: 1}`, strings.Repeat("c", 64)))),
		Entry("a 253-character managed policy name no policy has", answered(ranv1alpha1.ConditionValidated, metav1.ConditionFalse,
			ranv1alpha1.ReasonNotAllManagedPoliciesExist, "Managed policies not found on the selected clusters: "+strings.Repeat("p", 253)).withSpec(fmt.Sprintf(`
  clusters: [bad-1]
  managedPolicies: [bad-upgrade, %s]
  enable: true
  remediationStrategy: {maxConcurrency: 1}`, strings.Repeat("p", 253)))),

		// Cluster actions: every key and value must be one a ManagedCluster takes (before,
		// these were stored, and once a cluster completed every pass failed on the write).
		Entry("a label key with a space to add", refused("spec.actions.afterCompletion.addClusterLabels: Invalid value: every key must be a valid label key").withSpec(base+`
  actions: {afterCompletion: {addClusterLabels: {"ztp done": ""}}}`)),
		Entry("a label value with a slash to add", refused(`spec.actions.afterCompletion.addClusterLabels.upgraded: Invalid value: "4.18/ok"`).withSpec(base+`
  actions: {afterCompletion: {addClusterLabels: {upgraded: "4.18/ok"}}}`)),
		Entry("an annotation key with two slashes to add", refused("spec.actions.beforeEnable.addClusterAnnotations: Invalid value: every key must be a valid annotation key").withSpec(base+`
  actions: {beforeEnable: {addClusterAnnotations: {"a/b/c": x}}}`)),

		// Blocking.
		Entry("a blocking cycle: A blocks B blocks A", hostile{
			name: "cycle-a", companions: map[string]string{"cycle-b": base + `
  blockingCRs: [{name: cycle-a}]`},
			condition: ranv1alpha1.ConditionProgressing, status: metav1.ConditionFalse, reason: ranv1alpha1.ReasonBlockingCRCycle,
			message: "Blocking cycle: cgu-badinput/cycle-a -> cgu-badinput/cycle-b -> cgu-badinput/cycle-a",
			also:    HaveField("Status.State", ranv1alpha1.StateCannotStart),
		}.withSpec(base+`
  blockingCRs: [{name: cycle-b}]`)),
		Entry("a ClusterGroupUpgrade blocking itself", refused("spec.blockingCRs must not name the ClusterGroupUpgrade itself").named("self-block").withSpec(base+`
  blockingCRs: [{name: self-block}]`)),
		Entry("a ClusterGroupUpgrade blocking itself through its namespace written out", answered(ranv1alpha1.ConditionProgressing, metav1.ConditionFalse,
			ranv1alpha1.ReasonBlockingCRCycle, "Blocking cycle: cgu-badinput/self-block-ns -> cgu-badinput/self-block-ns").named("self-block-ns").withSpec(base+`
  blockingCRs: [{name: self-block-ns, namespace: cgu-badinput}]`)),

		// Policies.
		Entry("a policy from another namespace, placed on none of the selected clusters", answered(ranv1alpha1.ConditionValidated, metav1.ConditionFalse,
			ranv1alpha1.ReasonNotAllManagedPoliciesExist,
			"Managed policies not found on the selected clusters: elsewhere-upgrade (policies-elsewhere/elsewhere-upgrade is placed on none of them)").withSpec(`
  clusters: [bad-1, bad-2]
  managedPolicies: [elsewhere-upgrade]
  enable: true
  remediationStrategy: {maxConcurrency: 1}`)),

		// Selectors.
		Entry(`clusterSelector "a=b=c"`, answered(ranv1alpha1.ConditionClustersSelected, metav1.ConditionFalse,
			ranv1alpha1.ReasonInvalidClusterSelector, `Invalid selector: spec.clusterSelector[0] "a=b=c": more than one "="`).withSpec(`
  clusterSelector: ["a=b=c"]
  managedPolicies: [bad-upgrade]
  enable: true
  remediationStrategy: {maxConcurrency: 1}`)),
		Entry("a label selector with an unknown operator", refused(`spec.clusterLabelSelectors[0].matchExpressions[0].operator: Unsupported value: "Like": supported values: "In", "NotIn", "Exists", "DoesNotExist"`).withSpec(`
  clusterLabelSelectors: [{matchExpressions: [{key: fleet, operator: Like, values: [bad]}]}]
  managedPolicies: [bad-upgrade]
  enable: true
  remediationStrategy: {maxConcurrency: 1}`)),
		Entry("a label selector In without values", refused("spec.clusterLabelSelectors[0].matchExpressions[0]: Invalid value: values must not be empty for operator In or NotIn").withSpec(`
  clusterLabelSelectors: [{matchExpressions: [{key: fleet, operator: In}]}]
  managedPolicies: [bad-upgrade]
  enable: true
  remediationStrategy: {maxConcurrency: 1}`)),

		// Maintenance windows.
		Entry("a window starting at 25:00", refused("spec.maintenanceWindows.windows[0].start").withSpec(base+`
  maintenanceWindows: {windows: [{start: "25:00", duration: 4h}]}`)),
		Entry("a window lasting forever", refused(`spec.maintenanceWindows.windows[0].duration: Invalid value: "forever": spec.maintenanceWindows.windows[].duration must be a duration such as 90m or 1h30m`).withSpec(base+`
  maintenanceWindows: {windows: [{start: "22:00", duration: forever}]}`)),
		Entry("a window lasting beyond int64 nanoseconds", refused("spec.maintenanceWindows.windows[0].duration").withSpec(base+`
  maintenanceWindows: {windows: [{start: "22:00", duration: 99999999999h}]}`)),
		Entry("a window start time without a time zone", refused("spec.maintenanceWindows.startAt").withSpec(base+`
  maintenanceWindows: {startAt: "2026-12-01T00:00:00"}`)),
		Entry("a batch soak that is no duration", refused("spec.batchSoak must be a duration such as 90m or 1h30m").withSpec(base+`
  batchSoak: soon`)),
		Entry("a cluster deadline that is no duration", refused("spec.clusterProgressDeadline must be a duration such as 90m or 1h30m").withSpec(base+`
  clusterProgressDeadline: 1d`)),
		Entry("a window in a time zone that does not exist", answered(ranv1alpha1.ConditionValidated, metav1.ConditionFalse,
			ranv1alpha1.ReasonInvalidMaintenanceWindow, "spec.maintenanceWindows.windows[0]").withSpec(base+`
  maintenanceWindows: {windows: [{start: "22:00", duration: 4h, timeZone: Mars/Olympus_Mons}]}`)),
		Entry("a window on a day that does not exist", answered(ranv1alpha1.ConditionValidated, metav1.ConditionFalse,
			ranv1alpha1.ReasonInvalidMaintenanceWindow, "spec.maintenanceWindows.windows[0]").withSpec(base+`
  maintenanceWindows: {windows: [{start: "22:00", duration: 4h, days: [Caturday]}]}`)),

		// References to nothing.
		Entry("a precachingConfigRef to nothing", answered(ranv1alpha1.ConditionPrecacheSpecValid, metav1.ConditionFalse,
			ranv1alpha1.ReasonPrecacheSpecIncomplete, "PreCachingConfig cgu-badinput/nothing named by spec.preCachingConfigRef does not exist").withSpec(base+`
  preCaching: true
  preCachingConfigRef: {name: nothing}`)),
		Entry("a precachingConfigRef with an empty name", refused("spec.preCachingConfigRef.name must not be empty").withSpec(base+`
  preCaching: true
  preCachingConfigRef: {name: ""}`)),
		Entry("preUpgradeActions naming nothing", answered(ranv1alpha1.ConditionValidated, metav1.ConditionFalse,
			ranv1alpha1.ReasonNotAllManifestTemplatesExist, "ManifestWorkReplicaSets not found in cgu-badinput: nothing").withSpec(base+`
  preUpgradeActions: [nothing]`)),
		Entry("a placementRef to nothing", answered(ranv1alpha1.ConditionClustersSelected, metav1.ConditionFalse,
			ranv1alpha1.ReasonPlacementNotFound, "spec.placementRef: Placement cgu-badinput/nothing does not exist").withSpec(base+`
  placementRef: {name: nothing}`)),
		Entry("operatorUpgrades including a Subscription without a name", refused("spec.operatorUpgrades.include[0].name").withSpec(base+`
  operatorUpgrades: {include: [{name: ""}]}`)),
	)
})

// manyClusters is a spec naming n clusters that do not exist.
func manyClusters(n int) string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("ghost-%05d", i+1)
	}
	return fmt.Sprintf(`
  clusters: [%s]
  managedPolicies: [bad-upgrade]
  enable: true
  remediationStrategy: {maxConcurrency: 10}`, strings.Join(names, ", "))
}
