package harness

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/cgu-operator/cgu-operator/pkg/spokehealth"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// runSpokeProgram plays the pod of a spoke Job that runs the spoke program (precache/): its
// health command collects with spokehealth.Collect, as the real one does, from what the
// simulated spoke holds (its ClusterOperators, ClusterVersion and firing alerts), and writes
// the report ConfigMap on the spoke. A Job running anything else succeeds at once.
func (e *Env) runSpokeProgram(ctx context.Context, cluster string, job *batchv1.Job) sim.JobResult {
	containers := job.Spec.Template.Spec.Containers
	if len(containers) == 0 || len(containers[0].Args) == 0 || containers[0].Args[0] != "health" {
		return sim.JobSucceeded("")
	}
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	namespace, name, run := fs.String("namespace", "", ""), fs.String("configmap", "", ""), fs.String("run", "", "")
	if err := fs.Parse(containers[0].Args[1:]); err != nil || *namespace == "" || *name == "" || *run == "" {
		return sim.JobFailed(fmt.Sprintf("precache health: bad flags %q", containers[0].Args))
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
