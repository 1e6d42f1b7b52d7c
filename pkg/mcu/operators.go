// Package mcu holds the pure decisions of a rollout that names a release rather than a
// policy (seed 003's ManagedClustersUpgrade, issue 32): which operators' upgrades it
// approves. The stages over clusters on mixed versions are pkg/hops'.
package mcu

import (
	"errors"
	"fmt"
	"slices"
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
