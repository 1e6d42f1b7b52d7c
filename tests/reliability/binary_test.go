package reliability_test

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/ibgu"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/precache/pull/pulltest"
	"github.com/cgu-operator/cgu-operator/pkg/talmjob"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

// The operator's production binary (cmd/manager) runs as a process against the hub, with
// leader election on, and is SIGKILLed at points of each phase of a rollout: nothing of it
// survives a kill but what it wrote to the hub. At each kill, the rollout's Placements select
// only clusters of batches that started; at the end, every batch ran once and in order, every
// cluster completed, and nothing is left enforcing. The in-process operator of the suite is
// stopped meanwhile.
var _ = Describe("The operator's binary SIGKILLed", Ordered, func() {
	var (
		bins *harness.Binaries
		proc *harness.Process
	)
	start := func() {
		GinkgoHelper()
		var err error
		proc, err = bins.Start()
		Expect(err).NotTo(HaveOccurred())
	}
	BeforeAll(func(ctx SpecContext) {
		var err error
		bins, err = fleet.BuildBinary(ctx, GinkgoT().TempDir(), GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Expect(fleet.StopOperator(false)).To(Succeed())
		// Cleanups run last registered first: the binary stops, then the suite's operator
		// starts again, whatever the stop returned.
		DeferCleanup(func() {
			_, err := fleet.StartOperator()
			Expect(err).NotTo(HaveOccurred())
		})
		start()
		DeferCleanup(func() { Expect(proc.Stop()).To(Succeed()) })
	})

	// killAt waits until point holds, SIGKILLs the binary, checks that the rollout's
	// Placements select only clusters of batches that started, and starts it again.
	kills := 0
	killAt := func(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, what string, point func(Gomega) bool) {
		GinkgoHelper()
		By("SIGKILL " + what)
		Eventually(point).WithTimeout(settle).Should(BeTrue(), what)
		Expect(proc.Kill()).To(Succeed())
		kills++
		if cgu != nil {
			Expect(reachedClusters(ctx, cgu)).To(ContainElements(selected(ctx, cgu)(Default)), "enforced past the batch starting, at %s", what)
		}
		start()
	}
	finish := func(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, log *recordLog, clusters []string, batches int) {
		GinkgoHelper()
		Eventually(state(ctx, cgu)).WithTimeout(2 * settle).Should(Equal(ranv1alpha1.StateCompleted))
		log.expectClean(batches)
		expectBatchesInOrder(ctx, cgu, clusters, batches, nil)
		expectEachBatchStartedOnce(ctx, cgu)
		Expect(stored(ctx, cgu)(Default).Status.Counts).To(HaveField("Completed", len(clusters)))
	}

	It("through pre-caching, backup and each batch: each Job runs, each batch once, nothing left enforcing", func(ctx SpecContext) {
		clusters, cgu, log := upgradeRollout(ctx, "binprep", 4, 2, time.Second)
		// What to pre-cache: a release and its images in a local registry, which the spokes'
		// precache program pulls.
		spec := pulltest.NewFixture(GinkgoT()).Spec()
		pc := &ranv1alpha1.PreCachingConfig{ObjectMeta: metav1.ObjectMeta{Namespace: cgu.Namespace, Name: "precache"},
			Spec: ranv1alpha1.PreCachingConfigSpec{SpaceRequired: "1Mi", AdditionalImages: spec.AdditionalImages,
				Overrides: ranv1alpha1.PrecacheOverrides{PlatformImage: spec.PlatformImage}}}
		Expect(client.IgnoreAlreadyExists(fleet.Hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cgu.Namespace}}))).To(Succeed())
		Expect(fleet.Hub.Client.Create(ctx, pc)).To(Succeed())
		cgu.Spec.PreCaching, cgu.Spec.Backup = true, true
		cgu.Spec.PreCachingConfigRef = ranv1alpha1.PreCachingConfigCR{Namespace: pc.Namespace, Name: pc.Name}
		fleet.MustCreate(ctx, cgu)
		killAt(ctx, cgu, "while pre-caching Jobs are requested", jobRequested(ctx, clusters, talmjob.Precache))
		killAt(ctx, cgu, "while backup Jobs are requested", jobRequested(ctx, clusters, talmjob.Backup))
		killAt(ctx, cgu, "once batch 1 started", func(Gomega) bool { return log.started() >= 1 })
		killAt(ctx, cgu, "with batch 1 half done", func(Gomega) bool { return log.completedIn(1) > 0 || log.finished(1) })
		killAt(ctx, cgu, "once batch 2 started", func(Gomega) bool { return log.started() >= 2 })
		finish(ctx, cgu, log, clusters, 2)
		Expect(stored(ctx, cgu)(Default).Status.Backup).NotTo(BeNil())
		expectUpgraded(clusters)
		Eventually(leftovers(ctx, cgu)).WithTimeout(settle).Should(BeZero())
		expectNothingEnforcing(ctx, cgu, clusters)
	})

	It("through ManifestWork steps: each step once per cluster, batch by batch, every ManifestWork deleted", func(ctx SpecContext) {
		const label, ns, hooks = "binworks", "cgu-binworks", "binworks-hooks"
		clusters := joinFleet(ctx, label, 4, time.Second)
		Expect(fleet.Sim.AddNamespace(hooks, clusters...)).To(Succeed())
		Expect(client.IgnoreAlreadyExists(fleet.Hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
		steps := []string{"step-a", "step-b"}
		for _, s := range steps {
			Expect(fleet.Hub.Client.Create(ctx, configMapTemplate(ns, s, hooks))).To(Succeed())
		}
		cgu := rolloutOf(ns, clusters, 2)
		cgu.Spec.ManifestWorkTemplates = steps
		log := watchRecords(ctx, cgu)
		fleet.MustCreate(ctx, cgu)
		killAt(ctx, cgu, "once the first step's ManifestWork is made", workMade(ctx, cgu, steps[0], clusters[0]))
		killAt(ctx, cgu, "once the second step's ManifestWork is made", workMade(ctx, cgu, steps[1], clusters[0]))
		killAt(ctx, cgu, "once batch 2 started", func(Gomega) bool { return log.started() >= 2 })
		killAt(ctx, cgu, "with batch 2 on its second step", workMade(ctx, cgu, steps[1], clusters[2]))
		finish(ctx, cgu, log, clusters, 2)
		Eventually(works(ctx, cgu)).WithTimeout(settle).Should(BeZero(), "the ManifestWorks are deleted")
	})

	It("through an image-based group upgrade: each step's rollout once, every ended step's ManifestWork deleted", func(ctx SpecContext) {
		const ns = "cgu-binibgu"
		clusters, err := fleet.JoinFleetWith(ctx, "binibgu", 4, func(s *sim.SpokeSpec) {
			s.LifecycleAgent = &sim.LifecycleAgentBehaviour{Durations: map[string]time.Duration{sim.StagePrep: 500 * time.Millisecond, sim.StageUpgrade: time.Second}}
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(fleet.Sim.AddNamespace("openshift-lifecycle-agent", clusters...)).To(Succeed())
		Expect(client.IgnoreAlreadyExists(fleet.Hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
		step := func(actions ...lcmv1alpha1.Action) lcmv1alpha1.PlanItem {
			return lcmv1alpha1.PlanItem{Actions: actions, RolloutStrategy: lcmv1alpha1.RolloutStrategy{MaxConcurrency: 2, Timeout: 60}}
		}
		plan := []lcmv1alpha1.PlanItem{step(lcmv1alpha1.ActionPrep), step(lcmv1alpha1.ActionUpgrade, lcmv1alpha1.ActionFinalizeUpgrade)}
		g := &lcmv1alpha1.ImageBasedGroupUpgrade{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "to-4.18"},
			Spec: lcmv1alpha1.ImageBasedGroupUpgradeSpec{
				IBUSpec: lcmv1alpha1.ImageBasedUpgradeSpec{
					SeedImageRef: lcmv1alpha1.SeedImageRef{Image: "quay.io/example/seed:4.18.1", Version: "4.18.1"},
				},
				ClusterLabelSelectors: []ranv1alpha1.ClusterLabelSelector{{MatchLabels: map[string]string{"fleet": "binibgu"}}},
				Plan:                  plan,
			},
		}
		Expect(fleet.Hub.Client.Create(ctx, g)).To(Succeed())
		steps := make([]*ranv1alpha1.ClusterGroupUpgrade, len(plan))
		for i, item := range plan {
			steps[i] = &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ibgu.StepName(g.Name, item.Actions, i)}}
		}
		exists := func(cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) bool {
			return func(gm Gomega) bool {
				err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(cgu), &ranv1alpha1.ClusterGroupUpgrade{})
				gm.Expect(client.IgnoreNotFound(err)).To(Succeed())
				return err == nil
			}
		}
		killAt(ctx, steps[0], "once the Prep step's rollout exists", exists(steps[0]))
		killAt(ctx, steps[0], "with the Prep step's first batch started", func(Gomega) bool { return len(startedClusters(ctx, steps[0])) > 0 })
		killAt(ctx, steps[1], "once the Upgrade step's rollout exists", exists(steps[1]))
		killAt(ctx, steps[1], "with the Upgrade step's second batch started", func(Gomega) bool { return len(startedClusters(ctx, steps[1])) > 2 })

		Eventually(func(gm Gomega) []metav1.Condition {
			out := &lcmv1alpha1.ImageBasedGroupUpgrade{}
			gm.Expect(fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(g), out)).To(Succeed())
			return out.Status.Conditions
		}).WithTimeout(2 * settle).Should(ContainElement(And(HaveField("Type", ibgu.ConditionProgressing), HaveField("Reason", ibgu.ReasonCompleted))))
		for _, cgu := range steps {
			Expect(state(ctx, cgu)(Default)).To(Equal(ranv1alpha1.StateCompleted), cgu.Name)
			expectEachBatchStartedOnce(ctx, cgu)
			expectBatchesInOrder(ctx, cgu, clusters, 2, nil)
			Eventually(works(ctx, cgu)).WithTimeout(settle).Should(BeZero(), "the ManifestWorks of step %s are deleted", cgu.Name)
		}
	})

	for _, mode := range []ranv1alpha1.RolloutMode{ranv1alpha1.ModeWindow, ranv1alpha1.ModeProgressive} {
		It("through a "+string(mode)+" rollout and its cleanup: each cluster starts once, nothing left enforcing", func(ctx SpecContext) {
			clusters, cgu, log := upgradeRollout(ctx, "bin"+strings.ToLower(string(mode)), 12, 4, time.Second)
			cgu.Spec.RemediationStrategy.Mode = mode
			fleet.MustCreate(ctx, cgu)
			for i := 1; i <= 3; i++ {
				killAt(ctx, cgu, "with clusters of the batch completing", func(Gomega) bool {
					return log.completedIn(1) >= i*2 || state(ctx, cgu)(Default) == ranv1alpha1.StateCompleted
				})
			}
			killAt(ctx, cgu, "as the rollout completes, its cleanup under way", func(g Gomega) bool {
				return state(ctx, cgu)(g) == ranv1alpha1.StateCompleted
			})
			finish(ctx, cgu, log, clusters, 1)
			expectUpgraded(clusters)
			Eventually(leftovers(ctx, cgu)).WithTimeout(settle).Should(BeZero())
			expectNothingEnforcing(ctx, cgu, clusters)
			AddReportEntry("binary SIGKILLs so far", kills)
		})
	}
})

