package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
)

// failedShown bounds the failed clusters `ibgu NAME` lists.
const failedShown = 20

func newIBGUCommand(e *env) *cobra.Command {
	v := &kindView[*lcmv1alpha1.ImageBasedGroupUpgrade]{env: e, kind: "ImageBasedGroupUpgrade", plural: "ImageBasedGroupUpgrades",
		get: func() *lcmv1alpha1.ImageBasedGroupUpgrade { return &lcmv1alpha1.ImageBasedGroupUpgrade{} },
		list: func(ctx context.Context, c client.Client, opts ...client.ListOption) ([]*lcmv1alpha1.ImageBasedGroupUpgrade, error) {
			var list lcmv1alpha1.ImageBasedGroupUpgradeList
			err := c.List(ctx, &list, opts...)
			return pointers(list.Items), err
		},
		printable: func(g *lcmv1alpha1.ImageBasedGroupUpgrade) any {
			return printableCopy(g, lcmv1alpha1.GroupVersion, "ImageBasedGroupUpgrade")
		},
		show:  writeIBGU,
		table: writeIBGUList,
	}
	return v.command("ibgu [NAME]", "Show ImageBasedGroupUpgrades: their plan, each step's progress and the failed clusters",
		`Without NAME, list the ImageBasedGroupUpgrades of the namespace (-n, or the
kubeconfig's), or of every namespace with -A: where the plan stands, the step that runs
out of the steps of the plan, the clusters that started a step and those with a failed
action, and their age.

With NAME, show one: the seed image, each step of the plan with its actions, its
ClusterGroupUpgrade, its state and its clusters, how many clusters completed, failed or
run each action, and the clusters with a failed action, with what the lifecycle agent
said (the first 20). The counts of actions are over the clusters the status lists.

With -o json or -o yaml, print the object (or a List of them); -o name, -o jsonpath=...
and -o go-template=... print them as kubectl does.`,
		`  kubectl cgu ibgu -n ztp-upgrades
  kubectl cgu ibgu to-4.18 -n ztp-upgrades
  kubectl cgu ibgu -A -o yaml`)
}

// ibguState is where a plan stands: the Progressing condition's reason, "-" before the
// controller wrote one.
func ibguState(g *lcmv1alpha1.ImageBasedGroupUpgrade) string {
	if c := meta.FindStatusCondition(g.Status.Conditions, "Progressing"); c != nil {
		return c.Reason
	}
	return "-"
}

// ibguStateColor colours the plan's state as a rollout's: Completed green, InProgress
// cyan, a wait for the user yellow.
func ibguStateColor(state string) string {
	switch state {
	case "Completed":
		return ansiGreen
	case "InProgress":
		return ansiCyan
	case "-":
		return ""
	}
	return ansiYellow
}

// currentStep is the step that runs or is to run, as "N/M" (1-based), or "done".
func currentStep(g *lcmv1alpha1.ImageBasedGroupUpgrade) string {
	for i := range g.Spec.Plan {
		if i >= len(g.Status.Steps) || !g.Status.Steps[i].Ended {
			return fmt.Sprintf("%d/%d", i+1, len(g.Spec.Plan))
		}
	}
	return "done"
}

// failedClusters counts the clusters the status lists with a failed action.
func failedClusters(g *lcmv1alpha1.ImageBasedGroupUpgrade) int {
	n := 0
	for _, c := range g.Status.Clusters {
		if len(c.FailedActions) > 0 {
			n++
		}
	}
	return n
}

func writeIBGUList(w io.Writer, p painter, items []*lcmv1alpha1.ImageBasedGroupUpgrade, namespaces bool, now time.Time) error {
	t := &table{header: []string{"NAME", "PLAN", "STEP", "CLUSTERS", "FAILED", "AGE"}}
	if namespaces {
		t.header = append([]string{"NAMESPACE"}, t.header...)
	}
	for _, g := range items {
		var row []cell
		if namespaces {
			row = append(row, plain(g.Namespace))
		}
		state := ibguState(g)
		t.add(append(row, plain(g.Name), cell{text: state, color: ibguStateColor(state)}, plain(currentStep(g)),
			plain(fmt.Sprint(len(g.Status.Clusters)+g.Status.ClustersNotShown)), plain(fmt.Sprint(failedClusters(g))),
			plain(age(g.CreationTimestamp.Time, now)))...)
	}
	return t.write(w, p, "")
}

// actionCounts counts, per action of the plan in plan order, the clusters that completed,
// failed and run it.
type actionCount struct {
	action                       lcmv1alpha1.Action
	completed, failed, executing int
}

func actionCounts(g *lcmv1alpha1.ImageBasedGroupUpgrade) []actionCount {
	var out []actionCount
	index := map[lcmv1alpha1.Action]int{}
	for _, item := range g.Spec.Plan {
		for _, a := range item.Actions {
			if _, ok := index[a]; !ok {
				index[a] = len(out)
				out = append(out, actionCount{action: a})
			}
		}
	}
	count := func(a lcmv1alpha1.Action, f func(*actionCount)) {
		if i, ok := index[a]; ok {
			f(&out[i])
		}
	}
	for _, c := range g.Status.Clusters {
		for _, a := range c.CompletedActions {
			count(a.Action, func(n *actionCount) { n.completed++ })
		}
		for _, a := range c.FailedActions {
			count(a.Action, func(n *actionCount) { n.failed++ })
		}
		if c.CurrentAction != nil {
			count(c.CurrentAction.Action, func(n *actionCount) { n.executing++ })
		}
	}
	return out
}

