package configpolicy

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	configpolicyv1 "open-cluster-management.io/config-policy-controller/api/v1"
)

// Condition is a template's status condition, as in status.compliancyDetails[].conditions[0].
type Condition struct {
	// Type is "violation" or "notification".
	Type string
	// Reason summarizes the findings.
	Reason string
	// Message lists the findings, e.g. "clusterversions [version] found as specified".
	Message string
}

// TemplateResult is the outcome for one object template.
type TemplateResult struct {
	// Compliance is Compliant or NonCompliant, or empty when the template produced no finding.
	Compliance configpolicyv1.ComplianceState
	// Condition is the template's condition after the evaluation.
	Condition Condition
	// Transitions are the conditions the controller wrote before the final one during this
	// evaluation, oldest first, e.g. "not found" before "was created successfully".
	Transitions []Condition
}

// Result is the outcome of one evaluation of a ConfigurationPolicy.
type Result struct {
	// Compliance is NonCompliant if any template is, else Compliant.
	Compliance configpolicyv1.ComplianceState
	// Message is the compliance message sent to the parent Policy, which status-sync records in the
	// replicated policy's history: "Compliant; notification - ...".
	Message string
	// Templates are the per-template outcomes, in spec order. A policy-level problem (no
	// remediationAction, no templates, templates not simulated) gives a single entry.
	Templates []TemplateResult
	// EvaluatedAt is the evaluation time.
	EvaluatedAt time.Time
	// Err wraps ErrTemplatesNotSimulated when the policy could not be simulated.
	Err error

	// policyLevel marks a single entry that replaced all template statuses (index -1 in the
	// controller).
	policyLevel bool
}

// Evaluate prepares and evaluates a ConfigurationPolicy once. Use Prepare and Prepared.Evaluate to
// evaluate one policy on many clusters.
func Evaluate(policy *configpolicyv1.ConfigurationPolicy, store Store, now time.Time) Result {
	return Prepare(policy).Evaluate(store, now)
}

// Evaluate checks every object template against the store, enforcing when the remediation action
// is enforce, and reports the compliance the controller reports after the changes. The
// spec.customMessage templates are not applied: the message is always the default one.
func (p *Prepared) Evaluate(store Store, now time.Time) Result {
	if p.raw != "" && p.remediation != "" { // the controller validates the policy first
		resolved, templateErr, err := p.resolved(store)
		switch {
		case err != nil:
			res := p.policyLevelResult(false, "Templates not simulated", err.Error(), now)
			res.Err = err

			return res
		case templateErr != "":
			return p.policyLevelResult(false, reasonTemplateError, templateErr, now)
		}

		p = resolved
	}

	switch {
	case p.notSimulated != nil:
		res := p.policyLevelResult(false, "Templates not simulated", p.notSimulated.Error(), now)
		res.Err = p.notSimulated

		return res
	case p.remediation == "":
		return p.policyLevelResult(false, "Invalid spec", "Policy does not have a RemediationAction specified", now)
	case p.rawErr != "":
		return p.policyLevelResult(false, reasonTemplateError, p.rawErr, now)
	case len(p.templates) == 0:
		return p.policyLevelResult(true, "No object templates",
			p.name+" contains no object templates to check, and thus has no violations", now)
	}

	ev := &evaluation{p: p, store: store, now: now}
	res := Result{EvaluatedAt: now, Templates: make([]TemplateResult, len(p.templates))}

	for i, t := range p.templates {
		res.Templates[i] = ev.template(t)
	}

	res.Compliance = policyCompliance(res.Templates)
	res.Message = templatesMessage(res.Compliance, res.Templates)

	return res
}

func (p *Prepared) policyLevelResult(compliant bool, reason, message string, now time.Time) Result {
	tr := TemplateResult{Compliance: complianceOf(compliant), Condition: p.condition(compliant, reason, message)}
	res := Result{
		Compliance:  tr.Compliance,
		Templates:   []TemplateResult{tr},
		EvaluatedAt: now,
		policyLevel: true,
	}
	res.Message = templatesMessage(res.Compliance, res.Templates)

	return res
}

// condition builds a condition, noting when the policy will not be evaluated again
// (addConditionToStatus).
func (p *Prepared) condition(compliant bool, reason, message string) Condition {
	const never = `. This policy will not be evaluated again due to %s being set to "never".`

	c := Condition{Type: "violation", Reason: reason, Message: message}

	if compliant {
		c.Type = "notification"

		if p.interval.Compliant == "never" {
			c.Message += fmt.Sprintf(never, "spec.evaluationInterval.compliant")
		}
	} else if p.interval.NonCompliant == "never" {
		c.Message += fmt.Sprintf(never, "spec.evaluationInterval.noncompliant")
	}

	return c
}

func complianceOf(compliant bool) configpolicyv1.ComplianceState {
	if compliant {
		return configpolicyv1.Compliant
	}

	return configpolicyv1.NonCompliant
}

func policyCompliance(templates []TemplateResult) configpolicyv1.ComplianceState {
	if len(templates) == 0 {
		return configpolicyv1.UnknownCompliancy
	}

	for _, t := range templates {
		if t.Compliance == configpolicyv1.NonCompliant {
			return configpolicyv1.NonCompliant
		}
	}

	return configpolicyv1.Compliant
}

func templatesMessage(state configpolicyv1.ComplianceState, templates []TemplateResult) string {
	conditions := make([]Condition, len(templates))
	for i, t := range templates {
		conditions[i] = t.Condition
	}

	return HistoryMessage(state, conditions)
}

// evaluation is the state of one Evaluate call.
type evaluation struct {
	p     *Prepared
	store Store
	now   time.Time

	namespacesDone bool
	namespaces     []string
	namespacesErr  error
}

// target is one object a template applies to; name is empty for unnamed templates.
type target struct {
	ns   string
	name string
	obj  *unstructured.Unstructured
}

// template evaluates one object template: it finds the objects, handles each, and words the
// batches of findings as conditions.
func (ev *evaluation) template(t *objectTemplate) TemplateResult {
	results, resource := ev.objectResults(t)
	batches := batchEvents(results)

	if len(batches) == 0 {
		return TemplateResult{}
	}

	conditions := make([]Condition, len(batches))
	compliant := false

	for i, batch := range batches {
		var reason, msg string

		compliant, reason, msg = batchCondition(resource, batch)
		conditions[i] = ev.p.condition(compliant, reason, msg)
	}

	last := len(conditions) - 1

	return TemplateResult{
		Compliance:  complianceOf(compliant),
		Condition:   conditions[last],
		Transitions: conditions[:last:last],
	}
}

// objectResults returns the findings of a template and the resource name used in its messages.
func (ev *evaluation) objectResults(t *objectTemplate) ([]objectResult, string) {
	if t.staticErr != nil {
		return policyError(*t.staticErr), ""
	}

	mapping, ok := ev.store.Mapping(t.gvk)
	if !ok {
		return policyError(event{reason: "K8s error", message: "couldn't find mapping resource with kind " +
			t.gvk.Kind + " in API version " + t.gvk.GroupVersion().String() + ", please check if you have CRD deployed",
		}), ""
	}

	targets, errEvent := ev.targets(t, mapping)
	if errEvent != nil {
		return policyError(*errEvent), mapping.Resource
	}

	results := make([]objectResult, len(targets))
	for i, tg := range targets {
		results[i] = ev.handle(t, mapping, tg)
	}

	return results, mapping.Resource
}

// policyError is the single finding of a template that could not be evaluated object by object.
func policyError(e event) []objectResult {
	return []objectResult{{key: "ns", events: []event{e}}}
}
