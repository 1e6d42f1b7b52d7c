package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/estimate"
	"github.com/cgu-operator/cgu-operator/pkg/preview"
	"github.com/cgu-operator/cgu-operator/pkg/timeout"
	"github.com/cgu-operator/cgu-operator/pkg/words"
)

type statusOptions struct {
	*env
	output    string
	exitState bool
	// cluster, with --managed-cluster, tells that cluster's story instead.
	cluster string
}

func newStatusCommand(e *env) *cobra.Command {
	o := &statusOptions{env: e}
	cmd := &cobra.Command{
		Use:   "status NAME",
		Short: "Show where a ClusterGroupUpgrade stands and what it waits for",
		Long: `Show where a ClusterGroupUpgrade stands: its state and message, its conditions in words,
the current batch with the state of its clusters and its deadline, how many clusters are
in each state, the time left before the rollout times out, the estimate of how long the
batches left take (a running rollout; the one preflight and the dashboard show), and what
the rollout waits for. Of a rollout that ended (Completed or TimedOut): how long it ran,
and the clusters that timed out or failed, read from its batch records (the first 20 runs
of names, sno-003..sno-042, and how many more).

With -o json or -o yaml, print the ClusterGroupUpgrade object; -o name, -o jsonpath=...
and -o go-template=... print it as kubectl does.

With --managed-cluster CLUSTER, tell that cluster's story in the rollout instead: its batch,
its state and since when, why, what it waits for, its time against the median of the
clusters that completed, its managed policies in order with their compliance on it, its
ClusterVersion as the rollout's view shows it, its pre-caching and backup state, and the
events that name it (-o json or yaml: the story). The dashboard's cluster panel shows the
same story.

With --exit-state, the exit code follows the state instead of being 0:
  0   Completed
  10  NotStarted or NotCompleted
  11  CannotStart
  12  TimedOut
so that a script can tell them apart:
  kubectl cgu status upgrade --exit-state >/dev/null
  case $? in 0) echo completed ;; 10) echo running ;; 11|12) echo "needs attention" ;; *) echo error ;; esac`,
		Example: `  kubectl cgu status upgrade -n ztp-upgrades
  kubectl cgu status upgrade --exit-state
  kubectl cgu status upgrade -o jsonpath='{.status.state}'
  kubectl cgu status upgrade --managed-cluster sno-050`,
		Args: exactlyOneName,
		RunE: runE(o.run),
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", outputTable, outputHelp)
	cmd.Flags().BoolVar(&o.exitState, "exit-state", false,
		"Exit with a code that follows the state: 0 Completed, 10 NotStarted or NotCompleted, 11 CannotStart, 12 TimedOut")
	addClusterStoryFlag(cmd, &o.cluster)
	return cmd
}

func (o *statusOptions) run(ctx context.Context, args []string) error {
	c, cgu, err := o.upgrade(ctx, o.output, args[0])
	if err != nil {
		return err
	}
	if o.cluster != "" {
		if o.exitState {
			return usageError("--exit-state follows the rollout's state: it does not go with --managed-cluster")
		}
		return writeClusterStory(ctx, o.IOStreams.Out, o.painter(), c, cgu, o.cluster, o.now(), o.output)
	}
	if o.output != outputTable {
		err = printData(o.IOStreams.Out, o.output, printable(cgu))
	} else {
		var facts statusFacts
		if facts, err = readStatusFacts(ctx, c, cgu); err == nil {
			err = writeStatus(o.IOStreams.Out, o.painter(), cgu, o.now(), o.width(), facts)
		}
	}
	if err != nil || !o.exitState {
		return err
	}
	if code := StateExitCode(cgu.Status.State); code != ExitOK {
		return &exitError{code: code}
	}
	return nil
}

// getUpgrade reads a ClusterGroupUpgrade; a missing one is ExitNotFound.
// upgrade checks the output format, connects, and reads the named ClusterGroupUpgrade of the
// namespace in use.
func (e *env) upgrade(ctx context.Context, output, name string) (client.Client, *ranv1alpha1.ClusterGroupUpgrade, error) {
	if err := checkOutput(output); err != nil {
		return nil, nil, err
	}
	c, namespace, err := e.client()
	if err != nil {
		return nil, nil, err
	}
	cgu, err := getUpgrade(ctx, c, namespace, name)
	return c, cgu, err
}

func getUpgrade(ctx context.Context, c client.Reader, namespace, name string) (*ranv1alpha1.ClusterGroupUpgrade, error) {
	cgu := &ranv1alpha1.ClusterGroupUpgrade{}
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cgu)
	switch {
	case apierrors.IsNotFound(err):
		return nil, &exitError{code: ExitNotFound, err: fmt.Errorf("ClusterGroupUpgrade %s/%s not found", namespace, name)}
	case err != nil:
		return nil, fmt.Errorf("reading ClusterGroupUpgrade %s/%s: %w", namespace, name, err)
	}
	return cgu, nil
}

