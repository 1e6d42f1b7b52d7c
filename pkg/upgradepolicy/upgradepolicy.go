// Package upgradepolicy builds the inform policies that ask clusters for a platform upgrade,
// in the shape the operator rolls out: `kubectl cgu generate-policy` prints them, a
// ManagedClustersUpgrade writes them. It is pure.
package upgradepolicy

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/blang/semver/v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
)

// The kinds of upgrade object a generated policy asks for.
const (
	KindClusterVersion = "ClusterVersion"
	KindUpgradeConfig  = "UpgradeConfig"
)

// Options describe the upgrade policy to generate.
type Options struct {
	// Name and Namespace of the policy.
	Name, Namespace string
	// Kind is KindClusterVersion (the cluster-version operator) or KindUpgradeConfig (the
	// managed-upgrade-operator).
	Kind string
	// Version is the release to upgrade to; Channel the channel to set (needed for a
	// y-stream); Image the release image, when clusters must take it by digest.
	Version, Channel, Image string
	// Upstream is the update service the ClusterVersion is pointed at (ClusterVersion only).
	Upstream string
	// UpgradeAt is when the managed-upgrade-operator starts (UpgradeConfig only).
	UpgradeAt time.Time
	// Wave is the ran.openshift.io/ztp-deploy-wave annotation, 0 for none.
	Wave int
}

// Generate returns an inform Policy asking clusters to upgrade as o says, in the shape
// the operator rolls out: one ConfigurationPolicy whose object template sets the target and
// states in status the completion the policy waits for (the ClusterVersion's history shows
// the version Completed, or the UpgradeConfig's history shows it Upgraded), so that a
// cluster is compliant only once its upgrade is done.
func Generate(o Options) (*policyv1.Policy, error) {
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
func clusterVersionObject(o Options) map[string]any {
	desired := map[string]any{"version": o.Version}
	if o.Image != "" {
		desired["image"] = o.Image
	}
	spec := map[string]any{"desiredUpdate": desired}
	if o.Channel != "" {
		spec["channel"] = o.Channel
	}
	if o.Upstream != "" {
		spec["upstream"] = o.Upstream
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
func upgradeConfigObject(o Options) map[string]any {
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
