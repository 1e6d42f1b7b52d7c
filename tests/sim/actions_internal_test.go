package sim

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

func TestKindByResourceReadsResourceArguments(t *testing.T) {
	objects := configpolicy.NewMapStore(newMapper())
	cv := schema.GroupVersionKind{Group: "config.openshift.io", Version: "v1", Kind: "ClusterVersion"}
	job := schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}
	cases := map[string]schema.GroupVersionKind{
		"clusterversions": cv, "clusterversion": cv, "ClusterVersion": cv, "clusterversions.config.openshift.io": cv,
		"clusterversions.v1.config.openshift.io": cv, "ClusterVersion.v1.config.openshift.io": cv,
		"jobs": job, "jobs.batch": job, "jobs.v1.batch": job, "Job.batch": job,
	}
	for arg, want := range cases {
		k, err := kindByResource(arg, objects)
		if err != nil || k.gvk != want {
			t.Errorf("%q: got %v, %v; want %v", arg, k.gvk, err, want)
		}
	}
	for _, arg := range []string{"widgets", "jobs.v2.batch", "clusterversions.apps"} {
		if k, err := kindByResource(arg, objects); err == nil {
			t.Errorf("%q: got %v, want an error", arg, k.gvk)
		}
	}
}

func TestViewAnswerKeepsTheTransitionTimeAndTheLastResult(t *testing.T) {
	objects := configpolicy.NewMapStore(newMapper())
	cv, _ := toUnstructured(NewClusterVersion("4.16.10", "stable-4.16", t0))
	if err := objects.Create(cv); err != nil {
		t.Fatal(err)
	}
	scope := viewv1beta1.ViewScope{Resource: "clusterversions", Name: "version"}

	first := ViewAnswer(scope, viewv1beta1.ViewStatus{}, objects, t0)
	if c := first.Conditions[0]; c.Status != metav1.ConditionTrue || !c.LastTransitionTime.Time.Equal(t0) || len(first.Result.Raw) == 0 {
		t.Fatalf("first answer %+v", first)
	}
	again := ViewAnswer(scope, first, objects, t0.Add(time.Minute))
	if !again.Conditions[0].LastTransitionTime.Time.Equal(t0) {
		t.Fatal("an unchanged condition keeps its transition time")
	}
	if err := objects.Delete(clusterVersionGVK, "", "version"); err != nil {
		t.Fatal(err)
	}
	gone := ViewAnswer(scope, again, objects, t0.Add(2*time.Minute))
	c := gone.Conditions[0]
	if c.Status != metav1.ConditionFalse || c.Reason != viewv1beta1.ReasonGetResourceFailed ||
		c.Message != `failed to get resource with err: clusterversions.config.openshift.io "version" not found` {
		t.Fatalf("condition of a missing object %+v", c)
	}
	if string(gone.Result.Raw) != string(first.Result.Raw) {
		t.Fatal("the agent leaves the last result in place")
	}
}

func TestUpdateActionReplacesAllButTheServerFields(t *testing.T) {
	objects := configpolicy.NewMapStore(newMapper())
	cv, _ := toUnstructured(NewClusterVersion("4.16.10", "stable-4.16", t0))
	cv.SetLabels(map[string]string{"keep": "no"})
	if err := objects.Create(cv); err != nil {
		t.Fatal(err)
	}
	before, _ := objects.Get(clusterVersionGVK, "", "version")
	tmpl := `{"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion", "metadata": {"name": "version"},
		"spec": {"channel": "stable-4.16", "desiredUpdate": {"version": "4.16.12"}}, "status": {"desired": {"version": "9.9.9"}}}`
	spec := actionv1beta1.ActionSpec{ActionType: actionv1beta1.UpdateActionType,
		KubeWork: &actionv1beta1.KubeWorkSpec{ObjectTemplate: runtime.RawExtension{Raw: []byte(tmpl)}}}

	result, wrote, _, err := ApplyAction(objects, spec, runtime.RawExtension{}, t0)
	if err != nil || !wrote || string(result.Raw) != tmpl {
		t.Fatalf("update: wrote %v, err %v, result %s", wrote, err, result.Raw)
	}
	after, _ := getClusterVersion(objects)
	if after.Spec.DesiredUpdate == nil || after.Spec.DesiredUpdate.Version != "4.16.12" || after.Spec.ClusterID != "" {
		t.Fatalf("spec %+v: the template's, clusterID dropped", after.Spec)
	}
	if after.Status.Desired.Version != "4.16.10" || len(after.Labels) != 0 || after.UID != before.GetUID() {
		t.Fatalf("status, identity kept and labels dropped: %+v %v %v", after.Status.Desired, after.Labels, after.UID)
	}

	previous := runtime.RawExtension{Raw: []byte(`{"kept": true}`)}
	result, wrote, _, err = ApplyAction(objects, spec, previous, t0)
	if err != nil || wrote || string(result.Raw) != string(previous.Raw) {
		t.Fatalf("nothing to update: wrote %v, err %v, result %s", wrote, err, result.Raw)
	}
}

func TestCreateActionNamesAndStampsTheObject(t *testing.T) {
	objects := configpolicy.NewMapStore(newMapper())
	ns := `{"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "ztp-"}, "status": {"phase": "Terminating"}}`
	spec := actionv1beta1.ActionSpec{ActionType: actionv1beta1.CreateActionType,
		KubeWork: &actionv1beta1.KubeWorkSpec{ObjectTemplate: runtime.RawExtension{Raw: []byte(ns)}}}
	if _, _, _, err := ApplyAction(objects, spec, runtime.RawExtension{}, t0); err != nil {
		t.Fatal(err)
	}
	created, _ := objects.List(configpolicy.NamespaceGVK, "")
	if len(created) != 1 || len(created[0].GetName()) != len("ztp-")+5 || created[0].Object["status"] != nil {
		raw, _ := json.Marshal(created)
		t.Fatalf("created %s", raw)
	}
	if !created[0].GetCreationTimestamp().Time.Equal(t0) {
		t.Fatalf("creationTimestamp %v", created[0].GetCreationTimestamp())
	}
	if _, _, _, err := ApplyAction(objects, actionv1beta1.ActionSpec{ActionType: actionv1beta1.CreateActionType}, runtime.RawExtension{}, t0); !errors.Is(err, errUnanswered) {
		t.Fatalf("an action without spec.kube: %v, want it unanswered", err)
	}
}

func TestViewHoldoffFollowsTheProcessingTransition(t *testing.T) {
	changed := viewv1beta1.ViewStatus{Conditions: []metav1.Condition{{
		Type: viewv1beta1.ConditionViewProcessing, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0),
	}}}
	interval := viewInterval(viewv1beta1.ViewScope{UpdateIntervalSeconds: 10})
	cases := map[string]struct {
		status viewv1beta1.ViewStatus
		at     time.Duration
		want   time.Duration
	}{
		"never answered":            {viewv1beta1.ViewStatus{}, 0, 0},
		"just changed":              {changed, 4 * time.Second, 6 * time.Second},
		"interval passed":           {changed, 10 * time.Second, 0},
		"long unchanged, any event": {changed, time.Hour, 0},
	}
	for name, tc := range cases {
		if got := viewHoldoff(tc.status, interval, t0.Add(tc.at)); got != tc.want {
			t.Errorf("%s: holdoff %v, want %v", name, got, tc.want)
		}
	}
	if got := viewInterval(viewv1beta1.ViewScope{}); got != DefaultViewInterval {
		t.Errorf("default interval %v", got)
	}
}
