package operator

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cgu-operator/cgu-operator/pkg/tenancy"
	"github.com/cgu-operator/cgu-operator/pkg/ztp"
)

func TestTenancyOptions(t *testing.T) {
	cases := map[string]struct {
		args    []string
		want    tenancy.Rules
		wantErr string
	}{
		"off by default (TALM), ZTP's namespace exempt": {want: tenancy.Rules{Exempt: []string{ztp.Namespace}}},
		"on, with a prefix and exempt namespaces": {
			args: []string{"--tenancy", "--tenancy-label-prefix=tenants.example.com/", "--tenancy-exempt-namespaces=platform, ops", "--tenancy-exempt-namespaces=platform"},
			want: tenancy.Rules{On: true, LabelPrefix: "tenants.example.com/", Exempt: []string{"platform", "ops", ztp.Namespace}},
		},
		"without ZTP nothing is exempt": {args: []string{"--tenancy", "--ztp=false"}, want: tenancy.Rules{On: true}},
		"a prefix no key can start with": {args: []string{"--tenancy-label-prefix=a b/"},
			wantErr: `tenancy-label-prefix: "a b/" does not begin a label key`},
		"an exempt entry that is not a namespace": {args: []string{"--tenancy-exempt-namespaces=Platform"},
			wantErr: `tenancy-exempt-namespaces: "Platform" is not a namespace name`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o, err := parse(tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := o.TenancyRules(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("rules %+v, want %+v", got, tc.want)
			}
		})
	}
}
