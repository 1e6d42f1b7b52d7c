package dashboard

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
)

// ProgressPoints bounds the points of the burn-up chart, whatever the rollout's length.
const ProgressPoints = 180

// steps are the buckets' widths the chart takes from: the smallest that keeps the points
// under ProgressPoints.
var steps = []time.Duration{
	5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute,
	5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour,
	3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// Progress is the burn-up chart of a rollout: how many clusters had completed, failed, timed
// out, and were in progress, at the end of each bucket of Step seconds from Start; the last
// point is End (now, or when the rollout completed). Its last point counts what the status
// counts.
type Progress struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	Step  int       `json:"step"`
	// Total is how many clusters the plan holds.
	Total      int   `json:"total"`
	Completed  []int `json:"completed"`
	Failed     []int `json:"failed"`
	TimedOut   []int `json:"timedOut"`
	InProgress []int `json:"inProgress"`
	// Batches are when each batch started.
	Batches []BatchStart `json:"batches"`
	// Holds are when the rollout was held: paused, frozen, or a batch waiting (for an approval,
	// a window, a soak, an analysis), as far as the events the API server still keeps tell,
	// and the hold of now from the rollout's status.
	Holds []Hold `json:"holds"`
	// Projection, while the rollout runs, is where the estimate says the clusters done
	// (completed, failed or timed out) reach Total.
	Projection *Projection `json:"projection,omitempty"`
}

// BatchStart is a batch boundary on the chart.
type BatchStart struct {
	Index int       `json:"index"`
	At    time.Time `json:"at"`
}

// Hold is a time the rollout was held. To is nil while it holds.
type Hold struct {
	// Kind is pause, freeze or wait.
	Kind   string     `json:"kind"`
	Reason string     `json:"reason"`
	Batch  int        `json:"batch,omitempty"`
	From   time.Time  `json:"from"`
	To     *time.Time `json:"to,omitempty"`
}

// Kinds of hold.
const (
	HoldPause  = "pause"
	HoldFreeze = "freeze"
	HoldWait   = "wait"
)

// Projection is the estimate's line: from Done clusters at From to Total at Until.
type Projection struct {
	From  time.Time `json:"from"`
	Done  int       `json:"done"`
	Until time.Time `json:"until"`
}

// ProgressOf is the chart of a ClusterGroupUpgrade from its batch records, its events (any
// order), its timeline and estimate, at now; nil before it started.
func ProgressOf(cgu *ranv1alpha1.ClusterGroupUpgrade, records []ranv1alpha1.ClusterGroupUpgradeBatch, events []corev1.Event,
	line []Batch, est *ETA, now time.Time) *Progress {
	st := cgu.Status
	start := st.StartedAt
	for _, b := range line {
		start = earliest(start, b.StartedAt)
	}
	if start == nil {
		return nil
	}
	end := now
	if st.CompletedAt != nil && st.CompletedAt.After(start.Time) {
		end = st.CompletedAt.Time
	}
	step := stepFor(end.Sub(start.Time))
	n := max(1, int((max(end.Sub(start.Time), time.Second)+step-1)/step))
	p := &Progress{Start: start.Time, End: end, Step: int(step / time.Second),
		Completed: make([]int, n), Failed: make([]int, n), TimedOut: make([]int, n), InProgress: make([]int, n),
		Batches: []BatchStart{}}
	b := buckets{start: start.Time, end: end, step: step, n: n}
	started, ended := make([]int, n), make([]int, n)
	for i := range records {
		p.Total += len(records[i].Spec.Clusters)
		b.count(p, &records[i], started, ended)
	}
	running := 0
	for k := range n {
		if k > 0 {
			p.Completed[k] += p.Completed[k-1]
			p.Failed[k] += p.Failed[k-1]
			p.TimedOut[k] += p.TimedOut[k-1]
		}
		running += started[k] - ended[k]
		p.InProgress[k] = running
	}
	for _, b := range line {
		if b.StartedAt != nil {
			p.Batches = append(p.Batches, BatchStart{Index: b.Index, At: b.StartedAt.Time})
		}
	}
	p.Holds = holds(cgu, events, line, now)
	if est != nil && est.TotalSeconds > 0 && st.CompletedAt == nil {
		done := p.Completed[n-1] + p.Failed[n-1] + p.TimedOut[n-1]
		p.Projection = &Projection{From: end, Done: done, Until: end.Add(time.Duration(est.TotalSeconds) * time.Second)}
	}
	return p
}

// stepFor is the buckets' width for a span: the smallest of steps that keeps the points
// under ProgressPoints.
func stepFor(span time.Duration) time.Duration {
	for _, s := range steps {
		if span <= s*ProgressPoints {
			return s
		}
	}
	return steps[len(steps)-1]
}

// buckets are the chart's points: n of step from start, the last one at end.
type buckets struct {
	start, end time.Time
	step       time.Duration
	n          int
}

// point is the first point at or after t: the one whose count includes it.
func (b buckets) point(t time.Time) int {
	if !t.After(b.start) {
		return 0
	}
	return min(b.n-1, int((t.Sub(b.start)+b.step-1)/b.step)-1)
}

