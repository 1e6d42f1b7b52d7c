package precache

import (
	"reflect"
	"testing"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

func TestSpecDataRoundTrip(t *testing.T) {
	spec := ranv1alpha1.PrecachingSpec{
		PlatformImage:                "quay.io/openshift-release-dev/ocp-release@sha256:abc",
		OperatorsIndexes:             []string{"registry.example.com/redhat-operator-index:v4.16"},
		OperatorsPackagesAndChannels: []string{"ptp-operator:stable", "sriov-network-operator:stable"},
		ExcludePrecachePatterns:      []string{"aws", "azure"},
		AdditionalImages:             []string{"registry.example.com/app:1"},
		SpaceRequired:                "35",
	}
	data := SpecData(spec)
	if data[KeyPackages] != "ptp-operator:stable\nsriov-network-operator:stable" {
		t.Errorf("packages are written one a line as TALM writes them, got %q", data[KeyPackages])
	}
	if got := SpecFromData(data); !reflect.DeepEqual(got, spec) {
		t.Errorf("read back %+v, want %+v", got, spec)
	}
	empty := SpecData(ranv1alpha1.PrecachingSpec{})
	if len(empty) != 6 || empty[KeyPlatformImage] != "" {
		t.Errorf("an empty spec writes every key empty, as TALM's, got %v", empty)
	}
	if got := SpecFromData(map[string]string{KeyIndexes: " a \n\n b\n"}); !reflect.DeepEqual(got.OperatorsIndexes, []string{"a", "b"}) {
		t.Errorf("blank lines and spaces are ignored, got %q", got.OperatorsIndexes)
	}
}
