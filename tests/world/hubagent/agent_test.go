package hubagent_test

import (
	"context"
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cgu-operator/cgu-operator/tests/world"
	"github.com/cgu-operator/cgu-operator/tests/world/hubagent"
)

// stillFor is how long a Consistently watches for a change that must not happen; the agent
// reacts to an event within milliseconds.
const stillFor = 2 * time.Second

var mcuGVK = schema.GroupVersionKind{Group: "ran.openshift.io", Version: "v1alpha1", Kind: "ManagedClustersUpgrade"}

var _ = Describe("A work agent between the global hub and a regional hub", Ordered, func() {
	const (
		cluster   = "regional-1"
		namespace = "trains"
		mcuName   = "to-4.16.20"
	)
	var (
		agent   *hubagent.Agent
		workKey = client.ObjectKey{Namespace: cluster, Name: "train-a"}
		mcuKey  = client.ObjectKey{Namespace: namespace, Name: mcuName}
		cmKey   = client.ObjectKey{Namespace: namespace, Name: "train-notes"}
	)

	BeforeAll(func(ctx SpecContext) {
		Expect(global.AddClusters(ctx, world.Cluster{Name: cluster})).To(Succeed())
		var err error
		agent, err = hubagent.Start(context.WithoutCancel(ctx), global, cluster, regional,
			hubagent.Options{Logger: zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true))})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(agent.Stop)
	})

	It("applies the work's manifests to the regional hub and reports them as OCM's agent does", func(ctx SpecContext) {
		work := &workv1.ManifestWork{
			ObjectMeta: metav1.ObjectMeta{Namespace: workKey.Namespace, Name: workKey.Name},
			Spec: workv1.ManifestWorkSpec{
				Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
					manifest(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": namespace}}),
					manifest(mcu(namespace, mcuName, 10, nil)),
					manifest(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
						"metadata": map[string]any{"name": cmKey.Name, "namespace": namespace}, "data": map[string]any{"train": "a"}}),
				}},
				ManifestConfigs: []workv1.ManifestConfigOption{{
					ResourceIdentifier: workv1.ResourceIdentifier{Group: mcuGVK.Group, Resource: "managedclustersupgrades",
						Namespace: namespace, Name: mcuName},
					FeedbackRules: []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JsonPaths: []workv1.JsonPath{
						{Name: "complete", Path: ".status.clustersSummary.complete"},
						{Name: "completeCondition", Path: `.status.conditions[?(@.type=="Complete")].status`},
					}}},
				}},
			},
		}
		Expect(global.Client.Create(ctx, work)).To(Succeed())

		By("adding the agent's finalizer")
		Eventually(func(g Gomega) []string {
			g.Expect(global.Client.Get(ctx, workKey, work)).To(Succeed())
			return work.Finalizers
		}).Should(ContainElement(workv1.ManifestWorkFinalizer))

		By("applying each manifest, owned by the work's AppliedManifestWork")
		applied := &workv1.AppliedManifestWork{}
		Eventually(func(g Gomega) {
			g.Expect(regionalClient.Get(ctx, client.ObjectKey{Name: agent.AppliedManifestWorkName(workKey.Name)}, applied)).To(Succeed())
			g.Expect(applied.Status.AppliedResources).To(HaveLen(3))
		}).Should(Succeed())
		Expect(applied.Spec.ManifestWorkName).To(Equal(workKey.Name))
		owner := metav1.OwnerReference{APIVersion: "work.open-cluster-management.io/v1", Kind: "AppliedManifestWork",
			Name: applied.Name, UID: applied.UID}
		for _, o := range []struct {
			key client.ObjectKey
			obj client.Object
		}{
			{client.ObjectKey{Name: namespace}, &corev1.Namespace{}}, {mcuKey, regionalMCU()}, {cmKey, &corev1.ConfigMap{}},
		} {
			Expect(regionalClient.Get(ctx, o.key, o.obj)).To(Succeed())
			Expect(o.obj.GetOwnerReferences()).To(ConsistOf(owner), "owner of %s", o.key)
			Expect(applied.Status.AppliedResources).To(ContainElement(HaveField("UID", string(o.obj.GetUID()))))
		}

		By("reporting the work Applied and Available, each manifest with its resource and conditions")
		Eventually(func(g Gomega) {
			g.Expect(global.Client.Get(ctx, workKey, work)).To(Succeed())
			g.Expect(work.Status.Conditions).To(ContainElements(
				trueCondition(workv1.WorkApplied, "AppliedManifestWorkComplete"),
				trueCondition(workv1.WorkAvailable, "ResourcesAvailable"),
			))
			g.Expect(work.Status.ResourceStatus.Manifests).To(HaveLen(3))
		}).Should(Succeed())
		m := work.Status.ResourceStatus.Manifests[1]
		Expect(m.ResourceMeta).To(Equal(workv1.ManifestResourceMeta{Ordinal: 1, Group: mcuGVK.Group, Version: mcuGVK.Version,
			Kind: mcuGVK.Kind, Resource: "managedclustersupgrades", Namespace: namespace, Name: mcuName}))
		Expect(m.Conditions).To(ConsistOf(
			trueCondition(workv1.ManifestApplied, "AppliedManifestComplete"),
			trueCondition(workv1.ManifestAvailable, "ResourceAvailable"),
			trueCondition("StatusFeedbackSynced", "StatusFeedbackSynced"),
		))
		Expect(m.StatusFeedbacks.Values).To(BeEmpty(), "the upgrade has no status yet")
		Expect(work.Status.ResourceStatus.Manifests[0].Conditions).To(ContainElement(
			trueCondition("StatusFeedbackSynced", "NoStatusFeedbackSynced")))
	})

	It("reports the object's status as feedback, and follows it as it changes on the regional hub", func(ctx SpecContext) {
		setStatus(ctx, mcuKey, 3, metav1.ConditionTrue)
		Eventually(func(g Gomega) map[string]any { return feedback(ctx, g, workKey) }).
			Should(Equal(map[string]any{"complete": int64(3), "completeCondition": "True"}))

		setStatus(ctx, mcuKey, 5, metav1.ConditionFalse)
		Eventually(func(g Gomega) map[string]any { return feedback(ctx, g, workKey) }).
			Should(Equal(map[string]any{"complete": int64(5), "completeCondition": "False"}))
	})

	It("applies a changed work, keeping what the regional hub added, and deletes what the work no longer holds", func(ctx SpecContext) {
		obj := regionalMCU()
		Expect(regionalClient.Get(ctx, mcuKey, obj)).To(Succeed())
		obj.SetLabels(map[string]string{"added-by": "regional"})
		Expect(regionalClient.Update(ctx, obj)).To(Succeed())

		generation := updateWork(ctx, workKey, func(w *workv1.ManifestWork) {
			w.Spec.Workload.Manifests = []workv1.Manifest{w.Spec.Workload.Manifests[0],
				manifest(mcu(namespace, mcuName, 20, map[string]any{"train": "a"}))}
		})

		Eventually(func(g Gomega) {
			g.Expect(regionalClient.Get(ctx, mcuKey, obj)).To(Succeed())
			g.Expect(obj.GetLabels()).To(Equal(map[string]string{"added-by": "regional", "train": "a"}))
			g.Expect(maxConcurrency(obj)).To(Equal(int64(20)))
		}).Should(Succeed())
		complete, _, _ := unstructured.NestedInt64(obj.Object, "status", "clustersSummary", "complete")
		Expect(complete).To(Equal(int64(5)), "an update of the object keeps its status")
		Eventually(func() error { return regionalClient.Get(ctx, cmKey, &corev1.ConfigMap{}) }).
			Should(Satisfy(apierrors.IsNotFound), "the ConfigMap the work no longer holds is deleted")
		Eventually(func(g Gomega) []workv1.ManifestCondition {
			work := &workv1.ManifestWork{}
			g.Expect(global.Client.Get(ctx, workKey, work)).To(Succeed())
			g.Expect(meta.FindStatusCondition(work.Status.Conditions, workv1.WorkApplied)).To(
				HaveField("ObservedGeneration", generation))
			return work.Status.ResourceStatus.Manifests
		}).Should(HaveLen(2))
	})

	It("neither applies nor reports while disconnected, and catches up once reconnected", func(ctx SpecContext) {
		Expect(agent.DisconnectCluster(ctx)).To(Succeed())
		Expect(available(ctx, cluster)).To(Equal(metav1.ConditionUnknown))

		setStatus(ctx, mcuKey, 7, metav1.ConditionTrue)
		generation := updateWork(ctx, workKey, func(w *workv1.ManifestWork) {
			w.Spec.Workload.Manifests[1] = manifest(mcu(namespace, mcuName, 30, map[string]any{"train": "a"}))
		})
		obj := regionalMCU()
		Consistently(func(g Gomega) {
			g.Expect(feedback(ctx, g, workKey)).To(Equal(map[string]any{"complete": int64(5), "completeCondition": "False"}),
				"the global hub keeps the stale feedback")
			g.Expect(regionalClient.Get(ctx, mcuKey, obj)).To(Succeed())
			g.Expect(maxConcurrency(obj)).To(Equal(int64(20)),
				"the changed work is not applied")
		}).WithTimeout(stillFor).Should(Succeed())

		Expect(agent.ReconnectCluster(ctx)).To(Succeed())
		Expect(available(ctx, cluster)).To(Equal(metav1.ConditionTrue))
		Eventually(func(g Gomega) map[string]any { return feedback(ctx, g, workKey) }).
			Should(Equal(map[string]any{"complete": int64(7), "completeCondition": "True"}))
		Eventually(func(g Gomega) {
			g.Expect(regionalClient.Get(ctx, mcuKey, obj)).To(Succeed())
			g.Expect(maxConcurrency(obj)).To(Equal(int64(30)))
			work := &workv1.ManifestWork{}
			g.Expect(global.Client.Get(ctx, workKey, work)).To(Succeed())
			g.Expect(meta.FindStatusCondition(work.Status.Conditions, workv1.WorkApplied)).To(
				HaveField("ObservedGeneration", generation))
		}).Should(Succeed())
	})

	It("deletes what it applied when the work is deleted, and lets the work go once all of it is gone", func(ctx SpecContext) {
		Expect(global.Client.Delete(ctx, &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: workKey.Namespace, Name: workKey.Name}})).
			To(Succeed())

		By("deleting the applied objects; the namespace waits for the namespace controller, and the work with it")
		Eventually(func() error { return regionalClient.Get(ctx, mcuKey, regionalMCU()) }).Should(Satisfy(apierrors.IsNotFound))
		ns := &corev1.Namespace{}
		Eventually(func(g Gomega) {
			g.Expect(regionalClient.Get(ctx, client.ObjectKey{Name: namespace}, ns)).To(Succeed())
			g.Expect(ns.DeletionTimestamp).NotTo(BeNil())
		}).Should(Succeed())
		work := &workv1.ManifestWork{}
		Eventually(func(g Gomega) []metav1.Condition {
			g.Expect(global.Client.Get(ctx, workKey, work)).To(Succeed())
			return work.Status.Conditions
		}).Should(ContainElement(trueCondition(workv1.WorkDeleting, "WorkDeleting")))
		Consistently(func(g Gomega) []string {
			g.Expect(global.Client.Get(ctx, workKey, work)).To(Succeed())
			return work.Finalizers
		}).WithTimeout(stillFor).Should(ContainElement(workv1.ManifestWorkFinalizer), "the work waits for the namespace")
		applied := &workv1.AppliedManifestWork{}
		Expect(regionalClient.Get(ctx, client.ObjectKey{Name: agent.AppliedManifestWorkName(workKey.Name)}, applied)).To(Succeed())
		Expect(applied.DeletionTimestamp).NotTo(BeNil())
		Expect(applied.Status.AppliedResources).To(ConsistOf(HaveField("Name", namespace)), "only the namespace is still being deleted")

		By("letting the work go once the namespace is gone")
		Eventually(func(ctx context.Context) error { return hubagent.FinalizeNamespace(ctx, regional, namespace) }).WithContext(ctx).
			Should(Succeed())
		Eventually(func() error { return global.Client.Get(ctx, workKey, work) }).Should(Satisfy(apierrors.IsNotFound))
		Expect(regionalClient.Get(ctx, client.ObjectKey{Name: agent.AppliedManifestWorkName(workKey.Name)}, &workv1.AppliedManifestWork{})).
			To(Satisfy(apierrors.IsNotFound))
		Expect(regionalClient.Get(ctx, client.ObjectKey{Name: namespace}, ns)).To(Satisfy(apierrors.IsNotFound))
	})

	It("ends when its context is cancelled", func(ctx SpecContext) {
		const other = "regional-2"
		Expect(global.AddClusters(ctx, world.Cluster{Name: other})).To(Succeed())
		agentCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		second, err := hubagent.Start(agentCtx, global, other, regional, hubagent.Options{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(second.Stop)

		cancel()
		Eventually(second.Done()).Should(BeClosed())
		work := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "after-the-end"}}
		Expect(global.Client.Create(ctx, work)).To(Succeed())
		Consistently(func(g Gomega) bool {
			g.Expect(global.Client.Get(ctx, client.ObjectKeyFromObject(work), work)).To(Succeed())
			return controllerutil.ContainsFinalizer(work, workv1.ManifestWorkFinalizer)
		}).WithTimeout(stillFor).Should(BeFalse())
	})
})

