package api_test

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
)

const ibguNS = "ibgu-validation"

// ibguYAML is a valid ImageBasedGroupUpgrade with the given plan (YAML flow list of steps).
func ibguYAML(name, plan string) *unstructured.Unstructured {
	return fromYAML(fmt.Sprintf(`
apiVersion: lcm.openshift.io/v1alpha1
kind: ImageBasedGroupUpgrade
metadata:
  name: %s
  namespace: %s
spec:
  clusterLabelSelectors: [{matchLabels: {common: "true"}}]
  ibuSpec:
    seedImageRef: {image: "quay.io/seed/sno:4.17.3", version: 4.17.3, pullSecretRef: {name: seed-pull}}
    oadpContent: [{name: oadp-cm, namespace: openshift-adp}]
  plan: %s`, name, ibguNS, plan))
}

// planOf writes a plan of the given shape, one step of maxConcurrency 10 per list of actions.
func planOf(shape [][]string) string {
	steps := make([]string, len(shape))
	for i, actions := range shape {
		steps[i] = fmt.Sprintf("{actions: [%s], rolloutStrategy: {maxConcurrency: 10}}", strings.Join(actions, ", "))
	}
	return "[" + strings.Join(steps, ", ") + "]"
}

var _ = Describe("ImageBasedGroupUpgrade validation", func() {
	BeforeEach(func(ctx SpecContext) {
		Expect(ensureNamespace(ctx, ibguNS)).To(Succeed())
	})

	It("accepts every plan shape TALM accepts, and defaults each step's timeout to 240 minutes", func(ctx SpecContext) {
		for i, shape := range lcmv1alpha1.ValidPlans {
			obj := ibguYAML(fmt.Sprintf("valid-%d", i), planOf(shape))
			Expect(k8s.Create(ctx, obj, client.FieldValidation("Strict"))).To(Succeed(), "plan %v", shape)
			timeout, _, _ := unstructured.NestedSlice(obj.Object, "spec", "plan")
			Expect(timeout[0]).To(HaveKeyWithValue("rolloutStrategy", HaveKeyWithValue("timeout", BeEquivalentTo(240))))
		}
	})

	DescribeTable("rejects an invalid ImageBasedGroupUpgrade with a message naming what is wrong",
		func(ctx SpecContext, name, plan, message string) {
			err := k8s.Create(ctx, ibguYAML(name, plan), client.FieldValidation("Strict"))
			Expect(err).To(MatchError(ContainSubstring(message)))
		},
		Entry("Upgrade before Prep", "upgrade-before-prep", planOf([][]string{{"Upgrade"}, {"Prep"}}),
			"invalid combinations of actions in the plan"),
		Entry("Rollback after Prep", "rollback-after-prep", planOf([][]string{{"Prep"}, {"Rollback"}}),
			"invalid combinations of actions in the plan"),
		Entry("AbortOnFailure with another action in its step", "abort-with-upgrade", planOf([][]string{{"Prep"}, {"AbortOnFailure", "Upgrade"}}),
			"invalid combinations of actions in the plan"),
		Entry("an unknown action", "unknown-action", planOf([][]string{{"Reboot"}}),
			`spec.plan[0].actions[0]: Unsupported value: "Reboot"`),
		Entry("an empty plan", "empty-plan", "[]", "spec.plan: Invalid value"),
		Entry("a negative maxConcurrency", "negative", "[{actions: [Prep], rolloutStrategy: {maxConcurrency: -1}}]",
			"maxConcurrency must not be negative"),
		Entry("a name of 230 characters", strings.Repeat("a", 230), planOf([][]string{{"Prep"}}),
			"the name of an ImageBasedGroupUpgrade must be shorter than 230 characters"),
	)

	It("lets steps be appended, and refuses edits of a step, of ibuSpec and of the selectors", func(ctx SpecContext) {
		obj := ibguYAML("append-only", planOf([][]string{{"Prep"}}))
		Expect(k8s.Create(ctx, obj)).To(Succeed())
		key := client.ObjectKeyFromObject(obj)
		patch := func(p string) error {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(lcmv1alpha1.GroupVersion.WithKind("ImageBasedGroupUpgrade"))
			u.SetNamespace(key.Namespace)
			u.SetName(key.Name)
			return k8s.Patch(ctx, u, client.RawPatch(types.JSONPatchType, []byte(p)))
		}

		By("appending AbortOnFailure, then Upgrade: each plan a valid shape")
		Expect(patch(`[{"op": "add", "path": "/spec/plan/-", "value": {"actions": ["AbortOnFailure"], "rolloutStrategy": {"maxConcurrency": 5}}}]`)).To(Succeed())
		Expect(patch(`[{"op": "add", "path": "/spec/plan/-", "value": {"actions": ["Upgrade"], "rolloutStrategy": {"maxConcurrency": 5}}}]`)).To(Succeed())

		By("refusing to edit, remove or reorder written steps")
		Expect(patch(`[{"op": "replace", "path": "/spec/plan/0/rolloutStrategy/maxConcurrency", "value": 3}]`)).
			To(MatchError(ContainSubstring("plan is append only")))
		Expect(patch(`[{"op": "remove", "path": "/spec/plan/2"}]`)).To(MatchError(ContainSubstring("plan is append only")))

		By("refusing a shape that is not valid even when appended")
		Expect(patch(`[{"op": "add", "path": "/spec/plan/-", "value": {"actions": ["Rollback"], "rolloutStrategy": {"maxConcurrency": 5}}}]`)).
			To(MatchError(ContainSubstring("invalid combinations of actions in the plan")))

		By("refusing changes of ibuSpec and of the selectors")
		Expect(patch(`[{"op": "replace", "path": "/spec/ibuSpec/seedImageRef/version", "value": "4.18.0"}]`)).
			To(MatchError(ContainSubstring("ibuSpec is immutable")))
		Expect(patch(`[{"op": "add", "path": "/spec/clusterLabelSelectors/-", "value": {"matchLabels": {"more": "true"}}}]`)).
			To(MatchError(ContainSubstring("clusterLabelSelectors is immutable")))

		By("letting spec.rollout change, an addition: a pause, canaries, a budget")
		Expect(patch(`[{"op": "add", "path": "/spec/rollout", "value": {"paused": true, "canaries": ["sno-1"], "maxFailures": "10%", "batchSoak": "10m"}}]`)).To(Succeed())
		Expect(patch(`[{"op": "replace", "path": "/spec/rollout/paused", "value": false}]`)).To(Succeed())
		Expect(patch(`[{"op": "replace", "path": "/spec/rollout/maxFailures", "value": "ten"}]`)).
			To(MatchError(ContainSubstring("spec.rollout.maxFailures must be a non-negative count or a percentage")))
		Expect(patch(`[{"op": "replace", "path": "/spec/rollout/canaries", "value": [""]}]`)).
			To(MatchError(ContainSubstring("spec.rollout.canaries must not contain an empty name")))
		Expect(patch(`[{"op": "replace", "path": "/spec/rollout/batchSoak", "value": "a while"}]`)).
			To(MatchError(ContainSubstring("spec.rollout.batchSoak must be a duration")))
	})
})
