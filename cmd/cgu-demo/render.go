package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
	"github.com/cgu-operator/cgu-operator/pkg/words"
)

// ANSI styles, used only on a terminal.
const (
	bold  = "\033[1m"
	dim   = "\033[2m"
	red   = "\033[31m"
	green = "\033[32m"
	cyan  = "\033[36m"
	reset = "\033[0m"
)

// terminal draws the demo: progress bars on a terminal, plain lines otherwise (a pipe, a CI
// log, or --plain).
type terminal struct {
	w, errw io.Writer
	live    bool

	progress *mpb.Progress
	bars     []*mpb.Bar
	overall  *mpb.Bar
	current  snapshot
	elapsed  time.Duration

	printed map[string]string // plain mode: the last line printed per subject
	// allClusters lists every cluster of a batch (--all-clusters) where a long batch is
	// otherwise abbreviated.
	allClusters bool
}

// A batch of more than listBound clusters is written as its count and its first
// listedRuns runs of names (sno-003..sno-042) unless --all-clusters; lines of names wrap at
// lineWidth.
const (
	listBound  = 8
	listedRuns = 4
	lineWidth  = 100
)

// batchNames writes a batch's clusters for a line: each name in plan order, or for a long
// batch its count and runs of names in natural order ("40 clusters: sno-003..sno-042"), an
// item that does not wrap.
func (t *terminal) batchNames(names []string) []string {
	if t.allClusters || len(names) <= listBound {
		return names
	}
	return []string{words.Abbreviate(names, "cluster", listedRuns)}
}

func newTerminal(w, errw io.Writer, plain bool) *terminal {
	f, isFile := w.(*os.File)
	live := !plain && isFile && term.IsTerminal(int(f.Fd())) && os.Getenv("NO_COLOR") == ""
	return &terminal{w: w, errw: errw, live: live, printed: map[string]string{}}
}

func (t *terminal) style(s, text string) string {
	if !t.live {
		return text
	}
	return s + text + reset
}

func (t *terminal) step(format string, args ...any) {
	fmt.Fprintln(t.w, t.style(bold, "==> "+fmt.Sprintf(format, args...)))
}

func (t *terminal) note(format string, args ...any) {
	fmt.Fprintln(t.w, t.style(dim, fmt.Sprintf(format, args...)))
}

func (t *terminal) fail(format string, args ...any) {
	fmt.Fprintln(t.errw, t.style(red, "cgu-demo: "+fmt.Sprintf(format, args...)))
}

// plan shows the batches before the start.
func (t *terminal) plan(cgu *ranv1alpha1.ClusterGroupUpgrade, batches []batchView) {
	p := cgu.Status.Plan
	t.step("The plan of %s/%s, visible while spec.enable is false: %d clusters in %d batches (%d canary)",
		cgu.Namespace, cgu.Name, p.Clusters, p.Batches, p.CanaryBatches)
	for _, b := range batches {
		lines := words.Wrap(fmt.Sprintf("    %-20s", b.label(len(batches))), t.batchNames(b.names()), nil, lineWidth)
		if b.shape != "" {
			lines[len(lines)-1] += " (" + b.shape + ")"
		}
		fmt.Fprintln(t.w, strings.Join(lines, "\n"))
	}
	fmt.Fprintf(t.w, "    Timeout %d minutes: each batch gets the time left divided by the batches left\n", timeoutMinutes(cgu))
}

// frame draws the rollout as it stands.
func (t *terminal) frame(s snapshot, elapsed time.Duration) {
	t.current, t.elapsed = s, elapsed
	if t.live {
		t.drawBars(s)
		return
	}
	t.printChanges(s, elapsed)
}

// finish draws the last frame and releases the terminal.
func (t *terminal) finish(s snapshot) {
	t.current = s
	if !t.live || t.progress == nil {
		return
	}
	for i, bar := range t.bars {
		if i < len(s.batches) && s.batches[i].done() == len(s.batches[i].clusters) {
			bar.SetCurrent(int64(len(s.batches[i].clusters)))
			continue
		}
		bar.Abort(false)
	}
	if t.overall.Current() < int64(s.clusters()) {
		t.overall.Abort(false)
	}
	t.progress.Wait()
}

func (t *terminal) drawBars(s snapshot) {
	if t.progress == nil {
		t.startBars(s)
	}
	for i, b := range s.batches {
		if i < len(t.bars) {
			t.bars[i].SetCurrent(int64(b.done()))
		}
	}
	t.overall.SetCurrent(int64(s.count(ranv1alpha1.ClusterCompleted, ranv1alpha1.ClusterTimedOut, ranv1alpha1.ClusterFailed)))
}

