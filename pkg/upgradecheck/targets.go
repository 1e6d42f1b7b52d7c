package upgradecheck

import (
	"strings"

	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	"github.com/cgu-operator/cgu-operator/pkg/policyobjects"
)

// The kinds of object a Target can come from.
const (
	// KindClusterVersion is the cluster-version operator's config.openshift.io ClusterVersion.
	KindClusterVersion = "ClusterVersion"

	// KindUpgradeConfig is the managed-upgrade-operator's upgrade.managed.openshift.io
	// UpgradeConfig.
	KindUpgradeConfig = "UpgradeConfig"
)

const (
	clusterVersionGroup = "config.openshift.io"
	upgradeConfigGroup  = "upgrade.managed.openshift.io"
	clusterVersionName  = "version"
)

// Target is one upgrade a policy asks of the clusters it is placed on.
type Target struct {
	// Policy is the name of the policy.
	Policy string

	// Kind is KindClusterVersion or KindUpgradeConfig.
	Kind string

	// Version, Image and Channel are the release asked for, as the object writes them;
	// empty when not set or when Templated left them out.
	Version, Image, Channel string

	// Templated says that at least one of these fields is a hub or spoke template ("{{"),
	// resolved only on the hub or the spoke: the field is left empty and the target must
	// be treated as unknown.
	Templated bool
}

// Targets returns what a policy asks clusters to upgrade to, in template order: one Target
// per musthave or mustonlyhave object template of a ConfigurationPolicy whose object is a
// ClusterVersion named "version" (spec.desiredUpdate.version and .image, spec.channel) or an
// UpgradeConfig (spec.desired.version, .image and .channel). See the package documentation
// for templates and object-templates-raw. A policy without such objects has no targets. The
// error names the policy template index whose JSON, or a field of it, cannot be read.
func Targets(p *policyv1.Policy) ([]Target, error) {
	if p == nil {
		return nil, nil
	}
	return policyobjects.Collect(p, []string{KindClusterVersion, KindUpgradeConfig},
		func(obj map[string]any) (Target, bool, error) {
			t, ok, err := objectTarget(obj)
			t.Policy = p.Name
			return t, ok, err
		},
		func(kind string) Target { return Target{Policy: p.Name, Kind: kind, Templated: true} })
}

// objectTarget returns the target an object definition sets, if it is one of the known kinds.
func objectTarget(obj map[string]any) (Target, bool, error) {
	kind, _, err := policyobjects.String(obj, "kind")
	if err != nil {
		return Target{}, false, err
	}
	apiVersion, apiTemplated, err := policyobjects.String(obj, "apiVersion")
	if err != nil {
		return Target{}, false, err
	}
	group, _, _ := strings.Cut(apiVersion, "/")
	switch {
	case kind == KindClusterVersion && (group == clusterVersionGroup || apiTemplated):
		return clusterVersionTarget(obj)
	case kind == KindUpgradeConfig && (group == upgradeConfigGroup || apiTemplated):
		return fields(obj, KindUpgradeConfig, []string{"spec", "desired", "version"},
			[]string{"spec", "desired", "image"}, []string{"spec", "desired", "channel"})
	}
	return Target{}, false, nil
}

// clusterVersionTarget reads a ClusterVersion object, which is a target only when it names
// the one ClusterVersion, "version" (or names none, or a template).
func clusterVersionTarget(obj map[string]any) (Target, bool, error) {
	name, templated, err := policyobjects.String(obj, "metadata", "name")
	if err != nil {
		return Target{}, false, err
	}
	if name != "" && name != clusterVersionName && !templated {
		return Target{}, false, nil
	}
	return fields(obj, KindClusterVersion, []string{"spec", "desiredUpdate", "version"},
		[]string{"spec", "desiredUpdate", "image"}, []string{"spec", "channel"})
}

// fields builds a Target of kind from the strings at the paths of its version, image and
// channel.
func fields(obj map[string]any, kind string, version, image, channel []string) (Target, bool, error) {
	t := Target{Kind: kind}
	for _, f := range []struct {
		path []string
		into *string
	}{{version, &t.Version}, {image, &t.Image}, {channel, &t.Channel}} {
		value, templated, err := policyobjects.String(obj, f.path...)
		if err != nil {
			return Target{}, false, err
		}
		*f.into = value
		t.Templated = t.Templated || templated
	}
	return t, true, nil
}
