package rollout

import (
	"math"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/analysis"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

// The batch records (ClusterGroupUpgradeBatch objects) hold a started rollout's progress:
// each batch's start, deadline and end, and the state of each of its clusters. The
// functions below read a Progress from them and write a Decision back into them, so that
// the records are the single durable truth of a rollout and the ClusterGroupUpgrade's
// status only a bounded view of it.

// Recorded rebuilds the progress of a rollout started at started from the records of one
// ClusterGroupUpgrade; policies are the managed policy names frozen at the start, which
// turn a recorded current policy back into its index. Records name the current batch (the
// last one started), its clusters, and the final states of the batches that ended.
func Recorded(records []ranv1alpha1.ClusterGroupUpgradeBatch, policies []string, started time.Time) Progress {
	p := Progress{Started: started, Clusters: map[string]Cluster{}}
	current, batches := 0, 0
	for _, r := range records {
		batches = max(batches, r.Spec.Index)
		if r.Status.StartedAt != nil && r.Spec.Index > current {
			current = r.Spec.Index
		}
	}
	if current == 0 {
		return p
	}
	p.Batch = current - 1
	ended := endedBatches(records)
	endsRollout := false
	for _, r := range records {
		if ended[r.Spec.Index] {
			countRecorded(&p, r.Status.Clusters)
		}
		if r.Spec.Index == current {
			readCurrent(&p, r.Status, policies)
			endsRollout = endsRollout || r.Status.EndsRollout
		}
	}
	p.BatchEnded = ended[current]
	p.Finished = p.BatchEnded && (current == batches || endsRollout)
	if p.Started.IsZero() {
		p.Started = p.BatchStarted
	}
	return p
}

// readCurrent reads one record of the current batch into p. A batch over ClusterDetailLimit
// clusters has several records, written one by one: a pass stopped between two writes leaves
// one part started or ended and not the other. The batch started with its first part that
// did, and ended once every part did (endedBatches); the next pass writes the others.
func readCurrent(p *Progress, st ranv1alpha1.ClusterGroupUpgradeBatchStatus, policies []string) {
	if st.StartedAt != nil && (p.BatchStarted.IsZero() || st.StartedAt.Time.Before(p.BatchStarted)) {
		p.BatchStarted = st.StartedAt.Time
	}
	if st.PausedBefore != nil {
		p.PausedBeforeBatch = st.PausedBefore.Duration
	}
	for _, cp := range st.Clusters {
		p.Clusters[cp.Name] = clusterFrom(cp, policies)
	}
	if st.Analysis != nil {
		p.Analysis = AnalysisFrom(st.Analysis)
	}
}

// endedBatches are the batches (1-based) every record of which ended.
func endedBatches(records []ranv1alpha1.ClusterGroupUpgradeBatch) map[int]bool {
	out := map[int]bool{}
	for _, r := range records {
		if done, seen := out[r.Spec.Index]; !seen || done {
			out[r.Spec.Index] = r.Status.FinishedAt != nil
		}
	}
	return out
}

// EndRecorded reports whether the batch records of a ClusterGroupUpgrade whose status says
// its rollout ended also show that end: every record of the plan is there (their clusters add
// up to total, status.counts.total) and every batch that started has finished. The status
// and the records are separate objects, written one after the other and seen by a cache in
// either order: a reader that took the end from the status and the clusters' states from
// records behind it would count clusters at their last progress as their outcome.
func EndRecorded(total int, records []ranv1alpha1.ClusterGroupUpgradeBatch) bool {
	n := 0
	for _, r := range records {
		if r.Status.StartedAt != nil && r.Status.FinishedAt == nil {
			return false
		}
		n += len(r.Spec.Clusters)
	}
	return n == total
}

// countRecorded counts the clusters of an ended record into p.Done and remembers the held
// and failed ones.
func countRecorded(p *Progress, clusters []ranv1alpha1.ClusterProgress) {
	for _, cp := range clusters {
		p.settle(cp.Name, cp.State)
		if cp.State != ranv1alpha1.ClusterInProgress { // an ended batch counts only final states
			tally(&p.Done, cp.State)
		}
	}
}

func clusterFrom(cp ranv1alpha1.ClusterProgress, policies []string) Cluster {
	c := Cluster{State: cp.State, Reason: cp.Reason}
	if cp.Since != nil {
		c.Since = cp.Since.Time
	}
	if cp.CompliantSince != nil {
		t := cp.CompliantSince.Time
		c.CompliantSince = &t
	}
	if cp.StartedAt != nil {
		c.Started = cp.StartedAt.Time
	}
	c.Stage = cp.Stage
	for _, name := range cp.SoftTimedOut {
		if i := slices.Index(policies, name); i >= 0 {
			c.SoftTimedOut = append(c.SoftTimedOut, i)
		}
	}
	switch {
	case c.Verifying(), cp.State == ranv1alpha1.ClusterFailed && cp.CurrentPolicy == "":
		c.Policy = len(policies) // past its last policy
	case cp.State != ranv1alpha1.ClusterCompleted && cp.State != ranv1alpha1.ClusterPending:
		c.Policy = max(slices.Index(policies, cp.CurrentPolicy), 0)
	case cp.State == ranv1alpha1.ClusterCompleted:
		c.Policy = len(policies)
	}
	return c
}

// RecordStatuses returns the status each record of the plan p must have after decision d,
// keyed by record name, for the records whose status changes: the batches that ended in d
// get their final cluster states and end time, the current batch its start, deadline and
// cluster states.
func RecordStatuses(records []ranv1alpha1.ClusterGroupUpgradeBatch, d Decision, p plan.Plan, policies []string, now time.Time) map[string]ranv1alpha1.ClusterGroupUpgradeBatchStatus {
	type batchState struct {
		started, deadline, finished time.Time
		clusters                    map[string]Cluster
		endsRollout                 bool
		pausedBefore                time.Duration
		analysis                    *AnalysisRun
	}
	states := map[int]batchState{}
	for i, e := range d.Ended {
		states[e.Index+1] = batchState{started: e.Started, deadline: e.Deadline, finished: now, clusters: e.Clusters,
			endsRollout: d.EndedEarly && i == len(d.Ended)-1, analysis: e.Analysis}
	}
	pr := d.Progress
	if started := !pr.Started.IsZero(); started && !pr.Finished && !pr.BatchEnded && len(p.Batches) > 0 {
		states[pr.Batch+1] = batchState{
			started: pr.BatchStarted, deadline: d.BatchDeadline, clusters: pr.Clusters, pausedBefore: pr.PausedBeforeBatch,
			analysis: pr.Analysis,
		}
	}
	out := map[string]ranv1alpha1.ClusterGroupUpgradeBatchStatus{}
	for _, r := range records {
		s, ok := states[r.Spec.Index]
		if !ok || r.Status.FinishedAt != nil { // an ended batch keeps its end
			continue
		}
		st := ranv1alpha1.ClusterGroupUpgradeBatchStatus{
			StartedAt: Stamp(s.started), TimeoutAt: Stamp(s.deadline), FinishedAt: Stamp(s.finished),
			EndsRollout: s.endsRollout, PausedBefore: r.Status.PausedBefore,
		}
		if st.PausedBefore == nil && s.pausedBefore > 0 {
			st.PausedBefore = &metav1.Duration{Duration: s.pausedBefore.Round(time.Second)}
		}
		st.Clusters = recordClusters(r.Spec, s.clusters, policies)
		if r.Spec.Part == 0 {
			st.Analysis = AnalysisStatus(s.analysis)
		}
		if !sameRecordStatus(r.Status, st) {
			out[r.Name] = st
		}
	}
	return out
}

// recordClusters is the progress of the clusters of one record, in its order; a window's
// and a progressive batch's clusters with their start, and the latter's with their stage.
func recordClusters(spec ranv1alpha1.ClusterGroupUpgradeBatchSpec, clusters map[string]Cluster, policies []string) []ranv1alpha1.ClusterProgress {
	out := make([]ranv1alpha1.ClusterProgress, 0, len(spec.Clusters))
	for _, name := range spec.Clusters {
		cp := progressRecord(name, clusters[name], policies)
		if spec.Window > 0 || len(spec.Stages) > 0 {
			cp.StartedAt = Stamp(clusters[name].Started)
			cp.Stage = clusters[name].Stage
		}
		out = append(out, cp)
	}
	return out
}

func progressRecord(name string, c Cluster, policies []string) ranv1alpha1.ClusterProgress {
	out := progressOf(name, c)
	out.Since = Stamp(c.Since)
	out.Reason = c.Reason
	if c.CompliantSince != nil {
		out.CompliantSince = Stamp(*c.CompliantSince)
	}
	if c.State != ranv1alpha1.ClusterCompleted && c.Policy < len(policies) {
		out.CurrentPolicy = policies[c.Policy]
	}
	out.SoftTimedOut = SoftTimedOutNames(c, policies)
	return out
}

// SoftTimedOutNames names the best-effort policies a cluster moved past without complying.
func SoftTimedOutNames(c Cluster, policies []string) []string {
	var out []string
	for _, i := range c.SoftTimedOut {
		if i >= 0 && i < len(policies) {
			out = append(out, policies[i])
		}
	}
	return out
}

// Stamp is t as the API stores it, to the second; nil for the zero time.
func Stamp(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	mt := metav1.NewTime(t).Rfc3339Copy()
	return &mt
}

func sameRecordStatus(a, b ranv1alpha1.ClusterGroupUpgradeBatchStatus) bool {
	return a.EndsRollout == b.EndsRollout && samePause(a.PausedBefore, b.PausedBefore) &&
		sameStamp(a.StartedAt, b.StartedAt) && sameStamp(a.TimeoutAt, b.TimeoutAt) &&
		sameStamp(a.FinishedAt, b.FinishedAt) && slices.EqualFunc(a.Clusters, b.Clusters, sameProgress) &&
		equality.Semantic.DeepEqual(a.Analysis, b.Analysis)
}

// sameProgress reports whether two clusters' progress is the same, their times to the second
// as they are stored, without reflection: it is asked of every cluster of the current batch
// on every pass (movedOn).
func sameProgress(a, b ranv1alpha1.ClusterProgress) bool {
	return a.Name == b.Name && a.State == b.State && a.CurrentPolicy == b.CurrentPolicy && a.Reason == b.Reason && a.Stage == b.Stage &&
		slices.Equal(a.SoftTimedOut, b.SoftTimedOut) &&
		sameStamp(a.Since, b.Since) && sameStamp(a.CompliantSince, b.CompliantSince) && sameStamp(a.StartedAt, b.StartedAt)
}

func sameStamp(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Unix() == b.Unix()
}

func samePause(a, b *metav1.Duration) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Duration == b.Duration
}

