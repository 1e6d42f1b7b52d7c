package talmjob

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

var work = Work{Cluster: "spoke1", Pod: corev1.PodSpec{Containers: []corev1.Container{{Name: "pull", Image: "spoke:1"}}},
	DeadlineSeconds: 600, Spec: map[string]string{"spaceRequired": "35"}, UpdateIntervalSeconds: 30,
	Labels: map[string]string{"owner": "cgu"}, DeleteLabels: map[string]string{"teardown": "true"}}

var (
	notFound = View{Exists: true, Answered: true}
	found    = View{Exists: true, Answered: true, Found: true}
)

func jobView(st batchv1.JobStatus) View {
	return View{Exists: true, Answered: true, Found: true, Job: &batchv1.Job{Status: st}}
}

func failedJob(reason string) View {
	return jobView(batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason}}})
}

// depsFound are the views of the pre-cache Job's dependencies, all showing them.
func depsFound(extra map[string]View) map[string]View {
	out := map[string]View{}
	for _, d := range Precache.DependencyViews {
		out[d.Name] = found
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

func actionNames(as []*actionv1beta1.ManagedClusterAction) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Name)
	}
	return out
}

func viewNames(vs []*viewv1beta1.ManagedClusterView) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Name)
	}
	return out
}

// TALM's state machines, step by step as its pre-caching and backup scenarios play them.
func TestStep(t *testing.T) {
	jobActive := jobView(batchv1.JobStatus{Active: 1})
	for name, tc := range map[string]struct {
		proto       Protocol
		facts       Facts
		state       string
		problem     bool
		actions     []string
		views       []string
		deleteViews []string
		deleteActs  []string
	}{
		"pre-caching starts by clearing what an earlier run left, then watches the namespace": {
			proto: Precache, facts: Facts{}, state: PreparingToStart,
			actions: []string{"precache-ns-delete", "precache-crb-delete"}, views: []string{"view-precache-namespace"},
			deleteViews: Precache.Views(),
			deleteActs: []string{"precache-ns-create", "precache-sa-create", "precache-crb-create", "precache-spec-cm-create", "precache-job-create",
				"precache-ns-delete", "precache-crb-delete"}, // made anew
		},
		"the backup clears what an earlier run left and is Starting after one pass, asking for its dependencies": {
			proto: Backup, facts: Facts{}, state: Starting,
			actions: []string{"backup-ns-delete", "backup-crb-delete", "backup-ns-create", "backup-sa-create", "backup-crb-create"},
			views:   []string{"view-backup-namespace"}, deleteViews: Backup.Views(),
			deleteActs: []string{"backup-ns-create", "backup-sa-create", "backup-crb-create", "backup-job-create", "backup-ns-delete", "backup-crb-delete"},
		},
		"a backup a TALM hub left PreparingToStart is prepared": {
			proto: Backup, facts: Facts{State: PreparingToStart, Views: map[string]View{"view-backup-namespace": found}}, state: Starting,
			actions: []string{"backup-ns-delete", "backup-crb-delete", "backup-ns-create", "backup-sa-create", "backup-crb-create"},
			views:   []string{"view-backup-namespace"}, deleteViews: Backup.Views(),
			deleteActs: []string{"backup-ns-create", "backup-sa-create", "backup-crb-create", "backup-job-create", "backup-ns-delete", "backup-crb-delete"},
		},
		"waits while the namespace is still on the spoke": {
			proto: Precache, facts: Facts{State: PreparingToStart, Views: map[string]View{"view-precache-namespace": found}},
			state: PreparingToStart,
		},
		"waits for the agent's answer": {
			proto: Precache, facts: Facts{State: PreparingToStart, Views: map[string]View{"view-precache-namespace": {Exists: true}}},
			state: PreparingToStart,
		},
		"makes the namespace view again when it is missing": {
			proto: Precache, facts: Facts{State: PreparingToStart}, state: PreparingToStart, views: []string{"view-precache-namespace"},
		},
		"starts once the namespace is gone, asking for the dependencies in the same pass": {
			proto: Precache, facts: Facts{State: PreparingToStart, Views: map[string]View{"view-precache-namespace": notFound}}, state: Starting,
			actions: []string{"precache-ns-create", "precache-sa-create", "precache-crb-create", "precache-spec-cm-create"},
			views:   []string{"view-precache-spec-configmap", "view-precache-service-acct", "view-precache-cluster-role-binding"},
		},
		"a view that cannot read is a problem": {
			proto: Precache, facts: Facts{State: PreparingToStart, Views: map[string]View{"view-precache-namespace": {Exists: true, Answered: true, Failure: "forbidden"}}},
			state: PreparingToStart, problem: true,
		},
		"a problem fails the cluster when asked to": {
			proto: Precache, facts: Facts{State: PreparingToStart, FailOnError: true,
				Views: map[string]View{"view-precache-namespace": {Exists: true, Answered: true, Failure: "forbidden"}}},
			state: Failed, problem: true,
		},
		"Starting makes the dependencies and their views": {
			proto: Precache, facts: Facts{State: Starting}, state: Starting,
			actions: []string{"precache-ns-create", "precache-sa-create", "precache-crb-create", "precache-spec-cm-create"},
			views:   []string{"view-precache-spec-configmap", "view-precache-service-acct", "view-precache-cluster-role-binding"},
		},
		"the backup's dependency view is the namespace's": {
			proto: Backup, facts: Facts{State: Starting, Views: map[string]View{"view-backup-namespace": notFound}}, state: Starting,
			actions: []string{"backup-ns-create", "backup-sa-create", "backup-crb-create"}, views: []string{"view-backup-namespace"},
		},
		"then the Job's view": {
			proto: Precache, facts: Facts{State: Starting, Views: depsFound(nil)}, state: Starting, views: []string{"view-precache-job"},
		},
		"then the Job, once its view shows none": {
			proto: Precache, facts: Facts{State: Starting, Views: depsFound(map[string]View{"view-precache-job": notFound})}, state: Starting,
			actions: []string{"precache-job-create"}, views: []string{"view-precache-job", "view-precache-report"}, deleteViews: []string{"view-precache-job"},
		},
		"the backup makes its Job and view at once": {
			proto: Backup, facts: Facts{State: Starting, Views: map[string]View{"view-backup-namespace": found}}, state: Starting,
			actions: []string{"backup-job-create"}, views: []string{"view-backup-job"},
		},
		"a Job that shows no status yet keeps the state": {
			proto: Precache, facts: Facts{State: Starting, Views: depsFound(map[string]View{"view-precache-job": jobView(batchv1.JobStatus{})})},
			state: Starting,
		},
		"a running Job is Active; the views of the dependencies and the namespace go": {
			proto: Precache, facts: Facts{State: Starting, Views: depsFound(map[string]View{"view-precache-job": jobActive})}, state: Active,
			deleteViews: []string{"view-precache-spec-configmap", "view-precache-service-acct", "view-precache-cluster-role-binding", "view-precache-namespace"},
		},
		"a Job that succeeded while Starting: every view goes, and the namespace and binding on the spoke": {
			proto: Precache, facts: Facts{State: Starting, Views: depsFound(map[string]View{"view-precache-job": jobView(batchv1.JobStatus{Succeeded: 1})})},
			state: Succeeded, actions: []string{"precache-ns-delete", "precache-crb-delete"},
			deleteViews: Precache.Views(),
			deleteActs:  []string{"precache-ns-delete", "precache-crb-delete"},
		},
		"Active follows the Job to its success": {
			proto: Backup, facts: Facts{State: Active, Available: true, Views: map[string]View{"view-backup-job": jobView(batchv1.JobStatus{Succeeded: 1})}},
			state: Succeeded, actions: []string{"backup-ns-delete", "backup-crb-delete"}, deleteViews: Backup.Views(),
			deleteActs: []string{"backup-ns-delete", "backup-crb-delete"},
		},
		"a Job past its deadline timed out": {
			proto: Precache, facts: Facts{State: Active, Available: true, Views: map[string]View{"view-precache-job": failedJob(batchv1.JobReasonDeadlineExceeded)}},
			state: "PrecacheTimeout", deleteViews: []string{"view-precache-spec-configmap", "view-precache-service-acct", "view-precache-cluster-role-binding"},
		},
		"a Job that failed is an unrecoverable error": {
			proto: Backup, facts: Facts{State: Active, Available: true, Views: map[string]View{"view-backup-job": failedJob(batchv1.JobReasonBackoffLimitExceeded)}},
			state: Failed,
		},
		"a running Job on an unavailable cluster is a problem": {
			proto: Precache, facts: Facts{State: Active, Views: map[string]View{"view-precache-job": jobActive}}, state: Active, problem: true,
		},
		"a running Job on an available cluster stays Active": {
			proto: Precache, facts: Facts{State: Active, Available: true, Views: map[string]View{"view-precache-job": jobActive}}, state: Active,
		},
		"a Job gone from the cluster while Active is a problem": {
			proto: Precache, facts: Facts{State: Active, Available: true, Views: map[string]View{"view-precache-job": notFound}}, state: Active, problem: true,
		},
		"an Active cluster's missing Job view is made again": {
			proto: Backup, facts: Facts{State: Active, Available: true}, state: Active, views: []string{"view-backup-job"},
		},
		"a final state is never left": {
			proto: Backup, facts: Facts{State: "BackupTimeout", FailOnError: true}, state: "BackupTimeout",
		},
		"an unknown state is a problem": {
			proto: Backup, facts: Facts{State: "Sideways"}, state: "Sideways", problem: true,
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := Step(tc.proto, tc.facts, work)
			in := r.Intents
			if r.State != tc.state || (r.Problem != "") != tc.problem {
				t.Errorf("state %s (problem %q), want %s (problem %v)", r.State, r.Problem, tc.state, tc.problem)
			}
			if got := actionNames(in.Actions); !slices.Equal(got, tc.actions) {
				t.Errorf("actions %v, want %v", got, tc.actions)
			}
			if got := viewNames(in.Views); !slices.Equal(got, tc.views) {
				t.Errorf("views %v, want %v", got, tc.views)
			}
			if !slices.Equal(in.DeleteViews, tc.deleteViews) || !slices.Equal(in.DeleteActions, tc.deleteActs) {
				t.Errorf("deletes views %v actions %v, want %v %v", in.DeleteViews, in.DeleteActions, tc.deleteViews, tc.deleteActs)
			}
			if !in.Empty() && in.Cluster != "spoke1" {
				t.Errorf("intents for cluster %q", in.Cluster)
			}
			for _, a := range in.Actions {
				want := map[string]string{"owner": "cgu"}
				if a.Spec.ActionType == actionv1beta1.DeleteActionType {
					want = map[string]string{"teardown": "true"} // outlives the rollout's cleanup
				}
				if a.Namespace != "spoke1" || !maps.Equal(a.Labels, want) {
					t.Errorf("action %s in %q labelled %v, want %v", a.Name, a.Namespace, a.Labels, want)
				}
			}
		})
	}
}

