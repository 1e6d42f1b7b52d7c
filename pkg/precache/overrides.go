package precache

import (
	"slices"
	"strings"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// OverridesConfigMap is the name of TALM's deprecated ConfigMap of pre-caching overrides, in
// the ClusterGroupUpgrade's namespace. PreCachingConfig replaces it; it is still honoured,
// with a warning.
const OverridesConfigMap = "cluster-group-upgrade-overrides"

// The keys of the overrides ConfigMap that are honoured; lists are one entry a line.
const (
	overridePackages      = "operators.packagesAndChannels"
	overrideExclude       = "excludePrecachePatterns"
	overrideSpaceRequired = "precache.spaceRequired"
)

// WithOverrides merges the data of TALM's overrides ConfigMap into the spec of a
// PreCachingConfig (nil without one), as TALM merges them: the PreCachingConfig wins field by
// field, and the ConfigMap fills what it leaves empty: the operator packages and channels,
// the exclude patterns and the space required. Its platform.image and operators.indexes
// keys are ignored, as TALM ignores them: the release image and the catalogs come from the
// policies. It returns the merged spec (nil when both are empty) and the keys it used, in
// order.
func WithOverrides(cfg *ranv1alpha1.PreCachingConfigSpec, data map[string]string) (*ranv1alpha1.PreCachingConfigSpec, []string) {
	var out ranv1alpha1.PreCachingConfigSpec
	if cfg != nil {
		out = *cfg.DeepCopy()
	}
	var used []string
	if len(out.Overrides.OperatorsPackagesAndChannels) == 0 {
		if l := lines(data[overridePackages]); len(l) > 0 {
			out.Overrides.OperatorsPackagesAndChannels, used = l, append(used, overridePackages)
		}
	}
	if len(out.ExcludePrecachePatterns) == 0 {
		if l := lines(data[overrideExclude]); len(l) > 0 {
			out.ExcludePrecachePatterns, used = l, append(used, overrideExclude)
		}
	}
	if out.SpaceRequired == "" {
		if v := strings.TrimSpace(data[overrideSpaceRequired]); v != "" {
			out.SpaceRequired, used = v, append(used, overrideSpaceRequired)
		}
	}
	if cfg == nil && len(used) == 0 {
		return nil, nil
	}
	return &out, used
}

// lines splits a ConfigMap list value: one entry a line, trimmed, empty lines dropped.
func lines(v string) []string {
	var out []string
	for _, l := range strings.Split(v, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return slices.Clip(out)
}
