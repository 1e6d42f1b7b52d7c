package ztp

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// Reasons of the events the ZTP controller records on ManagedClusters.
const (
	// EventZTPStarted: the cluster's ZTP ClusterGroupUpgrade was created.
	EventZTPStarted = "ZTPStarted"
	// EventZTPDone: the controller labelled the cluster ztp-done itself, since it has no
	// wave policy or was already compliant with all of them.
	EventZTPDone = "ZTPDone"
	// EventZTPRerun: ztp-done was removed from a cluster whose ClusterGroupUpgrade had
	// completed; the old one is deleted so that a new one runs.
	EventZTPRerun = "ZTPRerun"
	// EventInvalidWave: policies of the cluster carry a wave that is not an integer;
	// they are left out of its ClusterGroupUpgrade.
	EventInvalidWave = "InvalidZTPWave"
	// EventZTPFailed (Warning): a pass over the cluster failed; the note is the error. The
	// ZTP flow has no status of its own (it acts on ManagedClusters, which are not its
	// objects): this event is where a failure shows, beside the manager's log.
	EventZTPFailed = "ZTPFailed"
)

// Facts are what one pass read of a ManagedCluster and its ZTP ClusterGroupUpgrade; Policies
// are its replicated policies, read only when the step is Start (NeedsPolicies).
type Facts struct {
	Cluster Cluster
	// Upgrade is the cluster's ZTP ClusterGroupUpgrade, nil when it has none.
	Upgrade  *ranv1alpha1.ClusterGroupUpgrade
	Policies []Policy
}

// Intents are what a pass writes: the ClusterGroupUpgrade to create, the done label to set,
// the ClusterGroupUpgrade to delete (this one, by its UID), the events, and when to look
// again.
type Intents struct {
	Create   *ranv1alpha1.ClusterGroupUpgrade
	MarkDone string
	Delete   *ranv1alpha1.ClusterGroupUpgrade
	Events   []Event
	Wait     time.Duration
}

// Event is an event on the ManagedCluster; Related names the ClusterGroupUpgrade it is
// about, when there is one.
type Event struct {
	Type, Reason, Message string
	Related               *ranv1alpha1.ClusterGroupUpgrade
}

// NeedsPolicies reports whether the pass over the cluster starts its flow, and so reads its
// policies.
func NeedsPolicies(c Cluster, cgu *ranv1alpha1.ClusterGroupUpgrade, now time.Time, settle time.Duration) bool {
	step, _ := Next(c, cgu, now, settle)
	return step == Start
}

// Decide decides a pass over a cluster at now (pure): nothing, a wait while the cluster
// settles, the start of its flow (its ClusterGroupUpgrade over its wave policies, or the done
// label when it has none), a rerun (the completed ClusterGroupUpgrade deleted), or the end
// of a flow that had nothing to do (done label, ClusterGroupUpgrade deleted).
func Decide(f Facts, now time.Time, settle time.Duration) Intents {
	var in Intents
	step, wait := Next(f.Cluster, f.Upgrade, now, settle)
	switch step {
	case Settle:
		in.Wait = wait
	case Start:
		in.start(f)
	case Rerun:
		cgu := f.Upgrade
		in.Delete = cgu
		in.Events = append(in.Events, Event{Type: corev1.EventTypeNormal, Reason: EventZTPRerun, Related: cgu,
			Message: fmt.Sprintf("The %s label was removed: deleting the completed ClusterGroupUpgrade %s/%s to run again", DoneLabel, cgu.Namespace, cgu.Name)})
	case Skipped:
		in.done("Already compliant with every wave policy")
		in.Delete = f.Upgrade
	}
	return in
}

// start creates the cluster's ClusterGroupUpgrade over its wave policies, or labels it done
// when none carries a valid wave.
func (in *Intents) start(f Facts) {
	waves, invalid := Waves(f.Policies)
	if len(invalid) > 0 {
		in.Events = append(in.Events, Event{Type: corev1.EventTypeWarning, Reason: EventInvalidWave,
			Message: "Left out of ZTP, their wave is not an integer: " + strings.Join(invalid, ", ")})
	}
	cgu := Upgrade(f.Cluster.Name, waves)
	if cgu == nil {
		in.done("No inform policy with a " + WaveAnnotation + " annotation")
		return
	}
	in.Create = cgu
}

func (in *Intents) done(why string) {
	in.MarkDone = why
	in.Events = append(in.Events, Event{Type: corev1.EventTypeNormal, Reason: EventZTPDone, Message: fmt.Sprintf("Labelled %s: %s", DoneLabel, why)})
}

// Started is the event of a ClusterGroupUpgrade created over its wave policies.
func Started(cgu *ranv1alpha1.ClusterGroupUpgrade) Event {
	return Event{Type: corev1.EventTypeNormal, Reason: EventZTPStarted, Related: cgu,
		Message: fmt.Sprintf("Created ClusterGroupUpgrade %s/%s over %d wave policies: %s", cgu.Namespace, cgu.Name,
			len(cgu.Spec.ManagedPolicies), strings.Join(cgu.Spec.ManagedPolicies, ", "))}
}
