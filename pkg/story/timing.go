package story

import (
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/words"
)

// Timing is a cluster's time in the rollout against the other clusters of the rollout that
// completed. A cluster's time is measured from its start (its own in a window or a stage,
// else its batch's) to the end of its work: its completion, time-out or failure, or now while
// it works. The operator's cluster duration metric measures the same.
type Timing struct {
	// InState is how long the cluster has been in its state (since Since).
	InState *metav1.Duration `json:"inState,omitempty"`
	// Took is the cluster's time, from Started; Running says it counts on to now.
	Started *metav1.Time     `json:"started,omitempty"`
	Took    *metav1.Duration `json:"took,omitempty"`
	Running bool             `json:"running,omitempty"`
	// Median is the median time of the other completed clusters of the rollout, and
	// Completed how many they are; Median is unset when none completed.
	Median    *metav1.Duration `json:"median,omitempty"`
	Completed int              `json:"completed"`
	// Text says it in one sentence.
	Text string `json:"text"`
}

// timingOf measures the cluster's time and the median of the rollout's other completed
// clusters.
func timingOf(f Facts, at place) Timing {
	c := at.progress
	t := Timing{Started: at.started}
	if c.Since != nil && !f.Now.Before(c.Since.Time) {
		t.InState = &metav1.Duration{Duration: f.Now.Sub(c.Since.Time)}
	}
	if at.started != nil {
		end := f.Now
		switch {
		case c.State == ranv1alpha1.ClusterInProgress:
			t.Running = true
		case c.Since != nil:
			end = c.Since.Time
		}
		t.Took = &metav1.Duration{Duration: max(end.Sub(at.started.Time), 0)}
	}
	others := completedTimes(f.Records, f.Cluster)
	t.Completed = len(others)
	if len(others) > 0 {
		t.Median = &metav1.Duration{Duration: medianOf(others)}
	}
	t.Text = timingText(t, c.State, at)
	return t
}

// completedTimes are the times of the clusters of the records, other than cluster, that
// completed.
func completedTimes(records []ranv1alpha1.ClusterGroupUpgradeBatch, cluster string) []time.Duration {
	var out []time.Duration
	for _, r := range records {
		for _, c := range r.Status.Clusters {
			if c.Name == cluster || c.State != ranv1alpha1.ClusterCompleted || c.Since == nil {
				continue
			}
			if started := startOf(c, r.Status.StartedAt); started != nil {
				out = append(out, max(c.Since.Sub(started.Time), 0))
			}
		}
	}
	return out
}

// medianOf is the median of ds, which holds at least one.
func medianOf(ds []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	mid := len(s) / 2
	if len(s)%2 == 1 {
		return s[mid]
	}
	return s[mid-1] + (s[mid]-s[mid-1])/2
}

// timingText says the cluster's time against the median in one sentence.
func timingText(t Timing, state ranv1alpha1.ClusterState, at place) string {
	from := fmt.Sprintf("from the start of batch %d", at.batch.Index)
	if at.progress.StartedAt != nil {
		from = "from its own start"
	}
	var own string
	switch {
	case t.Took == nil:
		own = "not started"
	case t.Running:
		own = fmt.Sprintf("working for %s, %s", words.Duration(t.Took.Duration), from)
	default:
		own = fmt.Sprintf("took %s, %s to %s", words.Duration(t.Took.Duration), from, endWords[state])
	}
	if t.Median == nil {
		return own + "; no other cluster of the rollout has completed yet"
	}
	text := fmt.Sprintf("%s; the %s that completed took %s at the median", own, otherClusters(t.Completed), words.Duration(t.Median.Duration))
	if t.Took != nil && t.Median.Duration > 0 {
		text += fmt.Sprintf(" (this one: %.1f times that)", float64(t.Took.Duration)/float64(t.Median.Duration))
	}
	return text
}

// endWords end "took 12m, from the start of batch 2 to ...".
var endWords = map[ranv1alpha1.ClusterState]string{
	ranv1alpha1.ClusterCompleted: "its completion",
	ranv1alpha1.ClusterTimedOut:  "its time-out",
	ranv1alpha1.ClusterFailed:    "its failure",
	ranv1alpha1.ClusterHeld:      "being held",
}

func otherClusters(n int) string {
	if n == 1 {
		return "1 other cluster"
	}
	return fmt.Sprintf("%d other clusters", n)
}