func (t *terminal) startBars(s snapshot) {
	t.progress = mpb.New(mpb.WithOutput(t.w), mpb.WithWidth(28), mpb.WithRefreshRate(frameRate))
	for i, b := range s.batches {
		t.bars = append(t.bars, t.progress.AddBar(int64(len(b.clusters)),
			mpb.PrependDecorators(decor.Name(b.label(len(s.batches)), decor.WC{W: 18, C: decor.DindentRight})),
			mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return t.batchText(i) })),
		))
	}
	t.overall = t.progress.AddBar(int64(s.clusters()),
		mpb.PrependDecorators(decor.Name("All clusters", decor.WC{W: 18, C: decor.DindentRight})),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return t.overallText() })),
	)
}

// batchText is what follows a batch's bar: its state, its time, and its clusters.
func (t *terminal) batchText(i int) string {
	s := t.current
	if i >= len(s.batches) {
		return ""
	}
	b := s.batches[i]
	var state string
	switch {
	case b.started.IsZero():
		state = t.style(dim, "waiting")
	case !b.finished.IsZero() && b.count(ranv1alpha1.ClusterTimedOut) > 0:
		state = t.style(red, fmt.Sprintf("timed out after %s", clock(b.finished.Sub(b.started))))
	case !b.finished.IsZero():
		state = t.style(green, fmt.Sprintf("done in %s", clock(b.finished.Sub(b.started))))
	default:
		state = t.style(cyan, fmt.Sprintf("running %s, times out in %s", clock(time.Since(b.started)), clock(time.Until(b.deadline))))
	}
	return fmt.Sprintf("%-38s %s", state, t.chips(b))
}

// chips shows each cluster of a batch with a mark for its state; a large batch shows counts.
func (t *terminal) chips(b batchView) string {
	if len(b.clusters) > 6 {
		return fmt.Sprintf("%d done, %d upgrading, %d timed out", b.count(ranv1alpha1.ClusterCompleted),
			b.count(ranv1alpha1.ClusterInProgress), b.count(ranv1alpha1.ClusterTimedOut))
	}
	parts := make([]string, len(b.clusters))
	for i, c := range b.clusters {
		parts[i] = t.chip(c)
	}
	return strings.Join(parts, " ")
}

func (t *terminal) chip(c clusterView) string {
	switch c.state {
	case ranv1alpha1.ClusterCompleted:
		return t.style(green, c.name+" ✓")
	case ranv1alpha1.ClusterTimedOut, ranv1alpha1.ClusterFailed:
		return t.style(red, c.name+" ✗")
	case ranv1alpha1.ClusterInProgress:
		return t.style(cyan, c.name+" ↻")
	}
	return t.style(dim, c.name+" ·")
}

func (t *terminal) overallText() string {
	cgu := t.current.cgu
	text := fmt.Sprintf("%s, elapsed %s", cgu.Status.State, clock(t.elapsed))
	if deadline := overallDeadline(cgu); !deadline.IsZero() && cgu.Status.State == ranv1alpha1.StateNotCompleted {
		text += fmt.Sprintf(", %s left", clock(time.Until(deadline)))
	}
	return text
}

// printChanges prints a line for each batch and cluster whose state changed, and for the
// rollout's state, in the order the changes happen even when one frame sees several: the
// rollout starts, then each batch in plan order starts, its clusters move, it ends; the
// rollout's end comes last.
func (t *terminal) printChanges(s snapshot, elapsed time.Duration) {
	stamp := fmt.Sprintf("[%6s]", clock(elapsed))
	state := s.cgu.Status.State
	printState := func() {
		t.printOnce("cgu", string(state), "%s %s: %s", stamp, state, s.cgu.Status.Message)
	}
	ends := state == ranv1alpha1.StateCompleted || state == ranv1alpha1.StateTimedOut
	if !ends {
		printState()
	}
	for _, b := range s.batches {
		key := fmt.Sprintf("batch-%d", b.index)
		if !b.started.IsZero() && t.printed[key] == "" {
			t.printOnce(key, "started", "%s %s started, times out in %s", stamp, b.label(len(s.batches)), clock(time.Until(b.deadline)))
		}
		for _, c := range b.clusters {
			if c.state != ranv1alpha1.ClusterPending {
				t.printOnce("cluster-"+c.name, string(c.state), "%s   %s %s %s", stamp, c.name, c.state, c.policy)
			}
		}
		if !b.finished.IsZero() {
			t.printOnce(key, "ended", "%s %s ended: %d of %d clusters completed", stamp, b.label(len(s.batches)),
				b.count(ranv1alpha1.ClusterCompleted), len(b.clusters))
		}
	}
	if ends {
		printState()
	}
}

func (t *terminal) printOnce(subject, state, format string, args ...any) {
	if t.printed[subject] == state {
		return
	}
	t.printed[subject] = state
	fmt.Fprintln(t.w, strings.TrimRight(fmt.Sprintf(format, args...), " "))
}

