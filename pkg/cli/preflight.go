package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/estimate"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/preview"
	"github.com/cgu-operator/cgu-operator/pkg/spokecheck"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
	"github.com/cgu-operator/cgu-operator/pkg/updateservice"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
	"github.com/cgu-operator/cgu-operator/pkg/words"
)

// PreflightOutput is what `preflight -o json` and `preflight -o yaml` print.
type PreflightOutput struct {
	// Plan is the plan, as `plan -o json` prints it.
	Plan PlanOutput `json:"plan"`
	// PathValidation is true when spec.upgradeChecks.pathValidation is on; the clusters'
	// checks are empty otherwise.
	PathValidation bool `json:"pathValidation"`
	// Clusters are the planned clusters that have not started, in plan order.
	Clusters []PreflightCluster `json:"clusters"`
	// Estimate is how long the batches left may take.
	Estimate estimate.Estimate `json:"estimate"`
	// PrecachePlan is the bandwidth plan of the pre-caching left, as the status holds it;
	// absent without a PreCachingConfig's bandwidth, or once no pull is left.
	PrecachePlan *ranv1alpha1.PrecachePlan `json:"precachePlan,omitempty"`
}

// PreflightCluster is what the preflight found for one cluster.
type PreflightCluster struct {
	Name string `json:"name"`
	// Batch is the 1-based batch of the cluster.
	Batch int `json:"batch"`
	// Check is the verdict of the upgrade checks; absent without pathValidation.
	Check *PreflightCheck `json:"check,omitempty"`
	// Health is NotChecked without spec.upgradeChecks.health.beforeUpgrade. With it, before
	// the rollout starts, what the operator's check on the cluster found: Healthy, Pending,
	// or the reason it is not healthy (ClusterOperatorsUnhealthy, CriticalAlertsFiring, ...);
	// once started, BeforeStart: the check runs again when the cluster's batch starts.
	Health string `json:"health"`
	// Precache is Off without spec.preCaching, else the cluster's precache state
	// (NotStarted, Starting, Active, Succeeded, Timeout, Failed), Unknown while the
	// precache spec is not valid.
	Precache string `json:"precache"`
}

// PreflightCheck is the verdict of the upgrade checks on one cluster.
type PreflightCheck struct {
	// Outcome is Proceed, Done, Hold or Reject.
	Outcome  string              `json:"outcome"`
	Reason   string              `json:"reason"`
	Message  string              `json:"message"`
	Risks    []upgradecheck.Risk `json:"risks,omitempty"`
	Accepted []string            `json:"accepted,omitempty"`
}

// Preflight health and precache values.
const (
	healthNotChecked  = "NotChecked"
	healthBeforeStart = "BeforeStart"
	healthPending     = "Pending"
	healthHealthy     = "Healthy"
	precacheOff       = "Off"
	precacheUnknown   = "Unknown"
)

type preflightOptions struct {
	*env
	output        string
	updateService string
}

