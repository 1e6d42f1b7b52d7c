package configpolicy

import (
	"fmt"
	"slices"
	"strings"

	configpolicyv1 "open-cluster-management.io/config-policy-controller/api/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
)

const maxMessageLength = 4096

// HistoryMessage formats the compliance message of a ConfigurationPolicy as the controller sends
// it and status-sync records it in the replicated policy's history: "Compliant; notification -
// <message>" or "NonCompliant; violation - <message>", one "; <type> - <message>" part per
// template, cut to 4096 characters. An unknown state gives "ComplianceState is still unknown"; a
// condition without a type (a template never evaluated) gives the bare state.
func HistoryMessage(state configpolicyv1.ComplianceState, conditions []Condition) string {
	if state == configpolicyv1.UnknownCompliancy {
		return "ComplianceState is still unknown"
	}

	var b strings.Builder

	b.WriteString(string(state))

	for _, c := range conditions {
		if c.Type == "" {
			return string(state)
		}

		b.WriteString("; ")
		b.WriteString(c.Type)
		b.WriteString(" - ")
		b.WriteString(c.Message)
	}

	msg := b.String()
	if len(msg) > maxMessageLength {
		const cut = "...[truncated]"

		msg = msg[:maxMessageLength-len(cut)] + cut
	}

	return msg
}

// Dependency names a policy dependency that is not satisfied, e.g. {Kind: "Policy", Name: "a"}.
type Dependency struct {
	Kind string
	Name string
}

// PendingMessage formats the history message template-sync records while dependencies are not
// satisfied: "Pending; Dependencies were not satisfied: 1 is still pending (Policy a)". With
// ignorePending the template counts as Compliant and the message says so.
func PendingMessage(ignorePending bool, dependencies ...Dependency) string {
	names := make([]string, len(dependencies))
	for i, d := range dependencies {
		names[i] = d.Kind + " " + d.Name
	}

	slices.Sort(names)

	format := "Dependencies were not satisfied: %d are still pending (%s)"
	if len(dependencies) == 1 {
		format = "Dependencies were not satisfied: %d is still pending (%s)"
	}

	msg := fmt.Sprintf(format, len(dependencies), strings.Join(names, ", "))

	if ignorePending {
		return string(policyv1.Compliant) + "; " + msg + " but ignorePending is true"
	}

	return string(policyv1.Pending) + "; " + msg
}

// TemplateErrorMessage formats the history message template-sync records when a policy template
// cannot be synced: "NonCompliant; template-error; <msg>".
func TemplateErrorMessage(msg string) string {
	return string(policyv1.NonCompliant) + "; template-error; " + msg
}

// TemplateCompliance reads a template's compliance from its newest history message as status-sync
// does: a "compliant" or "pending" prefix, in any case, else NonCompliant.
func TemplateCompliance(message string) policyv1.ComplianceState {
	msg := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(message, "(combined from similar events):")))

	switch {
	case strings.HasPrefix(msg, "compliant"):
		return policyv1.Compliant
	case strings.HasPrefix(msg, "pending"):
		return policyv1.Pending
	}

	return policyv1.NonCompliant
}

// ReplicatedCompliance computes a replicated policy's status.compliant from its templates'
// compliance as status-sync does: NonCompliant if any template is, else Pending if any is, else
// Compliant when all are. A template without compliance yet ("") keeps the previous value.
func ReplicatedCompliance(previous policyv1.ComplianceState, templates ...policyv1.ComplianceState) policyv1.ComplianceState {
	state := previous
	allCompliant := true

	for _, t := range templates {
		switch t {
		case policyv1.NonCompliant:
			return policyv1.NonCompliant
		case policyv1.Pending:
			state = policyv1.Pending
			allCompliant = false
		case "":
			allCompliant = false
		}
	}

	if allCompliant {
		return policyv1.Compliant
	}

	return state
}

// EmittedMessages returns the compliance messages the controller sends, oldest first, when an
// evaluation that gave current follows one that gave previous (the zero Result before the first).
// Each becomes a history entry on the replicated policy. A template whose findings came in several
// batches ("not found", then "was created successfully") sends a message per batch; nothing is
// sent when nothing changed, unless specChanged tells that the policy's generation changed.
func EmittedMessages(previous, current Result, specChanged bool) []string {
	s := statusTrack{state: previous.Compliance}
	for _, t := range previous.Templates {
		s.details = append(s.details, detail{state: t.Compliance, cond: t.Condition})
	}

	if current.policyLevel {
		changed := len(s.details) == 0 || s.details[0] != detailOf(current.Templates[0])
		if changed || current.Compliance != s.state || specChanged {
			return []string{current.Message}
		}

		return nil
	}

	if len(current.Templates) < len(s.details) {
		s.details = s.details[:len(current.Templates)]
	}

	changed := false

	for i, t := range current.Templates {
		changed = s.template(i, t) || changed
	}

	final := s.compliance()
	if changed || final != s.state || specChanged {
		s.emit()
	}

	return s.messages
}

// detail is one entry of status.compliancyDetails.
type detail struct {
	state configpolicyv1.ComplianceState
	cond  Condition
}

func detailOf(t TemplateResult) detail {
	return detail{state: t.Compliance, cond: t.Condition}
}

// statusTrack replays the controller's status updates of one evaluation.
type statusTrack struct {
	state    configpolicyv1.ComplianceState
	details  []detail
	messages []string
}

// template applies a template's batches; every batch but the last that changes the status is sent
// at once. A NonCompliant last batch that is already the status skips the template.
func (s *statusTrack) template(index int, t TemplateResult) bool {
	steps := append(slices.Clone(t.Transitions), t.Condition)
	last := detailOf(t)

	if len(steps) > 1 && last.state != configpolicyv1.Compliant &&
		index < len(s.details) && s.details[index] == last {
		return false
	}

	changed := false

	for i, c := range steps {
		d := detail{state: stateOfCondition(c), cond: c}
		if !s.set(index, d) {
			continue
		}

		changed = true

		if i < len(steps)-1 {
			s.emit()
		}
	}

	return changed
}

// set writes a detail, padding skipped templates, and reports whether it changed.
func (s *statusTrack) set(index int, d detail) bool {
	for len(s.details) <= index {
		s.details = append(s.details, detail{})
	}

	if s.details[index] == d {
		return false
	}

	s.details[index] = d

	return true
}

func (s *statusTrack) compliance() configpolicyv1.ComplianceState {
	if len(s.details) == 0 {
		return configpolicyv1.UnknownCompliancy
	}

	for _, d := range s.details {
		if d.state == configpolicyv1.NonCompliant {
			return configpolicyv1.NonCompliant
		}
	}

	return configpolicyv1.Compliant
}

func (s *statusTrack) emit() {
	s.state = s.compliance()

	conditions := make([]Condition, len(s.details))
	for i, d := range s.details {
		conditions[i] = d.cond
	}

	s.messages = append(s.messages, HistoryMessage(s.state, conditions))
}

func stateOfCondition(c Condition) configpolicyv1.ComplianceState {
	if c.Type == "notification" {
		return configpolicyv1.Compliant
	}

	return configpolicyv1.NonCompliant
}
