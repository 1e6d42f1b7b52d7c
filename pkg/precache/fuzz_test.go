package precache_test

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/google/go-containerregistry/pkg/name"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
	"github.com/cgu-operator/cgu-operator/tests/world/graphserver"
)

// templateJSON is the raw policy template of policy(name, objects...).
func templateJSON(objects ...map[string]any) string {
	return string(policy("p", objects...).Spec.PolicyTemplates[0].ObjectDefinition.Raw)
}

// FuzzDerive checks that Derive never panics on a policy template's raw JSON and any
// PreCachingConfig strings, and that its Result is consistent: a known reason, a message,
// a spec within the bounds, and, when valid, a platform image and spaceRequired the spoke
// can read.
func FuzzDerive(f *testing.F) {
	for _, seed := range []struct{ template, platform, space, image string }{
		{templateJSON(clusterVersion("4.14.9", "", "stable-4.14")), "", "30Gi", ""},
		{templateJSON(clusterVersion("", graphserver.Image("4.14.9"), "")), "", "30 GiB", ""},
		{templateJSON(catalogSource(index), subscription("ptp-operator", "")), "", "", appImage},
		{templateJSON(subscription("{{hub .ManagedClusterName hub}}", "")), override, "-1", ""},
		{`{"kind": "ConfigurationPolicy", "spec": {"object-templates-raw": "- objectDefinition: {kind: Subscription, apiVersion: operators.coreos.com/v1alpha1, spec: {name: x}}\n"}}`, "", "1.5TB", ""},
		{`{"kind": "ConfigurationPolicy", "spec": {"object-templates-raw": "{{ range }}CatalogSource{{ end }}"}}`, "", "1e3", "x y"},
		{`{"kind": "ConfigurationPolicy", "spec": {"object-templates": [{"objectDefinition": {"kind": "CatalogSource", "apiVersion": "operators.coreos.com/v1alpha1", "spec": "{{hub x hub}}"}}]}}`, "", "", ""},
		{`{"kind": "ConfigurationPolicy", "spec": {"object-templates": [null, {}]}}`, "quay.io/x", "0", ""},
		{`{"kind": 1}`, "", "", ""},
		{`{`, "", "", ""},
	} {
		f.Add([]byte(seed.template), seed.platform, seed.space, seed.image)
	}
	graph := graphserver.NewGraph("stable-4.14").Edge("4.14.8", "4.14.9").MustBuild(f)
	f.Fuzz(func(t *testing.T, template []byte, platform, space, image string) {
		p := policy("p")
		p.Spec.PolicyTemplates = []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: template}}}
		got := precache.Derive(precache.Input{
			Policies: []*policyv1.Policy{p},
			Config: &ranv1alpha1.PreCachingConfigSpec{SpaceRequired: space, AdditionalImages: []string{image},
				Overrides: ranv1alpha1.PrecacheOverrides{PlatformImage: platform}},
			Graph:          func(string) *updategraph.Graph { return graph },
			DefaultChannel: "stable-4.14",
		})
		switch {
		case got.Message == "":
			t.Fatalf("no message: %+v", got)
		case got.Valid != (got.Reason == ranv1alpha1.ReasonPrecacheSpecIsWellFormed):
			t.Fatalf("valid %t with reason %s", got.Valid, got.Reason)
		case got.Reason != ranv1alpha1.ReasonPrecacheSpecIsWellFormed && got.Reason != ranv1alpha1.ReasonPrecacheSpecIncomplete &&
			got.Reason != ranv1alpha1.ReasonInvalidPlatformImage:
			t.Fatalf("unknown reason %s", got.Reason)
		}
		checkBounds(t, got.Spec)
		if got.Valid {
			checkValid(t, got.Spec)
		}
	})
}

func checkBounds(t *testing.T, spec ranv1alpha1.PrecachingSpec) {
	t.Helper()
	for _, l := range []struct {
		items []string
		max   int
	}{
		{spec.OperatorsPackagesAndChannels, precache.MaxPackagesAndChannels},
		{spec.OperatorsIndexes, precache.MaxIndexes},
		{spec.ExcludePrecachePatterns, precache.MaxExcludePatterns},
		{spec.AdditionalImages, precache.MaxAdditionalImages},
		{[]string{spec.PlatformImage, spec.SpaceRequired}, 2},
	} {
		if len(l.items) > l.max {
			t.Fatalf("%d entries, more than %d: %v", len(l.items), l.max, l.items)
		}
		for _, e := range l.items {
			if utf8.RuneCountInString(e) > precache.MaxEntryLength {
				t.Fatalf("entry longer than %d characters: %q", precache.MaxEntryLength, e)
			}
		}
	}
}

func checkValid(t *testing.T, spec ranv1alpha1.PrecachingSpec) {
	t.Helper()
	if spec.PlatformImage != "" {
		if _, err := name.ParseReference(spec.PlatformImage, name.StrictValidation); err != nil {
			t.Fatalf("valid spec with platform image %q: %v", spec.PlatformImage, err)
		}
	}
	if spec.SpaceRequired != "" {
		if q, err := resource.ParseQuantity(spec.SpaceRequired); err != nil || q.Sign() <= 0 {
			t.Fatalf("valid spec with spaceRequired %q: %v", spec.SpaceRequired, err)
		}
	}
	if spec.PlatformImage == "" && len(spec.OperatorsPackagesAndChannels) == 0 && len(spec.OperatorsIndexes) == 0 &&
		len(spec.AdditionalImages) == 0 {
		t.Fatalf("valid spec with nothing to pre-cache")
	}
	if len(spec.OperatorsPackagesAndChannels) > 0 && len(spec.OperatorsIndexes) == 0 {
		t.Fatalf("valid spec with packages and no index: %v", spec.OperatorsPackagesAndChannels)
	}
	if _, err := json.Marshal(spec); err != nil {
		t.Fatalf("spec does not encode: %v", err)
	}
}