func newPreflightCommand(e *env) *cobra.Command {
	o := &preflightOptions{env: e}
	cmd := &cobra.Command{
		Use:   "preflight NAME",
		Short: "Check, cluster by cluster, what a ClusterGroupUpgrade would do",
		Long: `Check a ClusterGroupUpgrade before it starts, or the clusters it has not started yet: for each
cluster, its batch, the verdict of the upgrade checks (is the upgrade the managed policies
ask for a valid path for it, which conditional-update risks it carries and whether the
rollout accepts them), its health as the operator's check before the start found it
(Healthy, Pending, or why not; BeforeStart once the rollout started, NotChecked without
health checks), and its precache state; then the batch plan and an estimate of how long the
batches left take.

The verdicts are computed here as the operator computes them, from the ClusterVersion each
cluster's ManagedClusterView shows: they need spec.upgradeChecks.pathValidation, which
makes the operator create those views. A y-stream target needs the update graph, read from
spec.upgradeChecks.updateService, else the cluster's spec.upstream, else --update-service.

The estimate is the median duration of the batches that ended, times the batches left; before
any batch ended it is an upper bound, each batch's share of the rollout's timeout. In a Window
rollout it counts the window's waves (its clusters not done over its size), each the median
time its completed clusters took, or before any completed, a wave's share of the timeout.
Approvals and maintenance windows are not counted.

With -o json or -o yaml, print:
  plan            the plan, as plan -o json prints it
  pathValidation  whether the upgrade checks are on
  clusters        [{name, batch, check: {outcome, reason, message, risks, accepted}, health, precache}]
  estimate        {batchesLeft, perBatch, total, upperBound, ended, window}; with window,
                  batchesLeft counts waves and ended completed clusters`,
		Example: `  kubectl cgu preflight upgrade -n ztp-upgrades
  kubectl cgu preflight upgrade -o json | jq '.clusters[] | select(.check.outcome != "Proceed")'`,
		Args: exactlyOneName,
		RunE: runE(o.run),
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", outputTable, documentOutputHelp)
	cmd.Flags().StringVar(&o.updateService, "update-service", updateservice.DefaultURL,
		"Graph API of the update service for y-stream targets, when neither the ClusterGroupUpgrade nor the cluster names one")
	return cmd
}

func (o *preflightOptions) run(ctx context.Context, args []string) error {
	if err := checkDocumentOutput(o.output, "a preflight report"); err != nil {
		return err
	}
	c, cgu, err := o.upgrade(ctx, o.output, args[0])
	if err != nil {
		return err
	}
	out, err := o.preflight(ctx, c, cgu)
	if err != nil {
		return err
	}
	if o.output != outputTable {
		return printData(o.IOStreams.Out, o.output, out)
	}
	return writePreflight(o.IOStreams.Out, o.painter(), cgu, out)
}

func (o *preflightOptions) preflight(ctx context.Context, c client.Client, cgu *ranv1alpha1.ClusterGroupUpgrade) (PreflightOutput, error) {
	frozen, err := preview.ReadFrozen(ctx, c, cgu)
	if err != nil {
		return PreflightOutput{}, hubError(err)
	}
	out := PreflightOutput{PathValidation: cgu.Spec.UpgradeChecks != nil && cgu.Spec.UpgradeChecks.PathValidation}
	var roots []*policyv1.Policy
	if out.Plan, roots, err = planAndPolicies(ctx, c, cgu, frozen); err != nil {
		return PreflightOutput{}, hubError(err)
	}
	if out.Clusters, err = o.clusters(ctx, c, cgu, roots, out); err != nil {
		return PreflightOutput{}, hubError(err)
	}
	out.Estimate = estimateOf(cgu, out.Plan, frozen)
	if cgu.Status.Precaching != nil {
		out.PrecachePlan = cgu.Status.Precaching.Plan
	}
	return out, nil
}

// planAndPolicies reads the frozen plan and accepted policies of a started rollout, or
// previews them.
func planAndPolicies(ctx context.Context, c client.Reader, cgu *ranv1alpha1.ClusterGroupUpgrade, frozen preview.Frozen) (PlanOutput, []*policyv1.Policy, error) {
	if frozen.Started {
		roots, err := preview.AcceptedPolicies(ctx, c, cgu.Status.ManagedPoliciesForUpgrade)
		return frozenOutput(cgu, frozen), roots, err
	}
	f, err := preview.Gather(ctx, c, cgu)
	if err != nil {
		return PlanOutput{}, nil, err
	}
	out := planOutput(f.Plan, false, nil)
	problem := f.SelectionProblem
	if problem == nil {
		problem = f.Invalid
	}
	if problem != nil {
		out.Problem = &PlanProblem{Reason: problem.Reason, Message: problem.Message}
	}
	return out, f.Policies, nil
}

// clusters judges the planned clusters that have not started, in plan order.
func (o *preflightOptions) clusters(ctx context.Context, c client.Client, cgu *ranv1alpha1.ClusterGroupUpgrade,
	roots []*policyv1.Policy, out PreflightOutput) ([]PreflightCluster, error) {
	checks := spokecheck.NewChecks(c, cgu, roots)
	checks.DefaultService = o.updateService
	graphs := &updateservice.Client{HTTP: &http.Client{Timeout: 10 * time.Second}}
	checks.Graphs = func(ctx context.Context, url, channel string) (*updategraph.Graph, error) {
		return graphs.Graph(ctx, url, channel, "")
	}
	list := []PreflightCluster{}
	for _, b := range out.Plan.Batches {
		for _, cl := range b.Clusters {
			if cl.State != "" && cl.State != ranv1alpha1.ClusterPending {
				continue
			}
			pc := PreflightCluster{Name: cl.Name, Batch: b.Index, Health: healthNotChecked, Precache: precacheOff}
			if h := spokecheck.HealthChecks(cgu); h != nil && h.BeforeUpgrade {
				health, err := previewHealth(ctx, c, cgu, cl.Name, out.Plan.Frozen)
				if err != nil {
					return nil, err
				}
				pc.Health = health
			}
			if cgu.Spec.PreCaching {
				pc.Precache = precacheState(cgu, cl.Name)
			}
			if out.PathValidation {
				v, err := checks.Judge(ctx, cl.Name)
				if err != nil {
					return nil, err
				}
				pc.Check = &PreflightCheck{Outcome: string(v.Outcome), Reason: v.Reason, Message: v.Message, Risks: v.Risks, Accepted: v.Accepted}
			}
			list = append(list, pc)
		}
	}
	return list, nil
}

// precacheState is where a cluster's pre-caching stands, as the rollout's status shows it
// (status.precaching.status, TALM's words read as the states' names); Unknown before the
// operator derived a valid spec.
func precacheState(cgu *ranv1alpha1.ClusterGroupUpgrade, cluster string) string {
	p := cgu.Status.Precaching
	if p == nil || p.Spec == nil || !meta.IsStatusConditionTrue(cgu.Status.Conditions, ranv1alpha1.ConditionPrecacheSpecValid) {
		return precacheUnknown
	}
	return string(precache.Kind.StateOf(p.Status[cluster]))
}

// previewHealth is what the operator's health check before the start found on a cluster:
// Healthy, Pending, or the reason it is not healthy; BeforeStart once the rollout started
// (the check then runs when the cluster's batch starts).
func previewHealth(ctx context.Context, c client.Client, cgu *ranv1alpha1.ClusterGroupUpgrade, cluster string, started bool) (string, error) {
	if started {
		return healthBeforeStart, nil
	}
	job := spokecheck.HealthJob(cgu, cluster, spokecheck.HealthRunBeforeEnable(cgu), "")
	v, err := spokecheck.ReadHealth(ctx, spokejob.Reader{Client: c}, job, false)
	switch {
	case err != nil:
		return "", err
	case !v.Done:
		return healthPending, nil
	case v.Healthy:
		return healthHealthy, nil
	}
	return v.Reason, nil
}

// writePreflight writes the preflight for people: a summary, the estimate, one line per
// cluster, then the messages of the clusters held or rejected.
func writePreflight(w io.Writer, p painter, cgu *ranv1alpha1.ClusterGroupUpgrade, out PreflightOutput) error {
	var b strings.Builder
	clusters := 0
	for _, batch := range out.Plan.Batches {
		clusters += len(batch.Clusters)
	}
	kind := "preview"
	if out.Plan.Frozen {
		kind = "frozen plan"
	}
	fmt.Fprintf(&b, "Preflight of %s/%s: %s, %s of %s, %s\n", cgu.Namespace, cgu.Name, orDash(string(cgu.Status.State)), kind,
		words.Plural(len(out.Plan.Batches), "batch"), words.Plural(clusters, "cluster"))
	if pr := out.Plan.Problem; pr != nil {
		fmt.Fprintf(&b, "No plan: %s\n", reasonAndMessage(pr.Reason, pr.Message))
	}
	for _, line := range spreadLines(out.Plan) {
		b.WriteString(line + "\n")
	}
	if !out.PathValidation {
		b.WriteString("Upgrade checks: off (set spec.upgradeChecks.pathValidation to check each cluster's upgrade path and risks)\n")
	} else {
		fmt.Fprintf(&b, "Upgrade checks: %s\n", checkCounts(out.Clusters))
	}
	b.WriteString("Estimated duration: " + estimate.Text(out.Estimate) + "\n")
	if line := precache.PlanText(out.PrecachePlan); line != "" {
		b.WriteString(line + "\n")
	}
	if len(out.Clusters) == 0 {
		b.WriteString("No cluster is left to start\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	t := table{header: []string{"CLUSTER", "BATCH", "CHECK", "REASON", "RISKS", "HEALTH", "PRECACHE"}}
	var notes []string
	for _, c := range out.Clusters {
		check, reason, risks := cell{text: "-"}, "-", "-"
		if c.Check != nil {
			check, reason = cell{text: c.Check.Outcome, color: outcomeColor(c.Check.Outcome)}, c.Check.Reason
			risks = riskCell(*c.Check)
			if c.Check.Outcome == string(upgradecheck.Hold) || c.Check.Outcome == string(upgradecheck.Reject) {
				notes = append(notes, fmt.Sprintf("  %s: %s", c.Name, c.Check.Message))
			}
		}
		t.add(plain(c.Name), plain(fmt.Sprint(c.Batch)), check, plain(reason), plain(risks), plain(c.Health), plain(c.Precache))
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if err := t.write(w, p, ""); err != nil {
		return err
	}
	if len(notes) > 0 {
		_, err := io.WriteString(w, "Held or rejected:\n"+strings.Join(notes, "\n")+"\n")
		return err
	}
	return nil
}

// checkCounts counts the clusters by outcome, "4 proceed, 1 hold".
func checkCounts(clusters []PreflightCluster) string {
	counts := map[string]int{}
	for _, c := range clusters {
		if c.Check != nil {
			counts[c.Check.Outcome]++
		}
	}
	if text := upgradecheck.CountsText(counts); text != "" {
		return text
	}
	return "no cluster left to check"
}

// riskCell names a verdict's risks, "A (accepted), B", each marked "(does not apply)" when
// the cluster's evaluation recommends the update.
func riskCell(c PreflightCheck) string {
	if len(c.Risks) == 0 {
		return "-"
	}
	names := make([]string, 0, len(c.Risks))
	for _, r := range c.Risks {
		n := r.Name
		switch {
		case slices.Contains(c.Accepted, r.Name):
			n += " (accepted)"
		case c.Reason == upgradecheck.ReasonRecommended:
			n += " (does not apply)"
		}
		names = append(names, n)
	}
	return strings.Join(names, ", ")
}

func outcomeColor(outcome string) string {
	switch upgradecheck.Outcome(outcome) {
	case upgradecheck.Proceed, upgradecheck.Done:
		return ansiGreen
	case upgradecheck.Hold:
		return ansiYellow
	}
	return ansiRed
}

// estimateOf is the estimate (pkg/estimate) of a plan as kubectl cgu reads it: each batch's
// clusters not done, the running batch's start and deadline from status.currentBatch, the
// time the ended batches and a window's completed clusters took from the records.
func estimateOf(cgu *ranv1alpha1.ClusterGroupUpgrade, p PlanOutput, frozen preview.Frozen) estimate.Estimate {
	in := estimate.Input{Ended: frozen.Ended, CompletedInWindow: frozen.CompletedInWindow}
	if rs := cgu.Spec.RemediationStrategy; rs != nil {
		in.TimeoutMinutes = rs.Timeout
	}
	current := cgu.Status.CurrentBatch
	for _, b := range p.Batches {
		eb := estimate.Batch{Clusters: len(b.Clusters), Stages: b.Stages, Window: b.Window}
		for _, c := range b.Clusters {
			if !terminal(c.State) {
				eb.Left++
			}
		}
		if current != nil && current.Index == b.Index && current.StartedAt != nil && current.TimeoutAt != nil {
			eb.Started, eb.Deadline = current.StartedAt.Time, current.TimeoutAt.Time
		}
		in.Batches = append(in.Batches, eb)
	}
	return estimate.Of(in)
}
