package cgu

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/backup"
	"github.com/cgu-operator/cgu-operator/pkg/clusteractions"
	"github.com/cgu-operator/cgu-operator/pkg/gates"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/pkg/preview"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/spokecheck"
	"github.com/cgu-operator/cgu-operator/pkg/tenancy"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
)

// SoakAnnotation on a managed policy is how many seconds a cluster must stay compliant with
// it before moving on (TALM's name).
const SoakAnnotation = "ran.openshift.io/soak-seconds"

// IntermediateAnnotation ("true") on a managed policy says a later managed policy
// supersedes it, as the second update of a path supersedes the first: a cluster that went
// past it need not stay compliant with it for the rollout to complete. An addition to TALM.
const IntermediateAnnotation = "ran.openshift.io/intermediate"

// Intermediate reports whether a managed policy is an intermediate update of a path
// (IntermediateAnnotation).
func Intermediate(p *policyv1.Policy) bool {
	return p != nil && p.Annotations[IntermediateAnnotation] == "true"
}

// pass is one decision in the making: the facts, and what each step decided so far. Each
// step reads what the steps before it decided; none goes back.
type pass struct {
	f      *Facts
	cfg    Config
	now    time.Time
	cgu    *ranv1alpha1.ClusterGroupUpgrade
	before *ranv1alpha1.ClusterGroupUpgradeStatus
	in     *Intents

	// precache and backup are where the pre-start jobs stand, nil when there is none to
	// run; precacheFailed and backupFailed are set when one failed on every planned cluster.
	precache       *precacheRun
	precacheFailed *rollout.Problem
	backup         *backupRun
	backupFailed   *rollout.Problem
	// verdicts and healthPreview are the checks' verdicts on the clusters still planned.
	verdicts      map[string]upgradecheck.Verdict
	healthPreview map[string]spokecheck.HealthVerdict
	// pre and post are the pre- and post-upgrade actions' observations on the clusters
	// about to start and on those verifying.
	pre, post map[string]manifestwork.Observation
}

// Decide decides one reconcile of a ClusterGroupUpgrade from what was read, at now. The
// steps run in data order: the mode and the spec's validity, the pre-start jobs (whose
// failures take clusters out of the plan), the checks on the clusters left, the rollout's
// decision through its gates, then every write it calls for and the status.
func Decide(f Facts, cfg Config, now time.Time) Intents {
	cgu := f.Upgrade
	in := &Intents{}
	if cgu.Status.State == ranv1alpha1.StateCompleted && cgu.Status.StartedAt != nil {
		in.Settled, in.Cleanup = true, DeleteObjects(cgu)
		in.Status = *cgu.Status.DeepCopy()
		observed(&in.Status, cgu.Generation)
		return *in
	}
	p := &pass{f: &f, cfg: cfg, now: now, cgu: cgu, before: &cgu.Status, in: in}
	in.Mode = rollout.Enforcement(cgu.Spec.Enforcement, cgu.Status.Enforcement, f.Started, cfg.DefaultEnforcement)
	in.Plan = f.Plan
	if f.Lost != nil {
		p.stop(f.Lost)
		return *in
	}
	p.validate()
	p.precaching()
	p.backingUp()
	p.checks()
	p.observeActions()
	p.decide()
	p.spoke()
	p.records()
	p.actions()
	p.enforcement()
	p.silences()
	p.status()
	return *in
}

// stop ends a rollout whose batch records were lost beyond rebuilding: nothing is enforced
// any more, and the status keeps what it showed, with the state TimedOut and what is lost.
func (p *pass) stop(lost *rollout.Problem) {
	started := p.now
	if p.before.StartedAt != nil {
		started = p.before.StartedAt.Time
	}
	p.in.Records = p.f.Records
	p.in.Decision = rollout.Decision{State: ranv1alpha1.StateTimedOut, Reason: lost.Reason, Message: lost.Message,
		Progress: rollout.Progress{Started: started, Finished: true}}
	p.enforcement()
	p.in.Enforcement.Paced = false
	st := p.before.DeepCopy()
	observed(st, p.cgu.Generation)
	st.State, st.Message = ranv1alpha1.StateTimedOut, rollout.Truncate(lost.Message, ranv1alpha1.MessageLimit)
	st.CurrentBatch, st.Waiting, st.CompletedAt = nil, nil, nil
	st.Enforcement = p.in.Mode
	setRolloutConditions(st, p.in.Decision)
	p.in.Status = *st
}

