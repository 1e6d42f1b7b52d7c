package sim_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

// jobRunners plays spoke Jobs with a behaviour per cluster and records the Jobs it ran.
type jobRunners struct {
	mu    sync.Mutex
	plays map[string]func(ctx context.Context, job *batchv1.Job) sim.JobResult
	ran   map[string][]string
}

func (r *jobRunners) set(cluster string, play func(ctx context.Context, job *batchv1.Job) sim.JobResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.plays[cluster] = play
}

func (r *jobRunners) run(ctx context.Context, cluster string, job *batchv1.Job) sim.JobResult {
	r.mu.Lock()
	play := r.plays[cluster]
	r.ran[cluster] = append(r.ran[cluster], job.Namespace+"/"+job.Name)
	r.mu.Unlock()
	return play(ctx, job)
}

func (r *jobRunners) jobsRun(cluster string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ran[cluster]...)
}

// precacheJob is an action template for the Job pre-cache in namespace precache.
func precacheJob(backoffLimit int32, deadline *int64) runtime.RawExtension {
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: "pre-cache", Namespace: "precache"},
		Spec: batchv1.JobSpec{
			BackoffLimit: &backoffLimit, ActiveDeadlineSeconds: deadline,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "pre-cache", Image: "quay.io/example/precache:1"}},
			}},
		},
	}
	raw, err := json.Marshal(job)
	Expect(err).NotTo(HaveOccurred())
	return runtime.RawExtension{Raw: raw}
}

// viewedJob returns the Job the view "job" shows, once it shows one.
func viewedJob(ctx context.Context, cluster string) func(Gomega) *batchv1.Job {
	return func(g Gomega) *batchv1.Job {
		status := viewStatus(ctx, cluster, "job")(g)
		g.Expect(processing(status).Status).To(Equal(metav1.ConditionTrue))
		job := &batchv1.Job{}
		g.Expect(json.Unmarshal(status.Result.Raw, job)).To(Succeed())
		return job
	}
}

// jobCondition matches a Job condition of type t with reason.
func jobCondition(t batchv1.JobConditionType, reason string) OmegaMatcher {
	return ContainElement(And(HaveField("Type", t), HaveField("Status", corev1.ConditionTrue), HaveField("Reason", reason)))
}

// jobPods returns the pods of a Job on a spoke.
func jobPods(s *sim.Simulator, cluster, job string) []*corev1.Pod {
	objs, err := s.Objects(cluster, corev1.SchemeGroupVersion.WithKind("Pod"), "precache")
	Expect(err).NotTo(HaveOccurred())
	var pods []*corev1.Pod
	for _, o := range objs {
		pod := &corev1.Pod{}
		Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, pod)).To(Succeed())
		if pod.Labels[batchv1.JobNameLabel] == job {
			pods = append(pods, pod)
		}
	}
	return pods
}

