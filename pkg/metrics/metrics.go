// Package metrics exports the operator's Prometheus metrics: how many ClusterGroupUpgrades and
// clusters are in each state, which rollouts wait and why, which batches are past their
// deadline, how full the hub-wide cap on clusters in progress is, how long batches and
// clusters take, and how often writing the enforcement objects fails. Label values come from
// fixed sets, so the number of series does not grow with the number of CGUs or clusters;
// docs/metrics.md describes each metric.
package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/clock"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// namespace prefixes every metric name.
const namespace = "cgu_operator"

// Outcomes of a batch (completed, timed_out) and of a cluster (all three): the values of the
// outcome label of the duration histograms.
const (
	OutcomeCompleted = "completed"
	OutcomeTimedOut  = "timed_out"
	OutcomeFailed    = "failed"
)

// Operations whose failed writes RemediationError counts: the values of the operation label.
const (
	// OperationCopy writes an enforce copy of a managed policy (Copy mode).
	OperationCopy = "copy"
	// OperationPlacement writes the Placement that selects a batch's clusters.
	OperationPlacement = "placement"
	// OperationBinding writes a PlacementBinding, with its binding override in Override mode.
	OperationBinding = "binding"
	// OperationCleanup deletes the objects a rollout created.
	OperationCleanup = "cleanup"
	// OperationActions applies the beforeEnable and afterCompletion cluster actions.
	OperationActions = "actions"
	// OperationStatus patches a ClusterGroupUpgrade's status.
	OperationStatus = "status"
)

// operations lists every operation label value, in the order docs/metrics.md gives them.
var operations = []string{
	OperationCopy, OperationPlacement, OperationBinding, OperationCleanup, OperationActions, OperationStatus,
}

// durationBuckets suit rollouts: from a minute to a day, in seconds.
var durationBuckets = []float64{
	time.Minute.Seconds(), (5 * time.Minute).Seconds(), (15 * time.Minute).Seconds(),
	(30 * time.Minute).Seconds(), time.Hour.Seconds(), (2 * time.Hour).Seconds(),
	(4 * time.Hour).Seconds(), (8 * time.Hour).Seconds(), (24 * time.Hour).Seconds(),
}

// upgradeStates are the values of the state label of cgu_operator_upgrades.
var upgradeStates = [...]ranv1alpha1.UpgradeState{
	ranv1alpha1.StateNotStarted, ranv1alpha1.StateCannotStart, ranv1alpha1.StateNotCompleted,
	ranv1alpha1.StateTimedOut, ranv1alpha1.StateCompleted,
}

// clusterStates are the values of the state label of cgu_operator_clusters, indexed as
// contribution.clusters.
var clusterStates = [...]string{"pending", "in_progress", OutcomeCompleted, OutcomeTimedOut, OutcomeFailed, "held"}

// waitingReasons are the values of the reason label of cgu_operator_upgrades_waiting: the
// condition reasons for which a rollout does not go on by itself, as status.waiting or the
// Progressing condition gives them (WaitingReason).
var waitingReasons = [...]string{
	ranv1alpha1.ReasonPaused, ranv1alpha1.ReasonWaitingForApproval, ranv1alpha1.ReasonManagedPolicyChanged,
	ranv1alpha1.ReasonOutsideMaintenanceWindow, ranv1alpha1.ReasonBatchSoaking, ranv1alpha1.ReasonFailureBudgetExceeded,
	ranv1alpha1.ReasonMissingBlockingCR, ranv1alpha1.ReasonIncompleteBlockingCR, ranv1alpha1.ReasonBlockingCRCycle,
}

// Recorder records a CGU's metrics; safe for concurrent use. The zero value is not usable;
// use New (tests) or Default (registered in controller-runtime's registry once).
type Recorder struct {
	fleet       *fleet
	hubUsed     prometheus.Gauge
	hubLimit    prometheus.Gauge
	batches     map[string]prometheus.Observer
	clusters    map[ranv1alpha1.ClusterState]prometheus.Observer
	remediation map[string]prometheus.Counter
	dropped     prometheus.Counter
	stages      map[string]prometheus.Counter
}

// Stage events counted by cgu_operator_stages_total: the values of its event label.
const (
	StageStarted   = "started"
	StageUnhealthy = "unhealthy"
)

// Option configures a Recorder made by New.
type Option func(*options)

type options struct {
	clock clock.PassiveClock
}

