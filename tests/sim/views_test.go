package sim_test

import (
	"context"
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

var clusterVersionScope = viewv1beta1.ViewScope{Group: "config.openshift.io", Version: "v1", Kind: "ClusterVersion", Name: "version"}

// createView creates a ManagedClusterView in a cluster namespace.
func createView(ctx context.Context, cluster, name string, scope viewv1beta1.ViewScope) {
	ExpectWithOffset(1, hub.Client.Create(ctx, &viewv1beta1.ManagedClusterView{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster},
		Spec:       viewv1beta1.ViewSpec{Scope: scope},
	})).To(Succeed())
}

// viewStatus returns a view's status as the hub has it.
func viewStatus(ctx context.Context, cluster, name string) func(Gomega) viewv1beta1.ViewStatus {
	return func(g Gomega) viewv1beta1.ViewStatus {
		view := &viewv1beta1.ManagedClusterView{}
		g.Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, view)).To(Succeed())
		return view.Status
	}
}

// processing returns a view's Processing condition, zero until it has one.
func processing(status viewv1beta1.ViewStatus) metav1.Condition {
	if c := meta.FindStatusCondition(status.Conditions, viewv1beta1.ConditionViewProcessing); c != nil {
		return *c
	}
	return metav1.Condition{}
}

// viewedClusterVersion returns the ClusterVersion the view "cv" shows, once it shows one.
func viewedClusterVersion(ctx context.Context, cluster string) func(Gomega) *configv1.ClusterVersion {
	return func(g Gomega) *configv1.ClusterVersion {
		status := viewStatus(ctx, cluster, "cv")(g)
		g.Expect(processing(status).Status).To(Equal(metav1.ConditionTrue))
		cv := &configv1.ClusterVersion{}
		g.Expect(json.Unmarshal(status.Result.Raw, cv)).To(Succeed())
		return cv
	}
}

// setChannel changes the channel of a spoke's ClusterVersion.
func setChannel(channel string) func(configpolicy.Store) error {
	return func(objects configpolicy.Store) error {
		cv, err := objects.Get(configv1.GroupVersion.WithKind("ClusterVersion"), "", "version")
		if err != nil {
			return err
		}
		cv = cv.DeepCopy()
		if err := unstructured.SetNestedField(cv.Object, channel, "spec", "channel"); err != nil {
			return err
		}
		return objects.Update(cv)
	}
}

