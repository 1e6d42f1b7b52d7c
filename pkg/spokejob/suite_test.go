package spokejob_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

func TestSpokeJobs(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Spoke jobs suite")
}

// actionTTL is how long the simulated hub keeps completed actions in this suite: short, so
// that a spec sees them collected.
const actionTTL = 5 * time.Second

var (
	env      *harness.Env
	programs = &programBook{plays: map[string]play{}, runs: map[string][]string{}}
)

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	env, err = harness.StartWithSim(ctx, zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)), func(o *sim.Options) {
		o.JobRunner, o.ActionTTL = programs.run, actionTTL
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(env.Hub.Stop()).To(Succeed()) })
	env.MustStandIn(ctx, owner)
})

// play is what the program does on a spoke, for the Job of a run.
type play func(ctx context.Context, cluster string, job *batchv1.Job) sim.JobResult

// programBook plays the pods of spoke Jobs, per cluster, and records the runs they ran.
type programBook struct {
	mu    sync.Mutex
	plays map[string]play
	runs  map[string][]string
}

func (b *programBook) set(cluster string, p play) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.plays[cluster] = p
}

func (b *programBook) run(ctx context.Context, cluster string, job *batchv1.Job) sim.JobResult {
	b.mu.Lock()
	p := b.plays[cluster]
	b.runs[cluster] = append(b.runs[cluster], job.Annotations[spokejob.AnnotationRun])
	b.mu.Unlock()
	if p == nil {
		return sim.JobFailed("no program")
	}
	return p(ctx, cluster, job)
}

// ran returns the runs whose programs started on cluster, in order.
func (b *programBook) ran(cluster string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.runs[cluster]...)
}

// reporting is a program that writes its run into its report and succeeds.
func reporting(_ context.Context, cluster string, job *batchv1.Job) sim.JobResult {
	if err := writeReport(cluster, job); err != nil {
		return sim.JobFailed(err.Error())
	}
	return sim.JobSucceeded("reported")
}

// writeReport writes the report of a Job's run on the spoke, as the program does: it
// creates the ConfigMap, or updates the one there.
func writeReport(cluster string, job *batchv1.Job) error {
	return env.Sim.Mutate(cluster, func(objects configpolicy.Store) error {
		cm := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": job.Name, "namespace": job.Namespace},
			"data":     map[string]any{"run": job.Annotations[spokejob.AnnotationRun]},
		}}
		_, err := objects.Get(configMapGVK, job.Namespace, job.Name)
		if errors.Is(err, configpolicy.ErrNotFound) {
			return objects.Create(cm)
		}
		if err != nil {
			return err
		}
		return objects.Update(cm)
	})
}

var configMapGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")

// countingClient counts the objects a Runner creates, by type and name.
type countingClient struct {
	client.Client
	mu      sync.Mutex
	created map[string]int
}

func newCountingClient() *countingClient {
	return &countingClient{Client: env.Hub.Client, created: map[string]int{}}
}

// Create creates obj and counts it when it was created.
func (c *countingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	err := c.Client.Create(ctx, obj, opts...)
	if err == nil {
		c.mu.Lock()
		c.created[fmt.Sprintf("%T %s", obj, obj.GetName())]++
		c.mu.Unlock()
	}
	return err
}

// count returns how many objects were created, and resets the count.
func (c *countingClient) count() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.created
	c.created = map[string]int{}
	return out
}