// DeleteObjects reports whether a completed rollout deletes its objects
// (spec.actions.afterCompletion.deleteObjects, true unless set false).
func DeleteObjects(cgu *ranv1alpha1.ClusterGroupUpgrade) bool {
	ac := cgu.Spec.Actions.AfterCompletion
	return ac == nil || ac.DeleteObjects == nil || *ac.DeleteObjects
}

// observed marks a status as written by a pass that succeeded for the generation.
func observed(st *ranv1alpha1.ClusterGroupUpgradeStatus, generation int64) {
	st.ObservedGeneration = generation
	meta.RemoveStatusCondition(&st.Conditions, ranv1alpha1.ConditionReconciled)
}

// validate says, before the start, why the spec cannot start: the selection's problem, the
// policies' or the spec's, then the maintenance windows'.
func (p *pass) validate() {
	if p.f.Started {
		return
	}
	s := p.f.Start
	switch {
	case s.SelectProblem != nil:
		p.in.Invalid = s.SelectProblem
	case s.Invalid != nil:
		p.in.Invalid = s.Invalid
	default:
		p.in.Invalid = gates.WindowProblem(p.cgu.Spec.MaintenanceWindows)
	}
	if p.in.Invalid == nil {
		p.in.Invalid = p.actionsProblem()
	}
	if p.in.Invalid == nil {
		p.in.Invalid = gates.AnalysisProblem(p.cgu.Spec.Analysis, p.f.Analysis.Endpoint)
	}
	if sa := p.cgu.Spec.SilenceAlerts; p.in.Invalid == nil && sa != nil && sa.Enabled && p.cfg.Alertmanager == "" {
		p.in.Invalid = &rollout.Problem{Reason: ranv1alpha1.ReasonNoAlertmanager,
			Message: "spec.silenceAlerts is enabled, and the operator was given no Alertmanager to silence on (--alertmanager-url)"}
	}
}

// actionsProblem is the problem of spec.actions, under the tenancy rules where they apply.
func (p *pass) actionsProblem() *rollout.Problem {
	var rules *tenancy.Rules
	if p.cfg.Tenancy.Applies(p.cgu.Namespace) {
		rules = &p.cfg.Tenancy
	}
	return actionsProblem(p.cgu.Spec.Actions, rules)
}

// actionsProblem says which of spec.actions cannot be written to a ManagedCluster, or (with
// tenancy rules) may not, nil when all can.
func actionsProblem(a ranv1alpha1.Actions, rules *tenancy.Rules) *rollout.Problem {
	var problems []string
	check := func(field string, ca ranv1alpha1.ClusterActions) {
		why := clusteractions.Invalid(ca)
		if rules != nil {
			if outside := rules.KeysOutside(clusteractions.Keys(ca)); len(outside) > 0 {
				why = strings.Join(slices.DeleteFunc([]string{why, outsideText(outside, rules.LabelPrefix)},
					func(s string) bool { return s == "" }), "; ")
			}
		}
		if why != "" {
			problems = append(problems, field+": "+why)
		}
	}
	if a.BeforeEnable != nil {
		check("spec.actions.beforeEnable", a.BeforeEnable.ClusterActions)
	}
	if a.AfterCompletion != nil {
		check("spec.actions.afterCompletion", a.AfterCompletion.ClusterActions)
	}
	if len(problems) == 0 {
		return nil
	}
	return &rollout.Problem{Reason: ranv1alpha1.ReasonInvalidClusterActions, Message: strings.Join(problems, "; ")}
}

// outsideText says which keys tenancy mode does not let a rollout write.
func outsideText(keys []string, prefix string) string {
	if prefix == "" {
		return "tenancy mode allows no label or annotation keys (the operator has no --tenancy-label-prefix): " +
			strings.Join(keys, ", ")
	}
	return fmt.Sprintf("keys outside the tenancy prefix %q: %s", prefix, strings.Join(keys, ", "))
}

