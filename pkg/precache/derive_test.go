package precache_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
	"github.com/cgu-operator/cgu-operator/tests/world"
	"github.com/cgu-operator/cgu-operator/tests/world/graphserver"
)

const (
	index      = "registry.example.com:5000/redhat-operators:v4.14"
	otherIndex = "registry.example.com:5000/certified-operators:v4.14"
	override   = "mirror.example.com/ocp/release@sha256:0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f"
	appImage   = "registry.example.com:5000/edge/app:1.2"
)

// policy is a managed policy of one ConfigurationPolicy asking for objects, as the
// rollout tests build them.
func policy(name string, objects ...map[string]any) *policyv1.Policy {
	return world.NewPolicy("ztp-common", name, policyv1.Inform, world.ConfigPolicy{Name: name + "-config", Objects: objects})
}

// clusterVersion is world.ClusterVersionUpdated with the image and channel set when given.
func clusterVersion(version, image, channel string) map[string]any {
	cv := world.ClusterVersionUpdated(version)
	spec := cv["spec"].(map[string]any)
	desired := spec["desiredUpdate"].(map[string]any)
	if version == "" {
		delete(desired, "version")
	}
	if image != "" {
		desired["image"] = image
	}
	if channel != "" {
		spec["channel"] = channel
	}
	return cv
}

// channelOnly is a ClusterVersion that sets the channel and asks for no release.
func channelOnly(channel string) map[string]any {
	return map[string]any{"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
		"metadata": map[string]any{"name": "version"}, "spec": map[string]any{"channel": channel}}
}

// subscription is an OLM Subscription to a package in a channel ("" for the default one).
func subscription(pkg, channel string) map[string]any {
	spec := map[string]any{"name": pkg, "source": "redhat-operators", "sourceNamespace": "openshift-marketplace"}
	if channel != "" {
		spec["channel"] = channel
	}
	return map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
		"metadata": map[string]any{"name": pkg, "namespace": "openshift-operators"}, "spec": spec,
		"status": map[string]any{"state": "AtLatestKnown"}}
}

// catalogSource is an OLM CatalogSource serving an index image ("" for one without).
func catalogSource(image string) map[string]any {
	spec := map[string]any{"sourceType": "grpc", "displayName": "Red Hat Operators"}
	if image != "" {
		spec["image"] = image
	}
	return map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
		"metadata": map[string]any{"name": "redhat-operators", "namespace": "openshift-marketplace"}, "spec": spec}
}

// rawPolicy is a managed policy whose ConfigurationPolicy holds object-templates-raw, given
// as an Object rather than Raw JSON.
func rawPolicy(name, raw string) *policyv1.Policy {
	p := policy(name)
	p.Spec.PolicyTemplates[0].ObjectDefinition = runtime.RawExtension{Object: &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "policy.open-cluster-management.io/v1", "kind": "ConfigurationPolicy",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"object-templates-raw": raw}}}}
	return p
}

