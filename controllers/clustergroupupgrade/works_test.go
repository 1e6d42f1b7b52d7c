package clustergroupupgrade_test

import (
	"context"
	"errors"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// jobGate decides how the Jobs named in it end on each cluster, once released; Jobs it does
// not name are left to the harness.
type jobGate struct {
	mu      sync.Mutex
	results map[string]chan sim.JobResult // by cluster/job
}

func newJobGate() *jobGate { return &jobGate{results: map[string]chan sim.JobResult{}} }

func (g *jobGate) channel(cluster, job string) chan sim.JobResult {
	g.mu.Lock()
	defer g.mu.Unlock()
	key := cluster + "/" + job
	if _, ok := g.results[key]; !ok {
		g.results[key] = make(chan sim.JobResult, 1)
	}
	return g.results[key]
}

// gate makes the Job wait on the cluster until released.
func (g *jobGate) gate(cluster, job string) { g.channel(cluster, job) }

// release ends the Job on the cluster with result.
func (g *jobGate) release(cluster, job string, result sim.JobResult) {
	g.channel(cluster, job) <- result
}

func (g *jobGate) play(ctx context.Context, cluster string, job *batchv1.Job) (sim.JobResult, bool) {
	g.mu.Lock()
	ch, ok := g.results[cluster+"/"+job.Name]
	g.mu.Unlock()
	if !ok {
		return sim.JobResult{}, false
	}
	select {
	case r := <-ch:
		ch <- r // a retried pod ends the same way
		return r, true
	case <-ctx.Done():
		return sim.JobFailed("stopped"), true
	}
}

// actionTemplates reads the ManifestWorkReplicaSets of the upgrade-actions sample, put in
// namespace.
func actionTemplates(namespace string) map[string]*workv1alpha1.ManifestWorkReplicaSet {
	templates, err := harness.SampleTemplates("clustergroupupgrade-upgrade-actions.yaml", namespace)
	Expect(err).NotTo(HaveOccurred())
	return templates
}

func createTemplates(ctx context.Context, namespace string, templates ...*workv1alpha1.ManifestWorkReplicaSet) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	Expect(client.IgnoreAlreadyExists(hub.Client.Create(ctx, ns))).To(Succeed())
	for _, t := range templates {
		t.Namespace = namespace
		Expect(hub.Client.Create(ctx, t)).To(Succeed())
	}
}

// runPrep creates the template prep and an enabled rollout of it, one cluster at a time, on
// cluster, whose backup Job waits until the test releases it.
func (g *jobGate) runPrep(ctx context.Context, ns, name string, prep *workv1alpha1.ManifestWorkReplicaSet, cluster string) *ranv1alpha1.ClusterGroupUpgrade {
	createTemplates(ctx, ns, prep)
	withNamespace(hooksNamespace, cluster)
	g.gate(cluster, "backup")
	cgu := newCGU(ns, name, []string{cluster}, 1)
	cgu.Spec.ManifestWorkTemplates = []string{prep.Name}
	enableOnCreate(cgu)
	fleet.MustCreate(ctx, cgu)
	return cgu
}

// workOf returns the ManifestWork of the CGU made from a template for a role on a cluster,
// nil when there is none.
func workOf(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, role manifestwork.Role, template, cluster string) func(Gomega) *workv1.ManifestWork {
	return func(g Gomega) *workv1.ManifestWork {
		w := &workv1.ManifestWork{}
		err := hub.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: manifestwork.Name(ownership.OwnerOf(cgu), role, template)}, w)
		if apierrors.IsNotFound(err) {
			return nil
		}
		g.Expect(err).NotTo(HaveOccurred())
		return w
	}
}

// ownedWorks counts the ManifestWorks labelled as the CGU's, in every namespace.
func ownedWorks(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) int {
	return func(g Gomega) int {
		var list workv1.ManifestWorkList
		g.Expect(hub.Client.List(ctx, &list, client.MatchingLabels(ownership.Owner{Namespace: cgu.Namespace, Name: cgu.Name}.Labels()))).To(Succeed())
		return len(list.Items)
	}
}

