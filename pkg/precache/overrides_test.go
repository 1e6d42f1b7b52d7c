package precache

import (
	"testing"

	. "github.com/onsi/gomega"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

func TestWithOverrides(t *testing.T) {
	configMap := map[string]string{
		"platform.image":                "this/should/be/ignored:latest",
		"operators.indexes":             "ignored/index:1",
		"operators.packagesAndChannels": "performance-addon-operator:stable\nptp-operator:stable\n\n sriov-network-operator:stable \n",
		"excludePrecachePatterns":       "aws\nazure\n",
		"precache.spaceRequired":        "45 GiB",
	}
	cases := map[string]struct {
		cfg  *ranv1alpha1.PreCachingConfigSpec
		data map[string]string
		want *ranv1alpha1.PreCachingConfigSpec
		used []string
	}{
		"neither": {},
		"a PreCachingConfig alone is unchanged": {
			cfg:  &ranv1alpha1.PreCachingConfigSpec{SpaceRequired: "40GiB"},
			want: &ranv1alpha1.PreCachingConfigSpec{SpaceRequired: "40GiB"},
		},
		"the ConfigMap alone fills packages, patterns and space, and ignores images": {
			data: configMap,
			want: &ranv1alpha1.PreCachingConfigSpec{
				Overrides:               ranv1alpha1.PrecacheOverrides{OperatorsPackagesAndChannels: []string{"performance-addon-operator:stable", "ptp-operator:stable", "sriov-network-operator:stable"}},
				ExcludePrecachePatterns: []string{"aws", "azure"}, SpaceRequired: "45 GiB",
			},
			used: []string{"operators.packagesAndChannels", "excludePrecachePatterns", "precache.spaceRequired"},
		},
		"the PreCachingConfig wins field by field (TALM's pre-caching-with-configs)": {
			cfg:  &ranv1alpha1.PreCachingConfigSpec{AdditionalImages: []string{"image1:latest"}, SpaceRequired: "40GiB"},
			data: configMap,
			want: &ranv1alpha1.PreCachingConfigSpec{
				Overrides:               ranv1alpha1.PrecacheOverrides{OperatorsPackagesAndChannels: []string{"performance-addon-operator:stable", "ptp-operator:stable", "sriov-network-operator:stable"}},
				ExcludePrecachePatterns: []string{"aws", "azure"}, AdditionalImages: []string{"image1:latest"}, SpaceRequired: "40GiB",
			},
			used: []string{"operators.packagesAndChannels", "excludePrecachePatterns"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, used := WithOverrides(tc.cfg, tc.data)
			g := NewWithT(t)
			g.Expect(got).To(Equal(tc.want))
			g.Expect(used).To(Equal(tc.used))
		})
	}
}
