package rollout

import (
	"testing"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

func TestEnforcement(t *testing.T) {
	const copyMode, override = ranv1alpha1.EnforcementCopy, ranv1alpha1.EnforcementOverride
	cases := map[string]struct {
		spec, recorded, operatorDefault ranv1alpha1.EnforcementMode
		started                         bool
		want                            ranv1alpha1.EnforcementMode
	}{
		"not started: the spec":                                  {spec: copyMode, recorded: override, operatorDefault: override, want: copyMode},
		"not started, no spec: the operator's default":           {operatorDefault: override, want: override},
		"not started, no spec, no default: Copy":                 {want: copyMode},
		"started: the recorded mode over an edited spec":         {spec: copyMode, recorded: override, started: true, want: override},
		"started: the recorded mode over the default":            {recorded: override, operatorDefault: copyMode, started: true, want: override},
		"started, nothing recorded: the spec":                    {spec: override, started: true, operatorDefault: copyMode, want: override},
		"started by an old version, no spec: Copy (its default)": {operatorDefault: override, started: true, want: copyMode},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Enforcement(c.spec, c.recorded, c.started, c.operatorDefault); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}
