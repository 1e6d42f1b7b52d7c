package sim_test

import (
	"context"
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

const hookNS = "upgrade-hooks"

var jobGVK = batchv1.SchemeGroupVersion.WithKind("Job")

// manifest is a ManifestWork manifest from its JSON.
func manifest(json string) workv1.Manifest {
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(json)}}
}

// hookConfigMap is a ConfigMap manifest in hookNS.
func hookConfigMap(name, x string) workv1.Manifest {
	return manifest(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "` + name + `", "namespace": "` + hookNS +
		`"}, "data": {"x": "` + x + `"}}`)
}

// hookJob is the manifest of the Job pre-upgrade in hookNS, which fails at its first failed pod.
func hookJob() workv1.Manifest {
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: "pre-upgrade", Namespace: hookNS},
		Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](0), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "hook", Image: "quay.io/example/hook:1"}},
		}}},
	}
	raw, err := json.Marshal(job)
	Expect(err).NotTo(HaveOccurred())
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
}

// hookJobConfig has the Job pre-upgrade report Complete (well-known), Degraded (CEL) and
// its succeeded count.
var hookJobConfig = workv1.ManifestConfigOption{
	ResourceIdentifier: workv1.ResourceIdentifier{Group: "batch", Resource: "jobs", Namespace: hookNS, Name: "pre-upgrade"},
	ConditionRules: []workv1.ConditionRule{
		{Type: workv1.WellKnownConditionsType, Condition: workv1.ManifestComplete},
		{Type: workv1.CelConditionExpressionsType, Condition: workv1.ManifestDegraded,
			CelExpressions:    []string{"has(object.status.failed) && object.status.failed > 0"},
			MessageExpression: `result ? "The hook failed" : "The hook has not failed"`},
	},
	FeedbackRules: []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JsonPaths: []workv1.JsonPath{{Name: "succeeded", Path: ".status.succeeded"}}}},
}

var namespaceManifest = manifest(`{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "` + hookNS + `"}}`)

// createWork creates a ManifestWork in a cluster namespace.
func createWork(ctx context.Context, cluster, name string, spec workv1.ManifestWorkSpec) {
	ExpectWithOffset(1, hub.Client.Create(ctx, &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name}, Spec: spec,
	})).To(Succeed())
}

// storedWork returns a ManifestWork as the hub stores it.
func storedWork(ctx context.Context, cluster, name string) func(Gomega) *workv1.ManifestWork {
	return func(g Gomega) *workv1.ManifestWork {
		work := &workv1.ManifestWork{}
		g.Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, work)).To(Succeed())
		return work
	}
}

// workGone tells whether a ManifestWork is gone from the hub.
func workGone(ctx context.Context, cluster, name string) func() bool {
	return func() bool {
		return apierrors.IsNotFound(hub.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, &workv1.ManifestWork{}))
	}
}

// condition matches conditions holding one of type t with status and reason.
func condition(t string, status metav1.ConditionStatus, reason string) OmegaMatcher {
	return ContainElement(And(HaveField("Type", t), HaveField("Status", status), HaveField("Reason", reason)))
}

// workConditions matches a ManifestWork whose conditions match each of ms.
func workConditions(ms ...OmegaMatcher) OmegaMatcher {
	fields := make([]OmegaMatcher, len(ms))
	for i, m := range ms {
		fields[i] = HaveField("Status.Conditions", m)
	}
	return And(fields...)
}

// manifestStatus returns the status of a work's manifest of a kind and name.
func manifestStatus(work *workv1.ManifestWork, kind, name string) workv1.ManifestCondition {
	for _, m := range work.Status.ResourceStatus.Manifests {
		if m.ResourceMeta.Kind == kind && m.ResourceMeta.Name == name {
			return m
		}
	}
	Fail("no status for " + kind + " " + name)
	return workv1.ManifestCondition{}
}

// createNamespace creates hookNS on a spoke, as an outside actor.
func createNamespace(s *sim.Simulator, cluster string) {
	ns := &unstructured.Unstructured{}
	ns.SetGroupVersionKind(configpolicy.NamespaceGVK)
	ns.SetName(hookNS)
	ExpectWithOffset(1, s.Mutate(cluster, func(objects configpolicy.Store) error { return objects.Create(ns) })).To(Succeed())
}

