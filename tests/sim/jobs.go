package sim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// JobRunner plays the pod of a Job on a simulated spoke: it is called when the pod starts and
// returns when its container exits. It runs in its own goroutine and must return soon
// after ctx is done (the Job was deleted or ran past activeDeadlineSeconds, or the hub
// stops); a result returned then is dropped.
type JobRunner func(ctx context.Context, cluster string, job *batchv1.Job) JobResult

// JobResult is how a Job's pod ended.
//
// The Job controller copies nothing of it but success or failure into the Job. The pod
// keeps it: the simulator leaves a Pod named "<job>-<5 random characters>" in the Job's
// namespace, labelled job-name=<job> and batch.kubernetes.io/job-name=<job> and owned by the
// Job, whose status.containerStatuses[0].state.terminated holds exitCode, reason
// ("Completed" or "Error") and message (Message). A ManagedClusterView needs the pod's name,
// which the hub cannot list; tests read it with (*Simulator).Objects.
type JobResult struct {
	// ExitCode of the pod's container: zero succeeds the attempt, anything else fails it.
	ExitCode int32
	// Message is the container's termination message, what the program wrote to its
	// terminationMessagePath, for example a JSON report.
	Message string
}

// JobSucceeded is the result of a pod that exited 0 with a termination message.
func JobSucceeded(message string) JobResult { return JobResult{Message: message} }

// JobFailed is the result of a pod that exited 1 with a termination message.
func JobFailed(message string) JobResult { return JobResult{ExitCode: 1, Message: message} }

// Defaults of the simulated Job controller.
const (
	// DefaultJobDuration is how long a Job's pod runs when no JobRunner is set.
	DefaultJobDuration = time.Second
	// DefaultJobWorkers bounds the JobRunner calls running at once.
	DefaultJobWorkers = 16
	// Pod failure back-off of the Job controller: 10s, doubled per failure, at most 10m.
	jobBackoff    = 10 * time.Second
	jobMaxBackoff = 10 * time.Minute
	// defaultBackoffLimit is what the API server defaults spec.backoffLimit to.
	defaultBackoffLimit = 6
)

// The labels the Job controller also puts on its pods, from before the batch.kubernetes.io
// prefix.
const (
	legacyJobNameLabel       = "job-name"
	legacyControllerUIDLabel = "controller-uid"
)

var (
	jobGVK = batchv1.SchemeGroupVersion.WithKind("Job")
	podGVK = corev1.SchemeGroupVersion.WithKind("Pod")
)

// jobPool runs JobRunner calls for every spoke, at most a bounded number at once.
type jobPool struct {
	runner   JobRunner
	duration time.Duration
	slots    chan struct{}
	ctx      context.Context //nolint:containedctx // the lifetime of the runs, cancelled by stop
	stop     context.CancelFunc
	poke     func(cluster string)
	spawn    func(func(context.Context))
}

func newJobPool(ctx context.Context, opts Options, poke func(string), spawn func(func(context.Context))) *jobPool {
	p := &jobPool{runner: opts.JobRunner, duration: opts.JobDuration, poke: poke, spawn: spawn}
	if p.duration <= 0 {
		p.duration = DefaultJobDuration
	}
	workers := opts.JobWorkers
	if workers <= 0 {
		workers = DefaultJobWorkers
	}
	p.slots = make(chan struct{}, workers)
	p.ctx, p.stop = context.WithCancel(context.WithoutCancel(ctx))
	return p
}

// run calls the runner once a slot is free; false when ctx ended first.
func (p *jobPool) run(ctx context.Context, cluster string, job *batchv1.Job) (JobResult, bool) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return JobResult{}, false
	}
	defer func() { <-p.slots }()
	result := p.runner(ctx, cluster, job)
	return result, ctx.Err() == nil
}

// jobController is the Job controller of one spoke, run as one of its operators: it starts a
// pod for each Job, one at a time, and writes the Job's status as the real controller does.
type jobController struct {
	cluster string
	pool    *jobPool
	runs    map[types.UID]*jobRun
	// mu guards the results runners hand in.
	mu sync.Mutex
}

