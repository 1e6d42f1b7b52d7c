package cli

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/yaml"

	"github.com/cgu-operator/cgu-operator/pkg/upgradepolicy"
)

// The kinds of upgrade object a generated policy asks for.
const (
	KindClusterVersion = upgradepolicy.KindClusterVersion
	KindUpgradeConfig  = upgradepolicy.KindUpgradeConfig
)

// PolicyOptions describe the upgrade policy to generate.
type PolicyOptions = upgradepolicy.Options

// GeneratePolicy returns the inform upgrade Policy o describes (upgradepolicy.Generate).
func GeneratePolicy(o PolicyOptions) (*policyv1.Policy, error) { return upgradepolicy.Generate(o) }

type generateOptions struct {
	*env
	policy    PolicyOptions
	upgradeAt string
}

func newGeneratePolicyCommand(e *env) *cobra.Command {
	o := &generateOptions{env: e}
	cmd := &cobra.Command{
		Use:   "generate-policy NAME",
		Short: "Print an inform upgrade Policy for a release, to place and roll out with a ClusterGroupUpgrade",
		Long: `Print an inform Policy that asks its clusters to upgrade to a release, in the shape
ClusterGroupUpgrades roll out: a ConfigurationPolicy that sets the target and says in status the
completion it waits for, so that a cluster turns compliant only once its upgrade is done.

With --kind ClusterVersion (the default) it sets the ClusterVersion's spec.desiredUpdate (and
spec.channel with --channel, which a y-stream update needs) and waits for status.history to show
the version Completed. With --kind UpgradeConfig it creates the managed-upgrade-operator's
UpgradeConfig (type OSD, upgradeAt, desired) and waits for its history to show the version
Upgraded. The Policy is printed as YAML; nothing is written to the hub.`,
		Example: `  kubectl cgu generate-policy ocp-4.16.12 --version 4.16.12 -n ztp-policies
  kubectl cgu generate-policy ocp-4.17.0 --version 4.17.0 --channel stable-4.17 -n ztp-policies
  kubectl cgu generate-policy muo-4.16.12 --kind UpgradeConfig --version 4.16.12 --channel stable-4.16 \
      --upgrade-at 2026-12-01T01:00:00Z -n ztp-policies`,
		Args: exactlyOneName,
		RunE: runE(o.run),
	}
	f := cmd.Flags()
	f.StringVar(&o.policy.Kind, "kind", KindClusterVersion, "ClusterVersion or UpgradeConfig")
	f.StringVar(&o.policy.Version, "version", "", "The release version to upgrade to (required)")
	f.StringVar(&o.policy.Channel, "channel", "", "The channel to set; a y-stream update needs the new minor's channel")
	f.StringVar(&o.policy.Image, "image", "", "The release image, by digest, for clusters that must take exactly it")
	f.StringVar(&o.upgradeAt, "upgrade-at", "", "When the managed-upgrade-operator starts, RFC 3339 (UpgradeConfig only)")
	f.IntVar(&o.policy.Wave, "wave", 0, "The ran.openshift.io/ztp-deploy-wave annotation; 0 for none")
	return cmd
}

func (o *generateOptions) run(_ context.Context, args []string) error {
	o.policy.Name = args[0]
	namespace, _, err := o.config.ToRawKubeConfigLoader().Namespace()
	if err != nil || namespace == "" {
		namespace = "default"
	}
	o.policy.Namespace = namespace
	if o.upgradeAt != "" {
		if o.policy.UpgradeAt, err = time.Parse(time.RFC3339, o.upgradeAt); err != nil {
			return usageError("--upgrade-at %q is not an RFC 3339 time such as 2026-12-01T01:00:00Z", o.upgradeAt)
		}
	}
	p, err := GeneratePolicy(o.policy)
	if err != nil {
		return usageError("%s", err)
	}
	return writePolicy(o.IOStreams.Out, p)
}

// writePolicy prints a policy as YAML, without the empty status a new object has.
func writePolicy(w io.Writer, p *policyv1.Policy) error {
	data, err := PolicyYAML(p)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// PolicyYAML is a generated policy as YAML, without status.
func PolicyYAML(p *policyv1.Policy) ([]byte, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
	if err != nil {
		return nil, err
	}
	delete(obj, "status")
	return yaml.Marshal(obj)
}