// reachedClusters are the clusters a rollout may enforce: those of its batches that
// started, and those of the first one that did not. The enforcement of a batch is written
// before its record's start (apply.go), so a kill between the two leaves the batch enforced
// with its record behind, which the restarted operator carries on.
func reachedClusters(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) []string {
	GinkgoHelper()
	var out []string
	for _, b := range records(ctx, cgu)(Default) {
		out = append(out, b.Spec.Clusters...)
		if b.Status.StartedAt == nil && b.Spec.Part == max(b.Spec.Parts, 1)-1 {
			break
		}
	}
	return out
}

// startedClusters are the clusters of the rollout's batches that started.
func startedClusters(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) []string {
	GinkgoHelper()
	var out []string
	for _, b := range records(ctx, cgu)(Default) {
		if b.Status.StartedAt != nil {
			out = append(out, b.Spec.Clusters...)
		}
	}
	return out
}

// jobRequested tells whether the pre-start Job of a protocol was requested on at least one
// of the clusters: the action that creates it exists.
func jobRequested(ctx context.Context, clusters []string, proto talmjob.Protocol) func(Gomega) bool {
	return func(g Gomega) bool {
		for _, c := range clusters {
			err := fleet.Hub.Client.Get(ctx, client.ObjectKey{Namespace: c, Name: proto.JobAction()}, &actionv1beta1.ManagedClusterAction{})
			if err == nil {
				return true
			}
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "reading the action %s of %s: %v", proto.JobAction(), c, err)
		}
		return false
	}
}

// configMapTemplate is a ManifestWorkReplicaSet that leaves a ConfigMap named after it in
// namespace on the spoke: done once the work agent applied it.
func configMapTemplate(ns, name, namespace string) *workv1alpha1.ManifestWorkReplicaSet {
	t := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: "none"}}}}
	t.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{{RawExtension: runtime.RawExtension{Object: &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Data:       map[string]string{"step": name},
	}}}}
	return t
}

// workMade tells whether the rollout's ManifestWork of a step exists on a cluster.
func workMade(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, step, cluster string) func(Gomega) bool {
	return func(g Gomega) bool {
		key := client.ObjectKey{Namespace: cluster, Name: manifestwork.Name(ownership.OwnerOf(cgu), manifestwork.RoleStep, step)}
		err := fleet.Hub.Client.Get(ctx, key, &workv1.ManifestWork{})
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		return err == nil
	}
}

// works counts the rollout's ManifestWorks.
func works(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) int {
	return func(g Gomega) int {
		var list workv1.ManifestWorkList
		g.Expect(fleet.Hub.Client.List(ctx, &list, client.MatchingLabels(ownership.Owner{Namespace: cgu.Namespace, Name: cgu.Name}.Labels()))).To(Succeed())
		return len(list.Items)
	}
}
