package sim_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

var configMapGVK = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

// createAction creates a ManagedClusterAction in a cluster namespace.
func createAction(ctx context.Context, cluster, name string, actionType actionv1beta1.ActionType, kube actionv1beta1.KubeWorkSpec) {
	ExpectWithOffset(1, hub.Client.Create(ctx, &actionv1beta1.ManagedClusterAction{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster},
		Spec:       actionv1beta1.ActionSpec{ActionType: actionType, KubeWork: &kube},
	})).To(Succeed())
}

// template is an action's object template.
func template(json string) runtime.RawExtension { return runtime.RawExtension{Raw: []byte(json)} }

// completed returns an action's Completed condition, zero until it has one.
func completed(ctx context.Context, cluster, name string) func(Gomega) metav1.Condition {
	return func(g Gomega) metav1.Condition {
		action := &actionv1beta1.ManagedClusterAction{}
		g.Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, action)).To(Succeed())
		if c := meta.FindStatusCondition(action.Status.Conditions, actionv1beta1.ConditionActionCompleted); c != nil {
			return *c
		}
		return metav1.Condition{}
	}
}

// done matches the Completed condition of an action the agent carried out.
var done = And(HaveField("Status", metav1.ConditionTrue), HaveField("Reason", sim.ReasonActionDone),
	HaveField("Message", "Resource action is done."))

// configMapData returns a ConfigMap's data on a spoke.
func configMapData(cluster, namespace, name string) func(Gomega) map[string]any {
	return func(g Gomega) map[string]any {
		cm, err := simulator.Object(cluster, configMapGVK, namespace, name)
		g.Expect(err).NotTo(HaveOccurred())
		data, _ := cm.Object["data"].(map[string]any)
		return data
	}
}

var _ = Describe("ManagedClusterActions", func() {
	It("create, update and delete objects on the spoke", func(ctx SpecContext) {
		joinFleet(ctx, "acted", sim.SpokeSpec{Name: "acted-1", Version: "4.16.10", Channel: "stable-4.16"})

		By("creating a namespace, then a ConfigMap in it")
		createAction(ctx, "acted-1", "ns", actionv1beta1.CreateActionType, actionv1beta1.KubeWorkSpec{
			ObjectTemplate: template(`{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "acted"}}`),
		})
		Eventually(completed(ctx, "acted-1", "ns")).WithTimeout(10 * time.Second).Should(done)
		createAction(ctx, "acted-1", "create", actionv1beta1.CreateActionType, actionv1beta1.KubeWorkSpec{
			Namespace: "acted",
			ObjectTemplate: template(`{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": {"name": "settings", "labels": {"a": "1"}}, "data": {"x": "1", "y": "2"}}`),
		})
		Eventually(completed(ctx, "acted-1", "create")).WithTimeout(10 * time.Second).Should(done)
		Expect(configMapData("acted-1", "acted", "settings")(Default)).To(Equal(map[string]any{"x": "1", "y": "2"}))
		action := &actionv1beta1.ManagedClusterAction{}
		Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: "acted-1", Name: "create"}, action)).To(Succeed())
		Expect(action.Status.Result.Raw).To(MatchJSON(action.Spec.KubeWork.ObjectTemplate.Raw), "the result is the template")

		By("updating it: the object becomes the template, what the template leaves out goes")
		createAction(ctx, "acted-1", "update", actionv1beta1.UpdateActionType, actionv1beta1.KubeWorkSpec{
			ObjectTemplate: template(`{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": {"name": "settings", "namespace": "acted"}, "data": {"x": "10"}}`),
		})
		Eventually(completed(ctx, "acted-1", "update")).WithTimeout(10 * time.Second).Should(done)
		Expect(configMapData("acted-1", "acted", "settings")(Default)).To(Equal(map[string]any{"x": "10"}))
		cm, err := simulator.Object("acted-1", configMapGVK, "acted", "settings")
		Expect(err).NotTo(HaveOccurred())
		Expect(cm.GetLabels()).To(BeEmpty())

		By("deleting it")
		createAction(ctx, "acted-1", "delete", actionv1beta1.DeleteActionType, actionv1beta1.KubeWorkSpec{
			Resource: "configmap", Namespace: "acted", Name: "settings",
		})
		Eventually(completed(ctx, "acted-1", "delete")).WithTimeout(10 * time.Second).Should(done)
		_, err = simulator.Object("acted-1", configMapGVK, "acted", "settings")
		Expect(err).To(MatchError(configpolicy.ErrNotFound))
	})

	It("report failures with the agent's reasons and messages", func(ctx SpecContext) {
		joinFleet(ctx, "misacted", sim.SpokeSpec{Name: "misacted-1", Version: "4.16.10", Channel: "stable-4.16"})
		cm := `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": {"x": "1"}}`
		cases := map[string]struct {
			actionType      actionv1beta1.ActionType
			kube            actionv1beta1.KubeWorkSpec
			reason, message string
		}{
			"missing-namespace": {
				actionv1beta1.CreateActionType, actionv1beta1.KubeWorkSpec{Namespace: "nowhere", ObjectTemplate: template(cm)},
				actionv1beta1.ReasonCreateResourceFailed, `failed to handle Create action with err: namespaces "nowhere" not found`,
			},
			"no-namespace": {
				actionv1beta1.CreateActionType, actionv1beta1.KubeWorkSpec{ObjectTemplate: template(cm)},
				actionv1beta1.ReasonCreateResourceFailed, "failed to handle Create action with err: namespace must be set",
			},
			"update-missing": {
				actionv1beta1.UpdateActionType, actionv1beta1.KubeWorkSpec{Namespace: "default", ObjectTemplate: template(cm)},
				actionv1beta1.ReasonUpdateResourceFailed, `failed to handle Update action with err: configmaps "settings" not found`,
			},
			"delete-missing": {
				actionv1beta1.DeleteActionType, actionv1beta1.KubeWorkSpec{Resource: "jobs.batch", Namespace: "default", Name: "gone"},
				actionv1beta1.ReasonDeleteResourceFailed, `failed to handle Delete action with err: jobs.batch "gone" not found`,
			},
			"bad-type": {
				"Patch", actionv1beta1.KubeWorkSpec{ObjectTemplate: template(cm)},
				actionv1beta1.ReasonActionTypeInvalid, "failed to handle Patch action with err: invalid action type",
			},
		}
		for name, tc := range cases {
			createAction(ctx, "misacted-1", name, tc.actionType, tc.kube)
		}
		for name, tc := range cases {
			Eventually(completed(ctx, "misacted-1", name)).WithTimeout(10*time.Second).Should(And(
				HaveField("Status", metav1.ConditionFalse), HaveField("Reason", tc.reason), HaveField("Message", tc.message)),
				fmt.Sprintf("action %s", name))
		}
	})
})