// count adds a record's clusters to the chart: each finished one to its series at its end,
// and to started and ended (the in-progress series' changes) from its start to its end; a
// cluster in progress to started. A pending or held cluster never started.
func (b buckets) count(p *Progress, r *ranv1alpha1.ClusterGroupUpgradeBatch, started, ended []int) {
	for _, c := range r.Status.Clusters {
		from := c.StartedAt
		if from == nil {
			from = r.Status.StartedAt
		}
		var series []int
		switch c.State {
		case ranv1alpha1.ClusterCompleted:
			series = p.Completed
		case ranv1alpha1.ClusterFailed:
			series = p.Failed
		case ranv1alpha1.ClusterTimedOut:
			series = p.TimedOut
		case ranv1alpha1.ClusterInProgress:
			if from != nil {
				started[b.point(from.Time)]++
			}
			continue
		default:
			continue
		}
		at := b.end
		if c.Since != nil && c.Since.Time.Before(b.end) {
			at = c.Since.Time
		}
		series[b.point(at)]++
		if from != nil && from.Time.Before(at) {
			started[b.point(from.Time)]++
			ended[b.point(at)]++
		}
	}
}

// holds are the rollout's holds, in time order: each pause from its event to the next
// resume, each wait of a batch from its event to the batch's start, and the hold of now.
func holds(cgu *ranv1alpha1.ClusterGroupUpgrade, events []corev1.Event, line []Batch, now time.Time) []Hold {
	out := append(waitHolds(cgu, events, line), pauseHolds(events, cgu.Spec.Paused)...)
	if !slices.ContainsFunc(out, func(h Hold) bool { return h.To == nil }) {
		if h := holdOfNow(cgu, now); h != nil {
			out = append(out, *h)
		}
	}
	slices.SortFunc(out, func(a, b Hold) int { return cmp.Or(a.From.Compare(b.From), cmp.Compare(a.Kind, b.Kind)) })
	return out
}

// waitHolds are the batches' waits the events tell: from a batch's waiting event to its
// start, or still, for the batch that waits now.
func waitHolds(cgu *ranv1alpha1.ClusterGroupUpgrade, events []corev1.Event, line []Batch) []Hold {
	starts := map[int]time.Time{}
	for _, b := range line {
		if b.StartedAt != nil {
			starts[b.Index] = b.StartedAt.Time
		}
	}
	out := []Hold{}
	for _, e := range events {
		if e.Reason != talm.ReasonWaiting {
			continue
		}
		batch, _ := strconv.Atoi(e.Annotations[talm.AnnotationBatchIndex])
		h := Hold{Kind: HoldWait, Reason: waitReason(e.Message), Batch: batch, From: firstTime(e)}
		if h.Reason == ranv1alpha1.ReasonFleetFrozen {
			h.Kind = HoldFreeze
		}
		if at, ok := starts[batch]; ok && at.After(h.From) {
			h.To = &at
		}
		if h.To != nil || (cgu.Status.Waiting != nil && cgu.Status.Waiting.Batch == batch) {
			out = append(out, h)
		}
	}
	return out
}

// pauseHolds are the pauses the events tell: from a pause to the next resume, or still
// while paused. An event that happened more than once counts at its first and last time.
func pauseHolds(events []corev1.Event, paused bool) []Hold {
	type mark struct {
		at     time.Time
		resume bool
	}
	var marks []mark
	for _, e := range events {
		if e.Reason != talm.ReasonPaused && e.Reason != talm.ReasonResumed {
			continue
		}
		resume := e.Reason == talm.ReasonResumed
		marks = append(marks, mark{talm.LastSeen(e), resume})
		if first := e.FirstTimestamp.Time; !first.IsZero() && e.Count > 1 && first.Before(talm.LastSeen(e)) {
			marks = append(marks, mark{first, resume})
		}
	}
	slices.SortFunc(marks, func(a, b mark) int { return a.at.Compare(b.at) })
	var out []Hold
	for i, m := range marks {
		if m.resume || (i > 0 && !marks[i-1].resume) {
			continue // a resume, or a pause while paused
		}
		h := Hold{Kind: HoldPause, Reason: ranv1alpha1.ReasonPaused, From: m.at}
		if k := slices.IndexFunc(marks[i+1:], func(r mark) bool { return r.resume }); k >= 0 {
			at := marks[i+1+k].at
			h.To = &at
		}
		if h.To != nil || paused {
			out = append(out, h)
		}
	}
	return out
}

// holdOfNow is the rollout's wait of now, from the condition that says since when; nil when
// it waits for nothing.
func holdOfNow(cgu *ranv1alpha1.ClusterGroupUpgrade, now time.Time) *Hold {
	w := cgu.Status.Waiting
	if w == nil {
		return nil
	}
	c := meta.FindStatusCondition(cgu.Status.Conditions, ranv1alpha1.ConditionProgressing)
	if c == nil || c.Reason != w.Reason || !c.LastTransitionTime.Time.Before(now) {
		return nil
	}
	h := &Hold{Kind: HoldWait, Reason: w.Reason, Batch: w.Batch, From: c.LastTransitionTime.Time}
	switch w.Reason {
	case ranv1alpha1.ReasonPaused:
		h.Kind, h.Batch = HoldPause, 0
	case ranv1alpha1.ReasonFleetFrozen:
		h.Kind = HoldFreeze
	}
	return h
}

// waitReason is the reason a waiting event names: "batch index 2 waits (FleetFrozen): ...".
func waitReason(message string) string {
	open := strings.Index(message, " waits (")
	if open < 0 {
		return ""
	}
	rest := message[open+len(" waits ("):]
	if end := strings.IndexByte(rest, ')'); end > 0 {
		return rest[:end]
	}
	return ""
}

// firstTime is when an event first happened.
func firstTime(e corev1.Event) time.Time {
	if !e.FirstTimestamp.IsZero() {
		return e.FirstTimestamp.Time
	}
	return talm.LastSeen(e)
}
