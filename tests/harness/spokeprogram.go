package harness

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sync"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/precache/pull"
	"github.com/cgu-operator/cgu-operator/pkg/spokehealth"
	"github.com/cgu-operator/cgu-operator/pkg/talmjob"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// runSpokeProgram plays the pod of a spoke Job that runs the spoke program (precache/). Its
// health command collects with spokehealth.Collect, as the real one does, from what the
// simulated spoke holds (its ClusterOperators, ClusterVersion and firing alerts), and writes
// the report ConfigMap on the spoke. Its pull command runs the real pull.Run on the spec the
// Job's input ConfigMap holds, from the registries the spec names, into an OCI layout
// directory standing for the node's container storage, and reports as the program does. A
// Job running anything else succeeds at once.
func (e *Env) runSpokeProgram(ctx context.Context, cluster string, job *batchv1.Job) sim.JobResult {
	if result, played := e.playJob(ctx, cluster, job); played {
		return result
	}
	containers := job.Spec.Template.Spec.Containers
	if len(containers) == 0 || len(containers[0].Args) == 0 {
		return sim.JobSucceeded("")
	}
	switch containers[0].Args[0] {
	case "health":
		return e.runHealth(ctx, cluster, containers[0].Args[1:])
	case "pull":
		return e.runPrecache(ctx, cluster, job, containers[0].Args[1:])
	case "backup":
		return e.runBackup(ctx, cluster, containers[0].Args[1:])
	}
	return sim.JobSucceeded("")
}

// runHealth plays precache health.
func (e *Env) runHealth(ctx context.Context, cluster string, args []string) sim.JobResult {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	namespace, name, run := fs.String("namespace", "", ""), fs.String("configmap", "", ""), fs.String("run", "", "")
	if err := fs.Parse(args); err != nil || *namespace == "" || *name == "" || *run == "" {
		return sim.JobFailed(fmt.Sprintf("precache health: bad flags %q", args))
	}
	report := spokehealth.Collect(ctx, simSource{sim: e.Sim, cluster: cluster}, *run, time.Now())
	cm, err := spokehealth.ToConfigMap(*namespace, *name, report)
	if err == nil {
		err = e.Sim.Mutate(cluster, func(objects configpolicy.Store) error { return upsertConfigMap(objects, cm) })
	}
	if err != nil {
		return sim.JobFailed("precache health: " + err.Error())
	}
	return sim.JobSucceeded("")
}

// upsertConfigMap creates or replaces a ConfigMap in a spoke's store.
func upsertConfigMap(objects configpolicy.Store, obj runtime.Object) error {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: raw}
	u.SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	if u.GetKind() == "" {
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
	}
	_, err = objects.Get(u.GroupVersionKind(), u.GetNamespace(), u.GetName())
	if errors.Is(err, configpolicy.ErrNotFound) {
		return objects.Create(u)
	}
	if err != nil {
		return err
	}
	return objects.Update(u)
}

// simSource reads a simulated spoke as the health command reads a real one.
type simSource struct {
	sim     *sim.Simulator
	cluster string
}

var clusterOperatorGVK = configv1.GroupVersion.WithKind("ClusterOperator")

func (s simSource) ClusterOperators(context.Context) ([]configv1.ClusterOperator, error) {
	objs, err := s.sim.Objects(s.cluster, clusterOperatorGVK, "")
	if err != nil {
		return nil, err
	}
	out := make([]configv1.ClusterOperator, 0, len(objs))
	for _, o := range objs {
		var co configv1.ClusterOperator
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &co); err != nil {
			return nil, err
		}
		out = append(out, co)
	}
	return out, nil
}

func (s simSource) ClusterVersion(context.Context) (*configv1.ClusterVersion, error) {
	return s.sim.ClusterVersion(s.cluster)
}

func (s simSource) Alerts(context.Context) ([]spokehealth.Alert, error) {
	firing, err := s.sim.Alerts(s.cluster)
	if err != nil {
		return nil, err
	}
	out := make([]spokehealth.Alert, 0, len(firing))
	for _, a := range firing {
		out = append(out, spokehealth.Alert{Name: a.Name, Severity: a.Severity, State: "firing"})
	}
	return out, nil
}

