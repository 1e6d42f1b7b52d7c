package configpolicy

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	configpolicyv1 "open-cluster-management.io/config-policy-controller/api/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
)

func TestHistoryMessage(t *testing.T) {
	found := Condition{Type: "notification", Reason: "r", Message: "clusterversions [version] found as specified"}
	notFound := Condition{Type: "violation", Reason: "r", Message: "configmaps [cm] not found in namespace default"}

	cases := map[string]struct {
		state      configpolicyv1.ComplianceState
		conditions []Condition
		want       string
	}{
		"compliant": {
			state: configpolicyv1.Compliant, conditions: []Condition{found},
			want: "Compliant; notification - clusterversions [version] found as specified",
		},
		"several templates": {
			state: configpolicyv1.NonCompliant, conditions: []Condition{found, notFound},
			want: "NonCompliant; notification - clusterversions [version] found as specified; " +
				"violation - configmaps [cm] not found in namespace default",
		},
		"unknown": {
			state: configpolicyv1.UnknownCompliancy, conditions: []Condition{found},
			want: "ComplianceState is still unknown",
		},
		"template without condition": {
			state: configpolicyv1.Compliant, conditions: []Condition{found, {}},
			want: "Compliant",
		},
	}

	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(HistoryMessage(tc.state, tc.conditions)).To(Equal(tc.want))
		})
	}

	t.Run("truncated", func(t *testing.T) {
		g := NewWithT(t)

		msg := HistoryMessage(configpolicyv1.NonCompliant, []Condition{{Type: "violation", Message: strings.Repeat("x", 5000)}})
		g.Expect(msg).To(HaveLen(4096))
		g.Expect(msg).To(HavePrefix("NonCompliant; violation - xxx"))
		g.Expect(msg).To(HaveSuffix("x...[truncated]"))
	})
}

func TestPendingAndTemplateErrorMessages(t *testing.T) {
	cases := map[string]struct {
		got  string
		want string
	}{
		"one dependency": {
			got:  PendingMessage(false, Dependency{Kind: "Policy", Name: "upgrade-prep"}),
			want: "Pending; Dependencies were not satisfied: 1 is still pending (Policy upgrade-prep)",
		},
		"two dependencies, sorted": {
			got:  PendingMessage(false, Dependency{Kind: "Policy", Name: "b"}, Dependency{Kind: "ConfigurationPolicy", Name: "a"}),
			want: "Pending; Dependencies were not satisfied: 2 are still pending (ConfigurationPolicy a, Policy b)",
		},
		"ignorePending": {
			got:  PendingMessage(true, Dependency{Kind: "Policy", Name: "a"}),
			want: "Compliant; Dependencies were not satisfied: 1 is still pending (Policy a) but ignorePending is true",
		},
		"template error": {
			got:  TemplateErrorMessage("bad template"),
			want: "NonCompliant; template-error; bad template",
		},
	}

	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(tc.got).To(Equal(tc.want))
		})
	}
}

func TestTemplateCompliance(t *testing.T) {
	cases := map[string]policyv1.ComplianceState{
		"Compliant; notification - configmaps [cm] found as specified":         policyv1.Compliant,
		"NonCompliant; violation - configmaps [cm] not found":                  policyv1.NonCompliant,
		"Pending; Dependencies were not satisfied: 1 is still pending (P a)":   policyv1.Pending,
		"(combined from similar events): Compliant; notification - x":          policyv1.Compliant,
		"  compliant; lower case counts too":                                   policyv1.Compliant,
		"NonCompliant; template-error; bad":                                    policyv1.NonCompliant,
		"ComplianceState is still unknown":                                     policyv1.NonCompliant,
		"Compliant but the prefix is all that is read, NonCompliant elsewhere": policyv1.Compliant,
	}

	for msg, want := range cases {
		t.Run(msg, func(t *testing.T) {
			NewWithT(t).Expect(TemplateCompliance(msg)).To(Equal(want))
		})
	}
}

