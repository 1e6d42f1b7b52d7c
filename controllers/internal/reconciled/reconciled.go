// Package reconciled is the Reconciled condition every reconciler writes when a pass fails:
// False, with a reason that classifies the error and the error as message. A pass that
// succeeds removes it, so that the lists of conditions TALM's tooling reads are unchanged
// while nothing fails.
package reconciled

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

// reason classifies an error for the Reconciled condition.
func reason(err error) string {
	switch {
	case apierrors.IsForbidden(err):
		return ranv1alpha1.ReasonForbidden
	case apierrors.IsNotFound(err):
		return ranv1alpha1.ReasonObjectNotFound
	}
	return ranv1alpha1.ReasonReconcileFailed
}

// Failed is the Reconciled condition of a pass that failed with err.
func Failed(err error, generation int64) metav1.Condition {
	return metav1.Condition{Type: ranv1alpha1.ConditionReconciled, Status: metav1.ConditionFalse,
		Reason: reason(err), Message: rollout.Truncate(err.Error(), ranv1alpha1.MessageLimit), ObservedGeneration: generation}
}
