package rollout

import ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"

// Enforcement is how a rollout enforces its policies. Once started, the mode it started
// with (recorded) wins, whatever the spec says now: a switch mid-rollout would leave the
// first mode's objects enforcing beside the second's (the CRD also refuses the edit). A
// rollout started by a version that recorded no mode keeps Copy, that version's default.
// Before the start: the spec's mode, else the operator's default, else Copy.
func Enforcement(spec, recorded ranv1alpha1.EnforcementMode, started bool, operatorDefault ranv1alpha1.EnforcementMode) ranv1alpha1.EnforcementMode {
	switch {
	case started && recorded != "":
		return recorded
	case spec != "":
		return spec
	case started, operatorDefault == "":
		return ranv1alpha1.EnforcementCopy
	}
	return operatorDefault
}
