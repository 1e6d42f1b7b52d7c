package talmjob

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// View is a view as the hub shows it.
type View struct {
	// Exists is true when the view exists; Answered once the agent set its Processing
	// condition.
	Exists, Answered bool
	// Found is true when the agent found the object; Failure is why it could not read it,
	// for another reason than the object not being there.
	Found   bool
	Failure string
	// Job is the Job a Job view shows.
	Job *batchv1.Job
	// Data is the data of the ConfigMap a view of a ConfigMap shows.
	Data map[string]string
}

// ReadView is what a view (nil: missing) shows; a Job view's result is read as a Job.
func ReadView(v *viewv1beta1.ManagedClusterView, job bool) View {
	if v == nil {
		return View{}
	}
	out := View{Exists: true}
	c := meta.FindStatusCondition(v.Status.Conditions, viewv1beta1.ConditionViewProcessing)
	if c == nil {
		return out
	}
	out.Answered = true
	switch {
	case c.Status == metav1.ConditionTrue:
		out.Found = true
	case !strings.HasSuffix(c.Message, "not found"):
		out.Failure = c.Message
	}
	switch {
	case out.Found && job:
		out.Job = &batchv1.Job{}
		if len(v.Status.Result.Raw) > 0 {
			_ = json.Unmarshal(v.Status.Result.Raw, out.Job) // a result that is not a Job reads as a Job with no status
		}
	case out.Found && len(v.Status.Result.Raw) > 0:
		var cm corev1.ConfigMap
		if json.Unmarshal(v.Status.Result.Raw, &cm) == nil && cm.Kind == "ConfigMap" {
			out.Data = cm.Data
		}
	}
	return out
}

// Facts are what the hub shows of one cluster's Job.
type Facts struct {
	// State is the cluster's state the rollout's status holds, "" for none.
	State string
	// Views are the protocol's views by name (missing ones read as the zero View).
	Views map[string]View
	// Available is true while the ManagedCluster is Available.
	Available bool
	// FailOnError turns what TALM counts as an error into UnrecoverableError (pre-caching
	// once the rollout is enabled); otherwise the state stays.
	FailOnError bool
}

// Intents are what to write on the hub: actions, then views, to delete by name, then actions
// and views to create (one that exists is left as it is).
type Intents struct {
	// Cluster is the managed cluster: the namespace of every object named.
	Cluster       string
	Actions       []*actionv1beta1.ManagedClusterAction
	Views         []*viewv1beta1.ManagedClusterView
	DeleteViews   []string
	DeleteActions []string
}

// Empty reports whether there is nothing to write.
func (in Intents) Empty() bool {
	return len(in.Actions) == 0 && len(in.Views) == 0 && len(in.DeleteViews) == 0 && len(in.DeleteActions) == 0
}

// Result is the next state of a cluster, what to write, and why the state did not move when
// the views show what the protocol does not expect.
type Result struct {
	State   string
	Intents Intents
	Problem string
}

// then is r followed, in the same pass, by next: next's state and problem, both's writes.
func (r Result) then(next Result) Result {
	in := r.Intents
	in.Actions = append(in.Actions, next.Intents.Actions...)
	in.Views = append(in.Views, next.Intents.Views...)
	in.DeleteViews = append(in.DeleteViews, next.Intents.DeleteViews...)
	in.DeleteActions = append(in.DeleteActions, next.Intents.DeleteActions...)
	return Result{State: next.State, Intents: in, Problem: next.Problem}
}

// Step moves one cluster's Job on by one pass of TALM's state machine (see the package doc).
func Step(p Protocol, f Facts, w Work) Result {
	state := f.State
	if state == "" {
		state = NotStarted
	}
	var r Result
	switch {
	case p.Final(state):
		return Result{State: state}
	case state == NotStarted, state == PreparingToStart && !p.WaitForNamespace:
		r = p.prepare(w)
		if !p.WaitForNamespace {
			// As TALM's backup, Starting after one pass PreparingToStart; what Starting asks
			// for is asked for in this pass, of a cluster whose views were just deleted.
			r = r.then(p.starting(Facts{}, w))
		}
	case state == PreparingToStart:
		r = p.preparing(f, w)
		if r.State == Starting {
			r = r.then(p.starting(f, w)) // nothing watched changes otherwise: no pass would follow
		}
	case state == Starting:
		r = p.starting(f, w)
	case state == Active:
		r = p.active(f, w)
	default:
		return Result{State: state, Problem: fmt.Sprintf("unknown state %q", state)}
	}
	if r.Problem != "" && f.FailOnError {
		r.State = Failed
	}
	if r.State == Succeeded {
		r.Intents.DeleteViews = p.Views() // every view, those of the dependencies among them
		r = r.then(Result{State: Succeeded, Intents: p.clearSpoke(w)})
	}
	r.Intents.Cluster = w.Cluster
	return r
}