// recorded returns the clusters' progress as the CGU's batch records hold it.
func recorded(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) []ranv1alpha1.ClusterProgress {
	return func(g Gomega) []ranv1alpha1.ClusterProgress {
		var records ranv1alpha1.ClusterGroupUpgradeBatchList
		g.Expect(hub.Client.List(ctx, &records, client.InNamespace(cgu.Namespace))).To(Succeed())
		var out []ranv1alpha1.ClusterProgress
		for _, r := range records.Items {
			if r.Spec.Upgrade == cgu.Name {
				out = append(out, r.Status.Clusters...)
			}
		}
		return out
	}
}

func progressOf(name string, st ranv1alpha1.ClusterState, reason string) OmegaMatcher {
	m := And(HaveField("Name", name), HaveField("State", st))
	if reason != "" {
		m = And(m, HaveField("Reason", reason))
	}
	return m
}

// withNamespace makes a namespace on simulated spokes, as an installed operator would.
func withNamespace(name string, clusters ...string) {
	ExpectWithOffset(1, simulator.AddNamespace(name, clusters...)).To(Succeed())
}

// hooksNamespace holds on the spokes what the test's ManifestWorks apply.
const hooksNamespace = "openshift-adp"

// spokeObject returns an object of hooksNamespace on a simulated spoke, nil when it does not
// exist.
func spokeObject(cluster string, gvk schema.GroupVersionKind, name string) func(Gomega) *unstructured.Unstructured {
	return func(g Gomega) *unstructured.Unstructured {
		obj, err := simulator.Object(cluster, gvk, hooksNamespace, name)
		if errors.Is(err, configpolicy.ErrNotFound) {
			return nil
		}
		g.Expect(err).NotTo(HaveOccurred())
		return obj
	}
}

var jobGVK = batchv1.SchemeGroupVersion.WithKind("Job")
var configMapGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")