// decide lets pkg/rollout decide, through the gates pkg/gates builds from the facts.
func (p *pass) decide() {
	cgu := p.cgu
	f := rollout.Facts{
		Now: p.now, Enabled: enabled(cgu), Blocked: p.f.Start.Blocked,
		Plan: p.in.Plan, Abort: cgu.Spec.BatchTimeoutAction == ranv1alpha1.BatchTimeoutAbort,
		Policies: p.stepFacts(policyFacts(p.f.Roots, p.f.Compliance, p.f.Released)), Progress: p.f.Progress,
	}
	if rs := cgu.Spec.RemediationStrategy; rs != nil {
		f.TimeoutMinutes = rs.Timeout
	}
	if !p.f.Started {
		for _, problem := range []*rollout.Problem{p.in.Invalid, p.precacheFailed, p.backupFailed} {
			if problem != nil {
				f.Invalid = problem
				break
			}
		}
	}
	p.in.Approvals = gates.Approvals(cgu, p.now)
	in := gates.Input{Upgrade: cgu, Now: p.now, Started: p.f.Started, Plan: p.in.Plan, Approvals: p.in.Approvals, Roots: p.f.Roots,
		Accepted: p.recordedAccepted(),
		Busy:     p.f.Others.Busy, Capacity: p.capacity(), Frozen: gates.FleetFrozen(p.f.Freezes), Progress: p.f.Progress, Verdicts: p.verdicts,
		HealthBefore: p.f.Health.Before, HealthAfter: p.f.Health.After,
		Precaching: p.precacheGate(), Backup: p.backupGate(), Measured: p.f.Analysis.Measured}
	if p.f.Works != nil {
		in.Works, in.Pre, in.Post = true, p.pre, p.post
	}
	if p.backup != nil {
		in.BackupDeadline = p.backup.startedAt.Add(backup.Overall)
	}
	f.Gates = gates.Build(in)
	f.Gates.StartsPaced = p.f.StartsPaced
	p.in.Decision = rollout.Decide(f)
	p.in.StartedNow = !p.f.Started && !p.in.Decision.Progress.Started.IsZero()
}

func enabled(cgu *ranv1alpha1.ClusterGroupUpgrade) bool {
	return cgu.Spec.Enable == nil || *cgu.Spec.Enable
}

// capacity is the room left under the hub-wide cap, nil without one or once the rollout
// finished (nothing starts).
func (p *pass) capacity() *int {
	if p.cfg.MaxClustersInProgress <= 0 || p.f.Progress.Finished {
		return nil
	}
	room := max(p.cfg.MaxClustersInProgress-p.f.Others.InProgress, 0)
	return &room
}

// policyFacts are what each managed policy says of the clusters: compliance on the root
// policy's status (read already when compliance has it), the soak and the soft timeout it
// asks for, and, for an intermediate one, the clusters the hub released from it.
func policyFacts(roots []*policyv1.Policy, compliance []map[string]policyv1.ComplianceState, released map[int]map[string]bool) []rollout.PolicyFacts {
	out := make([]rollout.PolicyFacts, len(roots))
	for i, p := range roots {
		if p == nil {
			continue // deleted since the start: nothing is done with it
		}
		if i < len(compliance) && compliance[i] != nil {
			out[i].Compliance = compliance[i]
		} else {
			out[i].Compliance = preview.Compliance(p)
		}
		if seconds, err := strconv.Atoi(p.Annotations[SoakAnnotation]); err == nil && seconds > 0 {
			out[i].Soak = time.Duration(seconds) * time.Second
		}
		if seconds, err := strconv.Atoi(p.Annotations[rollout.SoftTimeoutAnnotation]); err == nil && seconds > 0 {
			out[i].SoftTimeout = time.Duration(seconds) * time.Second
		}
		out[i].Intermediate = Intermediate(p)
		out[i].Released = released[i]
	}
	return out
}

// policyNames are the managed policies' names, in order, then the names of the steps
// (spec.manifestWorkTemplates), which the rollout goes through after them.
func (p *pass) policyNames() []string {
	return PolicyNames(p.cgu, p.f.Roots)
}