var _ = Describe("Spoke Jobs", Ordered, func() {
	var (
		runners = &jobRunners{plays: map[string]func(context.Context, *batchv1.Job) sim.JobResult{}, ran: map[string][]string{}}
		jobSim  *sim.Simulator
	)

	BeforeAll(func(ctx SpecContext) {
		// A simulator of its own, with a JobRunner and a short action TTL.
		var err error
		jobSim, err = sim.Start(ctx, hub, sim.Options{
			Logger: zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)), JobRunner: runners.run, ActionTTL: 3 * time.Second,
		})
		Expect(err).NotTo(HaveOccurred())
	})

	// join adds a cluster whose spoke jobSim simulates, with the precache namespace created
	// through an action, and returns its name.
	join := func(ctx context.Context, name string, play func(context.Context, *batchv1.Job) sim.JobResult) string {
		Expect(hub.AddClusters(ctx, world.Cluster{Name: name})).To(Succeed())
		Expect(jobSim.AddSpokes(sim.SpokeSpec{Name: name, Version: "4.16.10", Channel: "stable-4.16"})).To(Succeed())
		runners.set(name, play)
		createAction(ctx, name, "namespace", actionv1beta1.CreateActionType, actionv1beta1.KubeWorkSpec{
			ObjectTemplate: template(`{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "precache"}}`),
		})
		Eventually(completed(ctx, name, "namespace")).WithTimeout(10 * time.Second).Should(done)
		return name
	}

	It("run a Job created through an action and report it Complete", func(ctx SpecContext) {
		report := `{"images": 42, "failed": []}`
		cluster := join(ctx, "jobs-ok", func(context.Context, *batchv1.Job) sim.JobResult { return sim.JobSucceeded(report) })
		createAction(ctx, cluster, "job", actionv1beta1.CreateActionType, actionv1beta1.KubeWorkSpec{
			ObjectTemplate: precacheJob(0, nil),
		})
		createView(ctx, cluster, "job", viewv1beta1.ViewScope{Resource: "jobs.batch", Namespace: "precache", Name: "pre-cache"})

		Eventually(viewedJob(ctx, cluster)).WithTimeout(10 * time.Second).Should(And(
			HaveField("Status.Conditions", jobCondition(batchv1.JobComplete, batchv1.JobReasonCompletionsReached)),
			HaveField("Status.Conditions", jobCondition(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonCompletionsReached)),
			HaveField("Status.Succeeded", BeEquivalentTo(1)), HaveField("Status.Active", BeEquivalentTo(0)),
			HaveField("Status.StartTime", Not(BeNil())), HaveField("Status.CompletionTime", Not(BeNil())),
		))
		Expect(runners.jobsRun(cluster)).To(Equal([]string{"precache/pre-cache"}))
		pods := jobPods(jobSim, cluster, "pre-cache")
		Expect(pods).To(HaveLen(1))
		Expect(pods[0].Status.Phase).To(Equal(corev1.PodSucceeded))
		Expect(pods[0].Status.ContainerStatuses[0].State.Terminated).To(And(
			HaveField("ExitCode", BeEquivalentTo(0)), HaveField("Reason", "Completed"), HaveField("Message", report)))

		By("showing the termination message to a view of the pod")
		createView(ctx, cluster, "pod", viewv1beta1.ViewScope{Resource: "pods", Namespace: "precache", Name: pods[0].Name})
		Eventually(func(g Gomega) string {
			status := viewStatus(ctx, cluster, "pod")(g)
			pod := &corev1.Pod{}
			g.Expect(json.Unmarshal(status.Result.Raw, pod)).To(Succeed())
			g.Expect(pod.Status.ContainerStatuses).NotTo(BeEmpty())
			return pod.Status.ContainerStatuses[0].State.Terminated.Message
		}).WithTimeout(10 * time.Second).Should(MatchJSON(report))
	})

	It("report a Job Failed when its pod fails past the backoff limit", func(ctx SpecContext) {
		cluster := join(ctx, "jobs-fail", func(context.Context, *batchv1.Job) sim.JobResult { return sim.JobFailed("disk full") })
		createAction(ctx, cluster, "job", actionv1beta1.CreateActionType, actionv1beta1.KubeWorkSpec{
			ObjectTemplate: precacheJob(0, nil),
		})
		createView(ctx, cluster, "job", viewv1beta1.ViewScope{Group: "batch", Version: "v1", Kind: "Job", Namespace: "precache", Name: "pre-cache"})

		Eventually(viewedJob(ctx, cluster)).WithTimeout(10 * time.Second).Should(And(
			HaveField("Status.Conditions", jobCondition(batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded)),
			HaveField("Status.Conditions", jobCondition(batchv1.JobFailureTarget, batchv1.JobReasonBackoffLimitExceeded)),
			HaveField("Status.Failed", BeEquivalentTo(1)), HaveField("Status.CompletionTime", BeNil()),
		))
		pods := jobPods(jobSim, cluster, "pre-cache")
		Expect(pods).To(HaveLen(1))
		Expect(pods[0].Status.Phase).To(Equal(corev1.PodFailed))
		Expect(pods[0].Status.ContainerStatuses[0].State.Terminated).To(And(
			HaveField("ExitCode", BeEquivalentTo(1)), HaveField("Reason", "Error"), HaveField("Message", "disk full")))
	})

	It("stop a Job past its activeDeadlineSeconds and report it Failed", func(ctx SpecContext) {
		stopped := make(chan struct{})
		cluster := join(ctx, "jobs-slow", func(ctx context.Context, _ *batchv1.Job) sim.JobResult {
			<-ctx.Done()
			close(stopped)
			return sim.JobSucceeded("too late")
		})
		createAction(ctx, cluster, "job", actionv1beta1.CreateActionType, actionv1beta1.KubeWorkSpec{
			ObjectTemplate: precacheJob(6, ptr.To[int64](1)),
		})
		createView(ctx, cluster, "job", viewv1beta1.ViewScope{Resource: "job", Namespace: "precache", Name: "pre-cache"})

		Eventually(viewedJob(ctx, cluster)).WithTimeout(10 * time.Second).Should(And(
			HaveField("Status.Conditions", jobCondition(batchv1.JobFailed, batchv1.JobReasonDeadlineExceeded)),
			HaveField("Status.Failed", BeEquivalentTo(1)), HaveField("Status.Active", BeEquivalentTo(0)),
		))
		Eventually(stopped).Should(BeClosed(), "the runner's context ends")
		Expect(jobPods(jobSim, cluster, "pre-cache")).To(BeEmpty(), "the running pod is deleted")
	})

	It("leave completed actions to the hub, which deletes them after the TTL", func(ctx SpecContext) {
		cluster := join(ctx, "jobs-gc", func(context.Context, *batchv1.Job) sim.JobResult { return sim.JobSucceeded("") })
		Eventually(func() error {
			return hub.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: "namespace"}, &actionv1beta1.ManagedClusterAction{})
		}).WithTimeout(10 * time.Second).Should(Satisfy(apierrors.IsNotFound))
	})
})

var _ = Describe("Spoke Jobs without a JobRunner", func() {
	It("complete after the default duration", func(ctx SpecContext) {
		joinFleet(ctx, "jobs-default", sim.SpokeSpec{Name: "jobs-default-1", Version: "4.16.10", Channel: "stable-4.16"})
		for i, raw := range []runtime.RawExtension{
			template(`{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "precache"}}`), precacheJob(0, nil),
		} {
			name := fmt.Sprintf("create-%d", i)
			createAction(ctx, "jobs-default-1", name, actionv1beta1.CreateActionType, actionv1beta1.KubeWorkSpec{ObjectTemplate: raw})
			Eventually(completed(ctx, "jobs-default-1", name)).WithTimeout(10 * time.Second).Should(done)
		}
		createView(ctx, "jobs-default-1", "job", viewv1beta1.ViewScope{Resource: "jobs", Namespace: "precache", Name: "pre-cache"})
		Eventually(viewedJob(ctx, "jobs-default-1")).WithTimeout(10 * time.Second).Should(
			HaveField("Status.Conditions", jobCondition(batchv1.JobComplete, batchv1.JobReasonCompletionsReached)))
		job := viewedJob(ctx, "jobs-default-1")(Default)
		Expect(job.Status.CompletionTime.Sub(job.Status.StartTime.Time)).To(BeNumerically(">=", sim.DefaultJobDuration))
	})
})
