package hubapi

import (
	"fmt"
	"strings"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// Unserved marks the optional APIs a hub does not serve. The zero value is a hub that serves
// them all, which is what tools assume when they do not ask the hub.
type Unserved struct {
	Views, Actions, Works, SetBindings bool
}

// UnservedOf marks the optional APIs among missing (see Missing). The ManifestWork
// features need both work APIs: either one missing marks Works.
func UnservedOf(missing []API) Unserved {
	var u Unserved
	for _, api := range missing {
		switch api {
		case Views:
			u.Views = true
		case Actions:
			u.Actions = true
		case Works, WorkTemplates:
			u.Works = true
		case SetBindings:
			u.SetBindings = true
		}
	}
	return u
}

// APIs lists the unserved APIs, in the order of Optional.
func (u Unserved) APIs() []API {
	var out []API
	for _, api := range Optional {
		if u.Missing(api) {
			out = append(out, api)
		}
	}
	return out
}

// Missing reports whether api is one of the unserved optional APIs; false for the zero API
// and for the required ones.
func (u Unserved) Missing(api API) bool {
	switch api {
	case Views:
		return u.Views
	case Actions:
		return u.Actions
	case Works, WorkTemplates:
		return u.Works
	case SetBindings:
		return u.SetBindings
	}
	return false
}

// Feature is a feature a ClusterGroupUpgrade asks for with the optional APIs it needs.
type Feature struct {
	// Field is the spec field that asks for it.
	Field string
	// Needs are the APIs it cannot work without.
	Needs []API
}

// Features returns the features spec asks for, ManifestWorks first. approvesInstallPlans says
// that the managed policies declare Subscriptions with Manual approval that the rollout
// would approve the InstallPlans of (spec.operatorUpgrades chooses them, or chooses none
// and lets all be approved).
func Features(spec ranv1alpha1.ClusterGroupUpgradeSpec, approvesInstallPlans bool) []Feature {
	var out []Feature
	add := func(asked bool, field string, needs ...API) {
		if asked {
			out = append(out, Feature{Field: field, Needs: needs})
		}
	}
	add(len(spec.ManifestWorkTemplates) > 0, "spec.manifestWorkTemplates", Works, WorkTemplates)
	add(len(spec.PreUpgradeActions) > 0, "spec.preUpgradeActions", Works, WorkTemplates)
	add(len(spec.PostUpgradeActions) > 0, "spec.postUpgradeActions", Works, WorkTemplates)
	add(spec.PreCaching, "spec.preCaching", Views, Actions)
	if uc := spec.UpgradeChecks; uc != nil {
		add(uc.PathValidation, "spec.upgradeChecks.pathValidation", Views)
		add(uc.Health != nil && (uc.Health.BeforeUpgrade || uc.Health.AfterUpgrade), "spec.upgradeChecks.health", Views, Actions)
	}
	field := "InstallPlan approval for the managed policies' Manual Subscriptions"
	if spec.OperatorUpgrades != nil {
		field = "spec.operatorUpgrades"
	}
	add(approvesInstallPlans, field, Views, Actions)
	return out
}

// Refusal says why a ClusterGroupUpgrade cannot run on this hub: the first of its features
// whose APIs the hub does not serve, and a condition message naming the field and the
// APIs; ok is false when every feature can run.
func (u Unserved) Refusal(features []Feature) (f Feature, message string, ok bool) {
	for _, f := range features {
		var missing []string
		for _, api := range f.Needs {
			if u.Missing(api) {
				missing = append(missing, api.String())
			}
		}
		if len(missing) > 0 {
			return f, fmt.Sprintf("%s needs APIs the hub does not serve: %s", f.Field, strings.Join(missing, ", ")), true
		}
	}
	return Feature{}, "", false
}
