package sim

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// jobWorld is one spoke's store with a Job controller whose runner runs inline, so that a
// test drives it step by step with its own times.
type jobWorld struct {
	t       *testing.T
	objects configpolicy.Store
	jobs    *jobController
}

func newJobWorld(t *testing.T, runner JobRunner, duration time.Duration) *jobWorld {
	t.Helper()
	objects := configpolicy.NewMapStore(newMapper())
	ns, _ := toUnstructured(&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: "precache"}})
	if err := objects.Create(ns); err != nil {
		t.Fatal(err)
	}
	pool := newJobPool(context.Background(), Options{JobRunner: runner, JobDuration: duration},
		func(string) {}, func(f func(context.Context)) { f(context.Background()) })
	return &jobWorld{t: t, objects: objects, jobs: newJobController("c1", pool)}
}

func (w *jobWorld) create(spec batchv1.JobSpec) {
	w.t.Helper()
	spec.Template.Spec = corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main"}}}
	obj, _ := toUnstructured(&batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: "pre-cache", Namespace: "precache"}, Spec: spec})
	if err := w.objects.Create(obj); err != nil {
		w.t.Fatal(err)
	}
}

// step runs the controller at t0+at and returns when it wants to run again.
func (w *jobWorld) step(at time.Duration) time.Duration {
	w.t.Helper()
	again, err := w.jobs.Step(w.objects, t0.Add(at))
	if err != nil {
		w.t.Fatalf("step at %v: %v", at, err)
	}
	return again
}

func (w *jobWorld) job() *batchv1.Job {
	w.t.Helper()
	obj, err := w.objects.Get(jobGVK, "precache", "pre-cache")
	if err != nil {
		w.t.Fatal(err)
	}
	job := &batchv1.Job{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, job); err != nil {
		w.t.Fatal(err)
	}
	return job
}

func (w *jobWorld) pods() int {
	w.t.Helper()
	pods, err := w.objects.List(podGVK, "precache")
	if err != nil {
		w.t.Fatal(err)
	}
	return len(pods)
}

func conditionTypes(job *batchv1.Job) []batchv1.JobConditionType {
	var out []batchv1.JobConditionType
	for _, c := range job.Status.Conditions {
		out = append(out, c.Type)
	}
	return out
}

func TestJobWithoutRunnerCompletesAfterTheDuration(t *testing.T) {
	w := newJobWorld(t, nil, time.Minute)
	w.create(batchv1.JobSpec{})

	if again := w.step(0); again != time.Minute {
		t.Fatalf("first step wants to run again in %v, want 1m", again)
	}
	job := w.job()
	if job.Status.Active != 1 || !job.Status.StartTime.Time.Equal(t0) || w.pods() != 1 {
		t.Fatalf("started job: status %+v, %d pods", job.Status, w.pods())
	}
	if again := w.step(30 * time.Second); again != 30*time.Second || w.job().Status.Succeeded != 0 {
		t.Fatalf("midway: again %v, succeeded %d", again, w.job().Status.Succeeded)
	}
	if again := w.step(time.Minute); again != 0 {
		t.Fatalf("after the duration: again %v", again)
	}
	checkCompleted(t, w)
}

func checkCompleted(t *testing.T, w *jobWorld) {
	t.Helper()
	job := w.job()
	want := []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet, batchv1.JobComplete}
	if got := conditionTypes(job); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("conditions %v, want %v", got, want)
	}
	if job.Status.Succeeded != 1 || job.Status.Active != 0 || !job.Status.CompletionTime.Time.Equal(t0.Add(time.Minute)) {
		t.Fatalf("completed job status %+v", job.Status)
	}
	w.step(time.Hour)
	if len(w.job().Status.Conditions) != 2 || w.pods() != 1 {
		t.Fatal("a finished job is left alone")
	}
}

func TestJobRetriesFailedPodsWithBackoffUpToTheLimit(t *testing.T) {
	w := newJobWorld(t, func(context.Context, string, *batchv1.Job) JobResult { return JobFailed("no space") }, 0)
	w.create(batchv1.JobSpec{BackoffLimit: ptr.To[int32](2)})

	// Each attempt fails at once; the replacements wait 10s, then 20s.
	steps := []struct {
		at, wantAgain time.Duration
		wantFailed    int32
	}{
		{0, 0, 0},                               // pod 1 starts; the runner has answered
		{0, 10 * time.Second, 1},                // pod 1 failed
		{5 * time.Second, 5 * time.Second, 1},   // still backing off
		{10 * time.Second, 0, 1},                // pod 2 starts
		{10 * time.Second, 20 * time.Second, 2}, // pod 2 failed
		{30 * time.Second, 0, 2},                // pod 3 starts
		{30 * time.Second, 0, 3},                // pod 3 failed: past the limit
	}
	for i, s := range steps {
		again := w.step(s.at)
		if again != s.wantAgain || w.job().Status.Failed != s.wantFailed {
			t.Fatalf("step %d at %v: again %v failed %d, want %v and %d", i, s.at, again, w.job().Status.Failed, s.wantAgain, s.wantFailed)
		}
	}
	job := w.job()
	if got := conditionTypes(job); len(got) != 2 || got[1] != batchv1.JobFailed || job.Status.Conditions[1].Reason != batchv1.JobReasonBackoffLimitExceeded {
		t.Fatalf("conditions %+v", job.Status.Conditions)
	}
	if job.Status.CompletionTime != nil || w.pods() != 3 {
		t.Fatalf("failed job: completionTime %v, %d pods", job.Status.CompletionTime, w.pods())
	}
}

func TestJobPastItsDeadlineFails(t *testing.T) {
	w := newJobWorld(t, nil, time.Hour)
	w.create(batchv1.JobSpec{ActiveDeadlineSeconds: ptr.To[int64](60)})

	if again := w.step(0); again != time.Minute {
		t.Fatalf("the deadline comes before the pod's end: again %v, want 1m", again)
	}
	w.step(time.Minute)
	job := w.job()
	if c := job.Status.Conditions; len(c) != 2 || c[1].Type != batchv1.JobFailed || c[1].Reason != batchv1.JobReasonDeadlineExceeded ||
		c[1].Message != "Job was active longer than specified deadline" {
		t.Fatalf("conditions %+v", c)
	}
	if job.Status.Failed != 1 || job.Status.Active != 0 || w.pods() != 0 {
		t.Fatalf("status %+v with %d pods, want the running pod deleted and counted failed", job.Status, w.pods())
	}
}

func TestDeletedJobLosesItsPods(t *testing.T) {
	w := newJobWorld(t, nil, time.Hour)
	w.create(batchv1.JobSpec{})
	w.step(0)
	if err := w.objects.Delete(jobGVK, "precache", "pre-cache"); err != nil {
		t.Fatal(err)
	}
	w.step(time.Second)
	if w.pods() != 0 || len(w.jobs.runs) != 0 {
		t.Fatalf("%d pods and %d runs left", w.pods(), len(w.jobs.runs))
	}
}

func TestPodFailureBackoff(t *testing.T) {
	for failed, want := range map[int32]time.Duration{1: 10 * time.Second, 2: 20 * time.Second, 4: 80 * time.Second, 7: 10 * time.Minute, 30: 10 * time.Minute} {
		if got := podFailureBackoff(failed); got != want {
			t.Errorf("backoff after %d failures = %v, want %v", failed, got, want)
		}
	}
}