func numbered(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

func TestDerive(t *testing.T) {
	stable := graphserver.NewGraph("stable-4.14").Edge("4.14.8", "4.14.9").MustBuild(t)
	fast := graphserver.NewGraph("fast-4.14").Edge("4.14.8", "4.14.9", "4.14.10").MustBuild(t)
	graphs := map[string]*updategraph.Graph{"stable-4.14": stable, "fast-4.14": fast}
	operators := policy("operators", catalogSource(index), subscription("ptp-operator", "stable"))
	long := "registry.example.com/" + strings.Repeat("a", precache.MaxEntryLength)

	cases := map[string]struct {
		in          precache.Input
		noGraph     bool // Input.Graph is nil
		want        ranv1alpha1.PrecachingSpec
		wantReason  string // PrecacheSpecIsWellFormed when empty
		wantMessage string // a part of the message
		wantCalls   []string
	}{
		// platformImage
		"the image a ClusterVersion asks for, without looking at the graph": {
			in:   precache.Input{Policies: []*policyv1.Policy{policy("upgrade", clusterVersion("4.14.9", graphserver.Image("4.14.9"), "stable-4.14"))}},
			want: ranv1alpha1.PrecachingSpec{PlatformImage: graphserver.Image("4.14.9")},
		},
		"a version resolved through the graph of the target's channel": {
			in:        precache.Input{Policies: []*policyv1.Policy{policy("upgrade", clusterVersion("4.14.9", "", "stable-4.14"))}, DefaultChannel: "fast-4.14"},
			want:      ranv1alpha1.PrecachingSpec{PlatformImage: graphserver.Image("4.14.9")},
			wantCalls: []string{"stable-4.14"},
		},
		"a version without a channel is resolved through the default channel": {
			in:        precache.Input{Policies: []*policyv1.Policy{world.UpgradePolicy("ztp-common", "upgrade", "4.14.10", policyv1.Inform)}, DefaultChannel: "fast-4.14"},
			want:      ranv1alpha1.PrecachingSpec{PlatformImage: graphserver.Image("4.14.10")},
			wantCalls: []string{"fast-4.14"},
		},
		"the channel another ClusterVersion of the policies sets comes before the default one": {
			in: precache.Input{Policies: []*policyv1.Policy{
				policy("channel", channelOnly("stable-4.14")),
				world.UpgradePolicy("ztp-common", "upgrade", "4.14.9", policyv1.Inform)}, DefaultChannel: "fast-4.14"},
			want:      ranv1alpha1.PrecachingSpec{PlatformImage: graphserver.Image("4.14.9")},
			wantCalls: []string{"stable-4.14"},
		},
		"a channel whose graph does not list the version falls through to the next": {
			in:        precache.Input{Policies: []*policyv1.Policy{policy("upgrade", clusterVersion("4.14.10", "", "stable-4.14"))}, DefaultChannel: "fast-4.14"},
			want:      ranv1alpha1.PrecachingSpec{PlatformImage: graphserver.Image("4.14.10")},
			wantCalls: []string{"stable-4.14", "fast-4.14"},
		},
		"a version no graph lists": {
			in:          precache.Input{Policies: []*policyv1.Policy{policy("upgrade", clusterVersion("4.15.1", "", "stable-4.14"))}, DefaultChannel: "eus-4.14"},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: `Cannot find the image of release "4.15.1", which policy upgrade asks for (the graph of channel "stable-4.14" does not list it, channel "eus-4.14" has no update graph)`,
			wantCalls:   []string{"stable-4.14", "eus-4.14"},
		},
		"no graph function": {
			in:          precache.Input{Policies: []*policyv1.Policy{policy("upgrade", clusterVersion("4.14.9", "", "stable-4.14"))}},
			noGraph:     true,
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: `channel "stable-4.14" has no update graph`,
		},
		"a version and no channel to look it up in": {
			in:          precache.Input{Policies: []*policyv1.Policy{world.UpgradePolicy("ztp-common", "upgrade", "4.14.9", policyv1.Inform)}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: `Policy upgrade asks for release "4.14.9" by version only, and no channel is known`,
		},
		"overrides.platformImage wins over the policies, without looking at the graph": {
			in: precache.Input{Policies: []*policyv1.Policy{policy("upgrade", clusterVersion("4.14.9", "", "stable-4.14"))},
				Config: &ranv1alpha1.PreCachingConfigSpec{Overrides: ranv1alpha1.PrecacheOverrides{PlatformImage: " " + override + " "}}},
			want: ranv1alpha1.PrecachingSpec{PlatformImage: override},
		},
		"overrides.platformImage wins over a template and a conflict": {
			in: precache.Input{Policies: []*policyv1.Policy{
				policy("a", clusterVersion("{{hub .ManagedClusterName hub}}", "", "")),
				world.UpgradePolicy("ztp-common", "b", "4.14.9", policyv1.Inform),
				world.UpgradePolicy("ztp-common", "c", "4.14.10", policyv1.Inform)},
				Config: &ranv1alpha1.PreCachingConfigSpec{Overrides: ranv1alpha1.PrecacheOverrides{PlatformImage: override}}},
			want: ranv1alpha1.PrecachingSpec{PlatformImage: override},
		},
		"two policies asking for different versions": {
			in: precache.Input{Policies: []*policyv1.Policy{
				world.UpgradePolicy("ztp-common", "upgrade-a", "4.14.9", policyv1.Inform),
				world.UpgradePolicy("ztp-common", "upgrade-b", "4.14.10", policyv1.Inform)}, DefaultChannel: "fast-4.14"},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: `Policies upgrade-a and upgrade-b ask for different releases, "4.14.9" and "4.14.10"`,
		},
		"two policies asking for different images": {
			in: precache.Input{Policies: []*policyv1.Policy{
				policy("upgrade-a", clusterVersion("", graphserver.Image("4.14.9"), "")),
				policy("upgrade-b", clusterVersion("", graphserver.Image("4.14.10"), ""))}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: "Policies upgrade-a and upgrade-b ask for different releases",
		},
		"one policy asking for two releases": {
			in: precache.Input{Policies: []*policyv1.Policy{
				policy("upgrade", clusterVersion("4.14.9", "", ""), clusterVersion("4.14.10", "", ""))}, DefaultChannel: "fast-4.14"},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: `Policy upgrade asks for two releases, "4.14.9" and "4.14.10"`,
		},
		"policies agreeing on a release: the image one names is used": {
			in: precache.Input{Policies: []*policyv1.Policy{
				world.UpgradePolicy("ztp-common", "upgrade-a", "4.14.9", policyv1.Inform),
				policy("upgrade-b", clusterVersion("4.14.9", graphserver.Image("4.14.9"), ""))}, DefaultChannel: "fast-4.14"},
			want: ranv1alpha1.PrecachingSpec{PlatformImage: graphserver.Image("4.14.9")},
		},
		"a templated version": {
			in: precache.Input{Policies: []*policyv1.Policy{
				policy("upgrade", clusterVersion(`{{hub fromConfigMap "" "versions" .ManagedClusterName hub}}`, "", "stable-4.14"))}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: "Policy upgrade sets the ClusterVersion's release with a template, resolved only on the clusters; set overrides.platformImage",
		},
		"a templated channel next to a literal version": {
			in: precache.Input{Policies: []*policyv1.Policy{
				policy("upgrade", clusterVersion("4.14.9", "", `{{hub fromConfigMap "" "channels" .ManagedClusterName hub}}`))}, DefaultChannel: "stable-4.14"},
			want:      ranv1alpha1.PrecachingSpec{PlatformImage: graphserver.Image("4.14.9")},
			wantCalls: []string{"stable-4.14"},
		},
		"object-templates-raw with templates that may set a ClusterVersion": {
			in: precache.Input{Policies: []*policyv1.Policy{rawPolicy("upgrade",
				"{{ range $v := (lookup \"v1\" \"ConfigMap\" \"\" \"versions\").data }}\n- objectDefinition:\n    kind: ClusterVersion\n{{ end }}")}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: "Policy upgrade sets the ClusterVersion's release with a template",
		},
		"object-templates-raw without templates is read like object-templates": {
			in: precache.Input{Policies: []*policyv1.Policy{rawPolicy("operators", `
- complianceType: musthave
  objectDefinition:
    apiVersion: operators.coreos.com/v1alpha1
    kind: CatalogSource
    spec: {image: "`+index+`"}
- complianceType: mustonlyhave
  objectDefinition:
    apiVersion: operators.coreos.com/v1alpha1
    kind: Subscription
    spec: {name: sriov-network-operator, channel: stable}
`)}},
			want: ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{index}, OperatorsPackagesAndChannels: []string{"sriov-network-operator:stable"}},
		},
		"a ClusterVersion that only sets the channel asks for no release": {
			in:          precache.Input{Policies: []*policyv1.Policy{policy("channel", channelOnly("stable-4.14"))}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: "Nothing to pre-cache",
		},
		"a platform image without a registry": {
			in:          precache.Input{Policies: []*policyv1.Policy{policy("upgrade", clusterVersion("", "ocp-release:4.14.9", ""))}},
			wantReason:  ranv1alpha1.ReasonInvalidPlatformImage,
			wantMessage: `The platform image "ocp-release:4.14.9" from spec.desiredUpdate.image of policy upgrade is not an image reference with a registry and a tag or digest`,
			want:        ranv1alpha1.PrecachingSpec{PlatformImage: "ocp-release:4.14.9"},
		},
		"an overridden platform image without a tag or digest": {
			in:          precache.Input{Config: &ranv1alpha1.PreCachingConfigSpec{Overrides: ranv1alpha1.PrecacheOverrides{PlatformImage: "quay.io/ocp/release"}}},
			wantReason:  ranv1alpha1.ReasonInvalidPlatformImage,
			wantMessage: "from overrides.platformImage of the PreCachingConfig is not an image reference",
			want:        ranv1alpha1.PrecachingSpec{PlatformImage: "quay.io/ocp/release"},
		},
		"a platform image with a malformed digest": {
			in:          precache.Input{Config: &ranv1alpha1.PreCachingConfigSpec{Overrides: ranv1alpha1.PrecacheOverrides{PlatformImage: "quay.io/ocp/release@sha256:09"}}},
			wantReason:  ranv1alpha1.ReasonInvalidPlatformImage,
			wantMessage: "is not an image reference",
			want:        ranv1alpha1.PrecachingSpec{PlatformImage: "quay.io/ocp/release@sha256:09"},
		},
		"UpgradeConfig and mustnothave ClusterVersions ask for no release": {
			in: precache.Input{Policies: []*policyv1.Policy{
				policy("osd", map[string]any{"apiVersion": "upgrade.managed.openshift.io/v1alpha1", "kind": "UpgradeConfig",
					"spec": map[string]any{"desired": map[string]any{"version": "4.14.9", "channel": "stable-4.14"}}}),
				world.NewPolicy("ztp-common", "not", policyv1.Inform, world.ConfigPolicy{Name: "not", ComplianceType: "mustnothave",
					Objects: []map[string]any{clusterVersion("4.14.9", graphserver.Image("4.14.9"), ""), subscription("ptp-operator", "")}}),
				operators}},
			want: ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{index}, OperatorsPackagesAndChannels: []string{"ptp-operator:stable"}},
		},

		// operators
		"operators only: packages and indexes in policy order, deduplicated": {
			in: precache.Input{Policies: []*policyv1.Policy{
				policy("catalogs", catalogSource(index), catalogSource(""), catalogSource(otherIndex)),
				nil,
				policy("ptp", subscription("ptp-operator", "stable"), subscription("local-storage-operator", "")),
				policy("again", subscription("ptp-operator", "stable"), subscription("ptp-operator", "4.14"), catalogSource(index))}},
			want: ranv1alpha1.PrecachingSpec{
				OperatorsIndexes:             []string{index, otherIndex},
				OperatorsPackagesAndChannels: []string{"ptp-operator:stable", "local-storage-operator:", "ptp-operator:4.14"}},
		},
		"a Subscription of another group is not an operator": {
			in: precache.Input{Policies: []*policyv1.Policy{policy("apps", catalogSource(index), subscription("ptp-operator", "stable"),
				map[string]any{"apiVersion": "apps.open-cluster-management.io/v1", "kind": "Subscription",
					"spec": map[string]any{"name": "app", "channel": "ns/channel"}})}},
			want: ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{index}, OperatorsPackagesAndChannels: []string{"ptp-operator:stable"}},
		},
		"overrides replace the packages and indexes of the policies": {
			in: precache.Input{Policies: []*policyv1.Policy{operators, policy("templated", subscription("{{hub .ManagedClusterName hub}}", ""))},
				Config: &ranv1alpha1.PreCachingConfigSpec{Overrides: ranv1alpha1.PrecacheOverrides{
					OperatorsIndexes:             []string{" " + otherIndex, "", otherIndex},
					OperatorsPackagesAndChannels: []string{"sriov-network-operator:stable", "lvms-operator:", " "}}}},
			want: ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{otherIndex},
				OperatorsPackagesAndChannels: []string{"sriov-network-operator:stable", "lvms-operator:"}},
		},
		"overrides made of blanks do not replace": {
			in: precache.Input{Policies: []*policyv1.Policy{operators},
				Config: &ranv1alpha1.PreCachingConfigSpec{Overrides: ranv1alpha1.PrecacheOverrides{
					OperatorsIndexes: []string{""}, OperatorsPackagesAndChannels: []string{" "}}}},
			want: ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{index}, OperatorsPackagesAndChannels: []string{"ptp-operator:stable"}},
		},
		"an overridden package without a channel separator": {
			in: precache.Input{Policies: []*policyv1.Policy{operators},
				Config: &ranv1alpha1.PreCachingConfigSpec{Overrides: ranv1alpha1.PrecacheOverrides{OperatorsPackagesAndChannels: []string{"ptp-operator"}}}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: `Entry "ptp-operator" of overrides.operatorsPackagesAndChannels is not "package:channel"`,
			want:        ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{index}, OperatorsPackagesAndChannels: []string{"ptp-operator"}},
		},
		"Subscriptions without an index": {
			in:          precache.Input{Policies: []*policyv1.Policy{world.UpgradePolicy("ztp-common", "upgrade", "4.14.9", policyv1.Inform), policy("ptp", subscription("ptp-operator", "stable"))}, DefaultChannel: "stable-4.14"},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: "Operators to pre-cache come from policy ptp, but no catalog index image",
			want:        ranv1alpha1.PrecachingSpec{PlatformImage: graphserver.Image("4.14.9"), OperatorsPackagesAndChannels: []string{"ptp-operator:stable"}},
			wantCalls:   []string{"stable-4.14"},
		},
		"overridden packages without an index": {
			in:          precache.Input{Config: &ranv1alpha1.PreCachingConfigSpec{Overrides: ranv1alpha1.PrecacheOverrides{OperatorsPackagesAndChannels: []string{"ptp-operator:stable"}}}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: "Operators to pre-cache come from overrides.operatorsPackagesAndChannels of the PreCachingConfig, but no catalog index image",
			want:        ranv1alpha1.PrecachingSpec{OperatorsPackagesAndChannels: []string{"ptp-operator:stable"}},
		},
		"an index without packages, as TALM's missing-Subscription-policy scenario": {
			in:          precache.Input{Policies: []*policyv1.Policy{policy("catalogs", catalogSource(index))}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: "A catalog index image comes from policy catalogs, but no operator package",
			want:        ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{index}},
		},
		"a templated Subscription channel": {
			in: precache.Input{Policies: []*policyv1.Policy{policy("ptp", catalogSource(index),
				subscription("ptp-operator", `{{hub fromConfigMap "" "channels" "ptp" hub}}`))}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: "Policy ptp sets spec.channel of a Subscription with a template, resolved only on the clusters; set overrides.operatorsPackagesAndChannels",
			want:        ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{index}},
		},
		"a templated CatalogSource image": {
			in: precache.Input{Policies: []*policyv1.Policy{policy("catalogs", subscription("ptp-operator", "stable"),
				catalogSource(`{{hub fromConfigMap "" "indexes" .ManagedClusterName hub}}`))}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: "Policy catalogs sets spec.image of a CatalogSource with a template, resolved only on the clusters; set overrides.operatorsIndexes",
			want:        ranv1alpha1.PrecachingSpec{OperatorsPackagesAndChannels: []string{"ptp-operator:stable"}},
		},
		"a Subscription without a package name": {
			in:          precache.Input{Policies: []*policyv1.Policy{policy("ptp", catalogSource(index), subscription("", "stable"))}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: "Policy ptp has a Subscription without spec.name",
			want:        ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{index}},
		},
		"an index that is not an image reference": {
			in:          precache.Input{Policies: []*policyv1.Policy{policy("ptp", catalogSource("Registry Example/Index"), subscription("ptp-operator", ""))}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: `Entry "Registry Example/Index" of operatorsIndexes is not an image reference`,
			want:        ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{"Registry Example/Index"}, OperatorsPackagesAndChannels: []string{"ptp-operator:"}},
		},

		// the PreCachingConfig
		"spaceRequired, excludes and additional images": {
			in: precache.Input{Policies: []*policyv1.Policy{operators}, Config: &ranv1alpha1.PreCachingConfigSpec{
				SpaceRequired:           " 45Gi ",
				ExcludePrecachePatterns: []string{"aws", " azure ", "", "aws"},
				AdditionalImages:        []string{appImage, "", " " + appImage + " "}}},
			want: ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{index}, OperatorsPackagesAndChannels: []string{"ptp-operator:stable"},
				SpaceRequired: "45", ExcludePrecachePatterns: []string{"aws", "azure"}, AdditionalImages: []string{appImage}},
		},
		"spaceRequired written as TALM does, in binary units": {
			in:   precache.Input{Policies: []*policyv1.Policy{operators}, Config: &ranv1alpha1.PreCachingConfigSpec{SpaceRequired: "30 GiB"}},
			want: ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{index}, OperatorsPackagesAndChannels: []string{"ptp-operator:stable"}, SpaceRequired: "30"},
		},
		"spaceRequired set nowhere: TALM's 35 GiB": {
			in:   precache.Input{Policies: []*policyv1.Policy{operators}, Config: &ranv1alpha1.PreCachingConfigSpec{}},
			want: ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{index}, OperatorsPackagesAndChannels: []string{"ptp-operator:stable"}, SpaceRequired: "35"},
		},
		"spaceRequired below a GiB is rounded up": {
			in:   precache.Input{Policies: []*policyv1.Policy{operators}, Config: &ranv1alpha1.PreCachingConfigSpec{SpaceRequired: "1Mi"}},
			want: ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{index}, OperatorsPackagesAndChannels: []string{"ptp-operator:stable"}, SpaceRequired: "1"},
		},
		"spaceRequired written as TALM does, in decimal units": {
			in:   precache.Input{Policies: []*policyv1.Policy{operators}, Config: &ranv1alpha1.PreCachingConfigSpec{SpaceRequired: "1.5TB"}},
			want: ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{index}, OperatorsPackagesAndChannels: []string{"ptp-operator:stable"}, SpaceRequired: "1397"},
		},
		"spaceRequired that is not a quantity": {
			in:          precache.Input{Policies: []*policyv1.Policy{operators}, Config: &ranv1alpha1.PreCachingConfigSpec{SpaceRequired: "lots"}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: `spaceRequired "lots" of the PreCachingConfig is not a quantity such as "30Gi"`,
			want:        ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{index}, OperatorsPackagesAndChannels: []string{"ptp-operator:stable"}},
		},
		"spaceRequired of zero": {
			in:          precache.Input{Policies: []*policyv1.Policy{operators}, Config: &ranv1alpha1.PreCachingConfigSpec{SpaceRequired: "0Gi"}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: `spaceRequired "0Gi" of the PreCachingConfig is not more than zero`,
			want:        ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{index}, OperatorsPackagesAndChannels: []string{"ptp-operator:stable"}},
		},
		"negative spaceRequired": {
			in:          precache.Input{Policies: []*policyv1.Policy{operators}, Config: &ranv1alpha1.PreCachingConfigSpec{SpaceRequired: "-30Gi"}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: `spaceRequired "-30Gi" of the PreCachingConfig is not more than zero`,
			want:        ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{index}, OperatorsPackagesAndChannels: []string{"ptp-operator:stable"}},
		},
		"spaceRequired that is too long": {
			in:          precache.Input{Policies: []*policyv1.Policy{operators}, Config: &ranv1alpha1.PreCachingConfigSpec{SpaceRequired: strings.Repeat("9", precache.MaxSpaceRequiredLength+1)}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: "spaceRequired \"" + strings.Repeat("9", precache.MaxSpaceRequiredLength+1) + "\" of the PreCachingConfig is longer than 32 characters",
			want:        ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{index}, OperatorsPackagesAndChannels: []string{"ptp-operator:stable"}},
		},
		"additional images alone are something to pre-cache": {
			in:   precache.Input{Config: &ranv1alpha1.PreCachingConfigSpec{AdditionalImages: []string{appImage}}},
			want: ranv1alpha1.PrecachingSpec{AdditionalImages: []string{appImage}},
		},
		"an additional image that is not an image reference": {
			in:          precache.Input{Config: &ranv1alpha1.PreCachingConfigSpec{AdditionalImages: []string{appImage, "app image"}}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: `Entry "app image" of additionalImages is not an image reference`,
			want:        ranv1alpha1.PrecachingSpec{AdditionalImages: []string{appImage, "app image"}},
		},
		"nothing to pre-cache": {
			in: precache.Input{Policies: []*policyv1.Policy{nil, policy("config", map[string]any{"apiVersion": "v1", "kind": "Namespace"})},
				Config: &ranv1alpha1.PreCachingConfigSpec{ExcludePrecachePatterns: []string{"aws"}}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: "Nothing to pre-cache: no managed policy sets a release or operators, and no additional images",
			want:        ranv1alpha1.PrecachingSpec{ExcludePrecachePatterns: []string{"aws"}},
		},
		"no policies and no config": {
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: "Nothing to pre-cache",
		},
		"a policy that cannot be read": {
			in: precache.Input{Policies: []*policyv1.Policy{operators, policy("broken", map[string]any{
				"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription", "spec": map[string]any{"name": 3}})}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: "Cannot read a managed policy: policy broken: policy-templates[0]: object-templates[0]: spec.name is a number, not a string",
			want:        ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{index}, OperatorsPackagesAndChannels: []string{"ptp-operator:stable"}},
		},

		// bounds
		"too many packages": {
			in: precache.Input{Policies: []*policyv1.Policy{operators}, Config: &ranv1alpha1.PreCachingConfigSpec{Overrides: ranv1alpha1.PrecacheOverrides{
				OperatorsPackagesAndChannels: numbered("operator-:", precache.MaxPackagesAndChannels+1)}}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: "The precache spec has 51 operatorsPackagesAndChannels, more than the 50 it can hold",
			want: ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{index},
				OperatorsPackagesAndChannels: numbered("operator-:", precache.MaxPackagesAndChannels)},
		},
		"too many indexes": {
			in: precache.Input{Policies: []*policyv1.Policy{operators}, Config: &ranv1alpha1.PreCachingConfigSpec{Overrides: ranv1alpha1.PrecacheOverrides{
				OperatorsIndexes: numbered("registry.example.com/index:v", precache.MaxIndexes+1)}}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: "The precache spec has 11 operatorsIndexes, more than the 10 it can hold",
			want: ranv1alpha1.PrecachingSpec{OperatorsIndexes: numbered("registry.example.com/index:v", precache.MaxIndexes),
				OperatorsPackagesAndChannels: []string{"ptp-operator:stable"}},
		},
		"too many additional images": {
			in:          precache.Input{Config: &ranv1alpha1.PreCachingConfigSpec{AdditionalImages: numbered("registry.example.com/app:v", precache.MaxAdditionalImages+1)}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: "The precache spec has 21 additionalImages, more than the 20 it can hold",
			want:        ranv1alpha1.PrecachingSpec{AdditionalImages: numbered("registry.example.com/app:v", precache.MaxAdditionalImages)},
		},
		"too many exclude patterns": {
			in: precache.Input{Policies: []*policyv1.Policy{operators},
				Config: &ranv1alpha1.PreCachingConfigSpec{ExcludePrecachePatterns: numbered("pattern", precache.MaxExcludePatterns+1)}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: "The precache spec has 21 excludePrecachePatterns, more than the 20 it can hold",
			want: ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{index}, OperatorsPackagesAndChannels: []string{"ptp-operator:stable"},
				ExcludePrecachePatterns: numbered("pattern", precache.MaxExcludePatterns)},
		},
		"an entry that is too long": {
			in:          precache.Input{Config: &ranv1alpha1.PreCachingConfigSpec{AdditionalImages: []string{appImage, long}}},
			wantReason:  ranv1alpha1.ReasonPrecacheSpecIncomplete,
			wantMessage: "An entry of additionalImages is longer than 512 characters: \"registry.example.com/aaa",
			want:        ranv1alpha1.PrecachingSpec{AdditionalImages: []string{appImage}},
		},
		"a platform image that is too long": {
			in:          precache.Input{Config: &ranv1alpha1.PreCachingConfigSpec{Overrides: ranv1alpha1.PrecacheOverrides{PlatformImage: long + ":4.14"}}},
			wantReason:  ranv1alpha1.ReasonInvalidPlatformImage,
			wantMessage: "The platform image from overrides.platformImage of the PreCachingConfig is longer than 512 characters",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var calls []string
			in := tc.in
			if !tc.noGraph {
				in.Graph = func(channel string) *updategraph.Graph {
					calls = append(calls, channel)
					return graphs[channel]
				}
			}
			got := precache.Derive(in)
			wantReason := tc.wantReason
			if wantReason == "" {
				wantReason = ranv1alpha1.ReasonPrecacheSpecIsWellFormed
			}
			if got.Reason != wantReason || got.Valid != (wantReason == ranv1alpha1.ReasonPrecacheSpecIsWellFormed) {
				t.Errorf("reason %s (valid %t), want %s; message %q", got.Reason, got.Valid, wantReason, got.Message)
			}
			switch {
			case tc.wantMessage == "" && got.Message != precache.WellFormedMessage:
				t.Errorf("message %q, want %q", got.Message, precache.WellFormedMessage)
			case !strings.Contains(got.Message, tc.wantMessage):
				t.Errorf("message %q, want it to contain %q", got.Message, tc.wantMessage)
			}
			want := tc.want
			if want.SpaceRequired == "" && !strings.HasPrefix(tc.wantMessage, "spaceRequired") {
				want.SpaceRequired = "35" // TALM's default, unless the case is about spaceRequired
			}
			if diff := cmp.Diff(want, got.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCalls, calls); diff != "" {
				t.Errorf("graph calls (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeriveDoesNotChangeItsInput checks that the config's lists are copied, not aliased.
func TestDeriveDoesNotChangeItsInput(t *testing.T) {
	cfg := &ranv1alpha1.PreCachingConfigSpec{AdditionalImages: []string{" " + appImage, appImage}, ExcludePrecachePatterns: []string{"aws"}}
	got := precache.Derive(precache.Input{Config: cfg})
	got.Spec.ExcludePrecachePatterns[0] = "changed"
	if diff := cmp.Diff([]string{" " + appImage, appImage}, cfg.AdditionalImages); diff != "" {
		t.Errorf("additionalImages changed (-want +got):\n%s", diff)
	}
	if cfg.ExcludePrecachePatterns[0] != "aws" {
		t.Errorf("excludePrecachePatterns aliased: %v", cfg.ExcludePrecachePatterns)
	}
}