// The objects as TALM's scenarios assert them.
func TestObjects(t *testing.T) {
	in := Step(Precache, Facts{State: Starting, Views: depsFound(map[string]View{"view-precache-job": notFound})}, work).Intents
	job, ok := in.Actions[0].Spec.KubeWork.ObjectTemplate.Object.(*batchv1.Job)
	if !ok {
		t.Fatalf("the Job action holds %T", in.Actions[0].Spec.KubeWork.ObjectTemplate.Object)
	}
	pod := job.Spec.Template.Spec
	if job.Name != "pre-cache" || job.Namespace != "openshift-talo-pre-cache" || *job.Spec.BackoffLimit != 0 ||
		*job.Spec.ActiveDeadlineSeconds != 600 || pod.ServiceAccountName != "pre-cache-agent" || pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("Job %s/%s backoff %d deadline %d as %s", job.Namespace, job.Name, *job.Spec.BackoffLimit, *job.Spec.ActiveDeadlineSeconds, pod.ServiceAccountName)
	}
	checkSpecMounted(t, pod)
	if len(work.Pod.Volumes) != 0 {
		t.Errorf("the caller's pod was changed")
	}
	if v := in.Views[0].Spec.Scope; v.Resource != "jobs" || v.Namespace != "openshift-talo-pre-cache" || v.Name != "pre-cache" || v.UpdateIntervalSeconds != 30 {
		t.Errorf("Job view scope %+v", v)
	}
}

