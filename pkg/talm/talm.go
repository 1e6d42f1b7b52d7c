// Package talm computes the fields of a ClusterGroupUpgrade's status that TALM writes, with
// TALM's meaning at every step, from what the rollout decided: the remediation plan as lists
// of names, status.status (the running batch and each of its clusters' progress),
// status.clusters (the clusters done with, in the order they were), the names of the objects
// a rollout makes, the managed policies' Subscriptions, and the precache states in TALM's
// words. It also orders conditions as TALM does and keeps the whole within
// ranv1alpha1.TALMStatusBudget (Shorten). It is pure: values in, status fields out.
package talm

import (
	workv1 "open-cluster-management.io/api/work/v1"

	"slices"
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

// RemediationPlan is the plan as TALM writes it: one list of cluster names a batch, canary
// batches first.
func RemediationPlan(p plan.Plan) [][]string {
	if len(p.Batches) == 0 {
		return nil
	}
	out := make([][]string, len(p.Batches))
	for i, b := range p.Batches {
		out[i] = slices.Clone(b.Clusters)
	}
	return out
}

// ComputedMaxConcurrency is the size of the non-canary batches, as TALM computes it from
// spec.remediationStrategy.maxConcurrency and the number of selected clusters (those already
// compliant included): maxConcurrency when it is positive and below that number, else that
// number.
func ComputedMaxConcurrency(maxConcurrency, selected int) int {
	if maxConcurrency > 0 && maxConcurrency < selected {
		return maxConcurrency
	}
	return selected
}

// Steps are the names a cluster works through: the managed policies for upgrade, then the
// ManifestWork templates.
type Steps struct {
	Policies  []string
	Templates []string
}

// Progress is TALM's status.status. While a batch runs (or the rollout waits to start the
// next one, an addition of ours) it names that batch and where each of its clusters stands;
// once the rollout ended it keeps only startedAt and completedAt (ended: when the last batch
// ended, Completed or not). Before the start it is empty.
func Progress(d rollout.Decision, p plan.Plan, steps Steps, ended time.Time) ranv1alpha1.UpgradeStatus {
	pr := d.Progress
	var out ranv1alpha1.UpgradeStatus
	if pr.Started.IsZero() {
		return out
	}
	out.StartedAt = rollout.Stamp(pr.Started)
	if d.State != ranv1alpha1.StateNotCompleted {
		out.CompletedAt = rollout.Stamp(ended)
		return out
	}
	batch := pr.Batch
	clusters := pr.Clusters
	if d.Waiting != nil && pr.BatchEnded {
		// Between two batches: the next one is current, none of its clusters started.
		batch, clusters = d.Waiting.Batch-1, nil
	} else {
		out.CurrentBatchStartedAt = rollout.Stamp(pr.BatchStarted)
	}
	if batch < 0 || batch >= len(p.Batches) {
		return out
	}
	out.CurrentBatch = batch + 1
	out.CurrentBatchRemediationProgress = map[string]*ranv1alpha1.ClusterRemediationProgress{}
	for _, name := range p.Batches[batch].Clusters {
		out.CurrentBatchRemediationProgress[name] = remediation(clusters[name], steps)
	}
	return out
}

// remediation is one cluster's entry: NotStarted while it waits, InProgress with the index of
// the policy (or ManifestWork template) it works on, Completed once done. The states TALM does
// not have (TimedOut, Failed and Held, which our per-cluster deadline, health checks and
// upgrade checks bring) keep their own names.
func remediation(c rollout.Cluster, steps Steps) *ranv1alpha1.ClusterRemediationProgress {
	out := &ranv1alpha1.ClusterRemediationProgress{}
	switch c.State {
	case "", ranv1alpha1.ClusterPending:
		out.State = ranv1alpha1.RemediationNotStarted
	case ranv1alpha1.ClusterCompleted:
		out.State = ranv1alpha1.RemediationCompleted
	case ranv1alpha1.ClusterInProgress:
		out.State = ranv1alpha1.RemediationInProgress
		i := c.Policy
		switch {
		case i < len(steps.Policies):
			out.PolicyIndex = &i
		case i-len(steps.Policies) < len(steps.Templates):
			j := i - len(steps.Policies)
			out.ManifestWorkIndex = &j
		}
		if c.CompliantSince != nil {
			out.FirstCompliantAt = rollout.Stamp(*c.CompliantSince)
		}
	default:
		out.State = string(c.State)
	}
	return out
}

// Finished is a cluster done with, for status.clusters.
type Finished struct {
	Name  string
	State ranv1alpha1.ClusterState
	// Step is the policy or ManifestWork template a cluster that did not complete was on.
	Step  string
	Since time.Time
}

// FinishedFrom gathers the clusters done with, by batch: those of the batches the records
// show ended (recorded, by name), those the decision ended now, and the done clusters of the
// running batch. Later sources win.
func FinishedFrom(recorded map[string]ranv1alpha1.ClusterProgress, d rollout.Decision, steps Steps) map[string]Finished {
	out := map[string]Finished{}
	for name, cp := range recorded {
		f := Finished{Name: name, State: cp.State, Step: cp.CurrentPolicy}
		if cp.Since != nil {
			f.Since = cp.Since.Time
		}
		out[name] = f
	}
	names := slices.Concat(steps.Policies, steps.Templates)
	add := func(clusters map[string]rollout.Cluster) {
		for name, c := range clusters {
			if !c.Terminal() {
				continue
			}
			f := Finished{Name: name, State: c.State, Since: c.Since}
			if c.Policy < len(names) && c.State != ranv1alpha1.ClusterCompleted {
				f.Step = names[c.Policy]
			}
			out[name] = f
		}
	}
	for _, e := range d.Ended {
		add(e.Clusters)
	}
	if !d.Progress.Started.IsZero() {
		add(d.Progress.Clusters)
	}
	return out
}

// Clusters is TALM's status.clusters: first the selected clusters that were compliant with
// every managed policy when the rollout started (complete), then the clusters of each batch
// in plan order that are done with, each batch's in the order they finished. A cluster that
// did not complete names the policy, or the ManifestWork, it was on.
func Clusters(compliantAtStart []string, p plan.Plan, finished map[string]Finished, steps Steps) []ranv1alpha1.ClusterFinalState {
	var out []ranv1alpha1.ClusterFinalState
	for _, name := range compliantAtStart {
		out = append(out, ranv1alpha1.ClusterFinalState{Name: name, State: ranv1alpha1.TALMClusterComplete})
	}
	for _, b := range p.Batches {
		var done []Finished
		for _, name := range b.Clusters {
			if f, ok := finished[name]; ok {
				done = append(done, f)
			}
		}
		slices.SortStableFunc(done, func(x, y Finished) int { return x.Since.Compare(y.Since) })
		for _, f := range done {
			out = append(out, finalState(f, steps))
		}
	}
	return out
}

func finalState(f Finished, steps Steps) ranv1alpha1.ClusterFinalState {
	out := ranv1alpha1.ClusterFinalState{Name: f.Name}
	switch f.State {
	case ranv1alpha1.ClusterCompleted:
		out.State = ranv1alpha1.TALMClusterComplete
		return out
	case ranv1alpha1.ClusterTimedOut:
		out.State = ranv1alpha1.TALMClusterTimedOut
	case ranv1alpha1.ClusterHeld:
		out.State = ranv1alpha1.TALMClusterHeld
	default:
		out.State = ranv1alpha1.TALMClusterFailed
	}
	switch {
	case f.Step == "":
	case slices.Contains(steps.Templates, f.Step) && !slices.Contains(steps.Policies, f.Step):
		out.CurrentManifestWork = &ranv1alpha1.ManifestWorkStatus{Name: f.Step}
	default:
		// TALM writes NonCompliant: a cluster leaves a policy once it complies.
		out.CurrentPolicy = &ranv1alpha1.PolicyStatus{Name: f.Step, Status: "NonCompliant"}
	}
	return out
}

// CompliantAtStart are the clusters a started rollout found compliant with every managed
// policy: the names status.clusters listed before that are in no batch of the plan.
func CompliantAtStart(before []ranv1alpha1.ClusterFinalState, p plan.Plan) []string {
	planned := map[string]bool{}
	for _, b := range p.Batches {
		for _, c := range b.Clusters {
			planned[c] = true
		}
	}
	var out []string
	for _, c := range before {
		if !planned[c.Name] {
			out = append(out, c.Name)
		}
	}
	return out
}

// workMessageLimit bounds a condition message copied from a ManifestWork's status.
const workMessageLimit = 256

// WorkStatus is a ManifestWork's resource status as status.clusters holds it (TALM's
// currentManifestWork.status): its first ranv1alpha1.ManifestWorkManifestLimit manifests,
// each condition's message cut to workMessageLimit characters. Nil when it reports nothing.
func WorkStatus(rs workv1.ManifestResourceStatus) *workv1.ManifestResourceStatus {
	if len(rs.Manifests) == 0 {
		return nil
	}
	out := &workv1.ManifestResourceStatus{}
	for _, m := range rs.Manifests[:min(len(rs.Manifests), ranv1alpha1.ManifestWorkManifestLimit)] {
		c := *m.DeepCopy()
		for i := range c.Conditions {
			c.Conditions[i].Message = rollout.Truncate(c.Conditions[i].Message, workMessageLimit)
		}
		out.Manifests = append(out.Manifests, c)
	}
	return out
}
