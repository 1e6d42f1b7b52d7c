package operator

import (
	"reflect"
	"testing"
)

func TestPolicyNamespaces(t *testing.T) {
	cases := map[string]struct {
		args  []string
		want  []string
		valid bool
	}{
		"default: every namespace (TALM)": {valid: true},
		"a list":                          {args: []string{"--policy-namespaces=ztp-common,ztp-group"}, want: []string{"ztp-common", "ztp-group"}, valid: true},
		"repeated, trimmed, once each": {args: []string{"--policy-namespaces=ztp-common, ztp-site", "--policy-namespaces=ztp-common,,ztp-group"},
			want: []string{"ztp-common", "ztp-site", "ztp-group"}, valid: true},
		"empty value keeps every namespace": {args: []string{"--policy-namespaces="}, valid: true},
		"not a namespace name":              {args: []string{"--policy-namespaces=ztp/common"}, want: []string{"ztp/common"}},
		"upper case":                        {args: []string{"--policy-namespaces=ZTP"}, want: []string{"ZTP"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o, err := parse(tc.args...)
			if (err == nil) != tc.valid {
				t.Fatalf("parse(%q) error %v, want valid %v", tc.args, err, tc.valid)
			}
			if !reflect.DeepEqual(o.PolicyNamespaces, tc.want) {
				t.Errorf("PolicyNamespaces = %q, want %q", o.PolicyNamespaces, tc.want)
			}
		})
	}
}
