package ibgu

import (
	"maps"
	"slices"
	"sort"
	"strings"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// Child is what the controller read of the ClusterGroupUpgrade of one plan step.
type Child struct {
	// Ended is true once the step's rollout ended (its Succeeded condition is written),
	// whether its clusters completed or not.
	Ended bool
	// Clusters are the step's clusters that started, by name, as its batch records show
	// them.
	Clusters map[string]Progress
}

// Progress is where one cluster of a step stands.
type Progress struct {
	State ranv1alpha1.ClusterState
	// Template is the ManifestWork template the cluster is on (or ended on); empty once
	// it completed every one.
	Template string
	// Message says why it failed, timed out or was held.
	Message string
}

// Next says where the plan stands, from the ClusterGroupUpgrades of its steps by index
// (missing: not made yet). Steps run one after another: the first step without a
// ClusterGroupUpgrade is the one to make (create), unless the step before it has not ended
// (then running is that step); done is true once every step ended.
func Next(plan []lcmv1alpha1.PlanItem, children map[int]*Child) (create, running int, done bool) {
	for i := range plan {
		c, ok := children[i]
		switch {
		case !ok:
			return i, -1, false
		case !c.Ended:
			return -1, i, false
		}
	}
	return -1, -1, true
}

// Clusters is the status of each cluster that started a step, sorted by name: the actions
// it completed, those that failed with why, and the one it is on. A cluster that completed
// a step completed each of its actions; one that timed out or failed completed the actions
// before the one it was on, which failed; one that was held before it started failed the
// step's first action.
func Clusters(ibgu *lcmv1alpha1.ImageBasedGroupUpgrade, children map[int]*Child) []lcmv1alpha1.ClusterState {
	byName := map[string]*lcmv1alpha1.ClusterState{}
	state := func(name string) *lcmv1alpha1.ClusterState {
		if s, ok := byName[name]; ok {
			return s
		}
		s := &lcmv1alpha1.ClusterState{Name: name}
		byName[name] = s
		return s
	}
	for i, item := range ibgu.Spec.Plan {
		c, ok := children[i]
		if !ok {
			break
		}
		for _, name := range slices.Sorted(maps.Keys(c.Clusters)) {
			p := c.Clusters[name]
			if p.State == ranv1alpha1.ClusterPending || p.State == "" {
				continue
			}
			record(state(name), ibgu.Name, item.Actions, p)
		}
	}
	out := make([]lcmv1alpha1.ClusterState, 0, len(byName))
	for _, s := range byName {
		out = append(out, *s)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// record adds what one step says of a cluster to its status.
func record(s *lcmv1alpha1.ClusterState, ibguName string, actions []lcmv1alpha1.Action, p Progress) {
	if p.State == ranv1alpha1.ClusterCompleted {
		for _, a := range actions {
			s.CompletedActions = append(s.CompletedActions, lcmv1alpha1.ActionMessage{Action: a})
		}
		return
	}
	at := 0 // the action the cluster is on: the first unless its template says
	for j, a := range actions {
		if TemplateName(ibguName, a) == p.Template {
			at = j
		}
	}
	for _, a := range actions[:at] {
		s.CompletedActions = append(s.CompletedActions, lcmv1alpha1.ActionMessage{Action: a})
	}
	current := lcmv1alpha1.ActionMessage{Action: actions[at], Message: p.Message}
	if p.State == ranv1alpha1.ClusterInProgress {
		s.CurrentAction = &current
		return
	}
	s.FailedActions = append(s.FailedActions, current)
}

// Labels are the ManagedCluster labels a cluster's status calls for: one per action it
// completed or failed (Label), in the order it went through them, until it completed one
// that brings it back to Idle (Abort, AbortOnFailure, FinalizeUpgrade, FinalizeRollback):
// then none, and clean is true: every label of an earlier run is to be removed, so that a
// later ImageBasedGroupUpgrade starts from a clean cluster.
func Labels(s lcmv1alpha1.ClusterState) (labels []string, clean bool) {
	for _, a := range s.FailedActions {
		labels = append(labels, Label(a.Action, Failed))
	}
	for _, a := range s.CompletedActions {
		switch a.Action {
		case lcmv1alpha1.ActionAbort, lcmv1alpha1.ActionAbortOnFailure, lcmv1alpha1.ActionFinalizeUpgrade, lcmv1alpha1.ActionFinalizeRollback:
			return nil, true
		}
		labels = append(labels, Label(a.Action, Completed))
	}
	return labels, false
}

// IsLabel reports whether a ManagedCluster label is one that Labels writes.
func IsLabel(key string) bool {
	rest, ok := strings.CutPrefix(key, "lcm.openshift.io/ibgu-")
	if !ok {
		return false
	}
	action, outcome, ok := strings.Cut(rest, "-")
	return ok && action != "" && !strings.Contains(outcome, "-") && (outcome == string(Completed) || outcome == string(Failed))
}