// PolicyNames are the managed policies' names, in order (a deleted one's as status
// recorded it), then the names of the steps (spec.manifestWorkTemplates).
func PolicyNames(cgu *ranv1alpha1.ClusterGroupUpgrade, roots []*policyv1.Policy) []string {
	out := make([]string, len(roots), len(roots)+len(cgu.Spec.ManifestWorkTemplates))
	for i, p := range roots {
		if p != nil {
			out[i] = p.Name
		} else if i < len(cgu.Status.ManagedPoliciesForUpgrade) {
			out[i] = cgu.Status.ManagedPoliciesForUpgrade[i].Name
		}
	}
	return append(out, cgu.Spec.ManifestWorkTemplates...)
}

// records decides the batch records' progress: at the start those of the plan, to be made
// first.
func (p *pass) records() {
	records := p.f.Records
	if p.in.StartedNow {
		records = plan.Records(p.in.Plan, p.cgu.Namespace, p.cgu.Name)
		if accepted := p.acceptedPolicies(); len(accepted) <= ranv1alpha1.RecordedPoliciesLimit {
			for i := range records {
				records[i].Spec.Policies = accepted
			}
		}
	}
	p.in.Records, p.in.Rebuilt = records, p.f.Rebuilt
	p.in.RecordStatus = rollout.RecordStatuses(records, p.in.Decision, p.in.Plan, p.policyNames(), p.now)
}

// actions runs beforeEnable on every planned cluster when the rollout starts, and
// afterCompletion on each cluster as it completes (on every planned cluster when the
// rollout completes, late ones included), and at the start on the selected clusters left
// out of the plan as already compliant.
func (p *pass) actions() {
	actions := p.cgu.Spec.Actions
	if p.f.Started {
		// Stored before admission refused them: the pass goes on without the actions.
		if p.in.ActionsProblem = p.actionsProblem(); p.in.ActionsProblem != nil {
			return
		}
	}
	if p.in.StartedNow && actions.BeforeEnable != nil {
		p.in.Actions.BeforeEnable = allClusters(p.in.Plan)
	}
	if actions.AfterCompletion == nil {
		return
	}
	var clusters []string
	if p.in.Decision.State == ranv1alpha1.StateCompleted {
		clusters = allClusters(p.in.Plan)
	} else {
		clusters = p.newlyCompleted()
	}
	if p.in.StartedNow {
		// Clusters already compliant with every managed policy are done at the start, as
		// in TALM: a ZTP site compliant from day one is labelled ztp-done.
		clusters = append(clusters, p.in.Plan.SkippedCompliant...)
	}
	p.in.Actions.AfterCompletion = clusters
}

// newlyCompleted are the clusters the decision completes that the records do not show
// completed yet.
func (p *pass) newlyCompleted() []string {
	recorded := map[string]ranv1alpha1.ClusterState{}
	for _, b := range p.f.Records {
		for _, c := range b.Status.Clusters {
			recorded[c.Name] = c.State
		}
	}
	var out []string
	add := func(clusters map[string]rollout.Cluster) {
		for name, c := range clusters {
			if c.State == ranv1alpha1.ClusterCompleted && recorded[name] != ranv1alpha1.ClusterCompleted {
				out = append(out, name)
			}
		}
	}
	for _, e := range p.in.Decision.Ended {
		add(e.Clusters)
	}
	add(p.in.Decision.Progress.Clusters)
	slices.Sort(out)
	return slices.Compact(out)
}

