// Package freeze decides one pass over a FleetFreeze's alert queries (docs/freeze.md): when
// they are due, and the status their answers give. The controller (controllers/fleetfreeze)
// runs the queries it is told are due and writes the status; this package reads no clock and
// no network.
package freeze

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/analysis"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

// DefaultInterval is how often the alert queries run when spec.alerts.interval is absent.
const DefaultInterval = time.Minute

// shownSeries bounds the label sets status.firing shows per query.
const shownSeries = 5

// Interval is how often a FleetFreeze's alert queries run: spec.alerts.interval, or
// DefaultInterval when absent or unreadable (admission checks it).
func Interval(a *ranv1alpha1.FreezeAlerts) time.Duration {
	if a == nil || a.Interval == "" {
		return DefaultInterval
	}
	d, err := time.ParseDuration(a.Interval)
	if err != nil || d <= 0 {
		return DefaultInterval
	}
	return d
}

// Due tells whether the alert queries of ff should run now: it has some, and they never ran
// for its generation, or ran an interval ago or more.
func Due(ff *ranv1alpha1.FleetFreeze, now time.Time) bool {
	a := ff.Spec.Alerts
	if a == nil {
		return false
	}
	st := ff.Status
	return st.CheckedAt == nil || st.ObservedGeneration != ff.Generation || !now.Before(st.CheckedAt.Add(Interval(a)))
}

// Answer is what one alert query gave: its series, or why there are none.
type Answer struct {
	// Invalid says why the query cannot run (it does not parse, or gives no instant
	// vector); Err why the endpoint gave no answer. Both freeze the fleet.
	Invalid, Err string
	Samples      []analysis.Sample
}

// Facts are what one pass read.
type Facts struct {
	Freeze *ranv1alpha1.FleetFreeze
	Now    time.Time
	// Ran is true when the queries ran this pass; Answers then holds one per query, in
	// order, unless Unreachable says why none could run (the Secret is missing, say).
	Ran         bool
	Answers     []Answer
	Unreachable string
	// Silenced are the clusters upgrading under a rollout's silences (spec.silenceAlerts),
	// each with the severities silenced: a series of such a cluster with such a severity does
	// not fire, as the silence hides it from whom it would page. The same alert of any other
	// cluster fires.
	Silenced map[string][]string
}

// Intents are what the pass writes: the status, and when to look again.
type Intents struct {
	Status ranv1alpha1.FleetFreezeStatus
	// Again is how long until the queries are due; zero for never (no alert queries).
	Again time.Duration
}

// Decide returns the status of a FleetFreeze and when to run its queries again. Without
// alert queries the status is emptied; with queries that did not run this pass it is kept.
// A query fires while it returns a series whose value is not zero; one that could not be
// answered freezes the fleet as well (fail closed), and the condition AlertsEvaluated says
// why.
func Decide(f Facts) Intents {
	ff := f.Freeze
	a := ff.Spec.Alerts
	if a == nil {
		return Intents{Status: ranv1alpha1.FleetFreezeStatus{ObservedGeneration: ff.Generation}}
	}
	interval := Interval(a)
	st := *ff.Status.DeepCopy()
	if !f.Ran {
		again := interval
		if st.CheckedAt != nil {
			again = max(st.CheckedAt.Add(interval).Sub(f.Now), time.Second)
		}
		return Intents{Status: st, Again: again}
	}
	at := metav1.NewTime(f.Now).Rfc3339Copy()
	st.ObservedGeneration, st.CheckedAt, st.Firing = ff.Generation, &at, nil
	cond := metav1.Condition{Type: ranv1alpha1.ConditionAlertsEvaluated, ObservedGeneration: ff.Generation}
	invalid, failed := problems(a.Queries, f.Answers)
	switch {
	case f.Unreachable != "":
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ranv1alpha1.ReasonQueryFailed,
			"The alert queries could not run, so the fleet stays frozen: "+f.Unreachable
	case len(invalid) > 0:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ranv1alpha1.ReasonInvalidQuery,
			"The fleet stays frozen until the query is fixed: "+strings.Join(invalid, "; ")
	case len(failed) > 0:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ranv1alpha1.ReasonQueryFailed,
			"The endpoint did not answer, so the fleet stays frozen: "+strings.Join(failed, "; ")
	default:
		st.Firing = firing(a.Queries, f.Answers, f.Silenced)
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, ranv1alpha1.ReasonAlertsClear, "No alert query fires"
		if len(st.Firing) > 0 {
			cond.Reason, cond.Message = ranv1alpha1.ReasonAlertsFiring, firingMessage(st.Firing)
		}
	}
	cond.Message = rollout.Truncate(cond.Message, ranv1alpha1.MessageLimit)
	st.AlertsFrozen = cond.Reason != ranv1alpha1.ReasonAlertsClear
	meta.SetStatusCondition(&st.Conditions, cond)
	return Intents{Status: st, Again: interval}
}

