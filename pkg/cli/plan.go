package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/pkg/preview"
	"github.com/cgu-operator/cgu-operator/pkg/words"
)

// PlanOutput is what `plan -o json` and `plan -o yaml` print.
type PlanOutput struct {
	// Frozen is true once the rollout started: the batches are those recorded in its
	// ClusterGroupUpgradeBatch objects and no longer follow the spec. False for a
	// preview: the plan the operator would freeze if the rollout started now.
	Frozen bool `json:"frozen"`
	// Batches in remediation order: the canary batches, then the others.
	Batches []PlanBatch `json:"batches"`
	// SkippedCompliant are the selected clusters left out because they already comply
	// with every managed policy, in selection order. Only a preview names them.
	SkippedCompliant []string `json:"skippedCompliant"`
	// Problem is why the operator cannot plan the rollout (a preview only); Batches is
	// empty then.
	Problem *PlanProblem `json:"problem,omitempty"`
	// Spread says how spec.remediationStrategy.spread and antiAffinity shaped the batches
	// (status.plan.spread once frozen), and SpreadAddedBatches how many batches they added
	// to those maxConcurrency alone makes.
	Spread             []ranv1alpha1.SpreadSummary `json:"spread,omitempty"`
	SpreadAddedBatches int                         `json:"spreadAddedBatches,omitempty"`
}

// PlanBatch is one batch of the plan.
type PlanBatch struct {
	// Index is the batch's 1-based position.
	Index int `json:"index"`
	// Canary is true for a canary batch.
	Canary bool `json:"canary"`
	// Window, for the window of a Window rollout, is how many of its clusters may be in
	// progress at once; absent for a batch.
	Window int `json:"window,omitempty"`
	// Stages, for the batch of a Progressive rollout, are its stage sizes by step, the last
	// repeating; StopUnhealthy is true when an unhealthy stage stops the rollout rather than
	// sending the growth back.
	Stages        []int `json:"stages,omitempty"`
	StopUnhealthy bool  `json:"stopUnhealthy,omitempty"`
	// Clusters of the batch, in plan order.
	Clusters []PlanCluster `json:"clusters"`
}

// PlanCluster is one cluster of a batch.
type PlanCluster struct {
	Name string `json:"name"`
	// State is the cluster's state in a frozen plan (Pending until its batch starts);
	// absent in a preview.
	State ranv1alpha1.ClusterState `json:"state,omitempty"`
}

// PlanProblem is the reason and message of the condition the operator writes when it
// cannot plan the rollout.
type PlanProblem struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

type planOptions struct {
	*env
	output string
	// allClusters lists every cluster of a batch; otherwise a batch of more than
	// planListBound is abbreviated.
	allClusters bool
}

// A batch, or the clusters left out, of more than planListBound clusters is written as its
// count and its first planRuns runs of names, unless --all-clusters.
const (
	planListBound = 10
	planRuns      = 5
)

