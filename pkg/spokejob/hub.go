package spokejob

import (
	"encoding/json"
	"fmt"
	"strings"

	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/views"
)

// What the actions of a run do, in their names; setup actions are named after their step.
const (
	whatJob          = "job"
	whatDeleteJob    = "delete-job"
	whatDeleteReport = "delete-report"
	whatStopJob      = "stop-job"
	whatStopReport   = "stop-report"
	updateSuffix     = "-update"
)

// What the views show.
const (
	viewJob    = "job"
	viewReport = "report"
)

// Resources the Delete actions name, as the agent maps them.
const (
	jobsResource       = "jobs.batch"
	configMapsResource = "configmaps"
)

// jobView is the hub's view of the spoke's Job.
func (j Job) jobView() *viewv1beta1.ManagedClusterView {
	v := j.view(viewJob, viewv1beta1.ViewScope{Group: batchv1.GroupName, Version: "v1", Kind: "Job"})
	j.annotateSpokeObjects(v)
	return v
}

// reportView is the hub's view of the report ConfigMap.
func (j Job) reportView() *viewv1beta1.ManagedClusterView {
	return j.view(viewReport, viewv1beta1.ViewScope{Version: "v1", Kind: "ConfigMap"})
}

func (j Job) view(what string, scope viewv1beta1.ViewScope) *viewv1beta1.ManagedClusterView {
	scope.Namespace, scope.Name, scope.UpdateIntervalSeconds = Namespace, j.Name, views.RefreshSeconds
	return &viewv1beta1.ManagedClusterView{
		ObjectMeta: metav1.ObjectMeta{Namespace: j.Cluster, Name: j.viewName(what), Labels: ownership.ExcludedFromBackup(j.hubLabels())},
		Spec:       viewv1beta1.ViewSpec{Scope: scope},
	}
}

// newAction is an action of this run.
func (j Job) newAction(what string, spec actionv1beta1.ActionSpec) *actionv1beta1.ManagedClusterAction {
	return &actionv1beta1.ManagedClusterAction{
		ObjectMeta: metav1.ObjectMeta{Namespace: j.Cluster, Name: j.actionName(what), Labels: ownership.ExcludedFromBackup(j.runLabels())},
		Spec:       spec,
	}
}

// writeAction is an action creating or updating obj on the spoke.
func (j Job) writeAction(what string, actionType actionv1beta1.ActionType, obj client.Object) (*actionv1beta1.ManagedClusterAction, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding the template of action %s: %w", what, err)
	}
	return j.newAction(what, actionv1beta1.ActionSpec{ActionType: actionType, KubeWork: &actionv1beta1.KubeWorkSpec{
		Namespace: obj.GetNamespace(), ObjectTemplate: runtime.RawExtension{Raw: raw},
	}}), nil
}

// deleteAction is an action deleting the spoke's object name of resource in Namespace.
func (j Job) deleteAction(what, resource string) *actionv1beta1.ManagedClusterAction {
	return j.newAction(what, actionv1beta1.ActionSpec{ActionType: actionv1beta1.DeleteActionType, KubeWork: &actionv1beta1.KubeWorkSpec{
		Resource: resource, Namespace: Namespace, Name: j.Name,
	}})
}

// outcome is how far an action got.
type outcome int

const (
	// absent: there is no such action on the hub (never made, or collected).
	absent outcome = iota
	// pending: the agent has not answered it.
	pending
	// succeeded: the agent carried it out.
	succeeded
	// exists: a Create found its object already there.
	exists
	// missing: a Delete found no object.
	missing
	// failed: the agent could not carry it out for another reason.
	failed
)

// outcomeOf reads the Completed condition the agent wrote on an action.
func outcomeOf(a *actionv1beta1.ManagedClusterAction) outcome {
	if a == nil {
		return absent
	}
	c := meta.FindStatusCondition(a.Status.Conditions, actionv1beta1.ConditionActionCompleted)
	switch {
	case c == nil:
		return pending
	case c.Status == metav1.ConditionTrue:
		return succeeded
	}
	name := targetName(a)
	switch {
	case a.Spec.ActionType == actionv1beta1.CreateActionType && strings.HasSuffix(c.Message, fmt.Sprintf("%q already exists", name)):
		return exists
	case a.Spec.ActionType == actionv1beta1.DeleteActionType && strings.HasSuffix(c.Message, fmt.Sprintf("%q not found", name)):
		return missing
	}
	return failed
}

// targetName is the name of the object an action is about.
func targetName(a *actionv1beta1.ManagedClusterAction) string {
	kube := a.Spec.KubeWork
	if kube == nil {
		return ""
	}
	if kube.Name != "" {
		return kube.Name
	}
	var obj struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(kube.ObjectTemplate.Raw, &obj)
	return obj.Metadata.Name
}

// failure is the message of a failed action.
func failure(a *actionv1beta1.ManagedClusterAction) string {
	if c := meta.FindStatusCondition(a.Status.Conditions, actionv1beta1.ConditionActionCompleted); c != nil {
		return c.Message
	}
	return ""
}

// shown is what a view shows.
type shown int

const (
	// noView: the view does not exist.
	noView shown = iota
	// unanswered: the agent has not answered the view yet.
	unanswered
	// notThere: the spoke has no such object.
	notThere
	// present: the view shows the object.
	present
	// unreadable: the agent cannot read the object, or what it shows cannot be decoded.
	unreadable
)

// viewed is what a view shows: with present, the object decoded into obj.
type viewed struct {
	shown   shown
	message string
}

// readView decodes what a view shows into obj (a *batchv1.Job or *corev1.ConfigMap).
func readView(view *viewv1beta1.ManagedClusterView, obj any) viewed {
	if view == nil {
		return viewed{shown: noView}
	}
	c := meta.FindStatusCondition(view.Status.Conditions, viewv1beta1.ConditionViewProcessing)
	switch {
	case c == nil:
		return viewed{shown: unanswered}
	case c.Status != metav1.ConditionTrue && c.Reason == viewv1beta1.ReasonGetResourceFailed &&
		strings.HasSuffix(c.Message, fmt.Sprintf("%q not found", view.Spec.Scope.Name)):
		return viewed{shown: notThere}
	case c.Status != metav1.ConditionTrue:
		return viewed{shown: unreadable, message: c.Message}
	case len(view.Status.Result.Raw) == 0:
		return viewed{shown: unreadable, message: "the view is empty"}
	}
	if err := json.Unmarshal(view.Status.Result.Raw, obj); err != nil {
		return viewed{shown: unreadable, message: fmt.Sprintf("the view cannot be read: %v", err)}
	}
	return viewed{shown: present}
}