// clearSpoke deletes the namespace and the binding on the spoke: the actions that do it are
// made anew (an earlier one of the name, answered already, is deleted first), so that the
// agent carries them out again.
func (p Protocol) clearSpoke(w Work) Intents {
	actions := p.deleteActions(w)
	names := make([]string, 0, len(actions))
	for _, a := range actions {
		names = append(names, a.Name)
	}
	return Intents{DeleteActions: names, Actions: actions}
}

// prepare clears what an earlier run left: the views and the actions on the hub, the
// namespace and the binding on the spoke; then watches the namespace.
func (p Protocol) prepare(w Work) Result {
	in := p.clearSpoke(w)
	in.DeleteViews, in.DeleteActions = p.Views(), append(p.createActions(), in.DeleteActions...)
	if p.WaitForNamespace {
		in.Views = append(in.Views, p.namespaceView(w))
	}
	return Result{State: PreparingToStart, Intents: in}
}

// answered tells whether the view a state follows has an answer to act on; otherwise the
// state stays, and a missing view is made again (remake), an unanswered one waited for, and
// one that cannot read its object (what) is a problem.
func answered(v View, state, what string, remake *viewv1beta1.ManagedClusterView) (Result, bool) {
	switch {
	case !v.Exists:
		return Result{State: state, Intents: Intents{Views: []*viewv1beta1.ManagedClusterView{remake}}}, false
	case !v.Answered:
		return Result{State: state}, false
	case v.Failure != "":
		return Result{State: state, Problem: "the view of " + what + ": " + v.Failure}, false
	}
	return Result{}, true
}

// preparing waits for the namespace view to show the namespace gone.
func (p Protocol) preparing(f Facts, w Work) Result {
	v := f.Views[p.NamespaceView]
	if r, ok := answered(v, PreparingToStart, "the namespace "+p.Namespace, p.namespaceView(w)); !ok {
		return r
	}
	if v.Found {
		return Result{State: PreparingToStart} // the namespace is being deleted
	}
	return Result{State: Starting}
}

// starting makes the dependencies, then the Job, and follows the Job until it runs.
func (p Protocol) starting(f Facts, w Work) Result {
	if ready, problem := p.dependenciesReady(f); problem != "" {
		return Result{State: Starting, Problem: problem}
	} else if !ready {
		return Result{State: Starting, Intents: p.dependencies(w)}
	}
	v := f.Views[p.JobView]
	switch {
	case !v.Exists:
		if p.WaitForNamespace {
			return Result{State: Starting, Intents: Intents{Views: []*viewv1beta1.ManagedClusterView{p.jobView(w)}}}
		}
		return Result{State: Starting, Intents: p.deploy(w)}
	case !v.Answered:
		return Result{State: Starting}
	case v.Failure != "":
		return Result{State: Starting, Problem: "the view of the Job " + p.Job + ": " + v.Failure}
	case !v.Found:
		in := p.deploy(w)
		in.DeleteViews = []string{p.JobView} // made again, so that the agent reads the new Job at once
		return Result{State: Starting, Intents: in}
	}
	r := p.jobResult(v.Job, Starting)
	if r.State != Starting {
		r.Intents.DeleteViews = p.dependencyViewNames()
		if r.State == Active && p.WaitForNamespace {
			r.Intents.DeleteViews = append(r.Intents.DeleteViews, p.NamespaceView)
		}
	}
	return r
}

// active follows the running Job; the view of an unavailable cluster may be stale, so its
// Job counts as running no longer (TALM's error).
func (p Protocol) active(f Facts, w Work) Result {
	v := f.Views[p.JobView]
	if r, ok := answered(v, Active, "the Job "+p.Job, p.jobView(w)); !ok {
		return r
	}
	if !v.Found {
		return Result{State: Active, Problem: "the Job " + p.Job + " is no longer on the cluster"}
	}
	r := p.jobResult(v.Job, Active)
	if r.State == Active && !f.Available {
		r.Problem = "the cluster is not available: the view of its Job may be stale"
	}
	if r.State != Active {
		r.Intents.DeleteViews = p.dependencyViewNames()
	}
	return r
}