// problems are the queries that cannot run and those the endpoint did not answer, each
// with why.
func problems(queries []string, answers []Answer) (invalid, failed []string) {
	for i, q := range queries {
		if i >= len(answers) {
			failed = append(failed, fmt.Sprintf("%s: not run", q))
			continue
		}
		switch a := answers[i]; {
		case a.Invalid != "":
			invalid = append(invalid, fmt.Sprintf("%s: %s", q, a.Invalid))
		case a.Err != "":
			failed = append(failed, fmt.Sprintf("%s: %s", q, a.Err))
		}
	}
	return invalid, failed
}

// firing are the queries that returned a series with a value other than zero, not
// silenced.
func firing(queries []string, answers []Answer, silenced map[string][]string) []ranv1alpha1.FiringQuery {
	var out []ranv1alpha1.FiringQuery
	for i, q := range queries {
		var shown []string
		n := 0
		for _, s := range answers[i].Samples {
			if s.Value == 0 || Silenced(s.Labels, silenced) {
				continue
			}
			n++
			if len(shown) < shownSeries {
				shown = append(shown, labelSet(s.Labels))
			}
		}
		if n > 0 {
			out = append(out, ranv1alpha1.FiringQuery{Query: q, Series: n, Shown: shown})
		}
	}
	return out
}

// Silenced reports whether a series with labels is an alert that a rollout's silence covers:
// of a cluster in silenced, with one of its severities.
func Silenced(labels map[string]string, silenced map[string][]string) bool {
	severities, ok := silenced[labels[analysis.DefaultClusterLabel]]
	return ok && slices.Contains(severities, labels["severity"])
}

// SilencedClusters are the clusters the rollouts' silences cover now (status.silences), each
// with the severities silenced (spec.silenceAlerts).
func SilencedClusters(cgus []ranv1alpha1.ClusterGroupUpgrade) map[string][]string {
	out := map[string][]string{}
	for _, c := range cgus {
		st, sa := c.Status.Silences, c.Spec.SilenceAlerts
		if st == nil || sa == nil {
			continue
		}
		for _, sil := range st.Clusters {
			out[sil.Cluster] = append(out[sil.Cluster], sa.SilencedSeverities()...)
		}
	}
	return out
}

// labelSet writes labels as PromQL does: {a="1", b="2"}, sorted by name.
func labelSet(labels map[string]string) string {
	parts := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		parts = append(parts, fmt.Sprintf("%s=%q", k, labels[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func firingMessage(fq []ranv1alpha1.FiringQuery) string {
	parts := make([]string, len(fq))
	for i, q := range fq {
		parts[i] = fmt.Sprintf("%s fires (%d series, %s)", q.Query, q.Series, strings.Join(q.Shown, " "))
	}
	return strings.Join(parts, "; ")
}

// Reason says why a FleetFreeze's alert queries freeze the fleet, for the rollouts' status:
// the condition's message. "" when they do not.
func Reason(ff *ranv1alpha1.FleetFreeze) string {
	if !ff.Status.AlertsFrozen {
		return ""
	}
	if c := meta.FindStatusCondition(ff.Status.Conditions, ranv1alpha1.ConditionAlertsEvaluated); c != nil {
		return c.Message
	}
	return "its alert queries fire"
}
