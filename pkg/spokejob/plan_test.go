package spokejob

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Answers of the agent to an action, as the work-manager writes them.
func succeededAction(a *actionv1beta1.ManagedClusterAction) {
	complete(a, metav1.ConditionTrue, "ActionDone", "Resource action is done.")
}

func existsAction(a *actionv1beta1.ManagedClusterAction) {
	complete(a, metav1.ConditionFalse, actionv1beta1.ReasonCreateResourceFailed,
		fmt.Sprintf("failed to handle Create action with err: things %q already exists", targetName(a)))
}

func missingAction(a *actionv1beta1.ManagedClusterAction) {
	complete(a, metav1.ConditionFalse, actionv1beta1.ReasonDeleteResourceFailed,
		fmt.Sprintf("failed to handle Delete action with err: things %q not found", targetName(a)))
}

func failedAction(a *actionv1beta1.ManagedClusterAction) {
	complete(a, metav1.ConditionFalse, actionv1beta1.ReasonCreateResourceFailed, "failed to handle Create action with err: forbidden")
}

func pendingAction(*actionv1beta1.ManagedClusterAction) {}

func complete(a *actionv1beta1.ManagedClusterAction, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&a.Status.Conditions, metav1.Condition{
		Type: actionv1beta1.ConditionActionCompleted, Status: status, Reason: reason, Message: message,
	})
}

// answer returns copies of actions as answered by f.
func answer(actions []*actionv1beta1.ManagedClusterAction, f func(*actionv1beta1.ManagedClusterAction)) []actionv1beta1.ManagedClusterAction {
	out := make([]actionv1beta1.ManagedClusterAction, len(actions))
	for i, a := range actions {
		out[i] = *a.DeepCopy()
		f(&out[i])
	}
	return out
}

// setup returns j's setup actions answered by f, but those of the steps in others, answered
// by other.
func setup(t *testing.T, j Job, f func(*actionv1beta1.ManagedClusterAction), other func(*actionv1beta1.ManagedClusterAction), others ...string) []actionv1beta1.ManagedClusterAction {
	t.Helper()
	var out []actionv1beta1.ManagedClusterAction
	for _, s := range append([]setupStep{namespaceStep()}, j.setupSteps()...) {
		a, err := j.writeAction(s.what, actionv1beta1.CreateActionType, s.object)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(others, s.what) {
			out = append(out, answer([]*actionv1beta1.ManagedClusterAction{a}, other)...)
		} else {
			out = append(out, answer([]*actionv1beta1.ManagedClusterAction{a}, f)...)
		}
	}
	return out
}

// actionOf returns j's action doing what, answered by f.
func actionOf(j Job, what string, actionType actionv1beta1.ActionType, f func(*actionv1beta1.ManagedClusterAction)) actionv1beta1.ManagedClusterAction {
	a := j.deleteAction(what, jobsResource)
	if actionType != actionv1beta1.DeleteActionType {
		a = j.newAction(what, actionv1beta1.ActionSpec{ActionType: actionType, KubeWork: &actionv1beta1.KubeWorkSpec{
			ObjectTemplate: runtime.RawExtension{Raw: []byte(`{"metadata":{"name":"health"}}`)},
		}})
	}
	return answer([]*actionv1beta1.ManagedClusterAction{a}, f)[0]
}

// Views as the agent answers them.
func showing(v *viewv1beta1.ManagedClusterView, obj any) *viewv1beta1.ManagedClusterView {
	raw, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	v.Status = viewv1beta1.ViewStatus{Result: runtime.RawExtension{Raw: raw}, Conditions: []metav1.Condition{{
		Type: viewv1beta1.ConditionViewProcessing, Status: metav1.ConditionTrue, Reason: viewv1beta1.ReasonGetResource,
	}}}
	return v
}

func notFound(v *viewv1beta1.ManagedClusterView) *viewv1beta1.ManagedClusterView {
	v.Status.Conditions = []metav1.Condition{{
		Type: viewv1beta1.ConditionViewProcessing, Status: metav1.ConditionFalse, Reason: viewv1beta1.ReasonGetResourceFailed,
		Message: fmt.Sprintf(`failed to get resource with err: things %q not found`, v.Spec.Scope.Name),
	}}
	return v
}