// WithClock makes the Recorder read the time from c, at each scrape, to count the batches
// past their deadline (cgu_operator_batches_overdue). The default is the system clock.
func WithClock(c clock.PassiveClock) Option {
	return func(o *options) { o.clock = c }
}

// New returns a Recorder whose collectors are registered on reg. It panics if they are
// already registered there.
func New(reg prometheus.Registerer, opts ...Option) *Recorder {
	o := options{clock: clock.RealClock{}}
	for _, opt := range opts {
		opt(&o)
	}
	batch := newDurationVec("batch_duration_seconds",
		"Time from a batch's start to its end, by outcome (completed, timed_out).")
	cluster := newDurationVec("cluster_duration_seconds",
		"Time from the start of a cluster's batch to its terminal state, by outcome (completed, timed_out, failed).")
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace,
		Name:      "remediation_errors_total",
		Help:      "Failed writes of enforcement objects, by operation (copy, placement, binding, cleanup, actions, status).",
	}, []string{"operation"})
	dropped := prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace,
		Name:      "events_dropped_total",
		Help:      "Events about ClusterGroupUpgrades not written: the queue was full, or the API server refused them.",
	})
	hubUsed := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace,
		Name:      "hub_clusters_in_progress",
		Help:      "Clusters InProgress across every rollout, as the last reconcile that checked the hub-wide cap counted them.",
	})
	hubLimit := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace,
		Name:      "hub_clusters_in_progress_limit",
		Help:      "The hub-wide cap on clusters InProgress (--max-clusters-in-progress); 0 for no cap.",
	})
	stages := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace,
		Name:      "stages_total",
		Help:      "Stages of Progressive rollouts, by event: started, or ended unhealthy (the growth went back, or the rollout stopped).",
	}, []string{"event"})
	f := newFleet(o.clock)
	reg.MustRegister(f, hubUsed, hubLimit, batch, cluster, errs, dropped, stages)

	// Every known label value is created up front, so each series exists from the start
	// (rate and increase then see the first event) and the lookups below are read-only.
	r := &Recorder{
		fleet:    f,
		hubUsed:  hubUsed,
		hubLimit: hubLimit,
		batches: map[string]prometheus.Observer{
			OutcomeCompleted: batch.WithLabelValues(OutcomeCompleted),
			OutcomeTimedOut:  batch.WithLabelValues(OutcomeTimedOut),
		},
		clusters: map[ranv1alpha1.ClusterState]prometheus.Observer{
			ranv1alpha1.ClusterCompleted: cluster.WithLabelValues(OutcomeCompleted),
			ranv1alpha1.ClusterTimedOut:  cluster.WithLabelValues(OutcomeTimedOut),
			ranv1alpha1.ClusterFailed:    cluster.WithLabelValues(OutcomeFailed),
		},
		remediation: make(map[string]prometheus.Counter, len(operations)),
		dropped:     dropped,
		stages: map[string]prometheus.Counter{
			StageStarted:   stages.WithLabelValues(StageStarted),
			StageUnhealthy: stages.WithLabelValues(StageUnhealthy),
		},
	}
	for _, op := range operations {
		r.remediation[op] = errs.WithLabelValues(op)
	}
	return r
}

var (
	defaultOnce     sync.Once
	defaultRecorder *Recorder
)

// Default returns the Recorder registered in controller-runtime's registry, which the
// manager's metrics endpoint serves. The first call registers it.
func Default() *Recorder {
	defaultOnce.Do(func() { defaultRecorder = New(ctrlmetrics.Registry) })
	return defaultRecorder
}

// Upgrade reports the status st of the CGU named key (namespace/name), replacing what was
// last reported for it: its state, its cluster counts, the reason it waits (WaitingReason)
// and its current batch's deadline. A state outside the five known ones (such as the empty
// state of a CGU not yet reconciled) is counted in no state; its clusters are still counted.
// Negative counts count as zero. st is only read.
func (r *Recorder) Upgrade(key string, st *ranv1alpha1.ClusterGroupUpgradeStatus) {
	r.fleet.set(key, newContribution(st))
}

// Forget removes the CGU named key from the state gauges, once it is deleted.
func (r *Recorder) Forget(key string) {
	r.fleet.forget(key)
}

