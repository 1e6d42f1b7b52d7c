package precache

import (
	"strings"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// The keys of TALM's pre-cache spec ConfigMap (pre-cache-spec on the spoke), each holding
// one field of the precaching spec, lists one entry a line.
const (
	KeyPlatformImage    = "platform.image"
	KeyIndexes          = "operators.indexes"
	KeyPackages         = "operators.packagesAndChannels"
	KeyExcludePatterns  = "excludePrecachePatterns"
	KeyAdditionalImages = "additionalImages"
	KeySpaceRequired    = "spaceRequired"
)

// SpecData is a precaching spec as the data of TALM's spec ConfigMap: every key present,
// empty when the spec has nothing for it.
func SpecData(spec ranv1alpha1.PrecachingSpec) map[string]string {
	return map[string]string{
		KeyPlatformImage:    spec.PlatformImage,
		KeyIndexes:          strings.Join(spec.OperatorsIndexes, "\n"),
		KeyPackages:         strings.Join(spec.OperatorsPackagesAndChannels, "\n"),
		KeyExcludePatterns:  strings.Join(spec.ExcludePrecachePatterns, "\n"),
		KeyAdditionalImages: strings.Join(spec.AdditionalImages, "\n"),
		KeySpaceRequired:    spec.SpaceRequired,
	}
}

// SpecFromData reads a precaching spec back from the data of TALM's spec ConfigMap; blank
// lines and surrounding spaces are ignored.
func SpecFromData(data map[string]string) ranv1alpha1.PrecachingSpec {
	return ranv1alpha1.PrecachingSpec{
		PlatformImage:                strings.TrimSpace(data[KeyPlatformImage]),
		OperatorsIndexes:             lines(data[KeyIndexes]),
		OperatorsPackagesAndChannels: lines(data[KeyPackages]),
		ExcludePrecachePatterns:      lines(data[KeyExcludePatterns]),
		AdditionalImages:             lines(data[KeyAdditionalImages]),
		SpaceRequired:                strings.TrimSpace(data[KeySpaceRequired]),
	}
}
