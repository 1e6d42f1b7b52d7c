package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/cli"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

// lifecycleAgent is how a demo cluster's simulated lifecycle agent runs the stages: Prep in
// half the upgrade's time, the upgrade in the whole, back to Idle in a quarter; failing
// clusters fail Prep.
func lifecycleAgent(upgrade time.Duration, failing bool) *sim.LifecycleAgentBehaviour {
	b := &sim.LifecycleAgentBehaviour{Durations: map[string]time.Duration{
		sim.StagePrep: upgrade / 2, sim.StageUpgrade: upgrade, sim.StageIdle: upgrade / 4,
	}}
	if failing {
		b.Failures = map[string]string{sim.StagePrep: "failed to pull the seed image: unauthorized (the demo's --fail)"}
	}
	return b
}

// tuneSteps applies the demo's --max-concurrency to every step of an ImageBasedGroupUpgrade.
func (d *demo) tuneSteps(o *unstructured.Unstructured) error {
	plan, _, err := unstructured.NestedSlice(o.Object, "spec", "plan")
	if err != nil {
		return err
	}
	for i := range plan {
		step, ok := plan[i].(map[string]any)
		if !ok {
			return fmt.Errorf("spec.plan[%d] is not an object", i)
		}
		if err := unstructured.SetNestedField(step, int64(d.opts.maxConcurrency), "rolloutStrategy", "maxConcurrency"); err != nil {
			return err
		}
	}
	return unstructured.SetNestedSlice(o.Object, plan, "spec", "plan")
}

// playIBGU draws the image-based group upgrade, line by line, until its plan completes, then
// shows it as `kubectl cgu ibgu` does; it returns the exit code: 0 once the plan completed.
func (d *demo) playIBGU(ctx context.Context) (int, error) {
	g, err := d.readIBGU(ctx)
	if err != nil {
		return 1, err
	}
	d.term.step("The plan of %s/%s: %s", g.Namespace, g.Name, planText(g.Spec.Plan))
	limit := time.Minute
	for _, item := range g.Spec.Plan {
		limit += time.Duration(item.RolloutStrategy.Timeout) * time.Minute
	}
	start := time.Now()
	ticker := time.NewTicker(frameRate)
	defer ticker.Stop()
	for {
		if g, err = d.readIBGU(ctx); err != nil {
			return 1, err
		}
		d.term.ibguChanges(g, time.Since(start))
		if c := meta.FindStatusCondition(g.Status.Conditions, "Progressing"); c != nil && c.Reason == "Completed" && g.Status.ObservedGeneration == g.Generation {
			break
		}
		if time.Since(start) > limit {
			return 1, fmt.Errorf("the plan did not complete within its steps' timeouts and a minute")
		}
		select {
		case <-ctx.Done():
			return 1, fmt.Errorf("interrupted")
		case <-ticker.C:
		}
	}
	d.term.step("Completed in %s; as kubectl cgu ibgu %s -n %s shows it", clock(time.Since(start)), g.Name, g.Namespace)
	if err := cli.ShowImageBasedGroupUpgrade(d.term.w, g, time.Now()); err != nil {
		return 1, err
	}
	fmt.Fprintln(d.term.w, d.term.style(green, "The plan completed."))
	return 0, nil
}

func (d *demo) readIBGU(ctx context.Context) (*lcmv1alpha1.ImageBasedGroupUpgrade, error) {
	g := &lcmv1alpha1.ImageBasedGroupUpgrade{}
	if err := d.cache.Get(ctx, d.cgu, g); err != nil {
		return nil, fmt.Errorf("reading the ImageBasedGroupUpgrade: %w", err)
	}
	return g, nil
}

// planText writes a plan as its steps' actions: "[Prep] -> [Upgrade]".
func planText(plan []lcmv1alpha1.PlanItem) string {
	steps := make([]string, len(plan))
	for i, item := range plan {
		steps[i] = "[" + strings.Join(item.Actions, ", ") + "]"
	}
	return strings.Join(steps, " -> ")
}

// ibguChanges prints what changed since the last frame: a step starting or ending, a
// cluster starting, completing or failing an action, in that order.
func (t *terminal) ibguChanges(g *lcmv1alpha1.ImageBasedGroupUpgrade, elapsed time.Duration) {
	stamp := fmt.Sprintf("[%6s]", clock(elapsed))
	for _, s := range g.Status.Steps {
		actions := strings.Join(g.Spec.Plan[s.Index].Actions, ", ")
		key := fmt.Sprintf("step-%d", s.Index)
		switch {
		case s.State == lcmv1alpha1.StepSkipped:
			t.printOnce(key, "skipped", "%s Step %d (%s) skipped: it selects no cluster", stamp, s.Index, actions)
		case !s.Ended:
			t.printOnce(key, "started", "%s Step %d (%s) started: ClusterGroupUpgrade %s", stamp, s.Index, actions, s.Upgrade)
		}
	}
	for _, c := range g.Status.Clusters {
		for _, a := range c.CompletedActions {
			t.printOnce("done-"+c.Name+"-"+a.Action, "done", "%s   %s %s completed", stamp, c.Name, a.Action)
		}
		for _, a := range c.FailedActions {
			t.printOnce("done-"+c.Name+"-"+a.Action, "failed", "%s   %s %s failed: %s", stamp, c.Name, a.Action, a.Message)
		}
		if a := c.CurrentAction; a != nil {
			t.printOnce("on-"+c.Name+"-"+a.Action, "on", "%s   %s %s started", stamp, c.Name, a.Action)
		}
	}
	for _, s := range g.Status.Steps {
		if s.Ended && s.State != lcmv1alpha1.StepSkipped {
			t.printOnce(fmt.Sprintf("step-%d", s.Index), "ended", "%s Step %d (%s) ended %s: %s", stamp, s.Index,
				strings.Join(g.Spec.Plan[s.Index].Actions, ", "), s.State, stepCounts(s))
		}
	}
}

// stepCounts writes a step's clusters by state.
func stepCounts(s lcmv1alpha1.StepStatus) string {
	if s.Counts == nil {
		return "no clusters"
	}
	n := s.Counts
	return fmt.Sprintf("%d of %d clusters completed, %d failed, %d timed out", n.Completed, n.Total, n.Failed, n.TimedOut)
}