func recorded(v *viewv1beta1.ManagedClusterView, run, replaced string) *viewv1beta1.ManagedClusterView {
	v.Annotations = map[string]string{AnnotationRequested: RunHash(run), annotationReplaced: replaced}
	return v
}

// spokeJob is the Job of run on the spoke, with uid.
func spokeJob(run, uid string, conditions ...batchv1.JobCondition) *batchv1.Job {
	j := testJob()
	j.Run = run
	job := j.job()
	job.UID = types.UID(uid)
	job.Status.Conditions = conditions
	return job
}

func report(uid string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "health", Namespace: Namespace, UID: types.UID(uid)},
		Data: map[string]string{"run": "uid-1/1"}}
}

func TestPlan(t *testing.T) {
	j := testJob()
	old := spokeJob("uid-1/0", "job-0")
	oldDelete, reportDelete := whatDeleteJob+"-"+uidHash("job-0"), whatDeleteReport+"-"+uidHash("cm-0")
	cases := map[string]struct {
		jobView, reportView *viewv1beta1.ManagedClusterView
		actions             []actionv1beta1.ManagedClusterAction
		want                []string
		record              *record
	}{
		"nothing on the hub": {want: []string{"namespace"}},
		"views unanswered": {
			jobView: j.jobView(), reportView: j.reportView(), actions: setup(t, j, succeededAction, nil),
		},
		"nothing on the spoke": {
			jobView: notFound(j.jobView()), reportView: notFound(j.reportView()), actions: setup(t, j, succeededAction, nil),
			want: []string{whatJob}, record: &record{run: RunHash(j.Run)},
		},
		"setup under way": {
			jobView: notFound(j.jobView()), reportView: notFound(j.reportView()),
			actions: setup(t, j, pendingAction, succeededAction, "namespace"),
		},
		"namespace failed": {
			jobView: notFound(j.jobView()), reportView: notFound(j.reportView()), actions: setup(t, j, failedAction, nil)[:1],
		},
		"roles and bindings exist": {
			jobView: notFound(j.jobView()), reportView: notFound(j.reportView()),
			actions: setup(t, j, succeededAction, existsAction, "namespace", "role", "clusterrole", "clusterrolebinding"),
			want:    []string{"clusterrole-update", "role-update"},
		},
		"roles replaced": {
			jobView: notFound(j.jobView()), reportView: notFound(j.reportView()),
			actions: append(setup(t, j, succeededAction, existsAction, "role", "clusterrole"),
				actionOf(j, "role-update", actionv1beta1.UpdateActionType, succeededAction),
				actionOf(j, "clusterrole-update", actionv1beta1.UpdateActionType, succeededAction)),
			want: []string{whatJob}, record: &record{run: RunHash(j.Run)},
		},
		"a Job of another run and a report": {
			jobView: showing(j.jobView(), old), reportView: showing(j.reportView(), report("cm-0")), actions: setup(t, j, succeededAction, nil),
			want: []string{oldDelete, reportDelete},
		},
		"the old Job being deleted": {
			jobView: showing(j.jobView(), old), reportView: notFound(j.reportView()),
			actions: append(setup(t, j, succeededAction, nil), actionOf(j, oldDelete, actionv1beta1.DeleteActionType, pendingAction)),
		},
		"the old Job and report deleted, the views not refreshed": {
			jobView: showing(j.jobView(), old), reportView: showing(j.reportView(), report("cm-0")),
			actions: append(setup(t, j, succeededAction, nil), actionOf(j, oldDelete, actionv1beta1.DeleteActionType, succeededAction),
				actionOf(j, reportDelete, actionv1beta1.DeleteActionType, missingAction)),
			want: []string{whatJob}, record: &record{run: RunHash(j.Run), replaced: "job-0"},
		},
		"an action of another run unanswered": {
			jobView: notFound(j.jobView()), reportView: notFound(j.reportView()),
			actions: append(setup(t, j, succeededAction, nil), actionOf(func() Job { o := j; o.Run = "uid-1/0"; return o }(), whatStopJob,
				actionv1beta1.DeleteActionType, pendingAction)),
		},
		"a Stop of this run unanswered": {
			jobView: notFound(j.jobView()), reportView: notFound(j.reportView()),
			actions: append(setup(t, j, succeededAction, nil), actionOf(j, whatStopJob, actionv1beta1.DeleteActionType, pendingAction)),
		},
		"its Job shown": {
			jobView: showing(j.jobView(), spokeJob(j.Run, "job-1")), reportView: j.reportView(),
			record: &record{run: RunHash(j.Run)},
		},
		"its Job shown and recorded": {
			jobView: recorded(showing(j.jobView(), spokeJob(j.Run, "job-1")), j.Run, ""), reportView: j.reportView(),
		},
		"requested, its action answered": {
			jobView: recorded(notFound(j.jobView()), j.Run, ""), reportView: notFound(j.reportView()),
			actions: []actionv1beta1.ManagedClusterAction{actionOf(j, whatJob, actionv1beta1.CreateActionType, succeededAction)},
		},
		"requested, its action collected, the view not refreshed": {
			jobView: recorded(showing(j.jobView(), old), j.Run, "job-0"), reportView: showing(j.reportView(), report("cm-0")),
			want: []string{whatJob},
		},
		"requested, then a new Job of another run": {
			jobView: recorded(showing(j.jobView(), spokeJob("uid-1/0", "job-2")), j.Run, "job-0"), reportView: notFound(j.reportView()),
			actions: setup(t, j, succeededAction, nil),
			want:    []string{whatDeleteJob + "-" + uidHash("job-2")}, record: &record{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in, err := plan(j, newFacts(tc.jobView, tc.reportView, tc.actions))
			if err != nil {
				t.Fatal(err)
			}
			got := slices.Sorted(maps.Keys(byWhat(t, j, in)))
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b []string) bool { return slices.Equal(a, b) })); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.record, in.record, cmp.AllowUnexported(record{})); diff != "" {
				t.Errorf("record (-want +got):\n%s", diff)
			}
		})
	}
}

