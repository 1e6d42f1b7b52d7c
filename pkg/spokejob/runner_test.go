package spokejob_test

import (
	"context"
	"slices"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

var owner = ownership.Owner{Namespace: "cgu-spokejob", Name: "upgrade"}

// timeout bounds what the simulated agents do in a spec.
const timeout = 30 * time.Second

var jobGVK = batchv1.SchemeGroupVersion.WithKind("Job")

// spokeObject names an object on a simulated spoke.
type spokeObject struct {
	gvk             schema.GroupVersionKind
	namespace, name string
}

// healthSetUp are the objects the health job's setup makes on a spoke, the shared namespace
// aside.
var healthSetUp = []spokeObject{
	{corev1.SchemeGroupVersion.WithKind("ServiceAccount"), spokejob.Namespace, "health"},
	{rbacv1.SchemeGroupVersion.WithKind("Role"), spokejob.Namespace, "health"},
	{rbacv1.SchemeGroupVersion.WithKind("RoleBinding"), spokejob.Namespace, "health"},
	{rbacv1.SchemeGroupVersion.WithKind("ClusterRole"), "", "cgu-operator-spoke:health"},
	{rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding"), "", "cgu-operator-spoke:health"},
	{rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding"), "", "cgu-operator-spoke:health:cluster-monitoring-view"},
}

// healthJob is the health check of run on cluster.
func healthJob(cluster, run string) spokejob.Job {
	return spokejob.Job{
		Cluster: cluster, Owner: owner, Name: "health", Run: run,
		Image: "quay.io/example/precache:1", Args: []string{"health", "--run=" + run},
		ClusterRules: []rbacv1.PolicyRule{{
			APIGroups: []string{configv1.GroupName}, Resources: []string{"clusteroperators"}, Verbs: []string{"get", "list"},
		}},
		BindClusterRoles: []string{"cluster-monitoring-view"},
	}
}

// untilReport calls Start and Read as a reconcile would until Read returns a report, and
// returns it; every report Read returned must be of j's run.
func untilReport(ctx context.Context, r spokejob.Runner, j spokejob.Job) *corev1.ConfigMap {
	GinkgoHelper()
	var report *corev1.ConfigMap
	Eventually(func(g Gomega) *corev1.ConfigMap {
		g.Expect(r.Start(ctx, j)).To(Succeed())
		s, err := r.Read(ctx, j)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(s.Failed).To(BeEmpty())
		if s.Report != nil {
			Expect(s.Report.Data).To(HaveKeyWithValue("run", j.Run), "a report of another run")
		}
		report = s.Report
		return report
	}).WithTimeout(timeout).ShouldNot(BeNil())
	return report
}

// spokeJobs returns the runs of the Jobs in the spoke's Namespace.
func spokeJobs(cluster string) []string {
	GinkgoHelper()
	objs, err := env.Sim.Objects(cluster, jobGVK, spokejob.Namespace)
	Expect(err).NotTo(HaveOccurred())
	var runs []string
	for _, o := range objs {
		runs = append(runs, o.GetAnnotations()[spokejob.AnnotationRun])
	}
	return runs
}

// onSpoke returns whether an object is on the spoke.
func onSpoke(cluster string, gvk schema.GroupVersionKind, namespace, name string) func() error {
	return func() error {
		_, err := env.Sim.Object(cluster, gvk, namespace, name)
		return err
	}
}

// hubActions returns the names of the rollout's actions in a cluster namespace.
func hubActions(ctx context.Context, cluster string) []string {
	GinkgoHelper()
	var list actionv1beta1.ManagedClusterActionList
	Expect(env.Hub.Client.List(ctx, &list, client.InNamespace(cluster), client.MatchingLabels(owner.Labels()))).To(Succeed())
	var out []string
	for _, a := range list.Items {
		out = append(out, a.Name)
	}
	return out
}

// hubViews returns the rollout's views in a cluster namespace.
func hubViews(ctx context.Context, cluster string) []viewv1beta1.ManagedClusterView {
	GinkgoHelper()
	var list viewv1beta1.ManagedClusterViewList
	Expect(env.Hub.Client.List(ctx, &list, client.InNamespace(cluster), client.MatchingLabels(owner.Labels()))).To(Succeed())
	return list.Items
}

// blocked is a program that reports once released; started is closed when it starts.
func blocked() (p play, started, release chan struct{}) {
	started, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	return func(ctx context.Context, cluster string, job *batchv1.Job) sim.JobResult {
		once.Do(func() { close(started) })
		select {
		case <-release:
			return reporting(ctx, cluster, job)
		case <-ctx.Done():
			return sim.JobFailed("stopped")
		}
	}, started, release
}

// closed tells whether a channel is closed.
func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

var _ = Describe("Spoke jobs", func() {
	It("run the program once per run and return its report", func(ctx SpecContext) {
		cluster := env.MustJoinFleet(ctx, "spokejob-once", 1)[0]
		programs.set(cluster, reporting)
		counting := newCountingClient()
		r := spokejob.Runner{Client: counting}
		j := healthJob(cluster, "run-1")

		s, err := r.Read(ctx, j)
		Expect(err).NotTo(HaveOccurred())
		Expect(s).To(Equal(spokejob.State{Waiting: "the view of its Job does not exist yet"}))

		By("starting twice before the agent answers")
		Expect(env.Sim.SetReachable(ctx, cluster, false)).To(Succeed())
		Expect(r.Start(ctx, j)).To(Succeed())
		Expect(r.Start(ctx, j)).To(Succeed())
		Expect(counting.count()).To(Equal(map[string]int{
			"*v1beta1.ManagedClusterView cgu-cgu-spokejob-upgrade-health-job":                                    1,
			"*v1beta1.ManagedClusterView cgu-cgu-spokejob-upgrade-health-report":                                 1,
			"*v1beta1.ManagedClusterAction cgu-cgu-spokejob-upgrade-health-namespace-" + spokejob.RunHash(j.Run): 1,
		}), "the views, and the namespace first")
		Expect(hubActions(ctx, cluster)).To(HaveLen(1))
		Expect(hubViews(ctx, cluster)).To(HaveLen(2))
		Expect(env.Sim.SetReachable(ctx, cluster, true)).To(Succeed())

		By("starting on every reconcile until the report arrives")
		Expect(untilReport(ctx, r, j).Data).To(Equal(map[string]string{"run": "run-1"}))
		created := counting.count()
		Expect(created).To(HaveLen(7), "the rest of the setup and the Job: %v", created)
		Expect(created).To(HaveEach(1), "each action once")
		Expect(programs.ran(cluster)).To(Equal([]string{"run-1"}))
		Expect(spokeJobs(cluster)).To(Equal([]string{"run-1"}))
		for _, o := range append([]spokeObject{{configpolicy.NamespaceGVK, "", spokejob.Namespace}}, healthSetUp...) {
			Expect(onSpoke(cluster, o.gvk, o.namespace, o.name)()).To(Succeed(), "%s %s", o.gvk.Kind, o.name)
		}

		By("starting again once the report is there")
		for range 3 {
			Expect(r.Start(ctx, j)).To(Succeed())
		}
		Expect(counting.count()).To(BeEmpty())
		Expect(hubViews(ctx, cluster)).To(HaveLen(2))
	})

	It("report a program that fails", func(ctx SpecContext) {
		cluster := env.MustJoinFleet(ctx, "spokejob-fail", 1)[0]
		programs.set(cluster, func(context.Context, string, *batchv1.Job) sim.JobResult {
			return sim.JobFailed("cannot reach Prometheus")
		})
		r := spokejob.Runner{Client: env.Hub.Client}
		j := healthJob(cluster, "run-1")

		// The Job tries twice, 10 seconds apart.
		Eventually(func(g Gomega) spokejob.State {
			g.Expect(r.Start(ctx, j)).To(Succeed())
			s, err := r.Read(ctx, j)
			g.Expect(err).NotTo(HaveOccurred())
			return s
		}).WithTimeout(timeout + 10*time.Second).Should(Equal(spokejob.State{
			Failed:    "its Job failed (BackoffLimitExceeded): Job has reached the specified backoff limit",
			Requested: true, FailedReason: "BackoffLimitExceeded",
		}))
		Expect(programs.ran(cluster)).To(Equal([]string{"run-1", "run-1"}))
	})

	It("replace the Job of another run, and return only the report of the new run", func(ctx SpecContext) {
		cluster := env.MustJoinFleet(ctx, "spokejob-replace", 1)[0]
		programs.set(cluster, reporting)
		r := spokejob.Runner{Client: env.Hub.Client}
		first, second := healthJob(cluster, "run-1"), healthJob(cluster, "run-2")
		untilReport(ctx, r, first)

		By("starting another run, whose program waits")
		p, started, release := blocked()
		programs.set(cluster, p)
		Eventually(func(g Gomega) bool {
			g.Expect(r.Start(ctx, second)).To(Succeed())
			return closed(started)
		}).WithTimeout(timeout).Should(BeTrue())
		Expect(spokeJobs(cluster)).To(Equal([]string{"run-2"}))
		Expect(onSpoke(cluster, configMapGVK, spokejob.Namespace, "health")()).To(MatchError(configpolicy.ErrNotFound),
			"the report of the first run is deleted before the second Job")
		for _, j := range []spokejob.Job{first, second} {
			s, err := r.Read(ctx, j)
			Expect(err).NotTo(HaveOccurred())
			Expect(s.Report).To(BeNil())
			Expect(s.Failed).To(BeEmpty())
		}

		By("letting the program of the second run report")
		close(release)
		Expect(untilReport(ctx, r, second).Data).To(HaveKeyWithValue("run", "run-2"))
		Expect(programs.ran(cluster)).To(Equal([]string{"run-1", "run-2"}))
		Expect(spokeJobs(cluster)).To(Equal([]string{"run-2"}))
	})

	It("start no second Job once the hub collected the completed actions", func(ctx SpecContext) {
		cluster := env.MustJoinFleet(ctx, "spokejob-gc", 1)[0]
		p, started, release := blocked()
		programs.set(cluster, p)
		counting := newCountingClient()
		r := spokejob.Runner{Client: counting}
		j := healthJob(cluster, "run-1")
		Eventually(func(g Gomega) bool {
			g.Expect(r.Start(ctx, j)).To(Succeed())
			return closed(started)
		}).WithTimeout(timeout).Should(BeTrue())
		job, err := env.Sim.Object(cluster, jobGVK, spokejob.Namespace, "health")
		Expect(err).NotTo(HaveOccurred())

		By("waiting for the hub to collect every action while the program runs")
		Eventually(func(g Gomega) []string {
			g.Expect(r.Start(ctx, j)).To(Succeed())
			return hubActions(ctx, cluster)
		}).WithTimeout(actionTTL + timeout).Should(BeEmpty())
		counting.count()
		for range 3 {
			Expect(r.Start(ctx, j)).To(Succeed())
		}
		Expect(counting.count()).To(BeEmpty())
		s, err := r.Read(ctx, j)
		Expect(err).NotTo(HaveOccurred())
		Expect(s).To(Equal(spokejob.State{Waiting: "its Job is running", Requested: true, Running: true}))

		close(release)
		untilReport(ctx, r, j)
		Expect(counting.count()).To(BeEmpty())
		Expect(programs.ran(cluster)).To(Equal([]string{"run-1"}))
		again, err := env.Sim.Object(cluster, jobGVK, spokejob.Namespace, "health")
		Expect(err).NotTo(HaveOccurred())
		Expect(again.GetUID()).To(Equal(job.GetUID()), "the same Job")
	})

	It("stop a run: its Job and report go from the spoke, its views from the hub", func(ctx SpecContext) {
		cluster := env.MustJoinFleet(ctx, "spokejob-stop", 1)[0]
		programs.set(cluster, reporting)
		counting := newCountingClient()
		r := spokejob.Runner{Client: counting}
		j := healthJob(cluster, "run-1")
		untilReport(ctx, r, j)
		counting.count()

		Expect(r.Stop(ctx, j)).To(Succeed())
		Expect(hubViews(ctx, cluster)).To(BeEmpty())
		hash := spokejob.RunHash(j.Run)
		stops := []string{"cgu-cgu-spokejob-upgrade-health-stop-job-" + hash, "cgu-cgu-spokejob-upgrade-health-stop-report-" + hash}
		Expect(hubActions(ctx, cluster)).To(ConsistOf(stops), "the other actions are deleted")
		Eventually(onSpoke(cluster, jobGVK, spokejob.Namespace, "health")).WithTimeout(timeout).Should(MatchError(configpolicy.ErrNotFound))
		Eventually(onSpoke(cluster, configMapGVK, spokejob.Namespace, "health")).WithTimeout(timeout).Should(MatchError(configpolicy.ErrNotFound))
		Expect(onSpoke(cluster, corev1.SchemeGroupVersion.WithKind("ServiceAccount"), spokejob.Namespace, "health")()).To(Succeed(),
			"what runs share stays")

		By("stopping again")
		Expect(r.Stop(ctx, j)).To(Succeed())
		created := counting.count()
		Expect(created).To(HaveLen(2))
		Expect(created).To(HaveKey("*v1beta1.ManagedClusterAction " + stops[0]))
		Expect(created).To(HaveKey("*v1beta1.ManagedClusterAction " + stops[1]))
		s, err := r.Read(ctx, j)
		Expect(err).NotTo(HaveOccurred())
		Expect(s).To(Equal(spokejob.State{Waiting: "the view of its Job does not exist yet"}))
	})
})

var _ = Describe("The teardown of spoke jobs", func() {
	It("deletes what the job set up from the spoke, leaves its Job to Kubernetes, and outlives the rollout's cleanup", func(ctx SpecContext) {
		cluster := env.MustJoinFleet(ctx, "spokejob-teardown", 1)[0]
		programs.set(cluster, reporting)
		r := spokejob.Runner{Client: env.Hub.Client}
		j := healthJob(cluster, "run-1")
		untilReport(ctx, r, j)
		setUp := append(slices.Clone(healthSetUp), spokeObject{configMapGVK, spokejob.Namespace, "health"})

		By("tearing down with the views, then deleting them and the rollout's actions as its cleanup does")
		views := hubViews(ctx, cluster)
		Expect(r.Teardown(ctx, views)).To(Succeed())
		Expect(r.Teardown(ctx, views)).To(Succeed(), "twice makes nothing more")
		cleaner := ownership.Cleaner{Client: env.Hub.Client}
		Eventually(func() (int, error) { return cleaner.Cleanup(ctx, owner) }).WithTimeout(timeout).Should(BeZero())

		for _, o := range setUp {
			Eventually(onSpoke(cluster, o.gvk, o.namespace, o.name)).WithTimeout(timeout).Should(MatchError(configpolicy.ErrNotFound),
				"%s %s", o.gvk.Kind, o.name)
		}
		Expect(spokeJobs(cluster)).To(Equal([]string{"run-1"}), "the Job goes with its pods by its TTL")
		Expect(onSpoke(cluster, configpolicy.NamespaceGVK, "", spokejob.Namespace)()).To(Succeed(), "the shared namespace stays")

		By("the hub collects the teardown's actions once answered")
		Eventually(func(g Gomega) []actionv1beta1.ManagedClusterAction {
			var list actionv1beta1.ManagedClusterActionList
			g.Expect(env.Hub.Client.List(ctx, &list, client.InNamespace(cluster), client.MatchingLabels{spokejob.LabelTeardown: "true"})).To(Succeed())
			return list.Items
		}).WithTimeout(timeout).Should(BeEmpty())
	})
})
