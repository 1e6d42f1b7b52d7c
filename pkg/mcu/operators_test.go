package mcu_test

import (
	"strings"
	"testing"

	"github.com/cgu-operator/cgu-operator/pkg/mcu"
)

var (
	gitops  = mcu.Operator{Name: "openshift-gitops-operator", Namespace: "openshift-operators"}
	storage = mcu.Operator{Name: "local-storage-operator", Namespace: "openshift-operators"}
	ptp     = mcu.Operator{Name: "ptp-operator", Namespace: "openshift-ptp"}
)

func TestApproves(t *testing.T) {
	for name, tc := range map[string]struct {
		sel  mcu.Operators
		want map[mcu.Operator]bool
	}{
		"only those included":        {sel: mcu.Operators{Include: []mcu.Operator{gitops}}, want: map[mcu.Operator]bool{gitops: true, storage: false, ptp: false}},
		"all but those excluded":     {sel: mcu.Operators{ApproveAll: true, Exclude: []mcu.Operator{storage}}, want: map[mcu.Operator]bool{gitops: true, storage: false, ptp: true}},
		"nothing asked: none":        {sel: mcu.Operators{}, want: map[mcu.Operator]bool{gitops: false, ptp: false}},
		"a namespace is part of one": {sel: mcu.Operators{Include: []mcu.Operator{{Name: "ptp-operator", Namespace: "openshift-operators"}}}, want: map[mcu.Operator]bool{ptp: false}},
	} {
		for op, want := range tc.want {
			if got := tc.sel.Approves(op); got != want {
				t.Errorf("%s: %s approved %v, want %v", name, op, got, want)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	if err := (mcu.Operators{ApproveAll: true, Include: []mcu.Operator{gitops}, Exclude: []mcu.Operator{storage}}).Validate(); err != nil {
		t.Errorf("a clear selection: %v", err)
	}
	err := mcu.Operators{Include: []mcu.Operator{gitops, {Name: "x"}, gitops}, Exclude: []mcu.Operator{gitops}}.Validate()
	for _, want := range []string{"include[1] needs a name and a namespace", "include lists openshift-operators/openshift-gitops-operator twice",
		"openshift-operators/openshift-gitops-operator is both included and excluded"} {
		if err == nil || strings.Count(err.Error(), want) != 1 {
			t.Errorf("error %v, want it to say %q once", err, want)
		}
	}
}