func checkSpecMounted(t *testing.T, pod corev1.PodSpec) {
	t.Helper()
	if len(pod.Volumes) != 1 || pod.Volumes[0].ConfigMap.Name != "pre-cache-spec" || pod.Containers[0].VolumeMounts[0].MountPath != SpecDir {
		t.Errorf("the spec ConfigMap is not mounted at %s: %+v %+v", SpecDir, pod.Volumes, pod.Containers[0].VolumeMounts)
	}
}

func TestDependencyAndTeardownObjects(t *testing.T) {
	deps := Step(Precache, Facts{State: Starting}, work).Intents.Actions
	crb, _ := deps[2].Spec.KubeWork.ObjectTemplate.Object.(interface{ GetName() string })
	cm := deps[3].Spec.KubeWork.ObjectTemplate.Object
	raw, _ := json.Marshal(cm)
	if deps[2].Spec.KubeWork.Resource != "clusterrolebinding" || crb.GetName() != "pre-cache-crb" ||
		string(raw) != `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"pre-cache-spec","namespace":"openshift-talo-pre-cache"},"data":{"spaceRequired":"35"}}` {
		t.Errorf("binding %s %v, spec ConfigMap %s", deps[2].Spec.KubeWork.Resource, crb, raw)
	}
	del := Step(Backup, Facts{}, work).Intents.Actions[0].Spec
	if del.ActionType != actionv1beta1.DeleteActionType || del.KubeWork.Resource != "namespace" || del.KubeWork.Name != "openshift-talo-backup" {
		t.Errorf("namespace delete %+v", del.KubeWork)
	}
	views := []viewv1beta1.ManagedClusterView{{ObjectMeta: metav1.ObjectMeta{Namespace: "spoke1", Name: "view-precache-job"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "spoke1", Name: "view-precache-namespace"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "spoke2", Name: "view-backup-job"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "spoke2", Name: "cgu-health"}}}
	down := TeardownActions(views, map[string]string{"teardown": "true"})
	var got []string
	for _, a := range down {
		got = append(got, a.Namespace+"/"+a.Name)
	}
	if !slices.Equal(got, []string{"spoke1/precache-ns-delete", "spoke1/precache-crb-delete", "spoke2/backup-ns-delete", "spoke2/backup-crb-delete"}) {
		t.Errorf("teardown %v: once per cluster and protocol, for the protocols' views only", got)
	}
}

