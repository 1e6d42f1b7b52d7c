package dashboard

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/estimate"
	"github.com/cgu-operator/cgu-operator/pkg/mcu"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
)

// The page never holds more rows than these limits, whatever the fleet: counts say the rest.
const (
	// ProblemLimit bounds the held and the failed clusters shown one by one.
	ProblemLimit = 100
	// EventLimit is how many of the latest events are shown.
	EventLimit = 20
	// AnalysisLimit is how many batches' analyses are shown: the latest.
	AnalysisLimit = 10
	// GateLimit bounds the gates of a batch shown: spec.analysis has at most as many.
	GateLimit = 8
	// GateClusterLimit bounds the clusters a gate names that are shown; the failed clusters'
	// list has them too.
	GateClusterLimit = 20
)

// Kinds of rollout the page shows.
const (
	KindCGU  = "ClusterGroupUpgrade"
	KindIBGU = "ImageBasedGroupUpgrade"
	KindMCU  = "ManagedClustersUpgrade"
	// KindTrain is not a rollout: the Trains tab shows them.
	KindTrain = "ReleaseTrain"
)

// Kinds of wait, the words the page shows on a rollout that waits.
const (
	WaitPause         = "pause"
	WaitApproval      = "approval"
	WaitWindow        = "window"
	WaitSoak          = "soak"
	WaitBlocker       = "blocker"
	WaitHubCapacity   = "hub capacity"
	WaitOtherUpgrade  = "other rollout"
	WaitFailureBudget = "failure budget"
	WaitNotEnabled    = "not enabled"
	WaitFrozen        = "fleet frozen"
	WaitAnalysis      = "analysis"
	WaitInconclusive  = "analysis inconclusive"
	WaitSpec          = "spec"
)

// Overview is the list of rollouts and their totals.
type Overview struct {
	// Scope is the namespace shown, or "all namespaces".
	Scope string `json:"scope"`
	// Now is the server's time, which the page counts ages and deadlines from.
	Now time.Time `json:"now"`
	// States counts the ClusterGroupUpgrades by state.
	States map[string]int `json:"states"`
	// Clusters sums the ClusterGroupUpgrades' cluster counts.
	Clusters ranv1alpha1.ClusterCounts `json:"clusters"`
	// Rows are the rollouts, ManagedClustersUpgrades first, then ImageBasedGroupUpgrades,
	// then by namespace and name.
	Rows []Row `json:"rows"`
}