// enforcement binds each managed policy to exactly the clusters working on it; once the
// rollout is over nothing is enforced, and a Completed rollout deletes its objects (unless
// afterCompletion.deleteObjects is false).
func (p *pass) enforcement() {
	d := p.in.Decision
	if d.Progress.Started.IsZero() {
		return
	}
	if d.State == ranv1alpha1.StateCompleted && DeleteObjects(p.cgu) {
		p.in.Cleanup = true
		return
	}
	e := Enforcement{Write: true, Clusters: map[int][]string{}}
	for i, root := range p.f.Roots {
		if root == nil {
			// Deleted since the rollout froze it: its enforce copy would outlive it and go
			// on enforcing. The clusters working on it stay there until their batch times out.
			if i < len(p.before.ManagedPoliciesForUpgrade) {
				e.Released = append(e.Released, p.before.ManagedPoliciesForUpgrade[i])
			}
			continue
		}
		e.Clusters[len(e.Policies)] = d.Enforce[i]
		e.Policies = append(e.Policies, root)
	}
	// Clusters moving on inside a batch, and starting in a window's freed slots, are
	// enforced at the pace of the writes, together; a batch starting or ending, and a
	// stage of a progressive batch starting, are enforced at once: the stage waited for
	// every cluster of the one before it, as the next batch waits for its batch.
	e.Starts = p.clustersStart()
	e.Paced = !p.batchStarts() && !p.stageStarts() && len(d.Ended) == 0
	e.Frozen = gates.Frozen(p.acceptedPolicies(), e.Policies)
	p.in.Enforcement = e
}

// acceptedPolicies are the managed policies with the generations the rollout accepts after
// this decision (gates.Accepted): a batch starts when the decision moved to another one.
func (p *pass) acceptedPolicies() []ranv1alpha1.PolicyReference {
	return gates.Accepted(p.recordedAccepted(), p.f.Roots, p.f.Started, p.batchStarts())
}

// batchStarts reports whether a batch starts with this decision: the rollout's first (its
// records written now, or by a pass cut before it recorded a start), or the next one.
func (p *pass) batchStarts() bool {
	d := p.in.Decision
	return p.in.StartedNow || (p.f.Progress.Started.IsZero() && !d.Progress.Started.IsZero()) ||
		(d.Progress.Batch != p.f.Progress.Batch && !d.Progress.Finished)
}

// clustersStart reports whether clusters of the current batch, a window, start with this
// decision: in progress now, and not before it. Only a window's starts are paced
// (rollout.Gates.StartsPaced): in other batches they start all at once anyway.
func (p *pass) clustersStart() bool {
	return p.startsInside(func(b plan.Batch) bool { return b.Window != 0 })
}

// stageStarts reports whether clusters of the current batch, a progressive one, start with
// this decision: its next stage, or clusters filling up its stage.
func (p *pass) stageStarts() bool {
	return p.startsInside(func(b plan.Batch) bool { return len(b.Stages) > 0 })
}

// startsInside reports whether clusters start with this decision inside the current batch,
// a batch that is accepts (not a batch starting: batchStarts says that).
func (p *pass) startsInside(is func(plan.Batch) bool) bool {
	d := p.in.Decision
	b := d.Progress.Batch
	if b != p.f.Progress.Batch || b >= len(p.in.Plan.Batches) || !is(p.in.Plan.Batches[b]) {
		return false
	}
	for name, c := range d.Progress.Clusters {
		if c.State == ranv1alpha1.ClusterInProgress && p.f.Progress.Clusters[name].State != ranv1alpha1.ClusterInProgress {
			return true
		}
	}
	return false
}

// recordedAccepted are the managed policies with the generations the rollout accepted before
// this pass: as the status recorded them, or, when the status lost them (a pass stopped
// before its status write at the start, a status wiped), as the batch records froze them at
// the start; a policy changed since then waits for an approval again. Records written
// before they held policies give none: the policies as read now are accepted, as before.
func (p *pass) recordedAccepted() []ranv1alpha1.PolicyReference {
	if len(p.before.ManagedPoliciesForUpgrade) > 0 || !p.f.Started {
		return p.before.ManagedPoliciesForUpgrade
	}
	return rollout.FrozenPolicies(p.f.Records)
}

// allClusters are the plan's clusters, in plan order.
func allClusters(p plan.Plan) []string {
	var out []string
	for _, b := range p.Batches {
		out = append(out, b.Clusters...)
	}
	return out
}

// only keeps the entries of m whose key is one of keys; nil stays nil.
func only[V any](m map[string]V, keys []string) map[string]V {
	if m == nil {
		return nil
	}
	out := make(map[string]V, len(keys))
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}