// StateExitCode is the exit code of status --exit-state for a rollout state; a state not
// written yet counts as NotStarted.
func StateExitCode(state ranv1alpha1.UpgradeState) int {
	switch state {
	case ranv1alpha1.StateCompleted:
		return ExitOK
	case ranv1alpha1.StateCannotStart:
		return ExitCannotStart
	case ranv1alpha1.StateTimedOut:
		return ExitTimedOut
	}
	return ExitRunning
}

// fieldWidth aligns the values of the status's "Label:" lines.
const fieldWidth = 14

// statusFacts are what status shows besides the ClusterGroupUpgrade, read from its batch
// records: the estimate of a running rollout, or how an ended one ended.
type statusFacts struct {
	// estimate is the estimate of the rest of a running rollout (the one preflight and the
	// dashboard show), "" when there is none to show.
	estimate string
	ended    endedRollout
}

// endedRollout is how a rollout that ended ended: when, and the clusters that timed out or
// failed.
type endedRollout struct {
	at               time.Time
	timedOut, failed []string
}

// endedShown bounds the runs of names of the clusters an ended rollout lists per state.
const endedShown = 20

// readStatusFacts reads what status shows of a running rollout, or of one that ended,
// from its batch records.
func readStatusFacts(ctx context.Context, c client.Reader, cgu *ranv1alpha1.ClusterGroupUpgrade) (statusFacts, error) {
	switch {
	case cgu.Status.State == ranv1alpha1.StateNotCompleted:
		frozen, err := preview.ReadFrozen(ctx, c, cgu)
		if err != nil || !frozen.Started {
			return statusFacts{}, hubError(err)
		}
		return statusFacts{estimate: estimate.Text(estimateOf(cgu, planOutput(frozen.Plan, true, frozen.State), frozen))}, nil
	case ended(cgu):
		records, err := preview.Records(ctx, c, cgu.Namespace, cgu.Name)
		if err != nil {
			return statusFacts{}, hubError(err)
		}
		return statusFacts{ended: endOf(cgu, records)}, nil
	}
	return statusFacts{}, nil
}

// ended reports whether a rollout ended: Completed, or TimedOut (which still watches its late
// clusters, and turns Completed if they comply).
func ended(cgu *ranv1alpha1.ClusterGroupUpgrade) bool {
	st := cgu.Status
	return st.CompletedAt != nil || st.State == ranv1alpha1.StateCompleted || st.State == ranv1alpha1.StateTimedOut
}

