// Package ztp decides, for GitOps ZTP, the ClusterGroupUpgrade that takes a newly installed
// cluster through its policies: the inform policies placed on it that carry the
// ran.openshift.io/ztp-deploy-wave annotation, wave by wave. It is pure: the controller that
// watches ManagedClusters gathers the policies and applies the result.
package ztp

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// Names of the ZTP flow, TALM's.
const (
	// Namespace holds the ClusterGroupUpgrades of the ZTP flow.
	Namespace = "ztp-install"
	// WaveAnnotation orders a policy among a cluster's ZTP policies (an integer).
	WaveAnnotation = "ran.openshift.io/ztp-deploy-wave"
	// DoneLabel marks a cluster that went through its ZTP policies.
	DoneLabel = "ztp-done"
	// RunningLabel marks a cluster going through them.
	RunningLabel = "ztp-running"
	// defaultTimeout is how long a cluster's ZTP rollout may take, in minutes.
	defaultTimeout = 240
)

// Policy is what the ZTP flow needs of a policy placed on a cluster.
type Policy struct {
	// Name is the root policy's name, Namespace its namespace.
	Name, Namespace string
	// Annotations are the root policy's annotations.
	Annotations map[string]string
	// Inform is true for a policy in inform mode.
	Inform bool
}

// WavePolicy is a policy of a cluster's ZTP flow with its wave.
type WavePolicy struct {
	Name, Namespace string
	Wave            int
}

// Waves returns the inform policies that carry a wave, ordered by wave then name; the
// policies whose wave is not an integer are returned apart, to be reported.
func Waves(policies []Policy) (ordered []WavePolicy, invalid []string) {
	for _, p := range policies {
		value, ok := p.Annotations[WaveAnnotation]
		if !ok || !p.Inform {
			continue
		}
		wave, err := strconv.Atoi(value)
		if err != nil {
			invalid = append(invalid, fmt.Sprintf("%s/%s (%s: %q)", p.Namespace, p.Name, WaveAnnotation, value))
			continue
		}
		ordered = append(ordered, WavePolicy{Name: p.Name, Namespace: p.Namespace, Wave: wave})
	}
	slices.SortFunc(ordered, func(a, b WavePolicy) int {
		return cmp.Or(cmp.Compare(a.Wave, b.Wave), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Namespace, b.Namespace))
	})
	slices.Sort(invalid)
	return ordered, invalid
}

// Upgrade is the ClusterGroupUpgrade that takes cluster through its wave policies: named
// after the cluster in Namespace, enabled, one cluster at a time; beforeEnable labels the
// cluster RunningLabel, afterCompletion labels it DoneLabel and removes RunningLabel. It is
// nil when the cluster has no wave policy: the caller labels it DoneLabel at once.
func Upgrade(cluster string, waves []WavePolicy) *ranv1alpha1.ClusterGroupUpgrade {
	if len(waves) == 0 {
		return nil
	}
	names := make([]string, 0, len(waves))
	for _, w := range waves {
		names = append(names, w.Name)
	}
	return &ranv1alpha1.ClusterGroupUpgrade{
		TypeMeta:   metav1.TypeMeta{APIVersion: ranv1alpha1.GroupVersion.String(), Kind: "ClusterGroupUpgrade"},
		ObjectMeta: metav1.ObjectMeta{Name: cluster, Namespace: Namespace},
		Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
			Clusters:            []string{cluster},
			ManagedPolicies:     names,
			Enable:              ptr.To(true),
			RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: 1, Timeout: defaultTimeout},
			Actions: ranv1alpha1.Actions{
				BeforeEnable: &ranv1alpha1.BeforeEnable{ClusterActions: ranv1alpha1.ClusterActions{
					AddClusterLabels: map[string]ranv1alpha1.LabelValue{RunningLabel: ""}}},
				AfterCompletion: &ranv1alpha1.AfterCompletion{ClusterActions: ranv1alpha1.ClusterActions{
					AddClusterLabels: map[string]ranv1alpha1.LabelValue{DoneLabel: ""}, RemoveClusterLabels: []string{RunningLabel}}},
			},
		},
	}
}