// A view of a ConfigMap shows its data; a view of anything else shows none.
func TestReadViewOfAConfigMap(t *testing.T) {
	cm, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]string{"summary.json": "{}"}})
	job, _ := json.Marshal(map[string]any{"apiVersion": "batch/v1", "kind": "Job", "status": map[string]any{"active": 1}})
	found := []metav1.Condition{{Type: viewv1beta1.ConditionViewProcessing, Status: metav1.ConditionTrue}}
	report := &viewv1beta1.ManagedClusterView{Status: viewv1beta1.ViewStatus{Conditions: found, Result: runtime.RawExtension{Raw: cm}}}
	if got := ReadView(report, false); got.Data["summary.json"] != "{}" {
		t.Errorf("a ConfigMap's view: %+v", got)
	}
	if got := ReadView(&viewv1beta1.ManagedClusterView{Status: viewv1beta1.ViewStatus{Conditions: found, Result: runtime.RawExtension{Raw: job}}}, false); got.Data != nil {
		t.Errorf("a Job's view read as a ConfigMap: %+v", got)
	}
}

func TestReadView(t *testing.T) {
	raw, _ := json.Marshal(map[string]any{"status": map[string]any{"active": 0, "succeeded": 1}})
	v := &viewv1beta1.ManagedClusterView{Status: viewv1beta1.ViewStatus{
		Conditions: []metav1.Condition{{Type: viewv1beta1.ConditionViewProcessing, Status: metav1.ConditionTrue, Message: "found"}},
		Result:     runtime.RawExtension{Raw: raw}}}
	if got := ReadView(v, true); !got.Found || got.Job == nil || got.Job.Status.Succeeded != 1 {
		t.Errorf("a Job view as TALM's scenarios write it: %+v", got)
	}
	v.Status.Conditions[0] = metav1.Condition{Type: viewv1beta1.ConditionViewProcessing, Status: metav1.ConditionFalse, Message: `jobs.batch "pre-cache" not found`}
	if got := ReadView(v, true); !got.Answered || got.Found || got.Failure != "" {
		t.Errorf("not found: %+v", got)
	}
	v.Status.Conditions[0].Message = "the server could not find the requested resource"
	if got := ReadView(v, true); got.Failure == "" {
		t.Errorf("another failure: %+v", got)
	}
	if got := ReadView(&viewv1beta1.ManagedClusterView{}, false); !got.Exists || got.Answered {
		t.Errorf("unanswered: %+v", got)
	}
	if got := ReadView(nil, false); got.Exists {
		t.Errorf("missing: %+v", got)
	}
	if UpdateInterval(1) != 30 || UpdateInterval(10) != 60 || UpdateInterval(1000) != 300 {
		t.Errorf("update intervals %d %d %d", UpdateInterval(1), UpdateInterval(10), UpdateInterval(1000))
	}
}