// endOf is how a rollout ended, from its status and batch records: the time it completed,
// else TALM's status.status.completedAt (when it was first seen timed out), else the last
// batch's end; the clusters the records hold timed out or failed, else those of TALM's
// status.clusters (shortened in a large fleet).
func endOf(cgu *ranv1alpha1.ClusterGroupUpgrade, records []ranv1alpha1.ClusterGroupUpgradeBatch) endedRollout {
	var out endedRollout
	var lastBatch time.Time
	recorded := false
	for _, r := range records {
		if f := r.Status.FinishedAt; f != nil && f.After(lastBatch) {
			lastBatch = f.Time
		}
		for _, c := range r.Status.Clusters {
			recorded = true
			switch c.State {
			case ranv1alpha1.ClusterTimedOut:
				out.timedOut = append(out.timedOut, c.Name)
			case ranv1alpha1.ClusterFailed:
				out.failed = append(out.failed, c.Name)
			}
		}
	}
	st := cgu.Status
	switch {
	case st.CompletedAt != nil:
		out.at = st.CompletedAt.Time
	case st.Status.CompletedAt != nil:
		out.at = st.Status.CompletedAt.Time
	default:
		out.at = lastBatch
	}
	if recorded {
		return out
	}
	for _, c := range st.Clusters {
		switch c.State {
		case ranv1alpha1.TALMClusterTimedOut:
			out.timedOut = append(out.timedOut, c.Name)
		case ranv1alpha1.TALMClusterFailed:
			out.failed = append(out.failed, c.Name)
		}
	}
	return out
}

// writeStatus writes the status of a ClusterGroupUpgrade for people, with the facts read from
// its batch records; lists of clusters wrap at width.
func writeStatus(w io.Writer, p painter, cgu *ranv1alpha1.ClusterGroupUpgrade, now time.Time, width int, facts statusFacts) error {
	st := cgu.Status
	var b strings.Builder
	field(&b, "Name", cgu.Namespace+"/"+cgu.Name)
	field(&b, "State", p.state(orDash(string(st.State))))
	field(&b, "Message", orDash(st.Message))
	writeConditions(&b, st.Conditions, conditionOrder, width)
	if err := writeBatch(&b, p, cgu, now); err != nil {
		return err
	}
	b.WriteString("\n")
	c := st.Counts
	counts := fmt.Sprintf("%d total, %d completed, %d in progress, %d timed out, %d failed, %d pending",
		c.Total, c.Completed, c.InProgress, c.TimedOut, c.Failed, c.Pending)
	if c.Held > 0 {
		counts += fmt.Sprintf(", %d held by the upgrade checks", c.Held)
	}
	field(&b, "Clusters", counts)
	for _, late := range []struct {
		label string
		names []string
	}{{"Timed out", facts.ended.timedOut}, {"Failed", facts.ended.failed}} {
		if len(late.names) > 0 {
			text := strings.Fields(words.Abbreviate(late.names, "cluster", endedShown))
			b.WriteString(strings.Join(words.Wrap(fmt.Sprintf("%-*s", fieldWidth-1, late.label+":"), text, nil, width), "\n") + "\n")
		}
	}
	label, text := timeLine(cgu, facts.ended.at, now)
	field(&b, label, text)
	if facts.estimate != "" {
		field(&b, "Estimate", facts.estimate)
	}
	field(&b, "Waiting for", waitingFor(cgu))
	_, err := io.WriteString(w, b.String())
	return err
}

func field(b *strings.Builder, label, value string) {
	fmt.Fprintf(b, "%-*s%s\n", fieldWidth, label+":", value)
}

// conditionOrder is the order a ClusterGroupUpgrade's conditions are shown in; others
// follow by type.
var conditionOrder = []string{
	ranv1alpha1.ConditionClustersSelected, ranv1alpha1.ConditionValidated, ranv1alpha1.ConditionPrecacheSpecValid,
	ranv1alpha1.ConditionPrecachingSucceeded, ranv1alpha1.ConditionProgressing, ranv1alpha1.ConditionSucceeded,
}