var _ = Describe("ManifestWorks", Ordered, func() {
	var (
		runners = &jobRunners{plays: map[string]func(context.Context, *batchv1.Job) sim.JobResult{}, ran: map[string][]string{}}
		workSim *sim.Simulator
	)

	BeforeAll(func(ctx SpecContext) {
		var err error
		workSim, err = sim.Start(ctx, hub, sim.Options{
			Logger: zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)), JobRunner: runners.run,
		})
		Expect(err).NotTo(HaveOccurred())
	})

	join := func(ctx context.Context, name string, play func(context.Context, *batchv1.Job) sim.JobResult) string {
		Expect(hub.AddClusters(ctx, world.Cluster{Name: name})).To(Succeed())
		Expect(workSim.AddSpokes(sim.SpokeSpec{Name: name, Version: "4.16.10", Channel: "stable-4.16"})).To(Succeed())
		runners.set(name, play)
		return name
	}
	succeed := func(context.Context, *batchv1.Job) sim.JobResult { return sim.JobSucceeded("") }

	// spokeData returns a ConfigMap's data on a spoke of workSim.
	spokeData := func(cluster, name string) func(Gomega) map[string]any {
		return func(g Gomega) map[string]any {
			cm, err := workSim.Object(cluster, configMapGVK, hookNS, name)
			g.Expect(err).NotTo(HaveOccurred())
			data, _ := cm.Object["data"].(map[string]any)
			return data
		}
	}
	It("apply their manifests, report their status and rules, and delete what they own", func(ctx SpecContext) {
		release := make(chan struct{})
		cluster := join(ctx, "works-ok", func(ctx context.Context, _ *batchv1.Job) sim.JobResult {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return sim.JobSucceeded("done")
		})
		createWork(ctx, cluster, "hooks", workv1.ManifestWorkSpec{
			Workload:        workv1.ManifestsTemplate{Manifests: []workv1.Manifest{namespaceManifest, hookConfigMap("settings", "1"), hookJob()}},
			ManifestConfigs: []workv1.ManifestConfigOption{hookJobConfig},
		})

		By("applying: Applied and Available, the Job not Complete while its pod runs")
		Eventually(storedWork(ctx, cluster, "hooks")).WithTimeout(10 * time.Second).Should(And(
			HaveField("Finalizers", ContainElement("cluster.open-cluster-management.io/manifest-work-cleanup")),
			workConditions(
				condition(workv1.WorkApplied, metav1.ConditionTrue, "AppliedManifestWorkComplete"),
				condition(workv1.WorkAvailable, metav1.ConditionTrue, "ResourcesAvailable"),
				condition(workv1.WorkComplete, metav1.ConditionFalse, "ConditionRulesAggregated"),
				condition(workv1.WorkDegraded, metav1.ConditionFalse, "ConditionRulesAggregated")),
		))
		Expect(spokeData(cluster, "settings")(Default)).To(Equal(map[string]any{"x": "1"}))
		job, err := workSim.Object(cluster, jobGVK, hookNS, "pre-upgrade")
		Expect(err).NotTo(HaveOccurred())
		Expect(job.GetOwnerReferences()).To(ConsistOf(And(
			HaveField("Kind", "AppliedManifestWork"), HaveField("APIVersion", "work.open-cluster-management.io/v1"))))

		By("finishing the Job: Complete, with the succeeded count fed back")
		close(release)
		Eventually(storedWork(ctx, cluster, "hooks")).WithTimeout(10 * time.Second).Should(
			workConditions(condition(workv1.WorkComplete, metav1.ConditionTrue, "ConditionRulesAggregated")))
		Expect(runners.jobsRun(cluster)).To(Equal([]string{hookNS + "/pre-upgrade"}), "the simulator's Job controller ran it")
		work := storedWork(ctx, cluster, "hooks")(Default)
		status := manifestStatus(work, "Job", "pre-upgrade")
		Expect(status.ResourceMeta).To(Equal(workv1.ManifestResourceMeta{
			Ordinal: 2, Group: "batch", Version: "v1", Kind: "Job", Resource: "jobs", Name: "pre-upgrade", Namespace: hookNS}))
		Expect(status.Conditions).To(And(
			condition(workv1.ManifestApplied, metav1.ConditionTrue, workv1.AppliedManifestComplete),
			condition(workv1.ManifestAvailable, metav1.ConditionTrue, "ResourceAvailable"),
			condition(workv1.ManifestDegraded, metav1.ConditionFalse, workv1.ConditionRuleEvaluated),
			ContainElement(And(HaveField("Type", workv1.ManifestComplete), HaveField("Status", metav1.ConditionTrue),
				HaveField("Message", "Job is finished"), HaveField("ObservedGeneration", work.Generation))),
		))
		Expect(status.StatusFeedbacks.Values).To(Equal([]workv1.FeedbackValue{
			{Name: "succeeded", Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To[int64](1)}}}))
		Expect(manifestStatus(work, "ConfigMap", "settings").ResourceMeta).To(Equal(workv1.ManifestResourceMeta{
			Ordinal: 1, Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Name: "settings", Namespace: hookNS}))

		By("deleting the work: what it owns goes, then the work")
		Expect(hub.Client.Delete(ctx, work)).To(Succeed())
		Eventually(workGone(ctx, cluster, "hooks")).WithTimeout(10 * time.Second).Should(BeTrue())
		_, err = workSim.Object(cluster, configMapGVK, hookNS, "settings")
		Expect(err).To(MatchError(configpolicy.ErrNotFound))
		_, err = workSim.Object(cluster, jobGVK, hookNS, "pre-upgrade")
		Expect(err).To(MatchError(configpolicy.ErrNotFound))
	})

	It("report a failed Job Degraded through a CEL rule", func(ctx SpecContext) {
		cluster := join(ctx, "works-fail", func(context.Context, *batchv1.Job) sim.JobResult { return sim.JobFailed("hook failed") })
		createWork(ctx, cluster, "hooks", workv1.ManifestWorkSpec{
			Workload:        workv1.ManifestsTemplate{Manifests: []workv1.Manifest{namespaceManifest, hookJob()}},
			ManifestConfigs: []workv1.ManifestConfigOption{hookJobConfig},
		})
		Eventually(storedWork(ctx, cluster, "hooks")).WithTimeout(10 * time.Second).Should(workConditions(
			condition(workv1.WorkDegraded, metav1.ConditionTrue, "ConditionRulesAggregated"),
			// The well-known rule counts a failed Job as finished.
			condition(workv1.WorkComplete, metav1.ConditionTrue, "ConditionRulesAggregated"),
		))
		status := manifestStatus(storedWork(ctx, cluster, "hooks")(Default), "Job", "pre-upgrade")
		Expect(status.Conditions).To(ContainElement(And(HaveField("Type", workv1.ManifestDegraded),
			HaveField("Status", metav1.ConditionTrue), HaveField("Message", "The hook failed"))))
		Expect(status.StatusFeedbacks.Values).To(BeEmpty(), "no pod succeeded")
	})

	It("never update a CreateOnly manifest, and restore an Update one", func(ctx SpecContext) {
		cluster := join(ctx, "works-createonly", succeed)
		createNamespace(workSim, cluster)
		createWork(ctx, cluster, "settings", workv1.ManifestWorkSpec{
			Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{hookConfigMap("kept", "1"), hookConfigMap("restored", "1")}},
			ManifestConfigs: []workv1.ManifestConfigOption{{
				ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: hookNS, Name: "kept"},
				UpdateStrategy:     &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeCreateOnly},
			}},
		})
		Eventually(storedWork(ctx, cluster, "settings")).WithTimeout(10 * time.Second).Should(
			workConditions(condition(workv1.WorkApplied, metav1.ConditionTrue, "AppliedManifestWorkComplete")))
		Expect(spokeData(cluster, "kept")(Default)).To(Equal(map[string]any{"x": "1"}), "created")

		Expect(workSim.Mutate(cluster, func(objects configpolicy.Store) error {
			for _, name := range []string{"kept", "restored"} {
				cm, err := objects.Get(configMapGVK, hookNS, name)
				if err != nil {
					return err
				}
				changed := cm.DeepCopy()
				changed.Object["data"] = map[string]any{"x": "changed"}
				if err := objects.Update(changed); err != nil {
					return err
				}
			}
			return nil
		})).To(Succeed())
		Eventually(spokeData(cluster, "restored")).WithTimeout(10 * time.Second).Should(Equal(map[string]any{"x": "1"}))
		Expect(spokeData(cluster, "kept")(Default)).To(Equal(map[string]any{"x": "changed"}))
	})

	It("keep what Orphan and SelectivelyOrphan orphan when deleted", func(ctx SpecContext) {
		cluster := join(ctx, "works-orphan", succeed)
		createNamespace(workSim, cluster)
		createWork(ctx, cluster, "orphan", workv1.ManifestWorkSpec{
			Workload:     workv1.ManifestsTemplate{Manifests: []workv1.Manifest{hookConfigMap("all-kept", "1")}},
			DeleteOption: &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeOrphan},
		})
		createWork(ctx, cluster, "selective", workv1.ManifestWorkSpec{
			Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{hookConfigMap("kept", "1"), hookConfigMap("deleted", "1")}},
			DeleteOption: &workv1.DeleteOption{
				PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan,
				SelectivelyOrphan: &workv1.SelectivelyOrphan{OrphaningRules: []workv1.OrphaningRule{
					{Resource: "configmaps", Namespace: hookNS, Name: "kept"}}},
			},
		})
		for _, name := range []string{"orphan", "selective"} {
			Eventually(storedWork(ctx, cluster, name)).WithTimeout(10 * time.Second).Should(
				workConditions(condition(workv1.WorkAvailable, metav1.ConditionTrue, "ResourcesAvailable")))
		}
		cm, err := workSim.Object(cluster, configMapGVK, hookNS, "all-kept")
		Expect(err).NotTo(HaveOccurred())
		Expect(cm.GetOwnerReferences()).To(BeEmpty(), "an orphaned object carries no owner reference")

		for _, name := range []string{"orphan", "selective"} {
			Expect(hub.Client.Delete(ctx, storedWork(ctx, cluster, name)(Default))).To(Succeed())
			Eventually(workGone(ctx, cluster, name)).WithTimeout(10 * time.Second).Should(BeTrue())
		}
		Expect(spokeData(cluster, "all-kept")(Default)).To(Equal(map[string]any{"x": "1"}))
		Expect(spokeData(cluster, "kept")(Default)).To(Equal(map[string]any{"x": "1"}))
		_, err = workSim.Object(cluster, configMapGVK, hookNS, "deleted")
		Expect(err).To(MatchError(configpolicy.ErrNotFound))
	})

	It("report manifests that cannot be applied Applied=False", func(ctx SpecContext) {
		cluster := join(ctx, "works-bad", succeed)
		createNamespace(workSim, cluster)
		createWork(ctx, cluster, "bad", workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
			manifest(`{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "` + hookNS + `"}}`),
			manifest(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "` + hookNS + `"}}`),
			hookConfigMap("good", "1"),
		}}})
		Eventually(storedWork(ctx, cluster, "bad")).WithTimeout(10 * time.Second).Should(workConditions(
			condition(workv1.WorkApplied, metav1.ConditionFalse, "AppliedManifestWorkFailed"),
			condition(workv1.WorkAvailable, metav1.ConditionUnknown, "ResourcesStatusUnknown"),
		))
		work := storedWork(ctx, cluster, "bad")(Default)
		Expect(manifestStatus(work, "Deployment", "d").Conditions).To(ContainElement(And(
			HaveField("Type", workv1.ManifestApplied), HaveField("Status", metav1.ConditionFalse), HaveField("Reason", workv1.AppliedManifestFailed),
			HaveField("Message", `Failed to apply manifest: the server doesn't have a resource type "Deployment"`))))
		Expect(manifestStatus(work, "ConfigMap", "").Conditions).To(ContainElement(And(
			HaveField("Type", workv1.ManifestApplied), HaveField("Status", metav1.ConditionFalse), HaveField("Reason", workv1.AppliedManifestFailed),
			HaveField("Message", ContainSubstring("resource name may not be empty")))))
		Expect(manifestStatus(work, "ConfigMap", "good").Conditions).To(And(
			condition(workv1.ManifestApplied, metav1.ConditionTrue, workv1.AppliedManifestComplete),
			condition(workv1.ManifestAvailable, metav1.ConditionTrue, "ResourceAvailable")))
	})

	It("leave the works of an unreachable spoke alone", func(ctx SpecContext) {
		cluster := join(ctx, "works-away", succeed)
		createNamespace(workSim, cluster)
		createWork(ctx, cluster, "settings", workv1.ManifestWorkSpec{
			Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{hookConfigMap("settings", "1")}},
		})
		Eventually(storedWork(ctx, cluster, "settings")).WithTimeout(10 * time.Second).Should(
			workConditions(condition(workv1.WorkAvailable, metav1.ConditionTrue, "ResourcesAvailable")))
		before := storedWork(ctx, cluster, "settings")(Default)

		Expect(workSim.SetReachable(ctx, cluster, false)).To(Succeed())
		changed := before.DeepCopy()
		changed.Spec.Workload.Manifests = []workv1.Manifest{hookConfigMap("settings", "2")}
		Expect(hub.Client.Update(ctx, changed)).To(Succeed())
		Consistently(func(g Gomega) workv1.ManifestWorkStatus {
			return storedWork(ctx, cluster, "settings")(g).Status
		}).WithTimeout(2 * time.Second).Should(Equal(before.Status))
		Expect(spokeData(cluster, "settings")(Default)).To(Equal(map[string]any{"x": "1"}))

		Expect(workSim.SetReachable(ctx, cluster, true)).To(Succeed())
		Eventually(spokeData(cluster, "settings")).WithTimeout(10 * time.Second).Should(Equal(map[string]any{"x": "2"}))
		Eventually(func(g Gomega) int64 {
			c := meta.FindStatusCondition(storedWork(ctx, cluster, "settings")(g).Status.Conditions, workv1.WorkApplied)
			g.Expect(c).NotTo(BeNil())
			return c.ObservedGeneration
		}).WithTimeout(10 * time.Second).Should(BeNumerically(">", before.Generation))
	})
})