// stepClusters says a step's clusters by state, from its counts.
func stepClusters(s lcmv1alpha1.StepStatus) string {
	if s.State == lcmv1alpha1.StepSkipped {
		return "none selected"
	}
	if s.Counts == nil || s.Counts.Total == 0 {
		return "-"
	}
	n := s.Counts
	parts := []string{fmt.Sprintf("%d/%d completed", n.Completed, n.Total)}
	for _, x := range []struct {
		n    int
		what string
	}{{n.InProgress, "in progress"}, {n.Failed, "failed"}, {n.TimedOut, "timed out"}, {n.Held, "held"}} {
		if x.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", x.n, x.what))
		}
	}
	return strings.Join(parts, ", ")
}

// ShowImageBasedGroupUpgrade writes, without colour, what `kubectl cgu ibgu NAME` shows of
// g at now (the demo prints it).
func ShowImageBasedGroupUpgrade(w io.Writer, g *lcmv1alpha1.ImageBasedGroupUpgrade, now time.Time) error {
	return writeIBGU(w, painter{}, g, now)
}

// writeIBGU writes one ImageBasedGroupUpgrade: where the plan stands, its steps, its
// actions and its failed clusters.
func writeIBGU(w io.Writer, p painter, g *lcmv1alpha1.ImageBasedGroupUpgrade, now time.Time) error {
	for _, write := range []func() error{
		func() error { return writeIBGUHeader(w, p, g, now) },
		func() error { return writeSteps(w, p, g) },
		func() error { return writeActions(w, p, g) },
		func() error { return writeFailed(w, p, g) },
	} {
		if err := write(); err != nil {
			return err
		}
	}
	return nil
}

func writeIBGUHeader(w io.Writer, p painter, g *lcmv1alpha1.ImageBasedGroupUpgrade, now time.Time) error {
	var b strings.Builder
	state := ibguState(g)
	fmt.Fprintf(&b, "Name:         %s/%s\n", g.Namespace, g.Name)
	fmt.Fprintf(&b, "Plan:         %s", p.paint(ibguStateColor(state), state))
	if c := meta.FindStatusCondition(g.Status.Conditions, "Progressing"); c != nil && c.Message != "" {
		fmt.Fprintf(&b, ": %s", c.Message)
	}
	b.WriteString("\n")
	seed := g.Spec.IBUSpec.SeedImageRef
	fmt.Fprintf(&b, "Seed image:   %s (version %s)\n", orDash(seed.Image), orDash(seed.Version))
	if st := g.Status.StartedAt; st != nil {
		fmt.Fprintf(&b, "Started:      %s\n", ago(st.Time, now))
	}
	if ct := g.Status.CompletedAt; ct != nil {
		fmt.Fprintf(&b, "Completed:    %s\n", ago(ct.Time, now))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeSteps(w io.Writer, p painter, g *lcmv1alpha1.ImageBasedGroupUpgrade) error {
	if _, err := io.WriteString(w, "\nSteps:\n"); err != nil {
		return err
	}
	steps := &table{header: []string{"STEP", "ACTIONS", "MAX", "STATE", "CLUSTERS", "CLUSTERGROUPUPGRADE"}}
	for i, item := range g.Spec.Plan {
		state, clusters, upgrade := "Pending", "-", "-"
		if i < len(g.Status.Steps) {
			s := g.Status.Steps[i]
			state, clusters, upgrade = orDash(string(s.State)), stepClusters(s), orDash(s.Upgrade)
		}
		steps.add(plain(fmt.Sprint(i)), plain(strings.Join(item.Actions, ", ")), plain(fmt.Sprint(item.RolloutStrategy.MaxConcurrency)),
			stateCell(state), plain(clusters), plain(upgrade))
	}
	return steps.write(w, p, "  ")
}

func writeActions(w io.Writer, p painter, g *lcmv1alpha1.ImageBasedGroupUpgrade) error {
	title := "\nActions:\n"
	if g.Status.ClustersNotShown > 0 {
		title = fmt.Sprintf("\nActions (of the %d clusters the status lists; %d more not shown):\n", len(g.Status.Clusters), g.Status.ClustersNotShown)
	}
	if _, err := io.WriteString(w, title); err != nil {
		return err
	}
	actions := &table{header: []string{"ACTION", "COMPLETED", "FAILED", "IN PROGRESS"}}
	for _, a := range actionCounts(g) {
		failed := plain(fmt.Sprint(a.failed))
		if a.failed > 0 {
			failed.color = ansiRed
		}
		actions.add(plain(a.action), plain(fmt.Sprint(a.completed)), failed, plain(fmt.Sprint(a.executing)))
	}
	return actions.write(w, p, "  ")
}

// writeFailed lists the first failedShown clusters with a failed action.
func writeFailed(w io.Writer, p painter, g *lcmv1alpha1.ImageBasedGroupUpgrade) error {
	var failed []lcmv1alpha1.ClusterState
	for _, c := range g.Status.Clusters {
		if len(c.FailedActions) > 0 {
			failed = append(failed, c)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	if _, err := fmt.Fprintf(w, "\nFailed clusters (%d):\n", len(failed)); err != nil {
		return err
	}
	t := &table{header: []string{"CLUSTER", "ACTION", "MESSAGE"}}
	for _, c := range failed[:min(len(failed), failedShown)] {
		for _, a := range c.FailedActions {
			t.add(plain(c.Name), cell{text: a.Action, color: ansiRed}, plain(firstLine(a.Message)))
		}
	}
	if err := t.write(w, p, "  "); err != nil {
		return err
	}
	if len(failed) > failedShown {
		_, err := fmt.Fprintf(w, "  ... and %d more: kubectl get ibgu %s -n %s -o yaml\n", len(failed)-failedShown, g.Name, g.Namespace)
		return err
	}
	return nil
}

// firstLine is the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