var _ = Describe("ManagedClusterViews", func() {
	It("show the spoke's ClusterVersion and follow it as an enforced policy and the test change it", func(ctx SpecContext) {
		joinFleet(ctx, "viewed", sim.SpokeSpec{Name: "viewed-1", Version: "4.16.10", Channel: "stable-4.16",
			Behaviour: sim.Behaviour{Duration: 2 * time.Second}})
		createView(ctx, "viewed-1", "cv", clusterVersionScope)

		By("answering with the object and Processing=True")
		Eventually(viewedClusterVersion(ctx, "viewed-1")).WithTimeout(10 * time.Second).
			Should(HaveField("Status.Desired.Version", "4.16.10"))
		c := processing(viewStatus(ctx, "viewed-1", "cv")(Default))
		Expect(c.Reason).To(Equal(viewv1beta1.ReasonGetResource))
		Expect(c.Message).To(Equal("Watching resources successfully"))
		var result map[string]any
		Expect(json.Unmarshal(viewStatus(ctx, "viewed-1", "cv")(Default).Result.Raw, &result)).To(Succeed())
		Expect(result).To(HaveKeyWithValue("apiVersion", "config.openshift.io/v1"))
		Expect(result).To(HaveKeyWithValue("kind", "ClusterVersion"))

		By("following the update an enforced policy starts, to its completion")
		placePolicy(ctx, upgradePolicy("viewed-upgrade", policyv1.Enforce), "viewed")
		Eventually(viewedClusterVersion(ctx, "viewed-1")).WithTimeout(20 * time.Second).
			Should(HaveField("Status.History", ContainElement(And(
				HaveField("Version", "4.16.12"), HaveField("State", configv1.PartialUpdate)))))
		Eventually(viewedClusterVersion(ctx, "viewed-1")).WithTimeout(20 * time.Second).
			Should(HaveField("Status.History", HaveExactElements(
				And(HaveField("Version", "4.16.12"), HaveField("State", configv1.CompletedUpdate)),
				HaveField("Version", "4.16.10"))))
		Expect(processing(viewStatus(ctx, "viewed-1", "cv")(Default)).LastTransitionTime).To(Equal(c.LastTransitionTime),
			"the condition's status never changed")

		By("following a change the test makes on the spoke")
		Expect(simulator.Mutate("viewed-1", setChannel("fast-4.16"))).To(Succeed())
		Eventually(viewedClusterVersion(ctx, "viewed-1")).WithTimeout(10 * time.Second).
			Should(HaveField("Spec.Channel", "fast-4.16"))
	})

	It("refresh only every updateIntervalSeconds when the simulator polls views as the agent does", func(ctx SpecContext) {
		polling, err := sim.Start(ctx, hub, sim.Options{Logger: zap.New(zap.WriteTo(GinkgoWriter)), PollViews: true})
		Expect(err).NotTo(HaveOccurred())
		Expect(hub.AddClusters(ctx, world.Cluster{Name: "polled-1"})).To(Succeed())
		Expect(polling.AddSpokes(sim.SpokeSpec{Name: "polled-1", Version: "4.16.10", Channel: "stable-4.16"})).To(Succeed())
		scope := clusterVersionScope
		scope.UpdateIntervalSeconds = 4
		createView(ctx, "polled-1", "cv", scope)
		Eventually(viewedClusterVersion(ctx, "polled-1")).WithTimeout(10 * time.Second).
			Should(HaveField("Spec.Channel", "stable-4.16"))

		Expect(polling.Mutate("polled-1", setChannel("fast-4.16"))).To(Succeed())
		Consistently(viewedClusterVersion(ctx, "polled-1")).WithTimeout(time.Second).
			Should(HaveField("Spec.Channel", "stable-4.16"), "the agent does not watch the spoke")
		Eventually(viewedClusterVersion(ctx, "polled-1")).WithTimeout(10 * time.Second).
			Should(HaveField("Spec.Channel", "fast-4.16"))
	})

	It("report what they cannot show with the agent's reasons and messages", func(ctx SpecContext) {
		joinFleet(ctx, "unviewable", sim.SpokeSpec{Name: "unviewable-1", Version: "4.16.10", Channel: "stable-4.16"})
		cases := map[string]struct {
			scope           viewv1beta1.ViewScope
			reason, message string
		}{
			"missing": {
				viewv1beta1.ViewScope{Resource: "configmaps", Namespace: "openshift-config", Name: "nope"},
				viewv1beta1.ReasonGetResourceFailed, `failed to get resource with err: configmaps "nope" not found`,
			},
			"missing-group": {
				viewv1beta1.ViewScope{Group: "batch", Version: "v1", Kind: "Job", Namespace: "x", Name: "nope"},
				viewv1beta1.ReasonGetResourceFailed, `failed to get resource with err: jobs.batch "nope" not found`,
			},
			"unknown-kind": {
				viewv1beta1.ViewScope{Group: "example.com", Version: "v1", Kind: "Widget", Name: "w"},
				viewv1beta1.ReasonResourceGVKInvalid, `failed to get resource with err: no matches for kind "Widget" in version "example.com/v1"`,
			},
			"no-name": {
				viewv1beta1.ViewScope{Resource: "clusterversions"},
				viewv1beta1.ReasonResourceNameInvalid, "failed to get resource with err: invalid resource name",
			},
			"secret": {
				viewv1beta1.ViewScope{Resource: "secrets", Namespace: "openshift-config", Name: "pull-secret"},
				viewv1beta1.ReasonResourceTypeInvalid, "viewing secrets is not allowed",
			},
		}
		for name, tc := range cases {
			createView(ctx, "unviewable-1", name, tc.scope)
		}
		for name, tc := range cases {
			Eventually(func(g Gomega) metav1.Condition {
				return processing(viewStatus(ctx, "unviewable-1", name)(g))
			}).WithTimeout(10*time.Second).Should(And(
				HaveField("Status", metav1.ConditionFalse), HaveField("Reason", tc.reason), HaveField("Message", tc.message)), name)
			Expect(viewStatus(ctx, "unviewable-1", name)(Default).Result.Raw).To(BeEmpty(), name)
		}
	})

	It("are not answered by an unreachable spoke, and are once it is back", func(ctx SpecContext) {
		joinFleet(ctx, "away", sim.SpokeSpec{Name: "away-1", Version: "4.16.10", Channel: "stable-4.16"})
		Expect(simulator.SetReachable(ctx, "away-1", false)).To(Succeed())
		createView(ctx, "away-1", "cv", viewv1beta1.ViewScope{Resource: "clusterversions", Name: "version"})
		Consistently(viewStatus(ctx, "away-1", "cv")).WithTimeout(2 * time.Second).Should(BeZero())

		Expect(simulator.SetReachable(ctx, "away-1", true)).To(Succeed())
		Eventually(viewedClusterVersion(ctx, "away-1")).WithTimeout(10 * time.Second).
			Should(HaveField("Status.Desired.Version", "4.16.10"))

		By("writing nothing more while the spoke's object stays the same")
		resourceVersion := func(g Gomega) string {
			view := &viewv1beta1.ManagedClusterView{}
			g.Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: "away-1", Name: "cv"}, view)).To(Succeed())
			return view.ResourceVersion
		}
		written := resourceVersion(Default)
		simulator.Poke("away-1")
		Consistently(resourceVersion).WithTimeout(2 * time.Second).Should(Equal(written))
	})
})
