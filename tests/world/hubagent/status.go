package hubagent

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	workv1 "open-cluster-management.io/api/work/v1"
	"open-cluster-management.io/ocm/pkg/work/helper"
	"open-cluster-management.io/ocm/pkg/work/spoke/conditions"
)

// The available-status controller's StatusFeedbackSynced condition.
const (
	conditionFeedbackSynced = "StatusFeedbackSynced"
	reasonNoFeedback        = "NoStatusFeedbackSynced"
	reasonFeedbackFailed    = "StatusFeedbackSyncFailed"
)

// readStatus is the available-status controller's pass, once the work has an Applied
// condition: each manifest's Available condition from the regional hub, its feedback values
// and condition rules, then the work's aggregated conditions.
func (a *Agent) readStatus(ctx context.Context, work *workv1.ManifestWork) {
	if meta.FindStatusCondition(work.Status.Conditions, workv1.WorkApplied) == nil {
		return
	}
	manifests := work.Status.ResourceStatus.Manifests
	for i := range manifests {
		m := &manifests[i]
		obj, available, err := a.objects.Get(ctx, m.ResourceMeta)
		meta.SetStatusCondition(&m.Conditions, available)
		if err != nil {
			continue
		}
		option := helper.FindManifestConfiguration(m.ResourceMeta, work.Spec.ManifestConfigs)
		values, synced := a.feedbackValues(obj, option)
		if !equality.Semantic.DeepEqual(m.StatusFeedbacks.Values, values) {
			// New values make a new transition.
			meta.RemoveStatusCondition(&m.Conditions, synced.Type)
		}
		meta.SetStatusCondition(&m.Conditions, synced)
		m.StatusFeedbacks.Values = values
		if option != nil && len(option.ConditionRules) > 0 {
			for _, c := range a.conditionReader.EvaluateConditions(ctx, obj, option.ConditionRules) {
				c.ObservedGeneration = work.Generation
				meta.SetStatusCondition(&m.Conditions, c)
			}
		}
		conditions.PruneConditionsGeneratedByConditionRules(&m.Conditions, work.Generation)
	}
	for _, c := range conditions.AggregateManifestConditions(work.Generation, manifests) {
		meta.SetStatusCondition(&work.Status.Conditions, c)
	}
	conditions.PruneConditionsGeneratedByConditionRules(&work.Status.Conditions, work.Generation)
}

// feedbackValues reads the values of a manifest's feedback rules with OCM's status reader,
// and the StatusFeedbackSynced condition that goes with them.
func (a *Agent) feedbackValues(obj *unstructured.Unstructured, option *workv1.ManifestConfigOption) ([]workv1.FeedbackValue, metav1.Condition) {
	c := metav1.Condition{Type: conditionFeedbackSynced, Status: metav1.ConditionTrue, Reason: reasonNoFeedback}
	if option == nil || len(option.FeedbackRules) == 0 {
		return nil, c
	}
	var (
		values []workv1.FeedbackValue
		errs   []error
	)
	for _, rule := range option.FeedbackRules {
		v, err := a.feedback.GetValuesByRule(obj, rule)
		if err != nil {
			errs = append(errs, err)
		}
		values = append(values, v...)
	}
	if err := errors.Join(errs...); err != nil {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, reasonFeedbackFailed, fmt.Sprintf("Sync status feedback failed with error %v", err)
		return values, c
	}
	c.Reason = conditionFeedbackSynced
	return values, c
}
