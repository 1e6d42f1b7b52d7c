package ibgu

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"unicode/utf8"

	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// Child is what the controller read of the ClusterGroupUpgrade of one plan step, or of a
// step that was skipped.
type Child struct {
	// Upgrade is the ClusterGroupUpgrade's name; empty for a skipped step.
	Upgrade string
	// Skipped is true for a step that selected no cluster when its turn came.
	Skipped bool
	// Ended is true once the step's rollout ended (its Succeeded condition is written),
	// whether its clusters completed or not, and for a skipped step.
	Ended bool
	// State and Message are the ClusterGroupUpgrade's state and message.
	State   ranv1alpha1.UpgradeState
	Message string
	// StartedAt and CompletedAt are when its rollout started and ended, zero until then.
	StartedAt, CompletedAt time.Time
	// Counts are its counts of clusters by state.
	Counts ranv1alpha1.ClusterCounts
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
	// Reason is the CamelCase reason of its state, when it has one.
	Reason string
	// Message is what the spoke said of the action the cluster is on or failed.
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
	if current.Message == "" {
		current.Message = failure(actions[at], p)
	}
	s.FailedActions = append(s.FailedActions, current)
}

// failure says why an action failed when the spoke said nothing.
func failure(action lcmv1alpha1.Action, p Progress) string {
	why := ""
	if p.Reason != "" {
		why = " (" + p.Reason + ")"
	}
	switch p.State {
	case ranv1alpha1.ClusterTimedOut:
		return fmt.Sprintf("%s did not complete within the step's rolloutStrategy timeout%s", action, why)
	case ranv1alpha1.ClusterHeld:
		return fmt.Sprintf("The cluster was held before %s started%s", action, why)
	}
	return fmt.Sprintf("%s failed%s", action, why)
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

// Condition reasons of an ImageBasedGroupUpgrade's Progressing condition (TALM's).
const (
	ReasonInProgress = "InProgress"
	ReasonCompleted  = "Completed"
)

// ConditionProgressing is the one condition of an ImageBasedGroupUpgrade (TALM's).
const ConditionProgressing = "Progressing"

// Progressing is the Progressing condition: True while a step has to run or runs, False
// once every step ended (TALM's reasons, with the step's actions and skipped steps named).
func Progressing(plan []lcmv1alpha1.PlanItem, children map[int]*Child) metav1.Condition {
	create, running, done := Next(plan, children)
	if done {
		msg := "All plan steps completed"
		var skipped []string
		for i := range plan {
			if children[i].Skipped {
				skipped = append(skipped, fmt.Sprint(i))
			}
		}
		if len(skipped) > 0 {
			msg += fmt.Sprintf("; step %s selected no cluster and was skipped", strings.Join(skipped, ", "))
		}
		return metav1.Condition{Type: ConditionProgressing, Status: metav1.ConditionFalse, Reason: ReasonCompleted, Message: msg}
	}
	step := max(create, running)
	return metav1.Condition{Type: ConditionProgressing, Status: metav1.ConditionTrue, Reason: ReasonInProgress,
		Message: fmt.Sprintf("Waiting for plan step %d (%s)", step, strings.Join(plan[step].Actions, ", "))}
}

// Steps are the status of the steps that started, in plan order.
func Steps(plan []lcmv1alpha1.PlanItem, children map[int]*Child) []lcmv1alpha1.StepStatus {
	var out []lcmv1alpha1.StepStatus
	for i := range plan {
		c, ok := children[i]
		if !ok {
			break
		}
		st := lcmv1alpha1.StepStatus{Index: i, Upgrade: c.Upgrade, State: lcmv1alpha1.StepState(c.State), Ended: c.Ended,
			Message: c.Message, StartedAt: stamp(c.StartedAt), CompletedAt: stamp(c.CompletedAt)}
		if c.Skipped {
			st.State, st.Message = lcmv1alpha1.StepSkipped, "No cluster matched the step's selectors when its turn came"
		} else {
			counts := c.Counts
			st.Counts = &counts
		}
		out = append(out, st)
	}
	return out
}

// SkippedSteps are the indexes of the steps a status records as skipped.
func SkippedSteps(status lcmv1alpha1.ImageBasedGroupUpgradeStatus) []int {
	var out []int
	for _, s := range status.Steps {
		if s.State == lcmv1alpha1.StepSkipped {
			out = append(out, s.Index)
		}
	}
	return out
}

func stamp(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	mt := metav1.NewTime(t).Rfc3339Copy()
	return &mt
}

// MaxClustersBytes bounds the JSON of status.clusters, so that an ImageBasedGroupUpgrade
// of any fleet stays far below the API server's object limit.
const MaxClustersBytes = 128 << 10

// Bound returns the clusters that fit in budget bytes of JSON, sorted by name, and the
// number left out. Clusters with a failed action are kept first, then those running an
// action, then the others, each group in name order.
func Bound(clusters []lcmv1alpha1.ClusterState, budget int) ([]lcmv1alpha1.ClusterState, int) {
	rank := func(c lcmv1alpha1.ClusterState) int {
		switch {
		case len(c.FailedActions) > 0:
			return 0
		case c.CurrentAction != nil:
			return 1
		}
		return 2
	}
	order := slices.Clone(clusters)
	slices.SortStableFunc(order, func(a, b lcmv1alpha1.ClusterState) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	var kept []lcmv1alpha1.ClusterState
	used := 0
	for i, c := range order {
		raw, err := json.Marshal(c)
		if err != nil || used+len(raw)+1 > budget {
			kept = slices.Clone(kept)
			sort.Slice(kept, func(a, b int) bool { return kept[a].Name < kept[b].Name })
			return kept, len(order) - i
		}
		used += len(raw) + 1
		kept = append(kept, c)
	}
	sort.Slice(kept, func(a, b int) bool { return kept[a].Name < kept[b].Name })
	return kept, 0
}

// WorkMessage is what a ManifestWork of an action says of the ImageBasedUpgrade, for a
// cluster that is on the action or failed it: the feedback messages and reasons, the
// manifests the agent cannot apply, and why the work is degraded; "" when it says
// nothing.
func WorkMessage(w *workv1.ManifestWork) string {
	if w == nil {
		return ""
	}
	var out []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, m := range w.Status.ResourceStatus.Manifests {
		for _, v := range m.StatusFeedbacks.Values {
			if v.Value.String != nil && (strings.Contains(v.Name, "ConditionMessage") || strings.Contains(v.Name, "ConditionReason")) {
				add(*v.Value.String)
			}
		}
		if c := meta.FindStatusCondition(m.Conditions, workv1.ManifestApplied); c != nil && c.Status == metav1.ConditionFalse {
			add(c.Message)
		}
	}
	if c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkDegraded); c != nil && c.Status == metav1.ConditionTrue {
		add(c.Message)
	}
	return truncate(strings.Join(out, "; "), maxMessage)
}

// maxMessage bounds an action's message in the status.
const maxMessage = 512

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// LabelChanges are the label changes a cluster's status calls for, given its labels now:
// the labels of Labels it lacks (value ""), and, once it is clean, the removal (nil) of
// every label Labels writes. Labels of other actions, written by another
// ImageBasedGroupUpgrade, are left as they are until then. nil when nothing changes.
func LabelChanges(s lcmv1alpha1.ClusterState, current map[string]string) map[string]*string {
	want, clean := Labels(s)
	out := map[string]*string{}
	if clean {
		for k := range current {
			if IsLabel(k) {
				out[k] = nil
			}
		}
	}
	for _, k := range want {
		if _, ok := current[k]; !ok {
			out[k] = ptr.To("")
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