var _ = Describe("ManifestWork rollouts", func() {
	var jobs *jobGate
	BeforeEach(func() {
		jobs = newJobGate()
		fleet.PlayJobs(jobs.play)
		DeferCleanup(func() { fleet.PlayJobs(nil) })
	})

	It("roll templates out batch by batch as ManifestWorks, step by step, judged by their status and feedback", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "mwsteps", 3)
		passes, fails, later := clusters[0], clusters[1], clusters[2]
		const ns = "cgu-mwsteps"
		// prep runs a Job (the sample's backup template: Complete, Degraded and feedback);
		// finalize leaves a ConfigMap, done once it exists.
		prep := actionTemplates(ns)["backup"]
		prep.Name = "prep"
		finalize := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "finalize"},
			Spec: workv1alpha1.ManifestWorkReplicaSetSpec{PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: "none"}}}}
		finalize.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{{RawExtension: runtime.RawExtension{Object: &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "upgrade-finalized", Namespace: hooksNamespace},
			Data:       map[string]string{"release": "4.16.12"},
		}}}}
		createTemplates(ctx, ns, prep, finalize)
		withNamespace(hooksNamespace, clusters...)
		for _, c := range clusters {
			jobs.gate(c, "backup")
		}

		cgu := newCGU(ns, "steps", clusters, 2)
		cgu.Spec.ManifestWorkTemplates = []string{"prep", "finalize"}
		enableOnCreate(cgu)
		fleet.MustCreate(ctx, cgu)

		By("the first batch gets the first step's ManifestWork; the second batch and the next step wait")
		for _, c := range []string{passes, fails} {
			Eventually(workOf(ctx, cgu, manifestwork.RoleStep, "prep", c)).WithTimeout(settle).Should(And(
				Not(BeNil()), HaveField("Labels", HaveKeyWithValue(manifestwork.LabelRole, "step"))))
		}
		Eventually(spokeObject(passes, jobGVK, "backup")).WithTimeout(settle).ShouldNot(BeNil(), "the work agent applied the Job")
		Expect(workOf(ctx, cgu, manifestwork.RoleStep, "prep", later)(Default)).To(BeNil(), "a cluster of the next batch is not touched")
		Expect(workOf(ctx, cgu, manifestwork.RoleStep, "finalize", passes)(Default)).To(BeNil(), "the next step waits for the Job")
		Expect(recorded(ctx, cgu)(Default)).To(ContainElement(progressOf(passes, ranv1alpha1.ClusterInProgress, "")))
		Expect(fleet.Stored(ctx, cgu)(Default).Status).To(And(
			HaveField("Status.CurrentBatch", 1),
			HaveField("Status.CurrentBatchRemediationProgress", HaveKeyWithValue(passes, PointTo(And(
				HaveField("State", ranv1alpha1.RemediationInProgress), HaveField("ManifestWorkIndex", PointTo(Equal(0))))))),
			HaveField("SafeResourceNames", And(HaveKey("/"+ns+".prep"), HaveKey("/"+ns+".finalize"))),
			HaveField("RemediationPlan", Equal([][]string{{passes, fails}, {later}})),
		), "TALM's view of a ManifestWork rollout")
		Expect(talmConditions(ctx, cgu)(Default)).To(Equal([]string{selected, validated, "Progressing True InProgress"}))

		By("a succeeded Job moves its cluster to the next step; a failed one fails its cluster")
		jobs.release(passes, "backup", sim.JobSucceeded("backed up"))
		jobs.release(fails, "backup", sim.JobFailed("disk full"))
		Eventually(workOf(ctx, cgu, manifestwork.RoleStep, "finalize", passes)).WithTimeout(settle).ShouldNot(BeNil())
		Eventually(recorded(ctx, cgu)).WithTimeout(settle).Should(ContainElements(
			progressOf(passes, ranv1alpha1.ClusterCompleted, ""),
			progressOf(fails, ranv1alpha1.ClusterFailed, manifestwork.ReasonManifestWorkDegraded)))
		Expect(workOf(ctx, cgu, manifestwork.RoleStep, "finalize", fails)(Default)).To(BeNil(), "a failed cluster goes no further")
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Status.Clusters",
			ContainElement(ranv1alpha1.ClusterFinalState{Name: passes, State: "complete"})))
		Expect(spokeObject(passes, configMapGVK, "upgrade-finalized")(Default)).NotTo(BeNil())

		By("the second batch runs once the first is done")
		Eventually(workOf(ctx, cgu, manifestwork.RoleStep, "prep", later)).WithTimeout(settle).ShouldNot(BeNil())
		jobs.release(later, "backup", sim.JobSucceeded("backed up"))
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateTimedOut))
		final := fleet.Stored(ctx, cgu)(Default)
		Expect(final.Status.Counts).To(And(HaveField("Completed", 2), HaveField("Failed", 1)))
		Expect(condition(ctx, cgu, ranv1alpha1.ConditionSucceeded)(Default)).To(HaveField("Reason", ranv1alpha1.ReasonClustersFailed))
		Eventually(talmEvents(ctx, cgu)).Should(HaveKeyWithValue(talm.ActionClusterFailed, 1))
		Expect(talmEventsOf(ctx, cgu, talm.ActionClusterFailed)(Default)[0].Annotations).To(HaveKeyWithValue(talm.AnnotationClusterName, fails))
		Expect(final.Status.Clusters).To(ConsistOf(
			ranv1alpha1.ClusterFinalState{Name: passes, State: "complete"}, ranv1alpha1.ClusterFinalState{Name: later, State: "complete"},
			And(HaveField("Name", fails), HaveField("State", "failed"), HaveField("CurrentManifestWork.Name", "prep"),
				HaveField("CurrentManifestWork.Status.Manifests", ContainElement(HaveField("Conditions",
					ContainElement(And(HaveField("Type", "Degraded"), HaveField("Status", metav1.ConditionTrue)))))))),
			"the failed cluster's step with the ManifestWork's status, as TALM shows it")

		By("deleting the rollout deletes its ManifestWorks, and the work agents what they applied")
		Expect(ownedWorks(ctx, cgu)(Default)).To(Equal(5))
		Expect(hub.Client.Delete(ctx, cgu)).To(Succeed())
		Eventually(ownedWorks(ctx, cgu)).WithTimeout(settle).Should(BeZero())
		Eventually(spokeObject(passes, configMapGVK, "upgrade-finalized")).WithTimeout(settle).Should(BeNil())
	})

	It("play TALM's manifestwork-complete: TALM's names with the name-suffix annotation, frozen, and a cluster listed complete while its batch runs", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "mwsuffix", 2)
		const ns = "cgu-mwsuffix"
		prep := actionTemplates(ns)["backup"]
		prep.Name = "ibu-prep"
		createTemplates(ctx, ns, prep)
		withNamespace(hooksNamespace, clusters...)
		for _, c := range clusters {
			jobs.gate(c, "backup")
		}
		cgu := newCGU(ns, "ibu-upgrade", clusters, 2)
		cgu.Annotations = map[string]string{ranv1alpha1.AnnotationNameSuffix: "kuttl"}
		cgu.Spec.ManifestWorkTemplates = []string{prep.Name}
		enableOnCreate(cgu)
		fleet.MustCreate(ctx, cgu)

		By("the ManifestWorks have TALM's names, <namespace>.<template>-<suffix>, as status.safeResourceNames says")
		work := func(cluster, name string) func(Gomega) error {
			return func(Gomega) error {
				return hub.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, &workv1.ManifestWork{})
			}
		}
		for _, c := range clusters {
			Eventually(work(c, ns+".ibu-prep-kuttl")).WithTimeout(settle).Should(Succeed())
		}
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(HaveField("Status.NameSuffix", "kuttl"),
			HaveField("Status.SafeResourceNames", HaveKeyWithValue("/"+ns+".ibu-prep", ns+".ibu-prep-kuttl"))))

		By("one cluster's step completes: listed complete at once, its batch still running on the other")
		jobs.release(clusters[0], "backup", sim.JobSucceeded("prepared"))
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			HaveField("Status.Clusters", Equal([]ranv1alpha1.ClusterFinalState{{Name: clusters[0], State: "complete"}})),
			HaveField("Status.Status.CurrentBatchRemediationProgress", And(
				HaveKeyWithValue(clusters[0], PointTo(HaveField("State", ranv1alpha1.RemediationCompleted))),
				HaveKeyWithValue(clusters[1], PointTo(HaveField("State", ranv1alpha1.RemediationInProgress))))),
		))

		By("the annotation changed mid-rollout renames nothing: the suffix is frozen at the start")
		fleet.MustUpdate(ctx, cgu, func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Annotations[ranv1alpha1.AnnotationNameSuffix] = "other" })
		jobs.release(clusters[1], "backup", sim.JobSucceeded("prepared"))
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		for _, c := range clusters {
			Expect(work(c, ns+".ibu-prep-other")(Default)).To(MatchError(ContainSubstring("not found")))
		}
		Expect(fleet.Stored(ctx, cgu)(Default).Status.NameSuffix).To(Equal("kuttl"))
	})

	It("run pre-upgrade actions before a cluster starts and post-upgrade actions after it", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "mwactions", 3)
		good, badBackup, badSmoke := clusters[0], clusters[1], clusters[2]
		p := placeUpgradePolicy(ctx, "mwactions", 3)
		const ns = "cgu-mwactions"
		templates := actionTemplates(ns)
		createTemplates(ctx, ns, templates["backup"], templates["smoke-test"])
		withNamespace(hooksNamespace, clusters...)
		for _, c := range clusters {
			jobs.gate(c, "backup")
			jobs.gate(c, "smoke-test")
		}
		cgu := newCGU(ns, "actions", clusters, 3, p.Name)
		cgu.Spec.PreUpgradeActions = []string{"backup"}
		cgu.Spec.PostUpgradeActions = []string{"smoke-test"}
		enableOnCreate(cgu)
		fleet.MustCreate(ctx, cgu)

		By("while its backup runs, a cluster waits and nothing is enforced on it")
		for _, c := range clusters {
			Eventually(workOf(ctx, cgu, manifestwork.RolePre, "backup", c)).WithTimeout(settle).ShouldNot(BeNil())
		}
		Eventually(recorded(ctx, cgu)).WithTimeout(settle).Should(ContainElement(
			progressOf(good, ranv1alpha1.ClusterPending, manifestwork.ReasonPreUpgradeActionPending)))
		Expect(desired(good)(Default)).To(BeEmpty())
		Expect(enforcedOn(ctx, cgu, p.Name)(Default)).To(BeEmpty())
		Expect(workOf(ctx, cgu, manifestwork.RolePost, "smoke-test", good)(Default)).To(BeNil())

		By("a done backup lets its cluster upgrade; a failed one holds its cluster")
		jobs.release(good, "backup", sim.JobSucceeded("backed up"))
		jobs.release(badSmoke, "backup", sim.JobSucceeded("backed up"))
		jobs.release(badBackup, "backup", sim.JobFailed("snapshot failed"))
		Eventually(version(good)).WithTimeout(settle).Should(Equal(to))
		Eventually(version(badSmoke)).WithTimeout(settle).Should(Equal(to))

		By("after its upgrade, a cluster waits for its smoke test, which completes or fails it")
		Eventually(workOf(ctx, cgu, manifestwork.RolePost, "smoke-test", good)).WithTimeout(settle).ShouldNot(BeNil())
		Eventually(recorded(ctx, cgu)).WithTimeout(settle).Should(ContainElement(
			progressOf(good, ranv1alpha1.ClusterInProgress, ranv1alpha1.ReasonVerifying)))
		jobs.release(good, "smoke-test", sim.JobSucceeded("ok"))
		jobs.release(badSmoke, "smoke-test", sim.JobFailed("route unreachable"))
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateTimedOut))
		Expect(recorded(ctx, cgu)(Default)).To(ContainElements(
			progressOf(good, ranv1alpha1.ClusterCompleted, ""),
			progressOf(badBackup, ranv1alpha1.ClusterHeld, manifestwork.ReasonPreUpgradeActionDegraded),
			progressOf(badSmoke, ranv1alpha1.ClusterFailed, manifestwork.ReasonPostUpgradeActionDegraded)))
		Expect(desired(badBackup)(Default)).To(BeEmpty(), "a held cluster is never enforced")
		Expect(workOf(ctx, cgu, manifestwork.RolePost, "smoke-test", badBackup)(Default)).To(BeNil())
		Expect(fleet.Stored(ctx, cgu)(Default).Status.Counts).To(And(HaveField("Completed", 1), HaveField("Failed", 1), HaveField("Held", 1)))

		By("deleting the rollout deletes its ManifestWorks; the smoke test's Job is orphaned as its template says")
		Expect(hub.Client.Delete(ctx, cgu)).To(Succeed())
		Eventually(ownedWorks(ctx, cgu)).WithTimeout(settle).Should(BeZero())
		Eventually(spokeObject(good, jobGVK, "backup")).WithTimeout(settle).Should(BeNil())
		Expect(spokeObject(good, jobGVK, "smoke-test")(Default)).NotTo(BeNil())
	})

	It("time a step out when the timeout drops to 0, naming the ManifestWork the cluster was on", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "mwtimeout", 1)
		const ns = "cgu-mwtimeout"
		prep := actionTemplates(ns)["backup"]
		prep.Name = "prep"
		cgu := jobs.runPrep(ctx, ns, "steps", prep, clusters[0])

		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Status.Status.CurrentBatchRemediationProgress",
			HaveKeyWithValue(clusters[0], PointTo(And(HaveField("State", ranv1alpha1.RemediationInProgress), HaveField("ManifestWorkIndex", PointTo(Equal(0))))))))
		Expect(talmConditions(ctx, cgu)(Default)).To(Equal([]string{selected, validated, "Progressing True InProgress"}))
		// The work agent reports the Job applied before the timeout, so the ended status has it to keep.
		Eventually(workOf(ctx, cgu, manifestwork.RoleStep, "prep", clusters[0])).WithTimeout(settle).Should(HaveField("Status.ResourceStatus.Manifests",
			ContainElement(And(HaveField("ResourceMeta.Kind", "Job"), HaveField("Conditions", ContainElement(HaveField("Type", workv1.WorkApplied)))))))

		timeoutZero(ctx, cgu)
		Eventually(talmConditions(ctx, cgu)).WithTimeout(settle).Should(Equal(timedOut))
		ended := fleet.Stored(ctx, cgu)(Default).Status.Clusters
		Expect(ended).To(ConsistOf(And(HaveField("Name", clusters[0]), HaveField("State", "timedout"),
			HaveField("CurrentManifestWork.Name", "prep"))))

		By("as TALM, currentManifestWork.status is the ManifestWork's resource status: the Job's conditions, kept once the work is gone")
		Expect(ended[0].CurrentManifestWork.Status).NotTo(BeNil())
		Expect(ended[0].CurrentManifestWork.Status.Manifests).To(ContainElement(And(HaveField("ResourceMeta.Kind", "Job"),
			HaveField("Conditions", ContainElement(HaveField("Type", workv1.WorkApplied))))))
		// The agent may report more after the timeout: the work is deleted once the status
		// shows its latest report, exactly that version of it.
		var work *workv1.ManifestResourceStatus
		Eventually(func(g Gomega) {
			w := workOf(ctx, cgu, manifestwork.RoleStep, "prep", clusters[0])(g)
			g.Expect(w).NotTo(BeNil())
			g.Expect(fleet.Stored(ctx, cgu)(g).Status.Clusters).To(ContainElement(
				HaveField("CurrentManifestWork.Status", Equal(&w.Status.ResourceStatus))))
			rv := w.ResourceVersion
			g.Expect(hub.Client.Delete(ctx, w, client.Preconditions{ResourceVersion: &rv})).To(Succeed())
			work = w.Status.ResourceStatus.DeepCopy()
		}).WithTimeout(settle).Should(Succeed())
		advance(ctx, time.Second, cgu)
		Consistently(fleet.Stored(ctx, cgu)).WithTimeout(2 * time.Second).Should(HaveField("Status.Clusters",
			ContainElement(HaveField("CurrentManifestWork.Status", Equal(work)))))
		jobs.release(clusters[0], "backup", sim.JobSucceeded("late"))
	})

	It("wait for the value TALM's expectedValues annotation names, on the manifest of its index", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "mwtalm", 1)
		const ns = "cgu-mwtalm"
		// A TALM user's template: no condition rules, the Job second after a ConfigMap, and
		// TALM's annotation asking the Job (manifest 1) to report succeeded 1. Without it the
		// work is done as soon as it is applied and available.
		prep := actionTemplates(ns)["backup"]
		prep.Name = "prep"
		prep.Annotations = map[string]string{manifestwork.AnnotationExpectedValues: `[{"manifestIndex": 1, "name": "succeeded", "value": "1"}]`}
		prep.Spec.ManifestWorkTemplate.ManifestConfigs[0].ConditionRules = nil
		prep.Spec.ManifestWorkTemplate.Workload.Manifests = append([]workv1.Manifest{{RawExtension: runtime.RawExtension{Object: &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "prep-started", Namespace: hooksNamespace},
		}}}}, prep.Spec.ManifestWorkTemplate.Workload.Manifests...)
		cgu := jobs.runPrep(ctx, ns, "talm-feedback", prep, clusters[0])

		Eventually(spokeObject(clusters[0], jobGVK, "backup")).WithTimeout(settle).ShouldNot(BeNil(), "the work agent applied the Job")
		Eventually(workOf(ctx, cgu, manifestwork.RoleStep, "prep", clusters[0])).WithTimeout(settle).Should(
			HaveField("Status.Conditions", ContainElement(And(HaveField("Type", workv1.WorkAvailable), HaveField("Status", metav1.ConditionTrue)))))
		Consistently(recorded(ctx, cgu)).WithTimeout(2*time.Second).Should(ContainElement(progressOf(clusters[0], ranv1alpha1.ClusterInProgress, "")),
			"available, but the Job has not reported succeeded 1")

		jobs.release(clusters[0], "backup", sim.JobSucceeded("backed up"))
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
	})

	It("refuse to start with a missing template or an unreadable expected feedback", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "mwinvalid", 1)
		const ns = "cgu-mwinvalid"
		bad := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "bad",
			Annotations: map[string]string{manifestwork.AnnotationExpectedFeedback: `["succeeded"]`}},
			Spec: workv1alpha1.ManifestWorkReplicaSetSpec{PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: "none"}}}}
		createTemplates(ctx, ns, bad)
		refused := func(name string, set func(*ranv1alpha1.ClusterGroupUpgradeSpec), reason, says string) {
			cgu := newCGU(ns, name, clusters, 1)
			set(&cgu.Spec)
			cgu.Spec.Enable = ptr.To(true)
			fleet.MustCreate(ctx, cgu)
			Eventually(condition(ctx, cgu, ranv1alpha1.ConditionValidated)).WithTimeout(settle).Should(And(Not(BeNil()),
				HaveField("Reason", reason), HaveField("Message", ContainSubstring(says))))
			Expect(state(ctx, cgu)(Default)).To(Equal(ranv1alpha1.StateCannotStart))
			Expect(talmConditions(ctx, cgu)(Default)).To(Equal([]string{selected, "Validated False " + reason}), "no Progressing, as TALM")
			Expect(ownedWorks(ctx, cgu)(Default)).To(BeZero())
		}
		refused("missing", func(s *ranv1alpha1.ClusterGroupUpgradeSpec) { s.PreUpgradeActions = []string{"nowhere"} },
			ranv1alpha1.ReasonNotAllManifestTemplatesExist, "nowhere")
		refused("unreadable", func(s *ranv1alpha1.ClusterGroupUpgradeSpec) { s.ManifestWorkTemplates = []string{"bad"} },
			ranv1alpha1.ReasonInvalidManifestTemplate, "is not a JSON object")
	})
})