func TestState(t *testing.T) {
	j := testJob()
	started := spokeJob(j.Run, "job-1")
	started.Status.StartTime = &metav1.Time{Time: time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)}
	succeeded := spokeJob(j.Run, "job-1", batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue})
	failedJob := spokeJob(j.Run, "job-1", batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue,
		Reason: batchv1.JobReasonBackoffLimitExceeded, Message: "Job has reached the specified backoff limit"})
	other := j
	other.Run = "uid-1/0"
	cases := map[string]struct {
		jobView, reportView *viewv1beta1.ManagedClusterView
		actions             []actionv1beta1.ManagedClusterAction
		want                State
	}{
		"no views":           {want: State{Waiting: "the view of its Job does not exist yet"}},
		"views unanswered":   {jobView: j.jobView(), want: State{Waiting: "its agent has not answered the view of its Job yet"}},
		"Job being prepared": {jobView: notFound(j.jobView()), want: State{Waiting: "its Job is being prepared"}},
		"Job being created":  {jobView: recorded(notFound(j.jobView()), j.Run, ""), want: State{Waiting: "its Job is being created", Requested: true}},
		"Job of another run": {jobView: showing(j.jobView(), spokeJob(other.Run, "job-0")), want: State{Waiting: "the Job of another run is being replaced"}},
		"Job not started":    {jobView: showing(j.jobView(), spokeJob(j.Run, "job-1")), want: State{Waiting: "its Job has not started yet", Requested: true}},
		"Job running":        {jobView: showing(j.jobView(), started), want: State{Waiting: "its Job is running", Requested: true, Running: true}},
		"Job running, reporting": {jobView: showing(j.jobView(), started), reportView: showing(j.reportView(), report("cm-1")),
			want: State{Waiting: "its Job is running", Requested: true, Running: true, Progress: report("cm-1")}},
		"Job failed": {jobView: showing(j.jobView(), failedJob), want: State{Failed: "its Job failed (BackoffLimitExceeded): Job has reached the specified backoff limit",
			Requested: true, FailedReason: "BackoffLimitExceeded"}},
		"report unanswered":   {jobView: showing(j.jobView(), succeeded), reportView: j.reportView(), want: State{Waiting: "its Job succeeded; its agent has not answered the view of its report yet", Requested: true}},
		"report not visible":  {jobView: showing(j.jobView(), succeeded), reportView: notFound(j.reportView()), want: State{Waiting: "its Job succeeded; its report is not visible yet", Requested: true}},
		"report":              {jobView: showing(j.jobView(), succeeded), reportView: showing(j.reportView(), report("cm-1")), want: State{Report: report("cm-1"), Requested: true}},
		"report without view": {jobView: showing(j.jobView(), succeeded), want: State{Waiting: "its Job succeeded; the view of its report does not exist", Requested: true}},
		"unreadable Job": {
			jobView: func() *viewv1beta1.ManagedClusterView {
				v := notFound(j.jobView())
				v.Status.Conditions[0].Message = "failed to get resource with err: forbidden"
				return v
			}(),
			want: State{Waiting: "its agent cannot read its Job: failed to get resource with err: forbidden"},
		},
		"an action failed": {
			jobView: notFound(j.jobView()), actions: setup(t, j, succeededAction, failedAction, "serviceaccount"),
			want: State{Failed: "action cgu-ztp-upgrade-health-serviceaccount-" + RunHash(j.Run) + " failed: failed to handle Create action with err: forbidden"},
		},
		"expected failures": {
			jobView: notFound(j.jobView()),
			actions: append(setup(t, j, existsAction, nil), actionOf(j, whatDeleteJob, actionv1beta1.DeleteActionType, missingAction)),
			want:    State{Waiting: "its Job is being prepared"},
		},
		"an action of another run failed": {
			jobView: notFound(j.jobView()), actions: setup(t, other, failedAction, nil),
			want: State{Waiting: "its Job is being prepared"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			actions := tc.actions
			// Read lists the actions of its run only.
			actions = slices.DeleteFunc(actions, func(a actionv1beta1.ManagedClusterAction) bool { return a.Labels[LabelRun] != RunHash(j.Run) })
			got := state(j, newFacts(tc.jobView, tc.reportView, actions))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOutcome(t *testing.T) {
	j := testJob()
	create := func(message string) func(*actionv1beta1.ManagedClusterAction) {
		return func(a *actionv1beta1.ManagedClusterAction) {
			complete(a, metav1.ConditionFalse, actionv1beta1.ReasonCreateResourceFailed, message)
		}
	}
	cases := map[string]struct {
		action actionv1beta1.ManagedClusterAction
		want   outcome
	}{
		"pending":   {actionOf(j, whatJob, actionv1beta1.CreateActionType, pendingAction), pending},
		"succeeded": {actionOf(j, whatJob, actionv1beta1.CreateActionType, succeededAction), succeeded},
		"exists":    {actionOf(j, whatJob, actionv1beta1.CreateActionType, existsAction), exists},
		"another object exists": {actionOf(j, whatJob, actionv1beta1.CreateActionType,
			create(`failed to handle Create action with err: things "other" already exists`)), failed},
		"namespace missing": {actionOf(j, whatJob, actionv1beta1.CreateActionType,
			create(`failed to handle Create action with err: namespaces "cgu-operator-spoke" not found`)), failed},
		"missing":          {actionOf(j, whatStopJob, actionv1beta1.DeleteActionType, missingAction), missing},
		"delete forbidden": {actionOf(j, whatStopJob, actionv1beta1.DeleteActionType, failedAction), failed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := outcomeOf(&tc.action); got != tc.want {
				t.Fatalf("outcome %d, want %d", got, tc.want)
			}
		})
	}
	if outcomeOf(nil) != absent {
		t.Fatal("no action must be absent")
	}
}