// mcu is a ManagedClustersUpgrade as the global hub sends it.
func mcu(namespace, name string, maxConcurrency int64, labels map[string]any) map[string]any {
	metadata := map[string]any{"name": name, "namespace": namespace}
	if labels != nil {
		metadata["labels"] = labels
	}
	return map[string]any{
		"apiVersion": mcuGVK.GroupVersion().String(), "kind": mcuGVK.Kind, "metadata": metadata,
		"spec": map[string]any{
			"clusterSelector": map[string]any{"matchLabels": map[string]any{"du-profile": "4.16"}},
			"clusterVersion":  map[string]any{"channel": "eus-4.16", "version": "4.16.20"},
			"upgradeStrategy": map[string]any{"maxConcurrency": maxConcurrency},
		},
	}
}

func regionalMCU() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(mcuGVK)
	return u
}

// maxConcurrency is the upgrade's spec.upgradeStrategy.maxConcurrency, 0 when unset.
func maxConcurrency(obj *unstructured.Unstructured) int64 {
	n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "upgradeStrategy", "maxConcurrency")
	return n
}

func manifest(obj map[string]any) workv1.Manifest {
	raw, err := json.Marshal(obj)
	Expect(err).NotTo(HaveOccurred())
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
}

// setStatus writes the status of the upgrade on the regional hub, as its operator would.
func setStatus(ctx context.Context, key client.ObjectKey, complete int64, completeCondition metav1.ConditionStatus) {
	obj := regionalMCU()
	Expect(regionalClient.Get(ctx, key, obj)).To(Succeed())
	obj.Object["status"] = map[string]any{
		"clustersSummary": map[string]any{"total": int64(10), "complete": complete, "failed": int64(0),
			"initialized": complete, "partialUpgrade": int64(0), "pending": 10 - complete},
		"conditions": []any{map[string]any{"type": "Complete", "status": string(completeCondition), "reason": "Test",
			"message": "Set by the test", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}},
	}
	Expect(regionalClient.Status().Update(ctx, obj)).To(Succeed())
}

