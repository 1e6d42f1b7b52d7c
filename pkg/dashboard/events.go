package dashboard

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/cgu-operator/cgu-operator/pkg/talm"
	"github.com/cgu-operator/cgu-operator/pkg/words"
)

// GroupLimit bounds the groups of events the page shows; GroupRuns bounds the runs of
// cluster names a group's text shows.
const (
	GroupLimit = 60
	GroupRuns  = 6
)

// EventGroup is the events of one kind about one batch: "batch 3: 40 clusters upgrade finished
// successfully, sno-041..sno-080".
type EventGroup struct {
	// Type is Normal or Warning; Rank puts the failures (0) and the holds (1) before the rest.
	Type string `json:"type"`
	Rank int    `json:"rank"`
	// Reason is the events' reason, Action what they say happened (TALM's action, such as
	// RemediationInClusterCompleted), or the reason when they have none.
	Reason string `json:"reason"`
	Action string `json:"action"`
	// Batch is the 1-based batch the events are about, 0 for the rollout as a whole.
	Batch int `json:"batch,omitempty"`
	// Count is how many times the events happened (their counts summed).
	Count int `json:"count"`
	// Clusters counts the clusters the events are about, and ClusterText names them
	// abbreviated, in natural order ("40 clusters: sno-041..sno-080").
	Clusters    int    `json:"clusters,omitempty"`
	ClusterText string `json:"clusterText,omitempty"`
	// Message is the latest event's message.
	Message string    `json:"message"`
	First   time.Time `json:"first"`
	Last    time.Time `json:"last"`
}

// holdReasons are the reasons of events about a rollout held.
var holdReasons = map[string]bool{
	talm.ReasonWaiting: true, talm.ReasonBlocked: true, talm.ReasonPaused: true, talm.ReasonValidationFailure: true,
}

// GroupEvents groups the events (any order) by type, action and batch: a cluster's batch is
// batchOf's, when its event names no batch. Failures come first, then holds, then the latest;
// at most GroupLimit groups.
func GroupEvents(events []corev1.Event, batchOf map[string]int) []EventGroup {
	type key struct {
		typ, action string
		batch       int
	}
	groups := map[key]*EventGroup{}
	names := map[key][]string{}
	for _, e := range events {
		action := cmp.Or(e.Action, e.Reason)
		cluster := e.Annotations[talm.AnnotationClusterName]
		batch := batchOfEvent(e)
		if batch == 0 && cluster != "" {
			batch = batchOf[cluster]
		}
		k := key{e.Type, action, batch}
		g := groups[k]
		at := talm.LastSeen(e)
		if g == nil {
			g = &EventGroup{Type: e.Type, Reason: e.Reason, Action: action, Batch: batch, First: firstTime(e), Last: at, Message: e.Message, Rank: 2}
			switch {
			case e.Type == corev1.EventTypeWarning:
				g.Rank = 0
			case holdReasons[e.Reason]:
				g.Rank = 1
			}
			groups[k] = g
		}
		g.Count += max(1, int(e.Count))
		if first := firstTime(e); first.Before(g.First) {
			g.First = first
		}
		if at.After(g.Last) {
			g.Last, g.Message = at, e.Message
		}
		if cluster != "" {
			names[k] = append(names[k], cluster)
		}
	}
	out := make([]EventGroup, 0, len(groups))
	for k, g := range groups {
		if ns := names[k]; len(ns) > 0 {
			runs := words.Runs(ns)
			for _, r := range runs {
				g.Clusters += r.Count
			}
			g.ClusterText = words.Abbreviate(ns, "cluster", GroupRuns)
		}
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b EventGroup) int {
		return cmp.Or(cmp.Compare(a.Rank, b.Rank), b.Last.Compare(a.Last), cmp.Compare(a.Action, b.Action), cmp.Compare(a.Batch, b.Batch))
	})
	return out[:min(len(out), GroupLimit)]
}

// batchOfEvent is the 1-based batch an event is about: its annotation, or the "batch index N"
// of TALM's words when it has none (TALM's own batch events); 0 for none.
func batchOfEvent(e corev1.Event) int {
	if n, err := strconv.Atoi(e.Annotations[talm.AnnotationBatchIndex]); err == nil {
		return n
	}
	_, rest, ok := strings.Cut(e.Message, "batch index ")
	if !ok {
		return 0
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	n, _ := strconv.Atoi(rest[:end])
	return n
}
