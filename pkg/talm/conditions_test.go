package talm

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

func cond(kind string, status metav1.ConditionStatus, reason string) metav1.Condition {
	return metav1.Condition{Type: kind, Status: status, Reason: reason}
}

func kinds(list []metav1.Condition) []string {
	var out []string
	for _, c := range list {
		out = append(out, c.Type+"="+string(c.Status)+"/"+c.Reason)
	}
	return out
}

// TestSetCondition follows TALM's order through the steps of its scenarios: `oc get cgu`
// shows the last condition's reason.
func TestSetCondition(t *testing.T) {
	T, F := metav1.ConditionTrue, metav1.ConditionFalse
	steps := []struct {
		set  metav1.Condition
		want []string
	}{
		{cond(ranv1alpha1.ConditionClustersSelected, T, "ClusterSelectionCompleted"), []string{"ClustersSelected=True/ClusterSelectionCompleted"}},
		{cond(ranv1alpha1.ConditionValidated, F, "UnresolvableDenpendency"), []string{"ClustersSelected=True/ClusterSelectionCompleted", "Validated=False/UnresolvableDenpendency"}},
		// Validated flips while last: it keeps its place.
		{cond(ranv1alpha1.ConditionValidated, T, "ValidationCompleted"), []string{"ClustersSelected=True/ClusterSelectionCompleted", "Validated=True/ValidationCompleted"}},
		{cond(ranv1alpha1.ConditionProgressing, F, "NotEnabled"), []string{"ClustersSelected=True/ClusterSelectionCompleted", "Validated=True/ValidationCompleted", "Progressing=False/NotEnabled"}},
		// A new reason with the same status keeps the place.
		{cond(ranv1alpha1.ConditionProgressing, F, "IncompleteBlockingCR"), []string{"ClustersSelected=True/ClusterSelectionCompleted", "Validated=True/ValidationCompleted", "Progressing=False/IncompleteBlockingCR"}},
		// Validated flips while not last: it moves to the end, and `oc get cgu` shows it.
		{cond(ranv1alpha1.ConditionValidated, F, "NotAllManagedPoliciesExist"), []string{"ClustersSelected=True/ClusterSelectionCompleted", "Progressing=False/IncompleteBlockingCR", "Validated=False/NotAllManagedPoliciesExist"}},
		// Ours never stand last.
		{cond(ranv1alpha1.ConditionUpgradeChecked, T, "UpgradeChecksPassed"), []string{"UpgradeChecked=True/UpgradeChecksPassed", "ClustersSelected=True/ClusterSelectionCompleted", "Progressing=False/IncompleteBlockingCR", "Validated=False/NotAllManagedPoliciesExist"}},
		{cond(ranv1alpha1.ConditionProgressing, T, "InProgress"), []string{"UpgradeChecked=True/UpgradeChecksPassed", "ClustersSelected=True/ClusterSelectionCompleted", "Validated=False/NotAllManagedPoliciesExist", "Progressing=True/InProgress"}},
	}
	var list []metav1.Condition
	for i, s := range steps {
		SetCondition(&list, s.set)
		NewWithT(t).Expect(kinds(list)).To(Equal(s.want), "step %d", i)
	}
	NewWithT(t).Expect(Last(list).Reason).To(Equal("InProgress"))
	NewWithT(t).Expect(Last(nil)).To(BeNil())
}