// feedback is the status feedback the global hub reads for the upgrade, by name.
func feedback(ctx context.Context, g Gomega, key client.ObjectKey) map[string]any {
	work := &workv1.ManifestWork{}
	g.Expect(global.Client.Get(ctx, key, work)).To(Succeed())
	values := map[string]any{}
	for _, m := range work.Status.ResourceStatus.Manifests {
		if m.ResourceMeta.Kind != mcuGVK.Kind {
			continue
		}
		for _, v := range m.StatusFeedbacks.Values {
			switch v.Value.Type {
			case workv1.Integer:
				values[v.Name] = *v.Value.Integer
			case workv1.String:
				values[v.Name] = *v.Value.String
			default:
				values[v.Name] = v.Value
			}
		}
	}
	return values
}

// updateWork changes the work on the global hub and returns its new generation.
func updateWork(ctx context.Context, key client.ObjectKey, change func(*workv1.ManifestWork)) int64 {
	work := &workv1.ManifestWork{}
	Expect(global.Client.Get(ctx, key, work)).To(Succeed())
	change(work)
	Expect(global.Client.Update(ctx, work)).To(Succeed())
	return work.Generation
}

func available(ctx context.Context, cluster string) metav1.ConditionStatus {
	mc := &clusterv1.ManagedCluster{}
	Expect(global.Client.Get(ctx, client.ObjectKey{Name: cluster}, mc)).To(Succeed())
	c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
	Expect(c).NotTo(BeNil())
	return c.Status
}

// trueCondition matches a condition of the type that is True for the reason.
func trueCondition(conditionType, reason string) OmegaMatcher {
	return And(HaveField("Type", conditionType), HaveField("Status", metav1.ConditionTrue), HaveField("Reason", reason))
}