func TestReplicatedCompliance(t *testing.T) {
	const (
		c = policyv1.Compliant
		n = policyv1.NonCompliant
		p = policyv1.Pending
	)

	cases := map[string]struct {
		previous  policyv1.ComplianceState
		templates []policyv1.ComplianceState
		want      policyv1.ComplianceState
	}{
		"all compliant":                      {templates: []policyv1.ComplianceState{c, c}, want: c},
		"one noncompliant":                   {templates: []policyv1.ComplianceState{c, n, p}, want: n},
		"noncompliant after pending":         {templates: []policyv1.ComplianceState{p, n}, want: n},
		"pending":                            {templates: []policyv1.ComplianceState{c, p}, want: p},
		"no history keeps the previous":      {previous: n, templates: []policyv1.ComplianceState{c, ""}, want: n},
		"no history and pending":             {previous: c, templates: []policyv1.ComplianceState{"", p}, want: p},
		"no templates":                       {previous: n, want: c},
		"no history, nothing before":         {templates: []policyv1.ComplianceState{""}, want: ""},
		"compliant templates replace before": {previous: n, templates: []policyv1.ComplianceState{c}, want: c},
	}

	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(ReplicatedCompliance(tc.previous, tc.templates...)).To(Equal(tc.want))
		})
	}
}

func TestEmittedMessages(t *testing.T) {
	notFound := Condition{Type: "violation", Reason: reasonWantFoundDNE, Message: "configmaps [cm] not found in namespace default"}
	created := Condition{Type: "notification", Reason: reasonWantFoundCreated, Message: "configmaps [cm] was created successfully in namespace default"}
	found := Condition{Type: "notification", Reason: reasonWantFoundExists, Message: "configmaps [cm] found as specified in namespace default"}
	noMatch := Condition{Type: "violation", Reason: reasonWantFoundNoMatch, Message: "configmaps [cm] found but not as specified in namespace default"}

	result := func(templates ...TemplateResult) Result {
		res := Result{Templates: templates}
		res.Compliance = policyCompliance(templates)
		res.Message = templatesMessage(res.Compliance, templates)

		return res
	}
	tmpl := func(c Condition, transitions ...Condition) TemplateResult {
		return TemplateResult{Compliance: stateOfCondition(c), Condition: c, Transitions: transitions}
	}

	cases := map[string]struct {
		previous, current Result
		specChanged       bool
		want              []string
	}{
		"first evaluation sends each batch": {
			current: result(tmpl(created, notFound)),
			want: []string{
				"NonCompliant; violation - configmaps [cm] not found in namespace default",
				"Compliant; notification - configmaps [cm] was created successfully in namespace default",
			},
		},
		"nothing changed sends nothing": {
			previous: result(tmpl(found)),
			current:  result(tmpl(found)),
		},
		"nothing changed but the spec": {
			previous: result(tmpl(found)), current: result(tmpl(found)), specChanged: true,
			want: []string{"Compliant; notification - configmaps [cm] found as specified in namespace default"},
		},
		"a batch carries the later templates' previous conditions": {
			previous: result(tmpl(noMatch), tmpl(noMatch)),
			current:  result(tmpl(created, notFound), tmpl(noMatch)),
			want: []string{
				"NonCompliant; violation - configmaps [cm] not found in namespace default; " +
					"violation - configmaps [cm] found but not as specified in namespace default",
				"NonCompliant; notification - configmaps [cm] was created successfully in namespace default; " +
					"violation - configmaps [cm] found but not as specified in namespace default",
			},
		},
		"a noncompliant last batch already in the status is skipped": {
			previous: result(tmpl(noMatch)),
			current:  result(tmpl(noMatch, noMatch)),
		},
		"a removed template shortens the status": {
			previous: result(tmpl(found), tmpl(noMatch)),
			current:  result(tmpl(found)),
			want:     []string{"Compliant; notification - configmaps [cm] found as specified in namespace default"},
		},
	}

	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(EmittedMessages(tc.previous, tc.current, tc.specChanged)).To(Equal(tc.want))
		})
	}
}