// jobRun is what the controller knows of one Job.
type jobRun struct {
	namespace string
	// pod is the running attempt's pod, "" between attempts.
	pod     string
	started time.Time
	// retryAt is when a failed attempt may be replaced.
	retryAt  time.Time
	cancel   context.CancelFunc
	result   *JobResult
	finished bool
}

func newJobController(cluster string, pool *jobPool) *jobController {
	return &jobController{cluster: cluster, pool: pool, runs: map[types.UID]*jobRun{}}
}

// Step advances every Job on the spoke and removes the pods of deleted Jobs.
func (c *jobController) Step(objects configpolicy.Store, now time.Time) (time.Duration, error) {
	jobs, err := objects.List(jobGVK, "")
	if err != nil {
		return 0, fmt.Errorf("listing jobs: %w", err)
	}
	var (
		next time.Duration
		errs []error
	)
	seen := make(map[types.UID]bool, len(jobs))
	for _, obj := range jobs {
		seen[obj.GetUID()] = true
		again, err := c.stepJob(objects, obj, now)
		errs = append(errs, err)
		next = soonest(next, again)
	}
	errs = append(errs, c.forget(objects, seen))
	return next, errors.Join(errs...)
}

func (c *jobController) stepJob(objects configpolicy.Store, obj *unstructured.Unstructured, now time.Time) (time.Duration, error) {
	job := &batchv1.Job{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, job); err != nil {
		return 0, fmt.Errorf("job %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	run := c.runs[job.UID]
	if run == nil {
		run = &jobRun{namespace: job.Namespace}
		c.runs[job.UID] = run
	}
	if run.finished || jobFinished(job) || ptr.Deref(job.Spec.Suspend, false) || ptr.Deref(job.Spec.Parallelism, 1) == 0 {
		run.finished = run.finished || jobFinished(job)
		return 0, nil
	}
	before := job.Status.DeepCopy()
	again, err := c.advance(objects, job, run, now)
	if err != nil || equality.Semantic.DeepEqual(before, &job.Status) {
		return again, err
	}
	updated := obj.DeepCopy()
	status, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&job.Status)
	if err != nil {
		return 0, err
	}
	updated.Object["status"] = status
	return again, objects.Update(updated)
}

// advance moves a running Job on at now and returns when it wants to be looked at again.
func (c *jobController) advance(objects configpolicy.Store, job *batchv1.Job, run *jobRun, now time.Time) (time.Duration, error) {
	if job.Status.StartTime == nil {
		job.Status.StartTime = ptr.To(metav1.NewTime(now))
	}
	untilDeadline := time.Duration(0)
	if d := job.Spec.ActiveDeadlineSeconds; d != nil {
		untilDeadline = job.Status.StartTime.Add(time.Duration(*d) * time.Second).Sub(now)
		if untilDeadline <= 0 {
			return 0, c.fail(objects, job, run, now, batchv1.JobReasonDeadlineExceeded, "Job was active longer than specified deadline")
		}
	}
	var (
		again time.Duration
		err   error
	)
	switch {
	case run.pod == "" && now.Before(run.retryAt):
		again = run.retryAt.Sub(now)
	case run.pod == "":
		again, err = c.startAttempt(objects, job, run, now)
	default:
		again, err = c.checkAttempt(objects, job, run, now)
	}
	return soonest(again, untilDeadline), err
}

// startAttempt creates the pod of a new attempt and hands it to the runner.
func (c *jobController) startAttempt(objects configpolicy.Store, job *batchv1.Job, run *jobRun, now time.Time) (time.Duration, error) {
	pod, err := toUnstructured(newJobPod(job, now))
	if err != nil {
		return 0, err
	}
	if err := objects.Create(pod); err != nil {
		return 0, fmt.Errorf("pod of job %s/%s: %w", job.Namespace, job.Name, err)
	}
	run.pod, run.started, run.retryAt = pod.GetName(), now, time.Time{}
	job.Status.Active, job.Status.Ready, job.Status.Terminating = 1, ptr.To[int32](1), ptr.To[int32](0)
	if job.Status.UncountedTerminatedPods == nil {
		job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	if c.pool.runner == nil {
		return c.pool.duration, nil
	}
	c.launch(job.DeepCopy(), run)
	return 0, nil
}

func (c *jobController) launch(job *batchv1.Job, run *jobRun) {
	ctx, cancel := context.WithCancel(c.pool.ctx)
	run.cancel = cancel
	c.pool.spawn(func(context.Context) {
		defer cancel()
		result, ok := c.pool.run(ctx, c.cluster, job)
		if !ok {
			return
		}
		c.mu.Lock()
		run.result = &result
		c.mu.Unlock()
		c.pool.poke(c.cluster)
	})
}

// checkAttempt ends the running attempt when its pod is done: the Job completes, fails past
// its backoffLimit, or gets another attempt after the pod failure back-off.
func (c *jobController) checkAttempt(objects configpolicy.Store, job *batchv1.Job, run *jobRun, now time.Time) (time.Duration, error) {
	result, done, wait := c.attemptResult(run, now)
	if !done {
		return wait, nil
	}
	if err := endPod(objects, job.Namespace, run.pod, result, now); err != nil {
		return 0, err
	}
	run.pod = ""
	job.Status.Active, job.Status.Ready = 0, ptr.To[int32](0)
	if result.ExitCode == 0 {
		job.Status.Succeeded++
		if job.Status.Succeeded < ptr.Deref(job.Spec.Completions, 1) {
			return c.startAttempt(objects, job, run, now)
		}
		finishJob(job, true, batchv1.JobReasonCompletionsReached, "Reached expected number of succeeded pods", now)
		run.finished = true
		return 0, nil
	}
	job.Status.Failed++
	if job.Status.Failed > ptr.Deref(job.Spec.BackoffLimit, defaultBackoffLimit) {
		finishJob(job, false, batchv1.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit", now)
		run.finished = true
		return 0, nil
	}
	run.retryAt = now.Add(podFailureBackoff(job.Status.Failed))
	return run.retryAt.Sub(now), nil
}

// attemptResult returns the running attempt's result once its pod is done, or how long to
// wait for it (zero: until the runner hands it in).
func (c *jobController) attemptResult(run *jobRun, now time.Time) (JobResult, bool, time.Duration) {
	if c.pool.runner == nil {
		if left := run.started.Add(c.pool.duration).Sub(now); left > 0 {
			return JobResult{}, false, left
		}
		return JobSucceeded(""), true, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if run.result == nil {
		return JobResult{}, false, 0
	}
	result := *run.result
	run.result = nil
	return result, true, 0
}

// fail ends a Job at once: its running pod is deleted (and counted failed), as the Job
// controller does past activeDeadlineSeconds.
func (c *jobController) fail(objects configpolicy.Store, job *batchv1.Job, run *jobRun, now time.Time, reason, message string) error {
	if run.cancel != nil {
		run.cancel()
	}
	if run.pod != "" {
		if err := objects.Delete(podGVK, job.Namespace, run.pod); err != nil && !errors.Is(err, configpolicy.ErrNotFound) {
			return err
		}
		job.Status.Failed += job.Status.Active
		run.pod = ""
	}
	finishJob(job, false, reason, message, now)
	run.finished = true
	return nil
}

// forget drops what the controller knew of deleted Jobs: their runs are cancelled and their
// pods deleted, as the garbage collector deletes what a Job owns.
func (c *jobController) forget(objects configpolicy.Store, seen map[types.UID]bool) error {
	var errs []error
	for uid, run := range c.runs {
		if seen[uid] {
			continue
		}
		if run.cancel != nil {
			run.cancel()
		}
		delete(c.runs, uid)
		pods, err := objects.List(podGVK, run.namespace)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, p := range pods {
			if ownedBy(p, uid) {
				errs = append(errs, objects.Delete(podGVK, p.GetNamespace(), p.GetName()))
			}
		}
	}
	return errors.Join(errs...)
}

func ownedBy(obj *unstructured.Unstructured, uid types.UID) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == uid {
			return true
		}
	}
	return false
}

// finishJob adds the Job's terminal conditions as the Job controller of Kubernetes 1.31 and
// later does: the interim SuccessCriteriaMet or FailureTarget first, then Complete or
// Failed, with the same reason and message; completionTime only on success.
func finishJob(job *batchv1.Job, succeeded bool, reason, message string, now time.Time) {
	interim, final := batchv1.JobFailureTarget, batchv1.JobFailed
	if succeeded {
		interim, final = batchv1.JobSuccessCriteriaMet, batchv1.JobComplete
	}
	t := metav1.NewTime(now)
	for _, ct := range []batchv1.JobConditionType{interim, final} {
		job.Status.Conditions = append(job.Status.Conditions, batchv1.JobCondition{
			Type: ct, Status: corev1.ConditionTrue, Reason: reason, Message: message,
			LastProbeTime: t, LastTransitionTime: t,
		})
	}
	job.Status.Active, job.Status.Ready, job.Status.Terminating = 0, ptr.To[int32](0), ptr.To[int32](0)
	if succeeded {
		job.Status.CompletionTime = &t
	}
}

func jobFinished(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// podFailureBackoff is how long the Job controller waits before replacing the failed-th
// failed pod.
func podFailureBackoff(failed int32) time.Duration {
	d := jobBackoff
	for i := int32(1); i < failed && d < jobMaxBackoff; i++ {
		d *= 2
	}
	return min(d, jobMaxBackoff)
}

// newJobPod returns the running pod of a Job's attempt, as the Job controller creates it and
// the kubelet starts it.
func newJobPod(job *batchv1.Job, now time.Time) *corev1.Pod {
	t := metav1.NewTime(now)
	labels := map[string]string{}
	for k, v := range job.Spec.Template.Labels {
		labels[k] = v
	}
	uid := string(job.UID)
	labels[batchv1.JobNameLabel], labels[legacyJobNameLabel] = job.Name, job.Name
	labels[batchv1.ControllerUidLabel], labels[legacyControllerUIDLabel] = uid, uid
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: job.Name + "-" + utilrand.String(5), Namespace: job.Namespace,
			Labels: labels, Annotations: job.Spec.Template.Annotations, CreationTimestamp: t,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: batchv1.SchemeGroupVersion.String(), Kind: "Job", Name: job.Name, UID: job.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec:   *job.Spec.Template.Spec.DeepCopy(),
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &t},
	}
	for _, ctr := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: ctr.Name, Image: ctr.Image, Ready: true, Started: ptr.To(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t}},
		})
	}
	return pod
}

// endPod records how an attempt's pod ended: its phase and its containers' terminated state,
// the termination message on the first container.
func endPod(objects configpolicy.Store, namespace, name string, result JobResult, now time.Time) error {
	obj, err := objects.Get(podGVK, namespace, name)
	if errors.Is(err, configpolicy.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	pod := &corev1.Pod{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, pod); err != nil {
		return err
	}
	phase, reason := corev1.PodSucceeded, "Completed"
	if result.ExitCode != 0 {
		phase, reason = corev1.PodFailed, "Error"
	}
	pod.Status.Phase = phase
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		terminated := &corev1.ContainerStateTerminated{ExitCode: result.ExitCode, Reason: reason, FinishedAt: metav1.NewTime(now)}
		if cs.State.Running != nil {
			terminated.StartedAt = cs.State.Running.StartedAt
		}
		if i == 0 {
			terminated.Message = result.Message
		}
		cs.State, cs.Ready, cs.Started = corev1.ContainerState{Terminated: terminated}, false, ptr.To(false)
	}
	updated, err := toUnstructured(pod)
	if err != nil {
		return err
	}
	updated.SetResourceVersion(obj.GetResourceVersion())
	return objects.Update(updated)
}
