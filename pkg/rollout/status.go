package rollout

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

// Status fills the rollout part of a ClusterGroupUpgrade's status from a decision: state,
// message, printer-column strings, counts, the plan summary and the current batch. Per-cluster
// detail is bounded by ranv1alpha1.ClusterDetailLimit and messages by MessageLimit, so the
// status stays small whatever the fleet size. Conditions are left to the caller.
func Status(st *ranv1alpha1.ClusterGroupUpgradeStatus, d Decision, p plan.Plan) {
	st.State = d.State
	st.Message = Truncate(d.Message, ranv1alpha1.MessageLimit)
	st.Counts = counts(d, p)
	done := st.Counts.Completed + st.Counts.TimedOut + st.Counts.Failed + st.Counts.Held
	st.Progress = ranv1alpha1.Progress{
		Batch:    fmt.Sprintf("%d/%d", batchNumber(d), len(p.Batches)),
		Clusters: fmt.Sprintf("%d/%d", done, st.Counts.Total),
	}
	st.Plan = &ranv1alpha1.PlanSummary{
		Batches: len(p.Batches), CanaryBatches: p.CanaryBatches(), Clusters: p.Clusters(),
		SkippedCompliant: len(p.SkippedCompliant), Spread: spreadSummary(p.Spread), SpreadAddedBatches: p.SpreadAdded,
	}
	st.StartedAt, st.CurrentBatch = nil, nil
	if started := d.Progress.Started; !started.IsZero() {
		st.StartedAt = metaTime(started)
		st.Plan.FrozenAt = metaTime(started)
	}
	if d.State == ranv1alpha1.StateNotCompleted {
		st.CurrentBatch = currentBatch(d, p)
	}
}

// batchNumber is the 1-based number of the batch shown: the current one while running, the
// last one once finished, zero before the start.
func batchNumber(d Decision) int {
	if d.Progress.Started.IsZero() {
		return 0
	}
	return d.Progress.Batch + 1
}

// counts places every planned cluster: those of ended batches by their final state, those
// of the running batch by theirs, the rest pending. A Completed rollout counts every cluster
// completed (late clusters of a TimedOut rollout that caught up included) but the held ones.
func counts(d Decision, p plan.Plan) ranv1alpha1.ClusterCounts {
	total := p.Clusters()
	switch {
	case d.State == ranv1alpha1.StateCompleted:
		held := d.Progress.Done.Held
		return ranv1alpha1.ClusterCounts{Total: total, Completed: total - held, Held: held}
	case d.Progress.Started.IsZero():
		return ranv1alpha1.ClusterCounts{Total: total, Pending: total}
	}
	c := d.Progress.Done
	c.Total, c.Pending, c.InProgress = total, 0, 0
	if !d.Progress.Finished && !d.Progress.BatchEnded { // an ended batch is in Done already
		countStates(&c, p.Batches[d.Progress.Batch], d.Progress.Clusters)
	}
	c.Pending = total - c.Completed - c.TimedOut - c.Failed - c.Held - c.InProgress
	return c
}

// currentBatch shows the running batch: its clusters not done first (longest in their state
// first), then the done ones, at most ClusterDetailLimit of them.
func currentBatch(d Decision, p plan.Plan) *ranv1alpha1.BatchStatus {
	b := p.Batches[d.Progress.Batch]
	out := &ranv1alpha1.BatchStatus{
		Index: d.Progress.Batch + 1, Canary: b.Canary,
		StartedAt: metaTime(d.Progress.BatchStarted), TimeoutAt: metaTime(d.BatchDeadline),
	}
	if s := d.Stage; s != nil {
		out.Stage = &ranv1alpha1.StageStatus{Number: s.Number, Size: s.Size, Step: s.Step + 1,
			StartedAt: metaTime(s.Started), TimeoutAt: metaTime(s.Deadline), Resets: s.Resets,
			Unhealthy: Truncate(s.Unhealthy, ranv1alpha1.MessageLimit)}
	}
	if a := AnalysisStatus(d.Progress.Analysis); a != nil {
		for i := range a.Gates {
			a.Gates[i].Measurements = nil // the batch's record keeps them
		}
		out.Analysis = a
	}
	names := slices.Clone(b.Clusters)
	slices.SortStableFunc(names, func(x, y string) int {
		cx, cy := d.Progress.Clusters[x], d.Progress.Clusters[y]
		if cx.Terminal() != cy.Terminal() {
			if cx.Terminal() {
				return 1
			}
			return -1
		}
		return cx.Since.Compare(cy.Since)
	})
	for i, name := range names {
		if i == ranv1alpha1.ClusterDetailLimit {
			out.ClustersNotShown = len(names) - i
			break
		}
		out.Clusters = append(out.Clusters, progressOf(name, d.Progress.Clusters[name]))
	}
	return out
}

func progressOf(name string, c Cluster) ranv1alpha1.ClusterProgress {
	state := c.State
	if state == "" {
		state = ranv1alpha1.ClusterPending
	}
	out := ranv1alpha1.ClusterProgress{Name: name, State: state, Reason: c.Reason}
	if !c.Since.IsZero() {
		out.Since = metaTime(c.Since)
	}
	if c.CompliantSince != nil {
		out.CompliantSince = metaTime(*c.CompliantSince)
	}
	return out
}

// Truncate cuts s to at most limit bytes, on a rune boundary, ending with "..." when cut.
func Truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	const ellipsis = "..."
	cut := limit - len(ellipsis)
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:max(cut, 0)], " ") + ellipsis
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// metaTime is t as the status stores it, to the second: a time derived again at each
// reconcile (a batch's deadline, a fraction of the rollout's timeout) then equals the one
// written, and does not make the status look changed.
func metaTime(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t).Rfc3339Copy()
	return &mt
}

// spreadSummary is how the spread shaped the plan, as status.plan.spread shows it.
func spreadSummary(uses []plan.SpreadUse) []ranv1alpha1.SpreadSummary {
	if len(uses) == 0 {
		return nil
	}
	out := make([]ranv1alpha1.SpreadSummary, len(uses))
	for i, u := range uses {
		out[i] = ranv1alpha1.SpreadSummary{LabelKey: u.Key, MaxPerBatch: u.MaxPerBatch, Values: u.Values, Largest: u.Largest, Unlabeled: u.Unlabeled}
	}
	return out
}