// writeConditions writes conditions in words, those of order first and in its order, the
// others by type; a line longer than width wraps under the words.
func writeConditions(b *strings.Builder, conditions []metav1.Condition, order []string, width int) {
	if len(conditions) == 0 {
		return
	}
	sorted := slices.Clone(conditions)
	rank := func(c metav1.Condition) int {
		if i := slices.Index(order, c.Type); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(sorted, func(x, y metav1.Condition) int {
		if d := rank(x) - rank(y); d != 0 {
			return d
		}
		return strings.Compare(x.Type, y.Type)
	})
	labels := 0
	for _, c := range sorted {
		labels = max(labels, len(conditionLabel(c.Type))+1)
	}
	b.WriteString("\nConditions:\n")
	for _, c := range sorted {
		label := fmt.Sprintf("  %-*s ", labels, conditionLabel(c.Type)+":")
		b.WriteString(strings.Join(wrapWords(label, conditionWords(c), width), "\n") + "\n")
	}
}

// conditionLabel writes a condition type in words: "ClustersSelected" is "Clusters
// selected".
func conditionLabel(kind string) string {
	var b strings.Builder
	for i, r := range kind {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteRune(' ')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// conditionWords says a condition in words: "yes (message)", "no — Reason: message".
func conditionWords(c metav1.Condition) string {
	switch c.Status {
	case metav1.ConditionTrue:
		if c.Message == "" {
			return "yes"
		}
		return "yes (" + c.Message + ")"
	case metav1.ConditionFalse:
		return "no — " + reasonAndMessage(c.Reason, c.Message)
	}
	return "unknown — " + reasonAndMessage(c.Reason, c.Message)
}

func reasonAndMessage(reason, message string) string {
	switch {
	case message == "":
		return reason
	case reason == "":
		return message
	}
	return reason + ": " + message
}

// writeBatch writes the current batch: its place in the plan, its times and its clusters.
func writeBatch(b *strings.Builder, p painter, cgu *ranv1alpha1.ClusterGroupUpgrade, now time.Time) error {
	st := cgu.Status
	cb := st.CurrentBatch
	if cb == nil {
		return nil
	}
	b.WriteString("\n" + batchHeadline(st, windowOf(cgu), now) + "\n")
	t := &table{header: []string{"CLUSTER", "STATE", "POLICY", "SINCE"}}
	for _, c := range cb.Clusters {
		var since time.Time
		if c.Since != nil {
			since = c.Since.Time
		}
		t.add(plain(c.Name), stateCell(string(c.State)), plain(orDash(c.CurrentPolicy)), plain(age(since, now)))
	}
	if err := t.write(b, p, "  "); err != nil {
		return err
	}
	if cb.ClustersNotShown > 0 {
		fmt.Fprintf(b, "  and %d more\n", cb.ClustersNotShown)
	}
	return writeAnalysis(b, p, cb.Analysis, now)
}

// writeAnalysis writes the current batch's analysis gates, if it runs them: each gate's
// phase, its measurements by outcome and its message.
func writeAnalysis(b *strings.Builder, p painter, a *ranv1alpha1.BatchAnalysis, now time.Time) error {
	if a == nil {
		return nil
	}
	fmt.Fprintf(b, "\nAnalysis, started %s\n", ago(a.StartedAt.Time, now))
	t := &table{header: []string{"GATE", "PHASE", "MEASURED", "MESSAGE"}}
	for _, g := range a.Gates {
		measured := fmt.Sprintf("%d ok, %d failed", g.Conclusive-g.Failures, g.Failures)
		if g.Inconclusives > 0 {
			measured += fmt.Sprintf(", %d inconclusive", g.Inconclusives)
		}
		t.add(plain(g.Name), stateCell(string(g.Phase)), plain(measured), plain(orDash(g.Message)))
	}
	return t.write(b, p, "  ")
}

// windowOf is the size of the window of a Window rollout, 0 for TALM's batches.
func windowOf(cgu *ranv1alpha1.ClusterGroupUpgrade) int {
	if rs := cgu.Spec.RemediationStrategy; rs != nil && rs.Mode == ranv1alpha1.ModeWindow {
		return rs.MaxConcurrency
	}
	return 0
}

// batchHeadline is "Batch 2 of 5 (canary), started 4m ago, times out in 12m"; window is the
// size of a Window rollout's window, 0 for batches.
func batchHeadline(st ranv1alpha1.ClusterGroupUpgradeStatus, window int, now time.Time) string {
	cb := st.CurrentBatch
	line := fmt.Sprintf("Batch %d", cb.Index)
	if st.Plan != nil {
		line += fmt.Sprintf(" of %d", st.Plan.Batches)
	}
	switch {
	case cb.Canary:
		line += " (canary)"
	case window > 0:
		line += fmt.Sprintf(" (a window of %d at once, each cluster with its own deadline)", window)
	}
	if cb.StartedAt != nil {
		line += ", started " + ago(cb.StartedAt.Time, now)
	}
	line += deadlinePhrase(cb.TimeoutAt, now)
	if sg := cb.Stage; sg != nil {
		line += fmt.Sprintf("\nStage %d: %s (step %d of the growth)", sg.Number, words.Plural(sg.Size, "cluster"), sg.Step)
		if sg.StartedAt != nil {
			line += ", started " + ago(sg.StartedAt.Time, now)
		}
		line += deadlinePhrase(sg.TimeoutAt, now)
		if sg.Resets > 0 {
			line += fmt.Sprintf("; the growth went back %s", words.Plural(sg.Resets, "time"))
		}
		if sg.Unhealthy != "" {
			line += "\nLast unhealthy stage: " + sg.Unhealthy
		}
	}
	return line
}

// deadlinePhrase is ", times out in 12m" or ", deadline passed 3m ago", "" without a deadline.
func deadlinePhrase(at *metav1.Time, now time.Time) string {
	switch {
	case at == nil:
		return ""
	case at.After(now):
		return ", times out in " + words.Duration(at.Sub(now))
	}
	return ", deadline passed " + ago(at.Time, now)
}

// timeLine returns the label and text of the line about the rollout's time: how long one
// that ended (at end, zero when unknown) ran, or the time left before the overall deadline.
func timeLine(cgu *ranv1alpha1.ClusterGroupUpgrade, end, now time.Time) (string, string) {
	st := cgu.Status
	if ended(cgu) {
		return "Ran", ranText(st.StartedAt, end, now)
	}
	minutes := 0
	if rs := cgu.Spec.RemediationStrategy; rs != nil {
		minutes = rs.Timeout
	}
	total := timeout.Overall(time.Time{}, minutes).Sub(time.Time{})
	if st.StartedAt == nil {
		return "Time left", words.Duration(total) + ", counted from the start"
	}
	deadline := timeout.Overall(st.StartedAt.Time, minutes)
	if left := timeout.Left(deadline, now); left > 0 {
		return "Time left", fmt.Sprintf("%s of %s (started %s)", words.Duration(left), words.Duration(total), ago(st.StartedAt.Time, now))
	}
	return "Time left", fmt.Sprintf("none: ran out %s (timeout %s)", ago(deadline, now), words.Duration(total))
}

// ranText says how long an ended rollout ran: "1h57m (started 2h ago, ended 3m ago)", or
// what is known of its start and end.
func ranText(started *metav1.Time, end, now time.Time) string {
	switch {
	case started != nil && !end.IsZero():
		return fmt.Sprintf("%s (started %s, ended %s)", words.Duration(end.Sub(started.Time)), ago(started.Time, now), ago(end, now))
	case !end.IsZero():
		return "ended " + ago(end, now)
	case started != nil:
		return "started " + ago(started.Time, now) + ", ended at a time the hub does not say"
	}
	return "-"
}

// waitingNamed is how many clusters the "Waiting for" sentence names.
const waitingNamed = 3

// waitingFor says in one sentence what the rollout waits for.
func waitingFor(cgu *ranv1alpha1.ClusterGroupUpgrade) string {
	st := cgu.Status
	switch st.State {
	case ranv1alpha1.StateCompleted:
		return "nothing: completed"
	case ranv1alpha1.StateTimedOut:
		return "late clusters to comply (still watching)"
	case ranv1alpha1.StateNotCompleted:
		return batchWait(st)
	case ranv1alpha1.StateNotStarted, ranv1alpha1.StateCannotStart:
		return startWait(cgu)
	}
	return "the operator to look at it"
}

// blockingReasons are the Progressing reasons of a rollout waiting on other CGUs.
var blockingReasons = []string{ranv1alpha1.ReasonMissingBlockingCR, ranv1alpha1.ReasonIncompleteBlockingCR, ranv1alpha1.ReasonBlockingCRCycle}

// startWait says what a rollout that has not started waits for, from its Progressing
// condition.
func startWait(cgu *ranv1alpha1.ClusterGroupUpgrade) string {
	enabled := cgu.Spec.Enable == nil || *cgu.Spec.Enable
	var progressing *metav1.Condition
	for i, c := range cgu.Status.Conditions {
		if c.Type == ranv1alpha1.ConditionProgressing {
			progressing = &cgu.Status.Conditions[i]
		}
	}
	switch {
	case progressing == nil && enabled:
		return "the operator to start it"
	case progressing == nil, progressing.Reason == ranv1alpha1.ReasonNotEnabled:
		return "spec.enable to be true"
	case slices.Contains(blockingReasons, progressing.Reason):
		return "a blocking CGU: " + progressing.Message
	}
	fix := "the spec to be fixed: " + reasonAndMessage(progressing.Reason, progressing.Message)
	if !enabled {
		fix += "; then spec.enable to be true"
	}
	return fix
}

// batchWait says which clusters of the current batch the rollout waits for.
func batchWait(st ranv1alpha1.ClusterGroupUpgradeStatus) string {
	cb := st.CurrentBatch
	if cb == nil {
		return "the next batch to start"
	}
	var waiting []string
	for _, c := range cb.Clusters {
		if terminal(c.State) {
			continue
		}
		if c.CurrentPolicy != "" {
			waiting = append(waiting, fmt.Sprintf("%s (%s)", c.Name, c.CurrentPolicy))
		} else {
			waiting = append(waiting, c.Name)
		}
	}
	// The clusters not done come first and may not all be shown; the counts have them all.
	n := max(len(waiting), st.Counts.InProgress)
	if n == 0 {
		if gates := openGates(cb.Analysis); gates != "" {
			return fmt.Sprintf("the analysis of batch %d: %s", cb.Index, gates)
		}
		return fmt.Sprintf("batch %d to end", cb.Index)
	}
	named := strings.Join(waiting[:min(len(waiting), waitingNamed)], ", ")
	if rest := n - min(len(waiting), waitingNamed); rest > 0 {
		named += fmt.Sprintf(" and %d more", rest)
	}
	return fmt.Sprintf("%s of batch %d to comply: %s", words.Plural(n, "cluster"), cb.Index, named)
}

// openGates names the analysis gates that have not ended, with their phase; "" when none.
func openGates(a *ranv1alpha1.BatchAnalysis) string {
	if a == nil {
		return ""
	}
	var open []string
	for _, g := range a.Gates {
		if g.Phase == ranv1alpha1.AnalysisRunning || g.Phase == ranv1alpha1.AnalysisInconclusive {
			open = append(open, fmt.Sprintf("%s (%s)", g.Name, strings.ToLower(string(g.Phase))))
		}
	}
	return strings.Join(open, ", ")
}

// terminal reports whether a cluster state is never left.
func terminal(s ranv1alpha1.ClusterState) bool {
	return s == ranv1alpha1.ClusterCompleted || s == ranv1alpha1.ClusterTimedOut || s == ranv1alpha1.ClusterFailed ||
		s == ranv1alpha1.ClusterHeld
}