func newPlanCommand(e *env) *cobra.Command {
	o := &planOptions{env: e}
	cmd := &cobra.Command{
		Use:   "plan NAME",
		Short: "Show the batches of a ClusterGroupUpgrade's plan",
		Long: `Show the plan of a ClusterGroupUpgrade: one line per batch, canary batches first, with the
clusters of each batch. In a Window rollout (spec.remediationStrategy.mode), the clusters
after the canaries are one batch, a window that keeps maxConcurrency of them in progress.
A batch of more than 10 clusters is written as its count and its first runs of names in
natural order ("40 clusters: sno-003..sno-042", "sno-9" before "sno-10"), with the count of
its clusters in each state once frozen; --all-clusters lists every cluster in plan order.

Before the rollout starts the plan is a preview, computed from the hub as the operator
computes it (selected clusters, canaries, maxConcurrency, managed policies), with the
clusters left out because they already comply with every managed policy. The operator
freezes the plan when the rollout starts; from then on the plan is read from the batch
records, with the state of each cluster.

With -o json or -o yaml, print the plan as data, every cluster named (-o jsonpath=... and
-o go-template=... read the same document):
  frozen            true once the rollout started, false for a preview
  batches           [{index, canary, window, clusters: [{name, state}]}], state once frozen;
                    window, in a Window rollout, is how many of the batch run at once
  skippedCompliant  the clusters left out as already compliant (a preview only)
  spread            [{labelKey, maxPerBatch, values, largest, unlabeled}] when
                    spec.remediationStrategy spreads the batches over label values;
                    spreadAddedBatches, the batches the spread added
  problem           {reason, message} when the operator cannot plan the spec`,
		Example: `  kubectl cgu plan upgrade -n ztp-upgrades
  kubectl cgu plan upgrade --all-clusters
  kubectl cgu plan upgrade -o json | jq '.batches[] | select(.canary)'
  kubectl cgu plan upgrade -o jsonpath='{range .batches[*]}{.index}{" "}{.clusters[*].name}{"\n"}{end}'`,
		Args: exactlyOneName,
		RunE: runE(o.run),
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", outputTable, documentOutputHelp)
	cmd.Flags().BoolVar(&o.allClusters, "all-clusters", false,
		"List every cluster of each batch, in plan order, rather than a long batch's count and runs of names")
	return cmd
}

func (o *planOptions) run(ctx context.Context, args []string) error {
	if err := checkDocumentOutput(o.output, "a plan"); err != nil {
		return err
	}
	c, cgu, err := o.upgrade(ctx, o.output, args[0])
	if err != nil {
		return err
	}
	out, frozenAt, err := readPlan(ctx, c, cgu)
	if err != nil {
		return err
	}
	if o.output != outputTable {
		return printData(o.IOStreams.Out, o.output, out)
	}
	return writePlan(o.IOStreams.Out, o.painter(), planText{cgu: cgu, plan: out, frozenAt: frozenAt, now: o.now(), width: o.width(),
		allClusters: o.allClusters})
}

// readPlan reads the frozen plan of a started rollout, or previews it; it returns when
// the plan was frozen (zero for a preview).
func readPlan(ctx context.Context, r client.Reader, cgu *ranv1alpha1.ClusterGroupUpgrade) (PlanOutput, time.Time, error) {
	frozen, err := preview.ReadFrozen(ctx, r, cgu)
	if err != nil {
		return PlanOutput{}, time.Time{}, err
	}
	if frozen.Started {
		return frozenOutput(cgu, frozen), frozen.FrozenAt, nil
	}
	res, err := preview.Build(ctx, r, cgu)
	if err != nil {
		return PlanOutput{}, time.Time{}, err
	}
	out := planOutput(res.Plan, false, nil)
	if res.Problem != nil {
		out.Problem = &PlanProblem{Reason: res.Problem.Reason, Message: res.Problem.Message}
	}
	return out, time.Time{}, nil
}

// planOutput writes a plan as PlanOutput; state gives each cluster's state, nil for none.
func planOutput(p plan.Plan, frozen bool, state func(string) ranv1alpha1.ClusterState) PlanOutput {
	out := PlanOutput{Frozen: frozen, Batches: make([]PlanBatch, 0, len(p.Batches)), SkippedCompliant: []string{}}
	for i, b := range p.Batches {
		batch := PlanBatch{Index: i + 1, Canary: b.Canary, Window: b.Window, Stages: b.Stages, StopUnhealthy: b.StopUnhealthy,
			Clusters: make([]PlanCluster, 0, len(b.Clusters))}
		for _, c := range b.Clusters {
			pc := PlanCluster{Name: c}
			if state != nil {
				pc.State = state(c)
			}
			batch.Clusters = append(batch.Clusters, pc)
		}
		out.Batches = append(out.Batches, batch)
	}
	out.SkippedCompliant = append(out.SkippedCompliant, p.SkippedCompliant...)
	for _, u := range p.Spread {
		out.Spread = append(out.Spread, ranv1alpha1.SpreadSummary{LabelKey: u.Key, MaxPerBatch: u.MaxPerBatch, Values: u.Values, Largest: u.Largest, Unlabeled: u.Unlabeled})
	}
	out.SpreadAddedBatches = p.SpreadAdded
	return out
}

// frozenOutput is the frozen plan of a started rollout, with the spread status.plan kept
// from the start (the batch records do not hold it).
func frozenOutput(cgu *ranv1alpha1.ClusterGroupUpgrade, frozen preview.Frozen) PlanOutput {
	out := planOutput(frozen.Plan, true, frozen.State)
	if ps := cgu.Status.Plan; ps != nil {
		out.Spread, out.SpreadAddedBatches = ps.Spread, ps.SpreadAddedBatches
	}
	return out
}

// spreadLines say how the spread shaped the batches, a line per label key ("Spread by site:
// at most 1 cluster per value in a batch (4 values, the largest with 3 clusters; 2 clusters
// without the label, not bounded)"), the last saying the batches it added.
func spreadLines(out PlanOutput) []string {
	var lines []string
	for _, s := range out.Spread {
		line := fmt.Sprintf("Spread by %s: at most %s per value in a batch (%s, the largest with %s", s.LabelKey,
			words.Plural(s.MaxPerBatch, "cluster"), words.Plural(s.Values, "value"), words.Plural(s.Largest, "cluster"))
		if s.Unlabeled > 0 {
			line += fmt.Sprintf("; %s without the label, not bounded", words.Plural(s.Unlabeled, "cluster"))
		}
		lines = append(lines, line+")")
	}
	if len(out.Spread) > 0 {
		added := "the spread added no batch to those maxConcurrency alone makes"
		if out.SpreadAddedBatches > 0 {
			added = fmt.Sprintf("the spread added %s to those maxConcurrency alone makes", words.Plural(out.SpreadAddedBatches, "batch"))
		}
		lines[len(lines)-1] += "; " + added
	}
	return lines
}

// planText is what the plan's text output needs.
type planText struct {
	cgu      *ranv1alpha1.ClusterGroupUpgrade
	plan     PlanOutput
	frozenAt time.Time
	now      time.Time
	// width is the width lists of clusters wrap at.
	width int
	// allClusters lists every cluster of a long batch (--all-clusters).
	allClusters bool
}

// writePlan writes the plan for people: a summary, whether it is frozen, one line per
// batch (wrapped), and the clusters left out.
func writePlan(w io.Writer, p painter, t planText) error {
	var b strings.Builder
	clusters := 0
	for _, batch := range t.plan.Batches {
		clusters += len(batch.Clusters)
	}
	fmt.Fprintf(&b, "Plan of %s/%s: %s, %s\n", t.cgu.Namespace, t.cgu.Name, words.Plural(len(t.plan.Batches), "batch"), words.Plural(clusters, "cluster"))
	switch {
	case !t.plan.Frozen:
		b.WriteString("Preview: the plan is frozen when the rollout starts\n")
	case t.frozenAt.IsZero():
		b.WriteString("Frozen\n")
	default:
		fmt.Fprintf(&b, "Frozen at %s (%s)\n", t.frozenAt.UTC().Format(time.RFC3339), ago(t.frozenAt, t.now))
	}
	if pr := t.plan.Problem; pr != nil {
		fmt.Fprintf(&b, "No plan: %s\n", reasonAndMessage(pr.Reason, pr.Message))
	}
	for _, line := range spreadLines(t.plan) {
		b.WriteString(line + "\n")
	}
	for _, batch := range t.plan.Batches {
		for _, line := range batchLines(p, batch, t.width, t.allClusters) {
			b.WriteString(line + "\n")
		}
	}
	if left := leftOut(t); left != "" {
		b.WriteString(left + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// batchLines writes one batch, "Batch 3: a b c" or "Batch 1 (canary): a (Completed)",
// wrapped at width; a batch of more than planListBound clusters as its count and runs of
// names, "Batch 3: 40 clusters: sno-003..sno-042 (38 Completed, 2 TimedOut)", unless all.
func batchLines(p painter, batch PlanBatch, width int, all bool) []string {
	prefix := fmt.Sprintf("Batch %d:", batch.Index)
	switch {
	case batch.Canary:
		prefix = fmt.Sprintf("Batch %d (canary):", batch.Index)
	case batch.Window > 0:
		prefix = fmt.Sprintf("Batch %d (a window of %d in progress at once):", batch.Index, batch.Window)
	case len(batch.Stages) > 0:
		prefix = fmt.Sprintf("Batch %d (%s):", batch.Index, stagesPhrase(batch.Stages, batch.StopUnhealthy))
	}
	if !all && len(batch.Clusters) > planListBound {
		items, visible := abbreviatedBatch(p, batch.Clusters)
		return words.Wrap(prefix, items, visible, width)
	}
	names := make([]string, len(batch.Clusters))
	visible := make([]int, len(batch.Clusters))
	for i, c := range batch.Clusters {
		names[i], visible[i] = c.Name, utf8.RuneCountInString(c.Name)
		if c.State != "" {
			names[i] += " (" + p.state(string(c.State)) + ")"
			visible[i] += len(c.State) + 3
		}
	}
	return words.Wrap(prefix, names, visible, width)
}

// planStates is the order batchStates counts states in; others follow by name.
var planStates = []ranv1alpha1.ClusterState{ranv1alpha1.ClusterCompleted, ranv1alpha1.ClusterInProgress, ranv1alpha1.ClusterTimedOut,
	ranv1alpha1.ClusterFailed, ranv1alpha1.ClusterHeld, ranv1alpha1.ClusterPending}

// abbreviatedBatch writes a long batch as words to wrap, with their visible widths: its
// count and runs of names, then, once frozen, how many of its clusters are in each state.
func abbreviatedBatch(p painter, clusters []PlanCluster) ([]string, []int) {
	names := make([]string, len(clusters))
	counts := map[ranv1alpha1.ClusterState]int{}
	for i, c := range clusters {
		names[i] = c.Name
		if c.State != "" {
			counts[c.State]++
		}
	}
	items := strings.Fields(words.Abbreviate(names, "cluster", planRuns))
	visible := make([]int, len(items))
	for i, item := range items {
		visible[i] = utf8.RuneCountInString(item)
	}
	states := slices.Collect(maps.Keys(counts))
	slices.SortFunc(states, func(a, b ranv1alpha1.ClusterState) int {
		return cmp.Or(cmp.Compare(stateRank(a), stateRank(b)), strings.Compare(string(a), string(b)))
	})
	for i, st := range states {
		n, end := strconv.Itoa(counts[st]), ","
		if i == 0 {
			n = "(" + n
		}
		if i == len(states)-1 {
			end = ")"
		}
		items = append(items, n+" "+p.state(string(st))+end)
		visible = append(visible, len(n)+len(st)+2)
	}
	return items, visible
}

// stateRank is a state's place in planStates, past them for another.
func stateRank(s ranv1alpha1.ClusterState) int {
	if i := slices.Index(planStates, s); i >= 0 {
		return i
	}
	return len(planStates)
}

// leftOut says which clusters the plan left out as already compliant: named in a
// preview, counted (from the status) once frozen.
func leftOut(t planText) string {
	const label = "Already compliant, left out: "
	switch {
	case t.plan.Problem != nil:
		return ""
	case !t.plan.Frozen && len(t.plan.SkippedCompliant) == 0:
		return label + "none"
	case !t.plan.Frozen && !t.allClusters && len(t.plan.SkippedCompliant) > planListBound:
		return label + words.Abbreviate(t.plan.SkippedCompliant, "cluster", planRuns)
	case !t.plan.Frozen:
		return label + strings.Join(t.plan.SkippedCompliant, " ")
	case t.cgu.Status.Plan != nil && t.cgu.Status.Plan.SkippedCompliant > 0:
		return label + words.Plural(t.cgu.Status.Plan.SkippedCompliant, "cluster")
	}
	return ""
}

// stagesPhrase says how a Progressive batch's stages grow: "stages of 1, 5, 25, then 50
// clusters; an unhealthy stage starts the growth again".
func stagesPhrase(sizes []int, stop bool) string {
	words := make([]string, len(sizes))
	for i, n := range sizes {
		words[i] = strconv.Itoa(n)
	}
	list := words[0]
	if len(words) > 1 {
		list = strings.Join(words[:len(words)-1], ", ") + ", then " + words[len(words)-1]
	}
	outcome := "an unhealthy stage starts the growth again"
	if stop {
		outcome = "an unhealthy stage stops the rollout"
	}
	return fmt.Sprintf("stages of %s clusters; %s", list, outcome)
}