// summary prints how the rollout ended and returns the exit code.
func (t *terminal) summary(r result) int {
	s := r.last
	t.step("Summary")
	for _, b := range s.batches {
		took := "not started"
		if !b.started.IsZero() && !b.finished.IsZero() {
			took = clock(b.finished.Sub(b.started))
		}
		fmt.Fprintf(t.w, "    %-20s %s, %d upgraded, %d timed out, %s\n", b.label(len(s.batches)), words.Plural(len(b.clusters), "cluster"),
			b.count(ranv1alpha1.ClusterCompleted), b.count(ranv1alpha1.ClusterTimedOut), took)
	}
	upgraded, late := s.count(ranv1alpha1.ClusterCompleted), s.count(ranv1alpha1.ClusterTimedOut)
	fmt.Fprintf(t.w, "    %d of %d clusters upgraded to %s, %d timed out, in %s\n", upgraded, s.clusters(), toVersion, late, clock(r.elapsed))
	t.talmView(s.cgu)
	if s.cgu.Status.State == ranv1alpha1.StateCompleted {
		fmt.Fprintln(t.w, t.style(green, "The rollout completed."))
		return 0
	}
	t.fail("the rollout ended %s: %s", s.cgu.Status.State, s.cgu.Status.Message)
	return 1
}

// talmView prints the final ClusterGroupUpgrade as TALM's tools read it: `oc get cgu`'s State
// and Details, the conditions, and TALM's status fields.
func (t *terminal) talmView(cgu *ranv1alpha1.ClusterGroupUpgrade) {
	st := cgu.Status
	t.step("As TALM's tools read it")
	if last := talm.Last(st.Conditions); last != nil {
		fmt.Fprintf(t.w, "    oc get cgu:           STATE %s, DETAILS %s\n", last.Reason, last.Message)
	}
	var conditions []string
	for _, c := range st.Conditions {
		conditions = append(conditions, fmt.Sprintf("%s=%s %s", c.Type, c.Status, c.Reason))
	}
	fmt.Fprintf(t.w, "    conditions:           %s\n", strings.Join(conditions, ", "))
	var plan []string
	for _, b := range st.RemediationPlan {
		if len(b) == 0 {
			plan = append(plan, "[]")
			continue
		}
		names := slices.Clone(t.batchNames(b))
		names[0] = "[" + names[0]
		names[len(names)-1] += "]"
		plan = append(plan, names...)
	}
	fmt.Fprintln(t.w, strings.Join(words.Wrap("    remediationPlan:     ", plan, nil, lineWidth), "\n"))
	states := map[string]int{}
	for _, c := range st.Clusters {
		states[c.State]++
	}
	var counted []string
	for _, state := range []string{ranv1alpha1.TALMClusterComplete, ranv1alpha1.TALMClusterTimedOut, ranv1alpha1.TALMClusterFailed, ranv1alpha1.TALMClusterHeld} {
		if n := states[state]; n > 0 {
			counted = append(counted, fmt.Sprintf("%d %s", n, state))
		}
	}
	fmt.Fprintf(t.w, "    clusters:             %s\n", strings.Join(counted, ", "))
	fmt.Fprintf(t.w, "    managedPoliciesNs:    %v\n", st.ManagedPoliciesNs)
	fmt.Fprintf(t.w, "    computedMaxConcurrency: %d\n", st.ComputedMaxConcurrency)
	if st.Status.CompletedAt != nil {
		fmt.Fprintf(t.w, "    status.completedAt:   %s\n", st.Status.CompletedAt.UTC().Format(time.RFC3339))
	}
}

func (t *terminal) keep(path, kind string, key client.ObjectKey, dashboardURL string) {
	if dashboardURL != "" {
		t.step("The hub and the dashboard at %s keep running until Ctrl-C. In another terminal:", dashboardURL)
	} else {
		t.step("The hub keeps running until Ctrl-C. In another terminal:")
	}
	fmt.Fprintf(t.w, "    export KUBECONFIG=%s\n", path)
	if kind == kindIBGU {
		fmt.Fprintln(t.w, "    kubectl get ibgu,cgu -n "+key.Namespace)
		fmt.Fprintln(t.w, "    make plugin && PATH=$PWD/bin:$PATH")
		fmt.Fprintf(t.w, "    kubectl cgu ibgu %s -n %s\n", key.Name, key.Namespace)
		return
	}
	fmt.Fprintln(t.w, "    kubectl get cgu -A")
	fmt.Fprintln(t.w, "    kubectl get cgub -n "+key.Namespace)
	fmt.Fprintln(t.w, "    make plugin && PATH=$PWD/bin:$PATH")
	fmt.Fprintf(t.w, "    kubectl cgu status %s -n %s\n", key.Name, key.Namespace)
	fmt.Fprintf(t.w, "    kubectl cgu plan %s -n %s\n", key.Name, key.Namespace)
}

// clock formats a duration as m:ss (or h:mm:ss), never negative.
func clock(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}
