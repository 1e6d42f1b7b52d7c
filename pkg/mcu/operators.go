// Package mcu holds the pure decisions of a rollout that names a release rather than a
// policy (seed 003's ManagedClustersUpgrade, issue 32): which operators' upgrades it
// approves. The stages over clusters on mixed versions are pkg/hops'.
package mcu

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Operator names an installed OLM operator by its Subscription.
type Operator struct {
	Name, Namespace string
}

func (o Operator) String() string { return o.Namespace + "/" + o.Name }

// Operators says which operators' upgrades a rollout approves: every one but those
// excluded (ApproveAll), or only those included.
type Operators struct {
	ApproveAll       bool
	Include, Exclude []Operator
}

// Validate reports what makes the selection ambiguous or malformed: an operator without a
// name or namespace, one listed twice in a list, or in both lists.
func (s Operators) Validate() error {
	var errs []error
	for _, list := range []struct {
		field string
		ops   []Operator
	}{{"include", s.Include}, {"exclude", s.Exclude}} {
		for i, o := range list.ops {
			if o.Name == "" || o.Namespace == "" {
				errs = append(errs, fmt.Errorf("%s[%d] needs a name and a namespace", list.field, i))
			}
			if slices.Contains(list.ops[:i], o) {
				errs = append(errs, fmt.Errorf("%s lists %s twice", list.field, o))
			}
		}
	}
	for i, o := range s.Include {
		if slices.Contains(s.Exclude, o) && !slices.Contains(s.Include[:i], o) {
			errs = append(errs, fmt.Errorf("%s is both included and excluded", o))
		}
	}
	return errors.Join(errs...)
}

// Approves tells whether the rollout approves the upgrade of an operator: an excluded one
// never, an included one always, any other one with ApproveAll.
func (s Operators) Approves(o Operator) bool {
	switch {
	case slices.Contains(s.Exclude, o):
		return false
	case slices.Contains(s.Include, o):
		return true
	}
	return s.ApproveAll
}

// ApproveAllTemplates is the object-templates-raw of the policy that approves every operator
// but those excluded. The hub cannot list a cluster's Subscriptions, so the list is made on
// the cluster: the config-policy controller resolves the template there, on each evaluation.
// Every Subscription with Manual approval, but the excluded ones, must be AtLatestKnown (a
// cluster with a pending upgrade is NonCompliant; one without any such Subscription complies,
// the policy having no object then); and while one waits on its InstallPlan (UpgradePending),
// that plan, the one the Subscription names, must be approved, which enforcing the policy
// does on the cluster. Stale plans are never approved.
func ApproveAllTemplates(exclude []Operator) string {
	skip := make([]string, len(exclude))
	for i, o := range exclude {
		skip[i] = strconv.Quote(o.String())
	}
	const subscriptions = `lookup "operators.coreos.com/v1alpha1" "Subscription" "" ""`
	return `{{- $excluded := list ` + strings.Join(skip, " ") + ` }}
{{- range $sub := (` + subscriptions + `).items }}
{{- $ns := $sub.metadata.namespace }}
{{- $name := $sub.metadata.name }}
{{- if and (eq (dig "spec" "installPlanApproval" "" $sub) "Manual") (not (has (printf "%s/%s" $ns $name) $excluded)) }}
- complianceType: musthave
  objectDefinition:
    apiVersion: operators.coreos.com/v1alpha1
    kind: Subscription
    metadata:
      name: {{ $name | quote }}
      namespace: {{ $ns | quote }}
    status:
      state: AtLatestKnown
{{- $plan := dig "status" "installPlanRef" "name" "" $sub }}
{{- if and (eq (dig "status" "state" "" $sub) "UpgradePending") (ne $plan "") }}
- complianceType: musthave
  objectDefinition:
    apiVersion: operators.coreos.com/v1alpha1
    kind: InstallPlan
    metadata:
      name: {{ $plan | quote }}
      namespace: {{ $ns | quote }}
    spec:
      approved: true
{{- end }}
{{- end }}
{{- end }}
`
}
