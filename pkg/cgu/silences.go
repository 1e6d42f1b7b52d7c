package cgu

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/analysis"
	"github.com/cgu-operator/cgu-operator/pkg/silences"
)

// The silences of spec.silenceAlerts (docs/silences.md): while a cluster of the current
// batch is InProgress, a silence on the operator's Alertmanager matches its alerts of the
// silenced severities, ending at the batch's deadline; once the cluster leaves InProgress
// (completed, failed, timed out), the rollout ends or the spec turns them off, the silence is
// expired. status.silences lists the silences kept: it is what the next pass compares with.

// SilenceCreatedBy is the createdBy of the operator's silences.
const SilenceCreatedBy = "cgu-operator"

// Silences are the silences a pass makes and expires.
type Silences struct {
	// Make are the silences to make (a silence with an ID replaces that one), by cluster.
	Make map[string]silences.Silence
	// Expire are the silences to expire; Keep those that stay.
	Expire, Keep []ranv1alpha1.ClusterSilence
}

// Empty reports whether the pass has no silence to make or expire.
func (s Silences) Empty() bool { return len(s.Make) == 0 && len(s.Expire) == 0 }

// silenceEndSlack is how far a kept silence's end may be from the deadline before it is
// made again (a pause moved the deadline).
const silenceEndSlack = time.Minute

// silences decides the silences from the decision: one for each InProgress cluster of the
// current batch while spec.silenceAlerts is enabled, and none otherwise.
func (p *pass) silences() {
	var kept []ranv1alpha1.ClusterSilence
	if st := p.before.Silences; st != nil {
		kept = st.Clusters
	}
	want := p.upgrading()
	out := Silences{Make: map[string]silences.Silence{}}
	had := map[string]ranv1alpha1.ClusterSilence{}
	for _, s := range kept {
		end, upgrading := want[s.Cluster]
		switch {
		case !upgrading:
			out.Expire = append(out.Expire, s)
		case absDuration(s.EndsAt.Sub(end)) > silenceEndSlack:
			out.Make[s.Cluster] = p.silence(s.Cluster, s.ID, end)
			had[s.Cluster] = s
		default:
			out.Keep = append(out.Keep, s)
			had[s.Cluster] = s
		}
	}
	for cluster, end := range want {
		if _, ok := had[cluster]; !ok {
			out.Make[cluster] = p.silence(cluster, "", end)
		}
	}
	p.in.Silences = out
}

// upgrading are the clusters whose alerts are silenced now, with when their silence ends:
// the current batch's InProgress clusters, while spec.silenceAlerts is enabled and the
// rollout runs.
func (p *pass) upgrading() map[string]time.Time {
	out := map[string]time.Time{}
	sa := p.cgu.Spec.SilenceAlerts
	d := p.in.Decision
	if sa == nil || !sa.Enabled || p.cfg.Alertmanager == "" || d.Progress.Finished || d.BatchDeadline.IsZero() {
		return out
	}
	for name, c := range d.Progress.Clusters {
		if c.State == ranv1alpha1.ClusterInProgress {
			out[name] = d.BatchDeadline
		}
	}
	return out
}

// silence is the silence of cluster's alerts until end; id replaces that silence.
func (p *pass) silence(cluster, id string, end time.Time) silences.Silence {
	severities := p.cgu.Spec.SilenceAlerts.SilencedSeverities()
	return silences.Silence{ID: id, StartsAt: p.now, EndsAt: end, CreatedBy: SilenceCreatedBy,
		Matchers: []silences.Matcher{
			{Name: analysis.DefaultClusterLabel, Value: cluster, IsEqual: true},
			{Name: "severity", Value: strings.Join(quoteAll(severities), "|"), IsRegex: true, IsEqual: true},
		},
		Comment: fmt.Sprintf("ClusterGroupUpgrade %s/%s: cluster %s upgrades until its batch's deadline", p.cgu.Namespace, p.cgu.Name, cluster)}
}

// quoteAll quotes each value for a regular expression.
func quoteAll(values []string) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = regexpQuote(v)
	}
	return out
}

// regexpQuote escapes the characters a regular expression gives a meaning; severities are
// label values of letters, digits, '_', '.' and '-' (admission), of which only '.' needs it.
func regexpQuote(s string) string { return strings.ReplaceAll(s, ".", `\.`) }

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// SilencesStatus is status.silences once the pass's silences were made and expired: those
// kept and those made (their IDs), and what failed; nil when there are none and nothing failed.
func SilencesStatus(keep []ranv1alpha1.ClusterSilence, made map[string]string, ends map[string]time.Time, problem string) *ranv1alpha1.SilencesStatus {
	out := &ranv1alpha1.SilencesStatus{Clusters: slices.Clone(keep), Error: problem}
	for cluster, id := range made {
		out.Clusters = append(out.Clusters, ranv1alpha1.ClusterSilence{Cluster: cluster, ID: id,
			EndsAt: metav1.NewTime(ends[cluster]).Rfc3339Copy()})
	}
	if len(out.Clusters) == 0 && problem == "" {
		return nil
	}
	slices.SortFunc(out.Clusters, func(a, b ranv1alpha1.ClusterSilence) int { return strings.Compare(a.Cluster, b.Cluster) })
	if len(out.Clusters) > ranv1alpha1.ClusterDetailLimit {
		out.Clusters = out.Clusters[:ranv1alpha1.ClusterDetailLimit]
	}
	return out
}
