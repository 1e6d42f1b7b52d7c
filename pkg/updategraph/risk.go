package updategraph

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// ConditionRecommended is the type of the condition on each conditional update that says
	// whether the update is recommended for this cluster.
	ConditionRecommended = "Recommended"

	// ReasonNotExposedToRisks is the Recommended=True reason: no risk applies to the cluster.
	ReasonNotExposedToRisks = "NotExposedToRisks"

	// ReasonEvaluationFailed is the reason when a risk could not be evaluated.
	ReasonEvaluationFailed = "EvaluationFailed"

	// ReasonMultipleReasons is the reason when more than one distinct reason applies.
	ReasonMultipleReasons = "MultipleReasons"

	// ReasonExposedToRisks replaces a matching risk's name as the reason when the name is
	// not a valid condition reason.
	ReasonExposedToRisks = "ExposedToRisks"

	// MessageNotExposedToRisks is the Recommended=True message.
	MessageNotExposedToRisks = "The update is recommended, because none of the conditional update risks apply to this cluster."
)

// ErrNoMatcher is the evaluation error of a PromQL rule when no RiskMatcher was given.
var ErrNoMatcher = errors.New("no PromQL evaluator is configured")

// ErrNoEvaluableRule is the evaluation error of a risk with no rule of a known type.
var ErrNoEvaluableRule = errors.New("no matching rule of a known type")

// reasonPattern is the pattern a Kubernetes condition reason must match.
var reasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// RiskMatcher decides one PromQL matching rule of a risk: true when the cluster matches the
// query (the risk applies), false when it does not, and an error when the answer is unknown
// (for example the query returned no series or monitoring is unreachable). It receives the
// whole risk so that a simulated cluster may decide by risk name instead of running PromQL.
type RiskMatcher func(risk configv1.ConditionalUpdateRisk, promql string) (bool, error)

// MatchRisk decides whether a risk applies to the cluster by walking its matching rules in
// order, as the cluster-version operator does: an Always rule matches; a PromQL rule is
// decided by match, and when match fails the walk moves on to the next rule; rules of
// unknown types are skipped. The first rule that is decided gives the answer. When no rule
// can be decided the result is an error, so that the update is not recommended.
func MatchRisk(risk configv1.ConditionalUpdateRisk, match RiskMatcher) (bool, error) {
	var errs []error
	for _, rule := range risk.MatchingRules {
		switch rule.Type {
		case RuleTypeAlways:
			return true, nil
		case RuleTypePromQL:
			matched, err := matchPromQL(risk, rule, match)
			if err == nil {
				return matched, nil
			}
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		return false, ErrNoEvaluableRule
	}
	return false, errors.Join(errs...)
}

func matchPromQL(risk configv1.ConditionalUpdateRisk, rule configv1.ClusterCondition, match RiskMatcher) (bool, error) {
	if rule.PromQL == nil || strings.TrimSpace(rule.PromQL.PromQL) == "" {
		return false, errors.New("PromQL rule without a query")
	}
	if match == nil {
		return false, ErrNoMatcher
	}
	return match(risk, rule.PromQL.PromQL)
}

// Recommend evaluates every risk of a conditional update and returns its Recommended
// condition, stamped with now. The status is False when any risk applies, otherwise Unknown
// when any risk could not be evaluated (fail closed), otherwise True. The reason is
// NotExposedToRisks when nothing applies; the risk's name (or ExposedToRisks when the name
// is not a valid reason) for one applying risk; EvaluationFailed when evaluation failed; and
// MultipleReasons when these differ between risks. The message joins, with blank lines, one
// paragraph per applying or unevaluable risk in risk order.
func Recommend(risks []configv1.ConditionalUpdateRisk, match RiskMatcher, now metav1.Time) metav1.Condition {
	cond := metav1.Condition{
		Type:               ConditionRecommended,
		Status:             metav1.ConditionTrue,
		Reason:             ReasonNotExposedToRisks,
		Message:            MessageNotExposedToRisks,
		LastTransitionTime: now,
	}
	var paragraphs []string
	for _, risk := range risks {
		matched, err := MatchRisk(risk, match)
		switch {
		case err != nil:
			cond.Status = worseStatus(cond.Status, metav1.ConditionUnknown)
			cond.Reason = combineReasons(cond.Reason, ReasonEvaluationFailed)
			paragraphs = append(paragraphs, unknownExposureMessage(risk, err))
		case matched:
			cond.Status = worseStatus(cond.Status, metav1.ConditionFalse)
			cond.Reason = combineReasons(cond.Reason, exposedReason(risk.Name))
			paragraphs = append(paragraphs, risk.Message+" "+risk.URL)
		}
	}
	if len(paragraphs) > 0 {
		cond.Message = strings.Join(paragraphs, "\n\n")
	}
	return cond
}

// worseStatus orders False before Unknown before True.
func worseStatus(current, next metav1.ConditionStatus) metav1.ConditionStatus {
	switch {
	case current == metav1.ConditionFalse || next == metav1.ConditionFalse:
		return metav1.ConditionFalse
	case current == metav1.ConditionUnknown || next == metav1.ConditionUnknown:
		return metav1.ConditionUnknown
	default:
		return next
	}
}

func combineReasons(current, next string) string {
	switch current {
	case ReasonNotExposedToRisks:
		return next
	case next:
		return current
	default:
		return ReasonMultipleReasons
	}
}

func exposedReason(name string) string {
	if reasonPattern.MatchString(name) {
		return name
	}
	return ReasonExposedToRisks
}

func unknownExposureMessage(risk configv1.ConditionalUpdateRisk, err error) string {
	return fmt.Sprintf("Could not evaluate exposure to update risk %s (%v)\n  %s description: %s\n  %s URL: %s",
		risk.Name, err, risk.Name, risk.Message, risk.Name, risk.URL)
}
