package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/cli"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

// The release-named demo's mixed fleet: every third cluster runs eusFrom and reaches
// toVersion only through eusHop, in eusChannel; the others run fromVersion.
const (
	eusChannel = "eus-4.16"
	eusFrom    = "4.14.30"
	eusHop     = "4.15.40"
	// operatorsNS holds the demo clusters' two operators, both waiting for an approved upgrade.
	operatorsNS = "openshift-operators"
)

// mcuSpoke makes a demo cluster one of a mixed fleet: every third runs eusFrom; each has the
// SR-IOV and PTP operators installed with Manual approval and an upgrade waiting.
func mcuSpoke(i int, s *sim.SpokeSpec) {
	s.Channel = eusChannel
	if i%3 == 2 {
		s.Version = eusFrom
	}
	for _, pkg := range []string{"sriov-network-operator", "ptp-operator"} {
		s.Operators = append(s.Operators, sim.InstalledOperator{Package: pkg, Namespace: operatorsNS, Channel: "stable",
			InstalledCSV: pkg + ".v4.16.0", Available: []string{pkg + ".v4.16.1"}, Approval: sim.ApprovalManual})
	}
}

// tuneMCU applies the demo's --max-concurrency to a ManagedClustersUpgrade, and names its
// canaries as the fleet's clusters are.
func (d *demo) tuneMCU(o *unstructured.Unstructured) error {
	path := []string{"spec", "upgradeStrategy", "canaryClusters", "clusterSelector", "matchExpressions"}
	expressions, _, err := unstructured.NestedSlice(o.Object, path...)
	if err != nil {
		return err
	}
	for i := range expressions {
		e, ok := expressions[i].(map[string]any)
		if !ok {
			return fmt.Errorf("%s[%d] is not an object", strings.Join(path, "."), i)
		}
		values, found, err := unstructured.NestedStringSlice(e, "values")
		if err != nil {
			return err
		}
		if found {
			if err := unstructured.SetNestedStringSlice(e, d.opts.fleetClusters(values), "values"); err != nil {
				return err
			}
		}
	}
	if len(expressions) > 0 {
		if err := unstructured.SetNestedSlice(o.Object, expressions, path...); err != nil {
			return err
		}
	}
	return unstructured.SetNestedField(o.Object, int64(max(d.opts.maxConcurrency, 1)), "spec", "upgradeStrategy", "maxConcurrency")
}

// playMCU draws the release-named upgrade until it ends, then shows it as `kubectl cgu mcu`
// does; it returns the exit code: 0 once every cluster runs the release.
func (d *demo) playMCU(ctx context.Context) (int, error) {
	start := time.Now()
	ticker := time.NewTicker(frameRate)
	defer ticker.Stop()
	var m *ranv1alpha1.ManagedClustersUpgrade
	for {
		var err error
		if m, err = d.readMCU(ctx); err != nil {
			return 1, err
		}
		d.term.mcuChanges(m, time.Since(start))
		if ended(m) {
			break
		}
		if time.Since(start) > 10*time.Minute {
			return 1, fmt.Errorf("the upgrade did not end within 10 minutes")
		}
		select {
		case <-ctx.Done():
			return 1, fmt.Errorf("interrupted")
		case <-ticker.C:
		}
	}
	d.term.step("Ended in %s; as kubectl cgu mcu %s -n %s shows it", clock(time.Since(start)), m.Name, m.Namespace)
	if err := cli.ShowManagedClustersUpgrade(d.term.w, m); err != nil {
		return 1, err
	}
	if !meta.IsStatusConditionTrue(m.Status.Conditions, ranv1alpha1.MCUConditionComplete) {
		fmt.Fprintln(d.term.w, d.term.style(red, "Not every cluster runs "+m.Spec.ClusterVersion.Version+"."))
		return 1, nil
	}
	fmt.Fprintln(d.term.w, d.term.style(green, "Every cluster runs "+m.Spec.ClusterVersion.Version+"."))
	return 0, nil
}

// ended tells whether the rollout is over: its ClusterGroupUpgrade ended, or it refused.
func ended(m *ranv1alpha1.ManagedClustersUpgrade) bool {
	if m.Status.ObservedGeneration != m.Generation {
		return false
	}
	if c := meta.FindStatusCondition(m.Status.Conditions, ranv1alpha1.MCUConditionInProgress); c != nil && c.Reason == "UpgradeEnded" {
		return true
	}
	c := meta.FindStatusCondition(m.Status.Conditions, ranv1alpha1.MCUConditionApplied)
	return c != nil && c.Status == "False" && c.Reason != "WaitingForPolicies" && c.Reason != "UpdateGraphUnavailable"
}

func (d *demo) readMCU(ctx context.Context) (*ranv1alpha1.ManagedClustersUpgrade, error) {
	m := &ranv1alpha1.ManagedClustersUpgrade{}
	if err := d.cache.Get(ctx, d.cgu, m); err != nil {
		return nil, fmt.Errorf("reading the ManagedClustersUpgrade: %w", err)
	}
	return m, nil
}

// mcuChanges prints what changed since the last frame: the plan once made, then the
// clusters' summary each time it moves.
func (t *terminal) mcuChanges(m *ranv1alpha1.ManagedClustersUpgrade, elapsed time.Duration) {
	stamp := fmt.Sprintf("[%6s]", clock(elapsed))
	st := m.Status
	if st.Upgrade != "" {
		var stages []string
		for _, s := range st.Stages {
			stages = append(stages, fmt.Sprintf("update %d to %s (%d clusters)", s.Index, s.Version, s.Clusters))
		}
		t.printOnce("plan", "made", "%s Planned: %s; ClusterGroupUpgrade %s rolls it out", stamp, strings.Join(stages, ", "), st.Upgrade)
	}
	if s := st.ClustersSummary; s != nil && st.Upgrade != "" {
		line := fmt.Sprintf("%d/%d on %s, %d upgrading, %d failed, %d held", s.Complete, s.Total, m.Spec.ClusterVersion.Version, s.PartialUpgrade, s.Failed, s.Held)
		t.printOnce("summary", line, "%s   %s", stamp, line)
	}
}
