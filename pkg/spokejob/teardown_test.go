package spokejob

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cgu-operator/cgu-operator/pkg/ownership"
)

func TestTeardownActions(t *testing.T) {
	j := Job{Cluster: "sno-1", Owner: ownership.Owner{Namespace: "ns", Name: "up"}, Name: "cgu-precache-ns-up", Run: "r1",
		Image: "img", Input: map[string]string{"spec.json": "{}"},
		ClusterRules:     []rbacv1.PolicyRule{{APIGroups: []string{"security.openshift.io"}, Verbs: []string{"use"}}},
		BindClusterRoles: []string{"cluster-monitoring-view"}}
	jobView, reportView := j.jobView(), j.reportView()
	old := j.jobView()
	delete(old.Annotations, AnnotationSpokeObjects)
	old.Namespace = "sno-2"
	actions, err := TeardownActions([]viewv1beta1.ManagedClusterView{*reportView, *jobView, *old})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range actions {
		k := a.Spec.KubeWork
		if a.Namespace != "sno-1" || a.Labels[LabelTeardown] != "true" || a.Labels[LabelJob] != j.Name || a.Spec.ActionType != "Delete" {
			t.Errorf("action %s/%s %v %s: want a Delete on sno-1 labelled as the teardown of the job", a.Namespace, a.Name, a.Labels, a.Spec.ActionType)
		}
		if owner := (ownership.Owner{Namespace: "ns", Name: "up"}); owner.Owns(a.Labels) {
			t.Errorf("action %s carries the owner labels: the rollout's cleanup would delete it", a.Name)
		}
		got = append(got, k.Resource+" "+k.Namespace+"/"+k.Name)
	}
	want := []string{
		"rolebindings.rbac.authorization.k8s.io cgu-operator-spoke/cgu-precache-ns-up",
		"clusterrolebindings.rbac.authorization.k8s.io /cgu-operator-spoke:cgu-precache-ns-up",
		"clusterrolebindings.rbac.authorization.k8s.io /cgu-operator-spoke:cgu-precache-ns-up:cluster-monitoring-view",
		"serviceaccounts cgu-operator-spoke/cgu-precache-ns-up",
		"roles.rbac.authorization.k8s.io cgu-operator-spoke/cgu-precache-ns-up",
		"clusterroles.rbac.authorization.k8s.io /cgu-operator-spoke:cgu-precache-ns-up",
		"configmaps cgu-operator-spoke/cgu-precache-ns-up-input",
		"configmaps cgu-operator-spoke/cgu-precache-ns-up",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("teardown deletes\n%s\nwant (bindings first, no Job, no namespace, nothing for the report view or an unrecorded view)\n%s",
			strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	names := map[string]bool{}
	for _, a := range actions {
		if names[a.Name] {
			t.Errorf("two actions named %s", a.Name)
		}
		names[a.Name] = true
	}

	broken := j.jobView()
	broken.Annotations[AnnotationSpokeObjects] = "{"
	if actions, err := TeardownActions([]viewv1beta1.ManagedClusterView{*broken, *jobView}); err == nil || len(actions) != len(want) {
		t.Errorf("an unreadable record: %d actions, error %v; want the others' actions and an error naming it", len(actions), err)
	}
}

func TestClusterGone(t *testing.T) {
	gone := apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "sno-1")
	terminating := &apierrors.StatusError{ErrStatus: metav1.Status{Reason: metav1.StatusReasonForbidden,
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}}}}
	for _, err := range []error{gone, fmt.Errorf("creating action: %w", terminating)} {
		if !clusterGone(err) {
			t.Errorf("%v: not taken for a cluster gone", err)
		}
	}
	if clusterGone(apierrors.NewForbidden(schema.GroupResource{Resource: "managedclusteractions"}, "a", errors.New("no"))) {
		t.Error("a refusal taken for a cluster gone")
	}
}