// AnalysisStatus is a batch's analysis as its record and the ClusterGroupUpgrade's status
// show it; nil for none.
func AnalysisStatus(run *AnalysisRun) *ranv1alpha1.BatchAnalysis {
	if run == nil {
		return nil
	}
	out := &ranv1alpha1.BatchAnalysis{StartedAt: *Stamp(run.Started), Gates: make([]ranv1alpha1.AnalysisGateStatus, 0, len(run.Gates))}
	for _, g := range run.Gates {
		v := g.Verdict
		gs := ranv1alpha1.AnalysisGateStatus{Name: g.Name, Query: g.Query, Phase: ranv1alpha1.AnalysisPhase(v.Phase), Conclusive: v.Conclusive,
			Failures: v.Failures, Inconclusives: v.Inconclusives, Message: Truncate(v.Message, ranv1alpha1.MessageLimit)}
		if len(v.Clusters) > 0 {
			gs.Clusters = slices.Clone(v.Clusters[:min(len(v.Clusters), ranv1alpha1.ClusterDetailLimit)])
		}
		for _, m := range g.Measurements {
			gs.Measurements = append(gs.Measurements, ranv1alpha1.AnalysisMeasurement{At: *Stamp(m.At),
				Outcome: ranv1alpha1.AnalysisPhase(m.Outcome), Value: decimal(m.Value), Baseline: decimal(m.Baseline)})
		}
		out.Gates = append(out.Gates, gs)
	}
	return out
}

// AnalysisFrom reads a batch's analysis back from its record.
func AnalysisFrom(st *ranv1alpha1.BatchAnalysis) *AnalysisRun {
	run := &AnalysisRun{Started: st.StartedAt.Time}
	for _, gs := range st.Gates {
		g := GateRun{Name: gs.Name, Query: gs.Query, Verdict: analysis.Verdict{Phase: analysis.Phase(gs.Phase), Conclusive: gs.Conclusive,
			Failures: gs.Failures, Inconclusives: gs.Inconclusives, Clusters: slices.Clone(gs.Clusters), Message: gs.Message}}
		for _, m := range gs.Measurements {
			g.Measurements = append(g.Measurements, analysis.Summary{At: m.At.Time, Outcome: analysis.Phase(m.Outcome),
				Value: parseDecimal(m.Value), Baseline: parseDecimal(m.Baseline)})
		}
		run.Gates = append(run.Gates, g)
	}
	return run
}

// decimal is v as a record stores it: "" for NaN.
func decimal(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// parseDecimal reads a value decimal wrote.
func parseDecimal(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}