// HubClusters reports the clusters InProgress across every rollout, as a reconcile counted
// them to apply the hub-wide cap, and that cap (0 for none). Negative values count as zero.
func (r *Recorder) HubClusters(inProgress, limit int) {
	r.hubUsed.Set(float64(max(inProgress, 0)))
	r.hubLimit.Set(float64(max(limit, 0)))
}

// WaitingReason returns the reason the rollout of status st waits, one of the values of the
// reason label of cgu_operator_upgrades_waiting, or "" when it does not wait for one of them.
// status.waiting says what a rollout waits for between two batches; the Progressing
// condition says it for a rollout paused during a batch, blocked by other CGUs, or stopped
// by its failure budget.
func WaitingReason(st *ranv1alpha1.ClusterGroupUpgradeStatus) string {
	if st.Waiting != nil && waitingIndex(st.Waiting.Reason) >= 0 {
		return st.Waiting.Reason
	}
	if c := meta.FindStatusCondition(st.Conditions, ranv1alpha1.ConditionProgressing); c != nil && waitingIndex(c.Reason) >= 0 {
		return c.Reason
	}
	return ""
}

func waitingIndex(reason string) int {
	for i, w := range waitingReasons {
		if w == reason {
			return i
		}
	}
	return -1
}

// BatchEnded observes the duration d of a batch that ended with outcome OutcomeCompleted or
// OutcomeTimedOut. Other outcomes are ignored, so that no unexpected series appears; a
// negative duration counts as zero.
func (r *Recorder) BatchEnded(outcome string, d time.Duration) {
	if o, ok := r.batches[outcome]; ok {
		o.Observe(seconds(d))
	}
}

// Stage counts a stage of a Progressive rollout that started (StageStarted) or ended
// unhealthy (StageUnhealthy); other events are ignored.
func (r *Recorder) Stage(event string) {
	if c, ok := r.stages[event]; ok {
		c.Inc()
	}
}

// ClusterEnded observes the time d a cluster took from its batch's start to the terminal
// state it reached: ClusterCompleted, ClusterTimedOut or ClusterFailed, observed with the
// outcome of the same name. Other states are ignored; a negative duration counts as zero.
func (r *Recorder) ClusterEnded(state ranv1alpha1.ClusterState, d time.Duration) {
	if o, ok := r.clusters[state]; ok {
		o.Observe(seconds(d))
	}
}

// RemediationError counts one failed write for operation, one of the Operation constants. Other
// operations are ignored.
func (r *Recorder) RemediationError(operation string) {
	if c, ok := r.remediation[operation]; ok {
		c.Inc()
	}
}

// EventDropped counts an event not written.
func (r *Recorder) EventDropped() { r.dropped.Inc() }

func newDurationVec(name, help string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace,
		Name:      name,
		Help:      help,
		Buckets:   durationBuckets,
	}, []string{"outcome"})
}

func seconds(d time.Duration) float64 {
	return max(d, 0).Seconds()
}

// contribution is what one CGU adds to the state gauges.
type contribution struct {
	// state indexes upgradeStates; -1 for a state counted nowhere.
	state    int
	clusters [len(clusterStates)]int
	// waiting indexes waitingReasons; -1 for a CGU that does not wait for one of them.
	waiting int
	// deadline is when the running batch times out, in Unix nanoseconds; 0 when no batch
	// runs against a deadline (see overdueDeadline).
	deadline int64
}

func newContribution(st *ranv1alpha1.ClusterGroupUpgradeStatus) contribution {
	out := contribution{state: -1, waiting: waitingIndex(WaitingReason(st)), deadline: overdueDeadline(st)}
	for i, s := range upgradeStates {
		if s == st.State {
			out.state = i
		}
	}
	c := st.Counts
	for i, n := range [...]int{c.Pending, c.InProgress, c.Completed, c.TimedOut, c.Failed, c.Held} {
		out.clusters[i] = max(n, 0)
	}
	return out
}

// overdueDeadline returns status.currentBatch.timeoutAt in Unix nanoseconds while the batch
// runs against it: the state is NotCompleted, the rollout is not paused (a pause moves the
// deadline, and the status written before it does not show how far) and it does not wait
// between batches (a soaking batch is over; its deadline no longer applies). Otherwise 0.
func overdueDeadline(st *ranv1alpha1.ClusterGroupUpgradeStatus) int64 {
	b := st.CurrentBatch
	if st.State != ranv1alpha1.StateNotCompleted || b == nil || b.TimeoutAt == nil || st.PausedAt != nil || st.Waiting != nil {
		return 0
	}
	return b.TimeoutAt.UnixNano()
}