// Row is one rollout as the list shows it.
type Row struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// State is the rollout state of a ClusterGroupUpgrade, the Progressing reason of an
	// ImageBasedGroupUpgrade.
	State string `json:"state"`
	// Batch is "current/total" (the step, for an ImageBasedGroupUpgrade).
	Batch string `json:"batch,omitempty"`
	// Done and Total count clusters: done are completed, timed out, failed or held.
	Done   int                       `json:"done"`
	Total  int                       `json:"total"`
	Counts ranv1alpha1.ClusterCounts `json:"counts"`
	// Wait says what the rollout waits for, while it waits.
	Wait    *Wait  `json:"wait,omitempty"`
	Message string `json:"message,omitempty"`
	Enabled bool   `json:"enabled"`
	Paused  bool   `json:"paused"`
	// Owner names the ImageBasedGroupUpgrade a step's ClusterGroupUpgrade runs for, or the
	// ManagedClustersUpgrade that wrote it; OwnerKind is which.
	Owner       string       `json:"owner,omitempty"`
	OwnerKind   string       `json:"ownerKind,omitempty"`
	StartedAt   *metav1.Time `json:"startedAt,omitempty"`
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`
}

// Wait is what a rollout waits for.
type Wait struct {
	// Kind is one of the Wait* words.
	Kind string `json:"kind"`
	// Reason is the condition reason it comes from.
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
	// Batch is the 1-based batch that waits, when one does.
	Batch int `json:"batch,omitempty"`
	// Until is when the wait ends by itself, when known.
	Until *metav1.Time `json:"until,omitempty"`
}

// Detail is one rollout as its page shows it.
type Detail struct {
	Row
	// Timeline has one entry per batch of the frozen plan; empty before the plan is frozen.
	Timeline []Batch `json:"timeline"`
	// Frozen is true once the plan is frozen (the rollout started).
	Frozen bool `json:"frozen"`
	// Planned is the number of batches planned, before the plan is frozen.
	Planned int `json:"planned,omitempty"`
	// Spread is how spec.remediationStrategy.spread and antiAffinity shaped the plan
	// (status.plan.spread), and SpreadAddedBatches the batches they added.
	Spread             []ranv1alpha1.SpreadSummary `json:"spread,omitempty"`
	SpreadAddedBatches int                         `json:"spreadAddedBatches,omitempty"`
	// ETA estimates the batches left, as kubectl cgu preflight does.
	ETA *ETA `json:"eta,omitempty"`
	// Running is the running batch.
	Running *Running `json:"running,omitempty"`
	// Held and Failed are the clusters held or waiting in the running batch, and those that
	// failed or timed out, at most ProblemLimit of each; the NotShown fields count the rest.
	Held           []Cluster `json:"held"`
	HeldNotShown   int       `json:"heldNotShown,omitempty"`
	Failed         []Cluster `json:"failed"`
	FailedNotShown int       `json:"failedNotShown,omitempty"`
	// Checks are the upgrade checks' verdicts.
	Checks    *ranv1alpha1.UpgradeChecksStatus `json:"checks,omitempty"`
	Approvals []ranv1alpha1.BatchApproval      `json:"approvals,omitempty"`
	// Events are the latest EventLimit events; EventGroups all of them, grouped by kind and
	// batch, failures and holds first.
	Events      []Event      `json:"events"`
	EventGroups []EventGroup `json:"eventGroups,omitempty"`
	// Progress is the burn-up chart of a ClusterGroupUpgrade that started.
	Progress *Progress `json:"progress,omitempty"`
	// Actions say which buttons apply.
	Actions Actions `json:"actions"`
	// Steps are an ImageBasedGroupUpgrade's plan steps.
	Steps []Step `json:"steps,omitempty"`
	// Release is a ManagedClustersUpgrade's release, its updates and its ClusterGroupUpgrade.
	Release *Release `json:"release,omitempty"`
	// Analysis has the analysis of each batch that ran one (spec.analysis), in plan order,
	// the latest AnalysisLimit.
	Analysis []BatchAnalysis `json:"analysis,omitempty"`
	// Precache is where the pre-caching of a rollout not started stands.
	Precache *Precache `json:"precache,omitempty"`
}

// Precache is where pre-caching stands before the rollout starts: the clusters by precache
// state, the bandwidth plan, and the plan as kubectl cgu preflight says it (Text, empty
// without a plan).
type Precache struct {
	Counts map[string]int            `json:"counts"`
	Plan   *ranv1alpha1.PrecachePlan `json:"plan,omitempty"`
	Text   string                    `json:"text,omitempty"`
}

// BatchAnalysis is the analysis of one batch: its gates' verdicts and measurements.
type BatchAnalysis struct {
	Batch     int         `json:"batch"`
	StartedAt metav1.Time `json:"startedAt"`
	Gates     []Gate      `json:"gates"`
}

// Gate is one gate's verdict in a batch and the measurements it kept.
type Gate struct {
	Name  string `json:"name"`
	Phase string `json:"phase"`
	// Mode and Condition are the gate's in spec.analysis: Absolute and its successCondition
	// ("< 0.05"), or Comparison; empty once the spec no longer has the gate.
	Mode      string `json:"mode,omitempty"`
	Condition string `json:"condition,omitempty"`
	// FailureCondition is an Absolute gate's failureCondition, when it has one.
	FailureCondition string   `json:"failureCondition,omitempty"`
	Query            string   `json:"query,omitempty"`
	Message          string   `json:"message,omitempty"`
	Conclusive       int      `json:"conclusive"`
	Failures         int      `json:"failures"`
	Inconclusives    int      `json:"inconclusives"`
	Clusters         []string `json:"clusters,omitempty"`
	// ClustersNotShown counts the clusters it names beyond GateClusterLimit.
	ClustersNotShown int `json:"clustersNotShown,omitempty"`
	// Points are its measurements, oldest first.
	Points []Point `json:"points"`
}

// Point is one measurement of a gate. Value and Baseline are null when the measurement has
// none (inconclusive; an Absolute gate has no baseline) or when it is not a finite number.
type Point struct {
	At       time.Time `json:"at"`
	Outcome  string    `json:"outcome"`
	Value    *float64  `json:"value"`
	Baseline *float64  `json:"baseline"`
}

// Release is what a ManagedClustersUpgrade's page shows beside its row: the release, the
// updates of its plan and the ClusterGroupUpgrade that runs it.
type Release struct {
	Version string                 `json:"version"`
	Channel string                 `json:"channel"`
	Upgrade string                 `json:"upgrade,omitempty"`
	Updates []ranv1alpha1.MCUStage `json:"updates"`
	// WorkerCapacity is where the multi-node clusters' added workers stand, when the rollout
	// adds some.
	WorkerCapacity *ranv1alpha1.CapacitySummary `json:"workerCapacity,omitempty"`
}

// ETA is the estimate of the batches left (pkg/estimate), in seconds, and its text.
type ETA struct {
	// Window, for a running window, is its size.
	Window int `json:"window,omitempty"`
	// BatchesLeft counts the batches not ended or, in a window (Window > 0), the waves left
	// of its clusters not done.
	BatchesLeft int `json:"batchesLeft"`
	// StagesLeft, of BatchesLeft, are the stages of a Progressive batch.
	StagesLeft      int  `json:"stagesLeft,omitempty"`
	PerBatchSeconds int  `json:"perBatchSeconds"`
	TotalSeconds    int  `json:"totalSeconds"`
	UpperBound      bool `json:"upperBound"`
	// Ended is how many ended batches the median is taken over.
	Ended int `json:"ended"`
	// Text is the estimate as kubectl cgu writes it (estimate.Text); the page shows it.
	Text string `json:"text"`
}

// Batch is one batch on the timeline.
type Batch struct {
	Index  int  `json:"index"`
	Canary bool `json:"canary,omitempty"`
	// Window, for the window of a Window rollout, is how many of its clusters run at once.
	Window int `json:"window,omitempty"`
	// Stages, for the batch of a Progressive rollout, are its stage sizes by step.
	Stages []int `json:"stages,omitempty"`
	// State is planned, waiting, running or ended.
	State       string                    `json:"state"`
	Clusters    int                       `json:"clusters"`
	Counts      ranv1alpha1.ClusterCounts `json:"counts"`
	StartedAt   *metav1.Time              `json:"startedAt,omitempty"`
	TimeoutAt   *metav1.Time              `json:"timeoutAt,omitempty"`
	FinishedAt  *metav1.Time              `json:"finishedAt,omitempty"`
	EndsRollout bool                      `json:"endsRollout,omitempty"`
}

// Batch states on the timeline.
const (
	BatchPlanned = "planned"
	BatchWaiting = "waiting"
	BatchRunning = "running"
	BatchEnded   = "ended"
)

// Running is the running batch and its counts; the fleet map (Fleet) shows its clusters.
type Running struct {
	Index int `json:"index"`
	// Window is how many of the batch's clusters run at once in a Window rollout, 0 for a
	// batch.
	Window int `json:"window,omitempty"`
	// Stage is where the batch of a Progressive rollout stands: its stage, size, step,
	// deadline, resets and last unhealthy stage (status.currentBatch.stage).
	Stage *ranv1alpha1.StageStatus `json:"stage,omitempty"`
	// Ended is true once the batch ended, while the next one waits to start.
	Ended  bool                      `json:"ended,omitempty"`
	Counts ranv1alpha1.ClusterCounts `json:"counts"`
}

// Cluster is one cluster of a batch.
type Cluster struct {
	Name   string       `json:"name"`
	Batch  int          `json:"batch"`
	State  string       `json:"state"`
	Policy string       `json:"policy,omitempty"`
	Reason string       `json:"reason,omitempty"`
	Since  *metav1.Time `json:"since,omitempty"`
}

// Event is one event about the rollout.
type Event struct {
	Type    string    `json:"type"`
	Reason  string    `json:"reason"`
	Message string    `json:"message"`
	Count   int32     `json:"count,omitempty"`
	Time    time.Time `json:"time"`
}

// Actions say which actions the page offers on a ClusterGroupUpgrade. The API server still
// decides: an action it refuses shows its message.
type Actions struct {
	Enable bool `json:"enable"`
	Pause  bool `json:"pause"`
	Resume bool `json:"resume"`
	// Approve is the batch waiting for an approval, 0 when none waits.
	Approve int `json:"approve,omitempty"`
}

// Step is one step of an ImageBasedGroupUpgrade's plan.
type Step struct {
	Index   int                        `json:"index"`
	Actions []string                   `json:"actions"`
	Upgrade string                     `json:"upgrade,omitempty"`
	State   string                     `json:"state"`
	Message string                     `json:"message,omitempty"`
	Counts  *ranv1alpha1.ClusterCounts `json:"counts,omitempty"`
}

// UpgradeRow is a ClusterGroupUpgrade's row.
func UpgradeRow(cgu *ranv1alpha1.ClusterGroupUpgrade) Row {
	st := cgu.Status
	c := st.Counts
	r := Row{
		Kind: KindCGU, Namespace: cgu.Namespace, Name: cgu.Name,
		State: string(st.State), Batch: st.Progress.Batch, Counts: c,
		Done: c.Completed + c.TimedOut + c.Failed + c.Held, Total: c.Total,
		Message: st.Message, Enabled: cgu.Spec.Enable == nil || *cgu.Spec.Enable, Paused: cgu.Spec.Paused,
		StartedAt: st.StartedAt, CompletedAt: st.CompletedAt, Wait: WaitOf(cgu),
	}
	if r.State == "" {
		r.State = string(ranv1alpha1.StateNotStarted)
	}
	for _, o := range cgu.OwnerReferences {
		if o.Kind == KindIBGU || o.Kind == KindMCU {
			r.Owner, r.OwnerKind = o.Name, o.Kind
		}
	}
	return r
}

// WaitOf says what a ClusterGroupUpgrade waits for, or nil when it waits for nothing but
// its clusters.
func WaitOf(cgu *ranv1alpha1.ClusterGroupUpgrade) *Wait {
	st := cgu.Status
	if st.State == ranv1alpha1.StateCompleted {
		return nil
	}
	if w := conditionWait(st); w != nil {
		return w
	}
	if w := batchWait(st.CurrentBatch); w != nil {
		return w
	}
	if progressing := meta.FindStatusCondition(st.Conditions, ranv1alpha1.ConditionProgressing); st.State == ranv1alpha1.StateCannotStart && progressing != nil {
		return &Wait{Kind: WaitSpec, Reason: progressing.Reason, Message: progressing.Message}
	}
	return nil
}

// conditionWait is the wait status.waiting, the Progressing condition or the spent failure
// budget of the Succeeded condition tells.
func conditionWait(st ranv1alpha1.ClusterGroupUpgradeStatus) *Wait {
	progressing := meta.FindStatusCondition(st.Conditions, ranv1alpha1.ConditionProgressing)
	message := st.Message
	if progressing != nil && progressing.Message != "" {
		message = progressing.Message
	}
	if w := st.Waiting; w != nil {
		kind := waitKinds[w.Reason]
		if kind == "" {
			kind = WaitSpec
		}
		return &Wait{Kind: kind, Reason: w.Reason, Message: message, Batch: w.Batch, Until: w.Until}
	}
	if progressing != nil {
		if kind, ok := waitKinds[progressing.Reason]; ok {
			return &Wait{Kind: kind, Reason: progressing.Reason, Message: message}
		}
	}
	if succeeded := meta.FindStatusCondition(st.Conditions, ranv1alpha1.ConditionSucceeded); succeeded != nil &&
		succeeded.Reason == ranv1alpha1.ReasonFailureBudgetExceeded {
		return &Wait{Kind: WaitFailureBudget, Reason: succeeded.Reason, Message: succeeded.Message}
	}
	return nil
}

// batchWait is the wait of a cluster of the current batch that could start but may not: the
// hub's cap, or another rollout remediating it.
func batchWait(cb *ranv1alpha1.BatchStatus) *Wait {
	if cb == nil {
		return nil
	}
	for _, c := range cb.Clusters {
		if c.State != ranv1alpha1.ClusterPending {
			continue
		}
		switch c.Reason {
		case ranv1alpha1.ReasonHubCapacityReached:
			return &Wait{Kind: WaitHubCapacity, Reason: c.Reason, Batch: cb.Index,
				Message: "clusters of batch " + strconv.Itoa(cb.Index) + " wait for room under the hub-wide cap on clusters in progress"}
		case ranv1alpha1.ReasonWaitingForOtherUpgrade:
			return &Wait{Kind: WaitOtherUpgrade, Reason: c.Reason, Batch: cb.Index,
				Message: c.Name + " waits for another rollout that is remediating it"}
		}
	}
	return nil
}

// waitKinds maps the reasons of a rollout's waits to their kind.
var waitKinds = map[string]string{
	ranv1alpha1.ReasonPaused:                   WaitPause,
	ranv1alpha1.ReasonWaitingForApproval:       WaitApproval,
	ranv1alpha1.ReasonManagedPolicyChanged:     WaitApproval,
	ranv1alpha1.ReasonOutsideMaintenanceWindow: WaitWindow,
	ranv1alpha1.ReasonBatchSoaking:             WaitSoak,
	ranv1alpha1.ReasonMissingBlockingCR:        WaitBlocker,
	ranv1alpha1.ReasonIncompleteBlockingCR:     WaitBlocker,
	ranv1alpha1.ReasonBlockingCRCycle:          WaitBlocker,
	ranv1alpha1.ReasonFailureBudgetExceeded:    WaitFailureBudget,
	ranv1alpha1.ReasonNotEnabled:               WaitNotEnabled,
	ranv1alpha1.ReasonHubCapacityReached:       WaitHubCapacity,
	ranv1alpha1.ReasonWaitingForOtherUpgrade:   WaitOtherUpgrade,
	ranv1alpha1.ReasonFleetFrozen:              WaitFrozen,
	ranv1alpha1.ReasonBatchAnalysis:            WaitAnalysis,
	ranv1alpha1.ReasonAnalysisInconclusive:     WaitInconclusive,
}

// GroupRow is an ImageBasedGroupUpgrade's row: its steps' counts summed.
func GroupRow(g *lcmv1alpha1.ImageBasedGroupUpgrade) Row {
	r := Row{Kind: KindIBGU, Namespace: g.Namespace, Name: g.Name, State: "-", Enabled: true,
		StartedAt: g.Status.StartedAt, CompletedAt: g.Status.CompletedAt}
	if c := meta.FindStatusCondition(g.Status.Conditions, "Progressing"); c != nil {
		r.State, r.Message = c.Reason, c.Message
	}
	step := len(g.Spec.Plan)
	for i := range g.Spec.Plan {
		if i >= len(g.Status.Steps) || !g.Status.Steps[i].Ended {
			step = i + 1
			break
		}
	}
	r.Batch = strconv.Itoa(step) + "/" + strconv.Itoa(len(g.Spec.Plan))
	// The clusters of an image-based upgrade are those of its first step that ran.
	for _, s := range g.Status.Steps {
		if s.Counts != nil {
			r.Counts, r.Total = *s.Counts, s.Counts.Total
			break
		}
	}
	failed := 0
	for _, c := range g.Status.Clusters {
		if len(c.FailedActions) > 0 {
			failed++
		}
	}
	r.Counts.Failed = max(r.Counts.Failed, failed)
	r.Done = r.Counts.Completed + r.Counts.TimedOut + r.Counts.Failed + r.Counts.Held
	return r
}

// ReleaseRow is a ManagedClustersUpgrade's row: its state and its clusters' summary.
func ReleaseRow(m *ranv1alpha1.ManagedClustersUpgrade) Row {
	r := Row{Kind: KindMCU, Namespace: m.Namespace, Name: m.Name, Enabled: true}
	r.State, r.Message = mcu.StateOf(m)
	if s := m.Status.ClustersSummary; s != nil {
		r.Counts = ranv1alpha1.ClusterCounts{Total: s.Total, Pending: s.Pending, InProgress: s.PartialUpgrade,
			Completed: s.Complete, Failed: s.Failed, Held: s.Held}
		r.Total, r.Done = s.Total, s.Complete+s.Failed+s.Held
	}
	return r
}

// ReleaseDetail is a ManagedClustersUpgrade's page: its release and updates, the clusters
// its plan holds, and its events (any order).
func ReleaseDetail(m *ranv1alpha1.ManagedClustersUpgrade, events []corev1.Event) Detail {
	d := Detail{Row: ReleaseRow(m), Held: []Cluster{}, Failed: []Cluster{}, Timeline: []Batch{}, Events: newEvents(events),
		Release: &Release{Version: m.Spec.ClusterVersion.Version, Channel: m.Spec.ClusterVersion.Channel,
			Upgrade: m.Status.Upgrade, Updates: m.Status.Stages, WorkerCapacity: m.Status.WorkerCapacity}}
	if d.Release.Updates == nil {
		d.Release.Updates = []ranv1alpha1.MCUStage{}
	}
	for _, h := range m.Status.Held {
		d.Held, d.HeldNotShown = appendBounded(d.Held, d.HeldNotShown,
			Cluster{Name: h.Cluster, State: string(ranv1alpha1.ClusterHeld), Reason: h.Reason + ": " + h.Message})
	}
	d.HeldNotShown += m.Status.HeldNotShown
	return d
}

// NewOverview lists the rollouts of scope.
func NewOverview(scope string, cgus []ranv1alpha1.ClusterGroupUpgrade, groups []lcmv1alpha1.ImageBasedGroupUpgrade,
	releases []ranv1alpha1.ManagedClustersUpgrade) Overview {
	o := Overview{Scope: scope, States: map[string]int{}, Rows: make([]Row, 0, len(cgus)+len(groups)+len(releases))}
	for i := range releases {
		o.Rows = append(o.Rows, ReleaseRow(&releases[i]))
	}
	for i := range groups {
		o.Rows = append(o.Rows, GroupRow(&groups[i]))
	}
	for i := range cgus {
		r := UpgradeRow(&cgus[i])
		o.States[r.State]++
		addCounts(&o.Clusters, r.Counts)
		o.Rows = append(o.Rows, r)
	}
	slices.SortStableFunc(o.Rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(b.Kind, a.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return o
}

func addCounts(sum *ranv1alpha1.ClusterCounts, c ranv1alpha1.ClusterCounts) {
	sum.Total += c.Total
	sum.Pending += c.Pending
	sum.InProgress += c.InProgress
	sum.Completed += c.Completed
	sum.TimedOut += c.TimedOut
	sum.Failed += c.Failed
	sum.Held += c.Held
}

// UpgradeDetail is a ClusterGroupUpgrade's page at now: records are its batch records (any
// order), events the events about it (any order).
func UpgradeDetail(cgu *ranv1alpha1.ClusterGroupUpgrade, records []ranv1alpha1.ClusterGroupUpgradeBatch, events []corev1.Event, now time.Time) Detail {
	d := Detail{Row: UpgradeRow(cgu), Held: []Cluster{}, Failed: []Cluster{}, Timeline: []Batch{},
		Checks: cgu.Status.UpgradeChecks, Approvals: cgu.Status.Approvals, Events: newEvents(events)}
	st := cgu.Status
	if st.Plan != nil {
		d.Frozen = st.Plan.FrozenAt != nil
		d.Planned = st.Plan.Batches
		d.Spread, d.SpreadAddedBatches = st.Plan.Spread, st.Plan.SpreadAddedBatches
	}
	d.Timeline = timeline(records, st)
	d.Running = running(records, st)
	d.Held, d.HeldNotShown, d.Failed, d.FailedNotShown = problems(records, d.Running)
	if d.Frozen && len(d.Timeline) > 0 && st.State != ranv1alpha1.StateCompleted && st.State != ranv1alpha1.StateTimedOut {
		d.ETA = eta(cgu, d.Timeline, records)
	}
	d.Actions = actions(cgu)
	if pc := st.Precaching; pc != nil && st.StartedAt == nil {
		d.Precache = &Precache{Counts: pc.Counts, Plan: pc.Plan, Text: precache.PlanText(pc.Plan)}
	}
	d.Analysis = analyses(records, cgu.Spec.Analysis)
	d.Progress = ProgressOf(cgu, records, events, d.Timeline, d.ETA, now)
	batchOf := map[string]int{}
	for i := range records {
		r := &records[i]
		for _, c := range r.Spec.Clusters {
			batchOf[c] = r.Spec.Index
		}
	}
	d.EventGroups = GroupEvents(events, batchOf)
	return d
}

// analyses are the analyses the batches' first records hold, in plan order, the latest
// AnalysisLimit; spec gives each gate its mode and condition.
func analyses(records []ranv1alpha1.ClusterGroupUpgradeBatch, spec *ranv1alpha1.Analysis) []BatchAnalysis {
	var out []BatchAnalysis
	for i := range records {
		r := &records[i]
		if r.Spec.Part != 0 || r.Status.Analysis == nil {
			continue
		}
		a := BatchAnalysis{Batch: r.Spec.Index, StartedAt: r.Status.Analysis.StartedAt, Gates: []Gate{}}
		gates := r.Status.Analysis.Gates
		for _, g := range gates[:min(len(gates), GateLimit)] {
			a.Gates = append(a.Gates, gateOf(g, spec))
		}
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b BatchAnalysis) int { return cmp.Compare(a.Batch, b.Batch) })
	return out[max(0, len(out)-AnalysisLimit):]
}

// gateOf is a gate's verdict as the page shows it, its measurements as numbers.
func gateOf(g ranv1alpha1.AnalysisGateStatus, spec *ranv1alpha1.Analysis) Gate {
	out := Gate{Name: g.Name, Phase: string(g.Phase), Query: g.Query, Message: g.Message,
		Conclusive: g.Conclusive, Failures: g.Failures, Inconclusives: g.Inconclusives,
		Clusters: g.Clusters[:min(len(g.Clusters), GateClusterLimit)], ClustersNotShown: max(0, len(g.Clusters)-GateClusterLimit)}
	if spec != nil {
		if i := slices.IndexFunc(spec.Gates, func(s ranv1alpha1.AnalysisGate) bool { return s.Name == g.Name }); i >= 0 {
			out.Mode, out.Condition = string(cmp.Or(spec.Gates[i].Mode, ranv1alpha1.AnalysisAbsolute)), spec.Gates[i].SuccessCondition
			out.FailureCondition = spec.Gates[i].FailureCondition
		}
	}
	// The record keeps at most AnalysisGateMeasurementLimit; the page never draws more.
	ms := g.Measurements[max(0, len(g.Measurements)-ranv1alpha1.AnalysisGateMeasurementLimit):]
	out.Points = make([]Point, 0, len(ms))
	for _, m := range ms {
		out.Points = append(out.Points, Point{At: m.At.Time, Outcome: string(m.Outcome), Value: number(m.Value), Baseline: number(m.Baseline)})
	}
	return out
}

// number is a measurement's decimal string as a number: nil when empty, not a number or not
// finite (JSON has no NaN or infinity).
func number(s string) *float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// eta is the estimate (pkg/estimate, the one kubectl cgu preflight and status show) of the
// batches left on the timeline, with its text.
func eta(cgu *ranv1alpha1.ClusterGroupUpgrade, timeline []Batch, records []ranv1alpha1.ClusterGroupUpgradeBatch) *ETA {
	in := estimate.Input{Ended: estimate.EndedDurations(records), CompletedInWindow: estimate.CompletedInWindow(records)}
	if rs := cgu.Spec.RemediationStrategy; rs != nil {
		in.TimeoutMinutes = rs.Timeout
	}
	for _, b := range timeline {
		eb := estimate.Batch{Clusters: b.Clusters, Stages: b.Stages, Window: b.Window}
		if b.State != BatchEnded {
			eb.Left = b.Counts.Pending + b.Counts.InProgress
		}
		if b.StartedAt != nil && b.TimeoutAt != nil {
			eb.Started, eb.Deadline = b.StartedAt.Time, b.TimeoutAt.Time
		}
		in.Batches = append(in.Batches, eb)
	}
	e := estimate.Of(in)
	return &ETA{Window: e.Window, BatchesLeft: e.BatchesLeft, StagesLeft: e.StagesLeft, PerBatchSeconds: int(e.PerBatch.Seconds()),
		TotalSeconds: int(e.Total.Seconds()), UpperBound: e.UpperBound, Ended: e.Ended, Text: estimate.Text(e)}
}

// actions says which actions apply to the rollout as it stands.
func actions(cgu *ranv1alpha1.ClusterGroupUpgrade) Actions {
	st := cgu.Status.State
	finished := st == ranv1alpha1.StateCompleted || st == ranv1alpha1.StateTimedOut
	a := Actions{
		Enable: cgu.Spec.Enable != nil && !*cgu.Spec.Enable && !finished,
		Pause:  !cgu.Spec.Paused && !finished,
		Resume: cgu.Spec.Paused,
	}
	if w := cgu.Status.Waiting; w != nil && (w.Reason == ranv1alpha1.ReasonWaitingForApproval || w.Reason == ranv1alpha1.ReasonManagedPolicyChanged) {
		a.Approve = w.Batch
	}
	return a
}

// timeline folds the parts of each batch into one entry, in plan order.
func timeline(records []ranv1alpha1.ClusterGroupUpgradeBatch, st ranv1alpha1.ClusterGroupUpgradeStatus) []Batch {
	byIndex := map[int]*Batch{}
	for i := range records {
		r := &records[i]
		b := byIndex[r.Spec.Index]
		if b == nil {
			b = &Batch{Index: r.Spec.Index, Canary: r.Spec.Canary, Window: r.Spec.Window, Stages: r.Spec.Stages}
			byIndex[r.Spec.Index] = b
		}
		b.Clusters += len(r.Spec.Clusters)
		b.Counts.Total += len(r.Spec.Clusters)
		seen := 0
		for _, c := range r.Status.Clusters {
			countState(&b.Counts, c.State)
			seen++
		}
		b.Counts.Pending += len(r.Spec.Clusters) - seen
		b.StartedAt = earliest(b.StartedAt, r.Status.StartedAt)
		b.TimeoutAt = earliest(b.TimeoutAt, r.Status.TimeoutAt)
		b.FinishedAt = latest(b.FinishedAt, r.Status.FinishedAt)
		b.EndsRollout = b.EndsRollout || r.Status.EndsRollout
	}
	out := make([]Batch, 0, len(byIndex))
	for _, b := range byIndex {
		switch {
		case b.FinishedAt != nil:
			b.State = BatchEnded
		case b.StartedAt != nil:
			b.State = BatchRunning
		case st.Waiting != nil && st.Waiting.Batch == b.Index:
			b.State = BatchWaiting
		default:
			b.State = BatchPlanned
		}
		out = append(out, *b)
	}
	slices.SortFunc(out, func(a, b Batch) int { return cmp.Compare(a.Index, b.Index) })
	return out
}

func countState(c *ranv1alpha1.ClusterCounts, s ranv1alpha1.ClusterState) {
	if s == "" { // not started: no entry in its record's status yet
		s = ranv1alpha1.ClusterPending
	}
	c.Add(s)
}

func earliest(a, b *metav1.Time) *metav1.Time {
	if a == nil || (b != nil && b.Before(a)) {
		return b
	}
	return a
}

func latest(a, b *metav1.Time) *metav1.Time {
	if a == nil || (b != nil && a.Before(b)) {
		return b
	}
	return a
}

// running is the running batch and its counts, from its records.
func running(records []ranv1alpha1.ClusterGroupUpgradeBatch, st ranv1alpha1.ClusterGroupUpgradeStatus) *Running {
	if st.CurrentBatch == nil {
		return nil
	}
	r := &Running{Index: st.CurrentBatch.Index, Stage: st.CurrentBatch.Stage}
	for i := range records {
		rec := &records[i]
		if rec.Spec.Index != r.Index {
			continue
		}
		for _, c := range clustersOf(rec) {
			countState(&r.Counts, ranv1alpha1.ClusterState(c.State))
			r.Counts.Total++
		}
		r.Ended = rec.Status.FinishedAt != nil
		r.Window = rec.Spec.Window
	}
	return r
}

// clustersOf lists a record's clusters with their progress; a cluster not started yet is
// Pending.
func clustersOf(rec *ranv1alpha1.ClusterGroupUpgradeBatch) []Cluster {
	progress := make(map[string]*ranv1alpha1.ClusterProgress, len(rec.Status.Clusters))
	for i := range rec.Status.Clusters {
		progress[rec.Status.Clusters[i].Name] = &rec.Status.Clusters[i]
	}
	out := make([]Cluster, 0, len(rec.Spec.Clusters))
	for _, name := range rec.Spec.Clusters {
		c := Cluster{Name: name, Batch: rec.Spec.Index, State: string(ranv1alpha1.ClusterPending)}
		if p := progress[name]; p != nil {
			c.State, c.Policy, c.Reason, c.Since = string(p.State), p.CurrentPolicy, p.Reason, p.Since
			if c.State == "" {
				c.State = string(ranv1alpha1.ClusterPending)
			}
		}
		out = append(out, c)
	}
	return out
}

// problems lists the held clusters (held by the checks, or waiting in the running batch for
// another rollout or the hub's capacity) and those that failed or timed out, in plan order.
func problems(records []ranv1alpha1.ClusterGroupUpgradeBatch, run *Running) (held []Cluster, heldMore int, failed []Cluster, failedMore int) {
	held, failed = []Cluster{}, []Cluster{}
	sorted := slices.Clone(records)
	slices.SortFunc(sorted, func(a, b ranv1alpha1.ClusterGroupUpgradeBatch) int {
		return cmp.Or(cmp.Compare(a.Spec.Index, b.Spec.Index), cmp.Compare(a.Spec.Part, b.Spec.Part))
	})
	for i := range sorted {
		for _, c := range clustersOf(&sorted[i]) {
			switch ranv1alpha1.ClusterState(c.State) {
			case ranv1alpha1.ClusterHeld:
				held, heldMore = appendBounded(held, heldMore, c)
			case ranv1alpha1.ClusterPending:
				if run != nil && c.Batch == run.Index && c.Reason != "" {
					held, heldMore = appendBounded(held, heldMore, c)
				}
			case ranv1alpha1.ClusterFailed, ranv1alpha1.ClusterTimedOut:
				failed, failedMore = appendBounded(failed, failedMore, c)
			}
		}
	}
	return held, heldMore, failed, failedMore
}

func appendBounded(list []Cluster, more int, c Cluster) ([]Cluster, int) {
	if len(list) < ProblemLimit {
		return append(list, c), more
	}
	return list, more + 1
}

// newEvents keeps the latest EventLimit events, newest first.
func newEvents(events []corev1.Event) []Event {
	out := make([]Event, 0, len(events))
	for _, e := range events {
		out = append(out, Event{Type: e.Type, Reason: e.Reason, Message: e.Message, Count: e.Count, Time: talm.LastSeen(e)})
	}
	slices.SortStableFunc(out, func(a, b Event) int { return b.Time.Compare(a.Time) })
	return out[:min(len(out), EventLimit)]
}

// GroupDetail is an ImageBasedGroupUpgrade's page: its steps and its failed clusters.
func GroupDetail(g *lcmv1alpha1.ImageBasedGroupUpgrade, events []corev1.Event) Detail {
	d := Detail{Row: GroupRow(g), Held: []Cluster{}, Failed: []Cluster{}, Timeline: []Batch{}, Events: newEvents(events)}
	for i, item := range g.Spec.Plan {
		s := Step{Index: i, Actions: item.Actions, State: BatchPlanned}
		if i < len(g.Status.Steps) {
			st := g.Status.Steps[i]
			s.Upgrade, s.State, s.Message, s.Counts = st.Upgrade, string(st.State), st.Message, st.Counts
		}
		d.Steps = append(d.Steps, s)
	}
	for _, c := range g.Status.Clusters {
		if len(c.FailedActions) == 0 {
			continue
		}
		last := c.FailedActions[len(c.FailedActions)-1]
		d.Failed, d.FailedNotShown = appendBounded(d.Failed, d.FailedNotShown,
			Cluster{Name: c.Name, State: string(ranv1alpha1.ClusterFailed), Policy: last.Action, Reason: last.Message})
	}
	return d
}
