package gates

import (
	"fmt"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
)

// holds returns, for the clusters that may start, why each that may not must wait: the
// upgrade checks first, then the health check before the upgrade, then the pre-upgrade
// actions. nil when none of them is on.
func holds(in Input) map[string]rollout.Hold {
	checks := []func(Input, string) *rollout.Hold{}
	if in.Verdicts != nil {
		checks = append(checks, checkHold)
	}
	if h := in.Upgrade.Spec.UpgradeChecks; h != nil && h.Health != nil && h.Health.BeforeUpgrade {
		checks = append(checks, healthHold)
	}
	if in.Works && len(in.Upgrade.Spec.PreUpgradeActions) > 0 {
		checks = append(checks, preActionHold)
	}
	if len(checks) == 0 {
		return nil
	}
	out := map[string]rollout.Hold{}
	for _, c := range Unstarted(in.Plan, in.Progress) {
		for _, check := range checks {
			if h := check(in, c); h != nil {
				out[c] = *h
				break
			}
		}
	}
	return out
}

// checkHold holds a cluster whose upgrade check verdict holds it; a ClusterVersion not read
// yet is a check that has not answered.
func checkHold(in Input, cluster string) *rollout.Hold {
	v, ok := in.Verdicts[cluster]
	if !ok || !v.Holds() {
		return nil
	}
	return &rollout.Hold{Cluster: cluster, Reason: v.Reason, Message: fmt.Sprintf("cluster %s is held: %s", cluster, v.Message),
		Pending: v.Reason == upgradecheck.ReasonClusterVersionUnknown}
}

// healthHold holds a cluster whose health check before the upgrade has not answered, or
// found it unhealthy.
func healthHold(in Input, cluster string) *rollout.Hold {
	v, ok := in.HealthBefore[cluster]
	switch {
	case !ok:
		return &rollout.Hold{Cluster: cluster, Reason: upgradecheck.ReasonHealthCheckPending, Pending: true,
			Message: fmt.Sprintf("cluster %s waits for its health check", cluster)}
	case !v.Done:
		return &rollout.Hold{Cluster: cluster, Reason: v.Reason, Pending: true,
			Message: fmt.Sprintf("cluster %s waits for its health check: %s", cluster, v.Message)}
	case !v.Healthy:
		return &rollout.Hold{Cluster: cluster, Reason: v.Reason,
			Message: fmt.Sprintf("cluster %s is held: %s", cluster, v.Message)}
	}
	return nil
}

// preActionHold holds a cluster until its pre-upgrade actions are done; a degraded one
// holds it for good.
func preActionHold(in Input, cluster string) *rollout.Hold {
	o, ok := in.Pre[cluster]
	switch {
	case !ok:
		return &rollout.Hold{Cluster: cluster, Reason: manifestwork.ReasonPreUpgradeActionPending, Pending: true,
			Message: fmt.Sprintf("cluster %s waits for its pre-upgrade actions to be made", cluster)}
	case o.State == manifestwork.Degraded:
		return &rollout.Hold{Cluster: cluster, Reason: manifestwork.ReasonPreUpgradeActionDegraded,
			Message: fmt.Sprintf("cluster %s is held: %s", cluster, o.Message)}
	case o.State != manifestwork.Done:
		return &rollout.Hold{Cluster: cluster, Reason: manifestwork.ReasonPreUpgradeActionPending, Pending: true,
			Message: fmt.Sprintf("cluster %s waits for its pre-upgrade actions: %s", cluster, o.Message)}
	}
	return nil
}

// verifications says whether clusters that completed their policies are verified, and the
// answer on each that has one (a cluster without an entry waits): the health check after
// the upgrade and the post-upgrade actions together.
func verifications(in Input) (bool, map[string]rollout.Verification) {
	h := in.Upgrade.Spec.UpgradeChecks
	health := h != nil && h.Health != nil && h.Health.AfterUpgrade
	actions := in.Works && len(in.Upgrade.Spec.PostUpgradeActions) > 0
	if !health && !actions {
		return false, nil
	}
	out := map[string]rollout.Verification{}
	add := func(c string) {
		if v := verification(in, c, health, actions); v.Done {
			out[c] = v
		}
	}
	for c := range in.HealthAfter {
		add(c)
	}
	for c := range in.Post {
		add(c)
	}
	return true, out
}

// verification is the answer on one cluster: a degraded post-upgrade action fails it at
// once; a health check that found it unhealthy fails it, even while its actions run;
// otherwise it completes once its actions are done and its check found it healthy.
func verification(in Input, cluster string, health, actions bool) rollout.Verification {
	o, observed := in.Post[cluster]
	if actions && observed && o.State == manifestwork.Degraded {
		return rollout.Verification{Done: true, Reason: manifestwork.ReasonPostUpgradeActionDegraded, Message: o.Message}
	}
	v := rollout.Verification{Done: true, Healthy: true}
	if health {
		r := in.HealthAfter[cluster]
		v = rollout.Verification{Done: r.Done, Healthy: r.Healthy, Reason: r.Reason, Message: r.Message}
	}
	if actions && (!observed || o.State != manifestwork.Done) && (!v.Done || v.Healthy) {
		return rollout.Verification{}
	}
	return v
}

// Unstarted are the planned clusters that have not started: those of the batches after the
// current one and the current batch's clusters that are not working or done; every planned
// cluster before the start.
func Unstarted(p plan.Plan, progress rollout.Progress) []string {
	var out []string
	for i, b := range p.Batches {
		switch {
		case progress.Started.IsZero() || i > progress.Batch:
			out = append(out, b.Clusters...)
		case i == progress.Batch && !progress.BatchEnded:
			for _, c := range b.Clusters {
				if st := progress.Clusters[c].State; st == "" || st == ranv1alpha1.ClusterPending {
					out = append(out, c)
				}
			}
		}
	}
	return out
}
