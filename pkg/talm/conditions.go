package talm

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// TALM's `oc get cgu` shows the reason and message of the last condition in the list
// (`.status.conditions[-1:]`), and so do scripts written for it. The list is ordered as TALM
// orders it: a new condition is appended; a condition whose status changes moves to the end,
// unless it is last already; any other change keeps its place. Conditions of ours that TALM
// does not write never stand last, so that the last one always means what it means in TALM.

// talmTypes are the condition types TALM writes.
var talmTypes = []string{
	ranv1alpha1.ConditionClustersSelected, ranv1alpha1.ConditionValidated, ranv1alpha1.ConditionPrecacheSpecValid,
	ranv1alpha1.ConditionPrecachingSucceeded, ranv1alpha1.ConditionBackupSucceeded, ranv1alpha1.ConditionProgressing,
	ranv1alpha1.ConditionSucceeded,
}

// SetCondition sets c in conditions in TALM's order (see above); LastTransitionTime follows
// meta.SetStatusCondition.
func SetCondition(conditions *[]metav1.Condition, c metav1.Condition) {
	list := *conditions
	if old := meta.FindStatusCondition(list, c.Type); old != nil && old.Status != c.Status && list[len(list)-1].Type != c.Type {
		meta.RemoveStatusCondition(conditions, c.Type)
	}
	meta.SetStatusCondition(conditions, c)
	ours := func(c metav1.Condition) bool { return !slices.Contains(talmTypes, c.Type) }
	list = *conditions
	if n := len(list); n > 1 && ours(list[n-1]) {
		// Ours go before TALM's, each group in its order.
		slices.SortStableFunc(list, func(a, b metav1.Condition) int {
			switch {
			case ours(a) == ours(b):
				return 0
			case ours(a):
				return -1
			}
			return 1
		})
	}
}

// Last is the condition `oc get cgu` shows in its State and Details columns, nil when there
// is none.
func Last(conditions []metav1.Condition) *metav1.Condition {
	if len(conditions) == 0 {
		return nil
	}
	return &conditions[len(conditions)-1]
}