// jobResult is the state a Job's status stands for, as TALM reads it: running, succeeded,
// past its deadline, failed; a Job that shows none of these yet keeps the state.
func (p Protocol) jobResult(job *batchv1.Job, state string) Result {
	st := job.Status
	switch {
	case st.Active > 0:
		return Result{State: Active}
	case st.Succeeded > 0:
		return Result{State: Succeeded}
	}
	for _, c := range st.Conditions {
		if c.Type != batchv1.JobFailed || c.Status != corev1.ConditionTrue {
			continue
		}
		if c.Reason == batchv1.JobReasonDeadlineExceeded {
			return Result{State: p.Timeout}
		}
		return Result{State: Failed}
	}
	return Result{State: state}
}

func (p Protocol) dependencyViewNames() []string {
	out := make([]string, 0, len(p.DependencyViews))
	for _, v := range p.DependencyViews {
		out = append(out, v.Name)
	}
	return out
}

// dependenciesReady tells whether the views of the dependencies (the namespace view for a
// protocol with none) exist and show them.
func (p Protocol) dependenciesReady(f Facts) (bool, string) {
	views := p.dependencyViewNames()
	if len(views) == 0 {
		views = []string{p.NamespaceView}
	}
	ready := true
	for _, name := range views {
		v := f.Views[name]
		if v.Failure != "" {
			return false, "the view " + name + ": " + v.Failure
		}
		ready = ready && v.Found
	}
	return ready, ""
}

// dependencies creates the dependencies and their views (the namespace view for a protocol
// with none); what exists is left as it is.
func (p Protocol) dependencies(w Work) Intents {
	in := Intents{Actions: p.dependencyActions(w)}
	if len(p.DependencyViews) == 0 {
		in.Views = []*viewv1beta1.ManagedClusterView{p.namespaceView(w)}
		return in
	}
	for _, d := range p.DependencyViews {
		in.Views = append(in.Views, p.view(w, d.Name, d.Resource, d.Namespace, d.Object, w.UpdateIntervalSeconds))
	}
	return in
}

// deploy creates the Job and its views.
func (p Protocol) deploy(w Work) Intents {
	return Intents{Actions: []*actionv1beta1.ManagedClusterAction{p.createAction(w, whatJobCreate, "job", p.Namespace, p.job(w))},
		Views: p.jobViews(w)}
}

// job is the Job: the caller's pod, run once (backoffLimit 0), as the protocol's service
// account, in the management workload partition, with the spec ConfigMap at SpecDir.
func (p Protocol) job(w Work) *batchv1.Job {
	pod := *w.Pod.DeepCopy()
	pod.ServiceAccountName = p.ServiceAccount
	pod.RestartPolicy = corev1.RestartPolicyNever
	if p.SpecConfigMap != "" {
		pod.Volumes = append(pod.Volumes, corev1.Volume{Name: specVolume, VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: p.SpecConfigMap}}}})
		for i := range pod.Containers {
			pod.Containers[i].VolumeMounts = append(pod.Containers[i].VolumeMounts,
				corev1.VolumeMount{Name: specVolume, MountPath: SpecDir, ReadOnly: true})
		}
	}
	annotations := map[string]string{managementAnnotation: `{"effect":"PreferredDuringScheduling"}`}
	deadline, backoff := w.DeadlineSeconds, int32(0)
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: p.Job, Namespace: p.Namespace, Annotations: annotations},
		Spec: batchv1.JobSpec{ActiveDeadlineSeconds: &deadline, BackoffLimit: &backoff,
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: annotations}, Spec: pod}},
	}
}

// TeardownActions are the actions that remove from the spokes the Jobs whose views a
// rollout's cleanup found (a cluster whose Job had not succeeded when the rollout ended or
// was deleted): the namespace, with the Job in it, and the binding, once per cluster and
// protocol, labelled with labels (no owner's: see Work.DeleteLabels). Like clearSpoke's,
// they are to be made anew: an answered one of the name is deleted first. The views and
// the other actions are the cleanup's to delete.
func TeardownActions(views []viewv1beta1.ManagedClusterView, labels map[string]string) []*actionv1beta1.ManagedClusterAction {
	var out []*actionv1beta1.ManagedClusterAction
	seen := map[string]bool{}
	for _, v := range views {
		for _, p := range []Protocol{Precache, Backup} {
			key := v.Namespace + "/" + p.Prefix
			if seen[key] || !slices.Contains(p.Views(), v.Name) {
				continue
			}
			seen[key] = true
			out = append(out, p.deleteActions(Work{Cluster: v.Namespace, DeleteLabels: labels})...)
		}
	}
	return out
}