// fleet holds the last contribution of each CGU and their sums, kept up to date by adding
// the new contribution and subtracting the old one, so a report costs the same whatever the
// number of CGUs. It collects cgu_operator_upgrades, cgu_operator_clusters and
// cgu_operator_upgrades_waiting from the sums under its lock, so a scrape always sees every
// CGU counted exactly once. cgu_operator_batches_overdue depends on the time of the scrape,
// so it cannot be a sum: a scrape compares the deadlines of the running batches (one a CGU
// with a batch running) with the clock, which costs one comparison a running batch.
type fleet struct {
	upgradesDesc *prometheus.Desc
	clustersDesc *prometheus.Desc
	waitingDesc  *prometheus.Desc
	overdueDesc  *prometheus.Desc
	clock        clock.PassiveClock

	mu       sync.Mutex
	byKey    map[string]contribution
	upgrades [len(upgradeStates)]int
	clusters [len(clusterStates)]int
	waiting  [len(waitingReasons)]int
	// deadlines holds the non-zero contribution.deadline of each CGU.
	deadlines map[string]int64
}

func newFleet(c clock.PassiveClock) *fleet {
	return &fleet{
		upgradesDesc: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "upgrades"),
			"Number of ClusterGroupUpgrades in each state.", []string{"state"}, nil),
		clustersDesc: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "clusters"),
			"Number of clusters of all ClusterGroupUpgrades in each state, summed over the ClusterGroupUpgrades.",
			[]string{"state"}, nil),
		waitingDesc: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "upgrades_waiting"),
			"Number of ClusterGroupUpgrades whose rollout waits, by the condition reason it waits for.",
			[]string{"reason"}, nil),
		overdueDesc: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "batches_overdue"),
			"Number of ClusterGroupUpgrades whose running batch is past its deadline (status.currentBatch.timeoutAt) at the scrape.",
			nil, nil),
		clock:     c,
		byKey:     map[string]contribution{},
		deadlines: map[string]int64{},
	}
}

func (f *fleet) set(key string, c contribution) {
	f.mu.Lock()
	defer f.mu.Unlock()
	old, ok := f.byKey[key]
	if ok && old == c {
		return
	}
	if ok {
		f.add(old, -1)
	}
	f.add(c, 1)
	f.byKey[key] = c
	if c.deadline != 0 {
		f.deadlines[key] = c.deadline
	} else {
		delete(f.deadlines, key)
	}
}

func (f *fleet) forget(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if old, ok := f.byKey[key]; ok {
		f.add(old, -1)
		delete(f.byKey, key)
		delete(f.deadlines, key)
	}
}

// add adds c to the sums sign times; the caller holds f.mu.
func (f *fleet) add(c contribution, sign int) {
	if c.state >= 0 {
		f.upgrades[c.state] += sign
	}
	for i, n := range c.clusters {
		f.clusters[i] += sign * n
	}
	if c.waiting >= 0 {
		f.waiting[c.waiting] += sign
	}
}

// Describe implements prometheus.Collector.
func (f *fleet) Describe(ch chan<- *prometheus.Desc) {
	ch <- f.upgradesDesc
	ch <- f.clustersDesc
	ch <- f.waitingDesc
	ch <- f.overdueDesc
}

// Collect implements prometheus.Collector.
func (f *fleet) Collect(ch chan<- prometheus.Metric) {
	now := f.clock.Now().UnixNano()
	f.mu.Lock()
	upgrades, clusters, waiting := f.upgrades, f.clusters, f.waiting
	overdue := 0
	for _, d := range f.deadlines {
		if now > d {
			overdue++
		}
	}
	f.mu.Unlock()
	for i, s := range upgradeStates {
		ch <- prometheus.MustNewConstMetric(f.upgradesDesc, prometheus.GaugeValue, float64(upgrades[i]), string(s))
	}
	for i, s := range clusterStates {
		ch <- prometheus.MustNewConstMetric(f.clustersDesc, prometheus.GaugeValue, float64(clusters[i]), s)
	}
	for i, s := range waitingReasons {
		ch <- prometheus.MustNewConstMetric(f.waitingDesc, prometheus.GaugeValue, float64(waiting[i]), s)
	}
	ch <- prometheus.MustNewConstMetric(f.overdueDesc, prometheus.GaugeValue, float64(overdue))
}
