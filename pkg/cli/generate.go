package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/blang/semver/v4"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/yaml"
)

// The kinds of upgrade object a generated policy asks for.
const (
	KindClusterVersion = "ClusterVersion"
	KindUpgradeConfig  = "UpgradeConfig"
)

// PolicyOptions describe the upgrade policy to generate.
type PolicyOptions struct {
	// Name and Namespace of the policy.
	Name, Namespace string
	// Kind is KindClusterVersion (the cluster-version operator) or KindUpgradeConfig (the
	// managed-upgrade-operator).
	Kind string
	// Version is the release to upgrade to; Channel the channel to set (needed for a
	// y-stream); Image the release image, when clusters must take it by digest.
	Version, Channel, Image string
	// UpgradeAt is when the managed-upgrade-operator starts (UpgradeConfig only).
	UpgradeAt time.Time
	// Wave is the ran.openshift.io/ztp-deploy-wave annotation, 0 for none.
	Wave int
}

// GeneratePolicy returns an inform Policy asking clusters to upgrade as o says, in the shape
// the operator rolls out: one ConfigurationPolicy whose object template sets the target and
// states in status the completion the policy waits for (the ClusterVersion's history shows
// the version Completed, or the UpgradeConfig's history shows it Upgraded), so that a
// cluster is compliant only once its upgrade is done.
func GeneratePolicy(o PolicyOptions) (*policyv1.Policy, error) {
	if _, err := semver.Parse(o.Version); err != nil {
		return nil, fmt.Errorf("--version %q is not a release version such as 4.16.12", o.Version)
	}
	var object map[string]any
	switch o.Kind {
	case KindClusterVersion:
		object = clusterVersionObject(o)
	case KindUpgradeConfig:
		if o.UpgradeAt.IsZero() {
			return nil, fmt.Errorf("an UpgradeConfig needs --upgrade-at, when the upgrade starts")
		}
		object = upgradeConfigObject(o)
	default:
		return nil, fmt.Errorf("--kind must be %s or %s, got %q", KindClusterVersion, KindUpgradeConfig, o.Kind)
	}
	config := map[string]any{
		"apiVersion": "policy.open-cluster-management.io/v1",
		"kind":       "ConfigurationPolicy",
		"metadata":   map[string]any{"name": o.Name + "-config"},
		"spec": map[string]any{
			"remediationAction": "inform",
			"severity":          "high",
			"object-templates":  []any{map[string]any{"complianceType": "musthave", "objectDefinition": object}},
		},
	}
	raw, err := json.Marshal(config)
	if err != nil {
		return nil, err
	}
	p := &policyv1.Policy{
		TypeMeta: metav1.TypeMeta{APIVersion: policyv1.GroupVersion.String(), Kind: policyv1.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Annotations: map[string]string{
			"policy.open-cluster-management.io/standards":  "NIST SP 800-53",
			"policy.open-cluster-management.io/categories": "CM Configuration Management",
			"policy.open-cluster-management.io/controls":   "CM-2 Baseline Configuration",
		}},
		Spec: policyv1.PolicySpec{
			RemediationAction: "inform",
			PolicyTemplates:   []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: raw}}},
		},
	}
	if o.Wave != 0 {
		p.Annotations["ran.openshift.io/ztp-deploy-wave"] = strconv.Itoa(o.Wave)
	}
	return p, nil
}

// clusterVersionObject sets spec.desiredUpdate (and the channel) of the ClusterVersion and
// waits for its history to show the version Completed.
func clusterVersionObject(o PolicyOptions) map[string]any {
	desired := map[string]any{"version": o.Version}
	if o.Image != "" {
		desired["image"] = o.Image
	}
	spec := map[string]any{"desiredUpdate": desired}
	if o.Channel != "" {
		spec["channel"] = o.Channel
	}
	return map[string]any{
		"apiVersion": "config.openshift.io/v1",
		"kind":       KindClusterVersion,
		"metadata":   map[string]any{"name": "version"},
		"spec":       spec,
		"status":     map[string]any{"history": []any{map[string]any{"state": "Completed", "version": o.Version}}},
	}
}

// upgradeConfigObject creates the managed-upgrade-operator's UpgradeConfig and waits for its
// history to show the version Upgraded.
func upgradeConfigObject(o PolicyOptions) map[string]any {
	desired := map[string]any{"version": o.Version}
	if o.Channel != "" {
		desired["channel"] = o.Channel
	}
	if o.Image != "" {
		desired["image"] = o.Image
	}
	return map[string]any{
		"apiVersion": "upgrade.managed.openshift.io/v1alpha1",
		"kind":       KindUpgradeConfig,
		"metadata":   map[string]any{"name": "managed-upgrade-config", "namespace": "openshift-managed-upgrade-operator"},
		"spec": map[string]any{
			"type": "OSD", "upgradeAt": o.UpgradeAt.UTC().Format(time.RFC3339), "PDBForceDrainTimeout": 60,
			"capacityReservation": false, "desired": desired,
		},
		"status": map[string]any{"history": []any{map[string]any{"version": o.Version, "phase": "Upgraded"}}},
	}
}

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
