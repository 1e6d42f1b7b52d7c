package spokejob

import (
	"fmt"
	"slices"

	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// facts are what the hub shows of a spoke job: its views, what the Job view records, and
// its actions of every run.
type facts struct {
	// requested and replaced are what the Job view records: the hash of the run whose Job
	// was requested, and the UID of the Job of another run that was deleted for it.
	requested, replaced string
	job                 viewed
	jobObj              *batchv1.Job
	report              viewed
	reportObj           *corev1.ConfigMap
	// actions are the job's actions on the hub, of every run, by name.
	actions map[string]*actionv1beta1.ManagedClusterAction
}

// newFacts reads the views (nil when missing) and the actions of a spoke job.
func newFacts(jobView, reportView *viewv1beta1.ManagedClusterView, actions []actionv1beta1.ManagedClusterAction) facts {
	f := facts{jobObj: &batchv1.Job{}, reportObj: &corev1.ConfigMap{}, actions: map[string]*actionv1beta1.ManagedClusterAction{}}
	f.job = readView(jobView, f.jobObj)
	f.report = readView(reportView, f.reportObj)
	if jobView != nil {
		f.requested, f.replaced = jobView.Annotations[AnnotationRequested], jobView.Annotations[annotationReplaced]
	}
	for i := range actions {
		f.actions[actions[i].Name] = &actions[i]
	}
	return f
}

// annotationReplaced on the hub's Job view holds the UID of the Job of another run deleted
// before the Job of the requested run.
const annotationReplaced = "ran.openshift.io/replaced-job"

// ownJob tells whether the Job view shows the Job of j's run.
func (f facts) ownJob(j Job) bool {
	return f.job.shown == present && f.jobObj.Annotations[AnnotationRun] == j.Run
}

// newOtherJob tells whether the Job view shows a Job of another run than j's that is not
// the one deleted for j's run: it was created after the request (by an action of another
// run answered late), and must be replaced in turn.
func (f facts) newOtherJob(j Job) bool {
	return f.job.shown == present && !f.ownJob(j) && string(f.jobObj.UID) != f.replaced
}

func (f facts) outcome(j Job, what string) outcome {
	return outcomeOf(f.actions[j.actionName(what)])
}

// othersPending tells whether an action of another run, or a Stop of this one, is still
// unanswered: it could still create or delete the Job, so a new Job waits for it.
func (f facts) othersPending(j Job) bool {
	hash := RunHash(j.Run)
	stops := []string{j.actionName(whatStopJob), j.actionName(whatStopReport)}
	for name, a := range f.actions {
		if (a.Labels[LabelRun] != hash || slices.Contains(stops, name)) && outcomeOf(a) == pending {
			return true
		}
	}
	return false
}

// record is what Start records on the Job view; the zero record clears it.
type record struct {
	run, replaced string
}

// intents are what Start does: record on the Job view, then create the actions that are
// missing.
type intents struct {
	record *record
	create []*actionv1beta1.ManagedClusterAction
}

// plan decides what Start does for j given what the hub shows (see the package doc).
func plan(j Job, f facts) (intents, error) {
	hash := RunHash(j.Run)
	switch {
	case f.ownJob(j) && f.requested == hash:
		return intents{}, nil
	case f.ownJob(j):
		return intents{record: &record{run: hash}}, nil
	case f.requested == hash && !f.newOtherJob(j):
		return planRequested(j, f)
	}
	var in intents
	if f.requested == hash {
		in.record = &record{}
	}
	setup, err := planSetup(j, f, &in)
	if err != nil {
		return intents{}, err
	}
	if cleared := planClear(j, f, &in); !setup || !cleared || f.othersPending(j) {
		return in, nil
	}
	create, err := j.writeAction(whatJob, actionv1beta1.CreateActionType, j.job())
	if err != nil {
		return intents{}, err
	}
	in.record = &record{run: hash}
	if f.job.shown == present {
		in.record.replaced = string(f.jobObj.UID)
	}
	in.create = append(in.create, create)
	return in, nil
}

// planRequested creates the Job's action again when the hub collected it and the view does
// not show the Job yet: at worst the Create fails because the Job exists.
func planRequested(j Job, f facts) (intents, error) {
	if f.outcome(j, whatJob) != absent {
		return intents{}, nil
	}
	create, err := j.writeAction(whatJob, actionv1beta1.CreateActionType, j.job())
	if err != nil {
		return intents{}, err
	}
	return intents{create: []*actionv1beta1.ManagedClusterAction{create}}, nil
}

// planSetup adds the setup actions that are missing (the namespace first) and tells whether
// setup is done.
func planSetup(j Job, f facts, in *intents) (bool, error) {
	if done, err := planStep(j, f, namespaceStep(), in); err != nil || !done {
		return false, err
	}
	all := true
	for _, s := range j.setupSteps() {
		done, err := planStep(j, f, s, in)
		if err != nil {
			return false, err
		}
		all = all && done
	}
	return all, nil
}

func planStep(j Job, f facts, s setupStep, in *intents) (bool, error) {
	switch f.outcome(j, s.what) {
	case absent:
		a, err := j.writeAction(s.what, actionv1beta1.CreateActionType, s.object)
		if err == nil {
			in.create = append(in.create, a)
		}
		return false, err
	case succeeded:
		return true, nil
	case exists:
		if !s.update {
			return true, nil
		}
		return planUpdate(j, f, s, in)
	default:
		return false, nil
	}
}

// planUpdate replaces an object that already existed; true once done.
func planUpdate(j Job, f facts, s setupStep, in *intents) (bool, error) {
	switch f.outcome(j, s.what+updateSuffix) {
	case absent:
		a, err := j.writeAction(s.what+updateSuffix, actionv1beta1.UpdateActionType, s.object)
		if err == nil {
			in.create = append(in.create, a)
		}
		return false, err
	case succeeded:
		return true, nil
	default:
		return false, nil
	}
}

// planClear adds the Delete actions of the Job of another run and of a report the views
// show, each named after the UID of what it deletes, and tells whether both are gone.
func planClear(j Job, f facts, in *intents) bool {
	jobGone := f.job.shown == notThere
	if f.job.shown == present {
		jobGone = planDelete(j, f, whatDeleteJob+"-"+uidHash(string(f.jobObj.UID)), jobsResource, in)
	}
	reportGone := f.report.shown == notThere
	if f.report.shown == present {
		reportGone = planDelete(j, f, whatDeleteReport+"-"+uidHash(string(f.reportObj.UID)), configMapsResource, in)
	}
	return jobGone && reportGone
}

func planDelete(j Job, f facts, what, resource string, in *intents) bool {
	switch f.outcome(j, what) {
	case absent:
		in.create = append(in.create, j.deleteAction(what, resource))
		return false
	case succeeded, missing:
		return true
	default:
		return false
	}
}

// uidHash shortens a UID for an action name.
func uidHash(uid string) string {
	return RunHash(uid)[:8]
}

// State is where a run stands.
type State struct {
	// Report is the report ConfigMap as the view shows it once the Job of this run
	// succeeded. The view may lag behind the spoke, and the program of a replaced run may
	// write late: callers check the run the program wrote into it.
	Report *corev1.ConfigMap
	// Failed is why the run failed: the Job of this run failed (its Failed condition), or an
	// action of this run failed.
	Failed string
	// Waiting is why there is no report yet, for messages.
	Waiting string
	// Requested is true once the Job of this run was asked for (or is seen); Running while
	// the Job of this run has started and not finished.
	Requested, Running bool
	// FailedReason is the reason of the Failed condition of the Job of this run, for
	// example DeadlineExceeded or BackoffLimitExceeded.
	FailedReason string
	// Progress is the report ConfigMap as the view shows it while the Job of this run runs:
	// a program that reports as it goes writes it early. Callers check its run.
	Progress *corev1.ConfigMap
}

// state reads where j's run stands from what the hub shows.
func state(j Job, f facts) State {
	if f.ownJob(j) {
		st := ownJobState(f)
		st.Requested = true
		return st
	}
	requested := f.requested == RunHash(j.Run)
	if msg := actionFailure(j, f); msg != "" {
		return State{Failed: msg, Requested: requested}
	}
	return State{Waiting: waitingFor(j, f), Requested: requested}
}

func ownJobState(f facts) State {
	if c := jobCondition(f.jobObj, batchv1.JobFailed); c != nil {
		return State{Failed: fmt.Sprintf("its Job failed (%s): %s", c.Reason, c.Message), FailedReason: c.Reason}
	}
	if jobCondition(f.jobObj, batchv1.JobComplete) == nil {
		if f.jobObj.Status.StartTime == nil {
			return State{Waiting: "its Job has not started yet"}
		}
		st := State{Waiting: "its Job is running", Running: true}
		if f.report.shown == present {
			st.Progress = f.reportObj.DeepCopy()
			st.Progress.ManagedFields = nil
		}
		return st
	}
	switch f.report.shown {
	case present:
		report := f.reportObj.DeepCopy()
		report.ManagedFields = nil
		return State{Report: report}
	case noView:
		return State{Waiting: "its Job succeeded; the view of its report does not exist"}
	case unanswered:
		return State{Waiting: "its Job succeeded; its agent has not answered the view of its report yet"}
	case unreadable:
		return State{Waiting: "its Job succeeded; its agent cannot read its report: " + f.report.message}
	default:
		return State{Waiting: "its Job succeeded; its report is not visible yet"}
	}
}

func jobCondition(job *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i, c := range job.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}

// actionFailure is the failure of the first failed action of j's run, by name.
func actionFailure(j Job, f facts) string {
	hash := RunHash(j.Run)
	var names []string
	for name, a := range f.actions {
		if a.Labels[LabelRun] == hash && outcomeOf(a) == failed {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	return fmt.Sprintf("action %s failed: %s", names[0], failure(f.actions[names[0]]))
}

func waitingFor(j Job, f facts) string {
	switch f.job.shown {
	case noView:
		return "the view of its Job does not exist yet"
	case unanswered:
		return "its agent has not answered the view of its Job yet"
	case unreadable:
		return "its agent cannot read its Job: " + f.job.message
	case present:
		return "the Job of another run is being replaced"
	}
	if f.requested == RunHash(j.Run) {
		return "its Job is being created"
	}
	return "its Job is being prepared"
}
