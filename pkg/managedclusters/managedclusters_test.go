package managedclusters

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/google/go-cmp/cmp"
)

func TestDiff(t *testing.T) {
	cases := map[string]struct {
		before, after map[string]string
		want          map[string]*string
	}{
		"nothing changes":      {before: map[string]string{"a": "1"}, after: map[string]string{"a": "1"}},
		"both empty":           {},
		"a key added":          {before: map[string]string{"a": "1"}, after: map[string]string{"a": "1", "b": ""}, want: map[string]*string{"b": ptr.To("")}},
		"a key removed":        {before: map[string]string{"a": "1", "b": "2"}, after: map[string]string{"a": "1"}, want: map[string]*string{"b": nil}},
		"a value changed":      {before: map[string]string{"a": "1"}, after: map[string]string{"a": "2"}, want: map[string]*string{"a": ptr.To("2")}},
		"removed and added":    {before: map[string]string{"a": "1"}, after: map[string]string{"b": "1"}, want: map[string]*string{"a": nil, "b": ptr.To("1")}},
		"from nil, keys added": {after: map[string]string{"a": "1"}, want: map[string]*string{"a": ptr.To("1")}},
		"to nil, keys removed": {before: map[string]string{"a": "1"}, want: map[string]*string{"a": nil}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(c.want, Diff(c.before, c.after)); d != "" {
				t.Errorf("Diff (-want +got):\n%s", d)
			}
		})
	}
}
