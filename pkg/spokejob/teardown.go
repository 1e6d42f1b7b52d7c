package spokejob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
)

// Teardown: when the rollout that ran a job ends (its cleanup deletes its views), the
// service account, Roles, bindings, ClusterRoles and input ConfigMap the job's setup made
// on the spoke, and its report, are deleted by Delete actions. A job's spoke objects are the
// job's alone (named after it, and the job after its rollout), so no other rollout needs
// them. The Job itself is left to Kubernetes, which deletes it with its pods
// ttlSecondsAfterFinished after it finished (a running one stops at its deadline first):
// deleting it through an action would leave its pods behind. The namespace stays: other
// rollouts' jobs share it, and it grants nothing once the jobs' RBAC is gone.
//
// The job view records what the setup made (AnnotationSpokeObjects), so that the teardown
// needs nothing but the view. The teardown actions carry LabelTeardown and LabelJob, and no
// owner label: the cleanup that deleted the rollout's views and actions does not delete
// them, and they outlive the rollout until the cluster's agent answered them and the hub
// collected them (an unreachable cluster gets them when it is back).

// Labels and annotations of the teardown.
const (
	// AnnotationSpokeObjects on the hub's Job view lists, as JSON, the spoke objects the
	// job's setup made, for the teardown.
	AnnotationSpokeObjects = "ran.openshift.io/spoke-objects"
	// LabelTeardown marks the teardown's actions.
	LabelTeardown = "ran.openshift.io/spoke-teardown"
)

// SpokeObject is a spoke object as a Delete action names it: its resource (as the agent
// maps it), namespace (empty for a cluster-scoped one) and name.
type SpokeObject struct {
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// resources maps the kinds of the setup's objects to the resources Delete actions name.
var resources = map[string]string{
	"ServiceAccount":     "serviceaccounts",
	"ConfigMap":          configMapsResource,
	"Role":               "roles.rbac.authorization.k8s.io",
	"RoleBinding":        "rolebindings.rbac.authorization.k8s.io",
	"ClusterRole":        "clusterroles.rbac.authorization.k8s.io",
	"ClusterRoleBinding": "clusterrolebindings.rbac.authorization.k8s.io",
}

// spokeObjects are what the teardown of j deletes, in order: the bindings first, so that
// the job's privileges go before anything else, then the roles, the service account, the
// input and the report.
func (j Job) spokeObjects() []SpokeObject {
	var bindings, rest []SpokeObject
	for _, s := range j.setupSteps() {
		kind := s.object.GetObjectKind().GroupVersionKind().Kind
		o := SpokeObject{Resource: resources[kind], Namespace: s.object.GetNamespace(), Name: s.object.GetName()}
		if strings.HasSuffix(kind, "Binding") {
			bindings = append(bindings, o)
		} else {
			rest = append(rest, o)
		}
	}
	report := SpokeObject{Resource: configMapsResource, Namespace: Namespace, Name: j.Name}
	return append(append(bindings, rest...), report)
}

// annotateSpokeObjects records j's spoke objects on its Job view.
func (j Job) annotateSpokeObjects(view *viewv1beta1.ManagedClusterView) {
	data, _ := json.Marshal(j.spokeObjects()) // strings only: always encodes
	if view.Annotations == nil {
		view.Annotations = map[string]string{}
	}
	view.Annotations[AnnotationSpokeObjects] = string(data)
}

// TeardownActions returns the Delete actions that remove from the spokes the objects of the
// jobs whose views are given (views of other kinds are skipped). A Job view made before
// views recorded the objects yields none, and is named in the error, with a view whose
// record cannot be read; the actions of the others are returned all the same.
func TeardownActions(views []viewv1beta1.ManagedClusterView) ([]*actionv1beta1.ManagedClusterAction, error) {
	var out []*actionv1beta1.ManagedClusterAction
	var errs []error
	for i := range views {
		v := &views[i]
		scope := v.Spec.Scope
		if v.Labels[LabelJob] == "" || scope.Group != batchv1.GroupName || scope.Kind != "Job" || scope.Namespace != Namespace {
			continue
		}
		raw, ok := v.Annotations[AnnotationSpokeObjects]
		if !ok {
			continue // made by a version that did not record them: nothing known to delete
		}
		var objects []SpokeObject
		if err := json.Unmarshal([]byte(raw), &objects); err != nil {
			errs = append(errs, fmt.Errorf("view %s/%s: reading %s: %w", v.Namespace, v.Name, AnnotationSpokeObjects, err))
			continue
		}
		for _, o := range objects {
			out = append(out, teardownAction(v.Namespace, scope.Name, o))
		}
	}
	return out, errors.Join(errs...)
}

// teardownAction is the Delete action of one spoke object of job on cluster, named after
// them.
func teardownAction(cluster, job string, o SpokeObject) *actionv1beta1.ManagedClusterAction {
	return &actionv1beta1.ManagedClusterAction{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster,
			Name:   names.Safe(253, "cgu-teardown", job, strings.SplitN(o.Resource, ".", 2)[0], o.Name),
			Labels: TeardownLabels(job)},
		Spec: actionv1beta1.ActionSpec{ActionType: actionv1beta1.DeleteActionType, KubeWork: &actionv1beta1.KubeWorkSpec{
			Resource: o.Resource, Namespace: o.Namespace, Name: o.Name,
		}},
	}
}

// Teardown creates the teardown actions of the jobs whose views are given; one that exists
// already is left as it is. A view whose record cannot be read (edited by hand) is logged
// and skipped: it must not keep the rollout's cleanup from deleting it.
func (r Runner) Teardown(ctx context.Context, views []viewv1beta1.ManagedClusterView) error {
	actions, err := TeardownActions(views)
	if err != nil {
		ctrl.LoggerFrom(ctx).Info("Spoke objects of a job left on its spoke: its view's record cannot be read", "error", err)
	}
	return r.CreateTeardown(ctx, actions)
}

// CreateTeardown creates teardown actions; one of a cluster that left the hub is skipped.
func (r Runner) CreateTeardown(ctx context.Context, actions []*actionv1beta1.ManagedClusterAction) error {
	for _, a := range actions {
		if _, err := r.writer().CreateAction(ctx, a); err != nil && !clusterGone(err) {
			return err
		}
	}
	return nil
}

// TeardownLabels label teardown actions of a job: no owner's, so that the cleanup that
// deleted the rollout's actions leaves them to the agent and the hub.
func TeardownLabels(job string) map[string]string {
	return ownership.ExcludedFromBackup(map[string]string{LabelTeardown: "true", LabelJob: names.LabelValue(job)})
}

// clusterGone tells whether an action could not be created because the cluster's namespace
// is gone or going: the cluster left the hub, and its spoke with it.
func clusterGone(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
}