// runPrecache plays precache pull: the spec comes from the Job's input ConfigMap on the
// spoke, the images from the registries it names (tests run them in-process), and the node's
// container storage is an OCI layout directory per cluster (PrecacheStore).
func (e *Env) runPrecache(ctx context.Context, cluster string, job *batchv1.Job, args []string) sim.JobResult {
	fs := flag.NewFlagSet("pull", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.String("spec", "", "")
	fs.String("store", "", "")
	run, namespace, name := fs.String("run", "", ""), fs.String("report-namespace", "", ""), fs.String("report-configmap", "", "")
	if err := fs.Parse(args); err != nil || *run == "" {
		return sim.JobFailed(fmt.Sprintf("precache pull: bad flags %q", args))
	}
	if e.precacheStalled(cluster) {
		<-ctx.Done() // the Job's deadline, or its deletion, ends the pod
		return sim.JobFailed("precache pull: stopped")
	}
	spec, err := e.precacheSpec(cluster, job)
	if err != nil {
		return sim.JobResult{ExitCode: precache.ExitUnrecoverable, Message: "precache pull: " + err.Error()}
	}
	layout, err := pull.NewOCILayout(e.PrecacheStore(cluster))
	if err != nil {
		return sim.JobFailed("precache pull: " + err.Error())
	}
	store := nodeStore{Store: layout, free: int64(min(e.nodeFreeSpace(cluster), math.MaxInt64))}
	slow := e.precacheSlowed(cluster)
	report := func(s precache.Summary) {
		if *namespace != "" && *name != "" {
			_ = e.writeSummary(cluster, *namespace, *name, s)
		}
		if s.Phase == precache.PhasePulling && slow != nil {
			select { // a slow line: the pull goes on once released
			case <-slow:
			case <-ctx.Done():
			}
			slow = nil
		}
	}
	opts := pull.Options{Run: *run, Source: pull.Remote{}, Backoff: func(int) time.Duration { return 10 * time.Millisecond }}
	s := pull.Run(ctx, spec, store, opts, report)
	report(s)
	message, _ := json.Marshal(s)
	result := sim.JobResult{Message: string(message)}
	switch pull.ExitCode(s) {
	case precache.ExitOK:
	case precache.ExitRetryable:
		result.ExitCode = precache.ExitRetryable
	default:
		result.ExitCode = precache.ExitUnrecoverable
	}
	return result
}

// nodeStore is a precache store whose free space is the simulated node's (SetNodeFreeSpace,
// 1 TiB unless set), not that of the machine running the tests: the spec's spaceRequired (35
// GiB unless set, TALM's) is checked against it.
type nodeStore struct {
	pull.Store
	free int64
}

func (s nodeStore) FreeBytes() (int64, error) { return s.free, nil }

// PrecacheStore is the directory that stands for a simulated cluster's container storage.
func (e *Env) PrecacheStore(cluster string) string {
	return filepath.Join(e.precacheDir, cluster)
}

// precacheSpec reads the spec a precache Job reads: TALM's spec ConfigMap in its namespace,
// which the Job mounts at talmjob.SpecDir.
func (e *Env) precacheSpec(cluster string, job *batchv1.Job) (ranv1alpha1.PrecachingSpec, error) {
	obj, err := e.Sim.Object(cluster, corev1.SchemeGroupVersion.WithKind("ConfigMap"), job.Namespace, talmjob.Precache.SpecConfigMap)
	if err != nil {
		return ranv1alpha1.PrecachingSpec{}, fmt.Errorf("reading the spec of Job %s: %w", job.Name, err)
	}
	data, _, _ := unstructured.NestedStringMap(obj.Object, "data")
	return precache.SpecFromData(data), nil
}

// writeSummary writes a program's summary (precache pull, backup) to its report ConfigMap
// on the spoke.
func (e *Env) writeSummary(cluster, namespace, name string, s any) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: map[string]string{precache.SummaryKey: string(data)}}
	return e.Sim.Mutate(cluster, func(objects configpolicy.Store) error { return upsertConfigMap(objects, cm) })
}

// StallPrecache makes the precache program of a cluster hang until its Job's deadline.
func (e *Env) StallPrecache(cluster string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stalledPrecache[cluster] = true
}

// SlowPrecache makes the precache program of a cluster, once it reported what it pulls (its
// Pulling phase), wait until release is called or its Job ends: a pull on a slow line.
func (e *Env) SlowPrecache(cluster string) (release func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ch := make(chan struct{})
	e.slowPrecache[cluster] = ch
	var once sync.Once
	return func() {
		once.Do(func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			close(ch)
			delete(e.slowPrecache, cluster)
		})
	}
}

func (e *Env) precacheSlowed(cluster string) chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.slowPrecache[cluster]
}

func (e *Env) precacheStalled(cluster string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stalledPrecache[cluster]
}

// JobPlay decides how the pod of a spoke Job ends: it is called, in a goroutine of its own,
// when the pod starts and returns when the pod's container exits, soon after ctx is done
// (the Job was deleted or ran past its deadline, or the hub stops). It returns false to
// leave the Job to the harness's default.
type JobPlay func(ctx context.Context, cluster string, job *batchv1.Job) (sim.JobResult, bool)

// The labels by which the harness tells the Jobs of the operator's spoke program (pkg/spokejob
// labels each of them so).
const (
	managedByLabel = "app.kubernetes.io/managed-by"
	operatorName   = "cgu-operator"
)

// jobPlays holds each Env's JobPlay (PlayJobs); Env's own fields are set where it starts.
var jobPlays sync.Map

// PlayJobs makes play decide how the spoke Jobs that do not run the operator's spoke program
// end, for example the Jobs the pre- and post-upgrade ManifestWorks apply. A Job runs the
// spoke program when it is labelled app.kubernetes.io/managed-by=cgu-operator and its first
// container's first argument is a command of the program (health, pull); those are always
// played as the program does. For any other Job, play is asked first; when it returns
// false, or when no play is set (nil removes it), the Job succeeds at once, as before. Safe
// to call while Jobs run; a Job already started keeps the play it was given.
func (e *Env) PlayJobs(play JobPlay) {
	if play == nil {
		jobPlays.Delete(e)
		return
	}
	jobPlays.Store(e, play)
}

// playJob plays a Job with the Env's JobPlay, unless the Job runs the spoke program.
func (e *Env) playJob(ctx context.Context, cluster string, job *batchv1.Job) (sim.JobResult, bool) {
	if runsSpokeProgram(job) {
		return sim.JobResult{}, false
	}
	play, ok := jobPlays.Load(e)
	if !ok {
		return sim.JobResult{}, false
	}
	return play.(JobPlay)(ctx, cluster, job)
}

// runsSpokeProgram tells whether a Job is one of the operator's spoke program.
func runsSpokeProgram(job *batchv1.Job) bool {
	if job.Labels[managedByLabel] != operatorName {
		return false
	}
	containers := job.Spec.Template.Spec.Containers
	if len(containers) == 0 || len(containers[0].Args) == 0 {
		return false
	}
	switch containers[0].Args[0] {
	case "health", "pull":
		return true
	}
	return false
}
