package dashboard

import (
	"cmp"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

// TrainHubLimit bounds the regional hubs a ring names that the page lists, and those of them
// that do not report: the counts say the rest. A ring may name 64 (ranv1alpha1.TrainHubLimit).
const TrainHubLimit = 8

// Trains are the release trains in scope, as the Trains tab draws them. Each train is
// bounded by the API's own limits (16 rings, 16 releases, TrainHubLimit hubs a ring shown);
// the list has one entry per train, as the list of rollouts has one row per rollout.
type Trains struct {
	Scope string `json:"scope"`
	// Served is false on a hub that serves no ReleaseTrains.
	Served bool `json:"served"`
	// Trains are by namespace and name.
	Trains []Train `json:"trains"`
}

// Train is one ReleaseTrain: its channel, what it says in its conditions, its rings in order
// and its ledger, newest release first.
type Train struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Channel   string `json:"channel"`
	// Newest is the newest release of the source, as last read.
	Newest string `json:"newest,omitempty"`
	Paused bool   `json:"paused,omitempty"`
	// Approval is true when a new release waits for an approval before the first ring.
	Approval bool `json:"approval,omitempty"`
	// Progressing is the Progressing condition: whether a release rolls, and where.
	Progressing *TrainCondition `json:"progressing,omitempty"`
	// Unreachable is the HubsReporting condition while False: the rings held and their hubs.
	Unreachable *TrainCondition `json:"unreachable,omitempty"`
	// Problems are SourceRead and Reconciled while False: the channel not read, a pass that
	// failed.
	Problems []TrainCondition `json:"problems,omitempty"`
	Rings    []RingView       `json:"rings"`
	Ledger   []ReleaseView    `json:"ledger"`
}

// TrainCondition is one of a train's conditions.
type TrainCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
	// Hubs, on HubsReporting, are the regional hubs that do not report, as "ring/hub", at
	// most TrainHubLimit; HubsNotShown counts the others.
	Hubs         []string `json:"hubs,omitempty"`
	HubsNotShown int      `json:"hubsNotShown,omitempty"`
}

// RingView is one ring: where it runs, what it asks of a release, and the release it runs or
// last ran, with that release's state and counts in it.
type RingView struct {
	Name string `json:"name"`
	// Hubs are the regional hubs the ring runs on, at most TrainHubLimit (HubsNotShown
	// counts the others); none for this hub's clusters.
	Hubs         []string `json:"hubs,omitempty"`
	HubsNotShown int      `json:"hubsNotShown,omitempty"`
	// MinClusters is qualification.minClusters, 0 when every cluster counts; Soak is the
	// soak in seconds; MaxFailed the failure budget.
	MinClusters int `json:"minClusters,omitempty"`
	Soak        int `json:"soak,omitempty"`
	MaxFailed   int `json:"maxFailed,omitempty"`
	// Release is the release the ring runs or last ran, Rollout its rollout's name (a
	// ManagedClustersUpgrade in the train's namespace, or on each regional hub).
	Release string `json:"release,omitempty"`
	Rollout string `json:"rollout,omitempty"`
	// Ended is true once the rollout ended.
	Ended bool `json:"ended,omitempty"`
	// Blocked says what blocks the ring's rollout, for a person to fix (status.rings[].message).
	Blocked string `json:"blocked,omitempty"`
	// Unreachable are the ring's regional hubs that do not report, at most TrainHubLimit
	// (UnreachableNotShown counts the others).
	Unreachable         []string `json:"unreachable,omitempty"`
	UnreachableNotShown int      `json:"unreachableNotShown,omitempty"`
	// In is the release's state, counts and times in the ring, from the ledger; nil when the
	// ring ran no release or the ledger no longer holds it.
	In *RingRelease `json:"in,omitempty"`
}

// RingRelease is the release a ring runs, in that ring.
type RingRelease struct {
	State string `json:"state"`
	// Clusters the rollout upgrades, those that run the release, those failed or timed out.
	Clusters  int         `json:"clusters"`
	Complete  int         `json:"complete"`
	Failed    int         `json:"failed"`
	StartedAt metav1.Time `json:"startedAt"`
	// SoakingSince is when enough clusters first ran it; SoakEnds, while it soaks, when the
	// ring's soak ends.
	SoakingSince *metav1.Time `json:"soakingSince,omitempty"`
	SoakEnds     *metav1.Time `json:"soakEnds,omitempty"`
	// DecidedAt is when it qualified or failed.
	DecidedAt *metav1.Time `json:"decidedAt,omitempty"`
}

// ReleaseView is one release of the ledger and where it stands along the rings.
type ReleaseView struct {
	Version string      `json:"version"`
	State   string      `json:"state"`
	Message string      `json:"message,omitempty"`
	FoundAt metav1.Time `json:"foundAt"`
	// At is the index, in the train's rings, of the furthest ring it entered: -1 before the
	// first.
	At int `json:"at"`
	// Rings are the rings it entered, in the order it entered them.
	Rings []ReleaseRing `json:"rings"`
}

// ReleaseRing is a release in one ring, as the ledger says: its times are on the ring's
// view (RingView.In) while the ring runs it.
type ReleaseRing struct {
	// Ring is the ring's index in the train's rings, -1 once the spec no longer has it.
	Ring  int    `json:"ring"`
	Name  string `json:"name"`
	State string `json:"state"`
	// Clusters the rollout upgrades, those that run the release, those failed or timed out.
	Clusters int `json:"clusters"`
	Complete int `json:"complete"`
	Failed   int `json:"failed"`
}

// TrainsOf is the Trains tab of scope from the ReleaseTrains (any order).
func TrainsOf(scope string, served bool, trains []ranv1alpha1.ReleaseTrain) Trains {
	out := Trains{Scope: scope, Served: served, Trains: make([]Train, 0, len(trains))}
	for i := range trains {
		out.Trains = append(out.Trains, TrainOf(&trains[i]))
	}
	slices.SortFunc(out.Trains, func(a, b Train) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// TrainOf is one train as the page draws it.
func TrainOf(t *ranv1alpha1.ReleaseTrain) Train {
	st := t.Status
	out := Train{Namespace: t.Namespace, Name: t.Name, Channel: t.Spec.Releases.Channel, Newest: st.Newest,
		Paused: t.Spec.Paused, Approval: t.Spec.Approval != nil && t.Spec.Approval.Required,
		Rings: make([]RingView, 0, len(t.Spec.Rings)), Ledger: make([]ReleaseView, 0, len(st.Ledger))}
	index := make(map[string]int, len(t.Spec.Rings))
	for i, r := range t.Spec.Rings {
		index[r.Name] = i
	}
	for _, r := range st.Ledger {
		out.Ledger = append(out.Ledger, releaseView(r, index))
	}
	ringStatus := make(map[string]ranv1alpha1.RingStatus, len(st.Rings))
	for _, rs := range st.Rings {
		ringStatus[rs.Name] = rs
	}
	for _, r := range t.Spec.Rings {
		out.Rings = append(out.Rings, ringView(r, ringStatus[r.Name], st.Ledger))
	}
	conditions(&out, st.Conditions)
	return out
}

func releaseView(r ranv1alpha1.LedgerRelease, index map[string]int) ReleaseView {
	v := ReleaseView{Version: r.Version, State: string(r.State), Message: r.Message, FoundAt: r.FoundAt, At: -1,
		Rings: make([]ReleaseRing, 0, len(r.Rings))}
	for _, lr := range r.Rings {
		i, ok := index[lr.Name]
		if !ok {
			i = -1
		}
		v.Rings = append(v.Rings, ReleaseRing{Ring: i, Name: lr.Name, State: string(lr.State), Clusters: lr.Clusters,
			Complete: lr.Complete, Failed: lr.Failed})
		v.At = max(v.At, i)
	}
	return v
}

func soakOf(q ranv1alpha1.RingQualification) time.Duration {
	if q.Soak == nil {
		return 0
	}
	return q.Soak.Duration
}

func ringView(r ranv1alpha1.TrainRing, rs ranv1alpha1.RingStatus, ledger []ranv1alpha1.LedgerRelease) RingView {
	v := RingView{Name: r.Name, MaxFailed: int(r.Qualification.MaxFailed), Soak: int(soakOf(r.Qualification).Seconds()),
		Release: rs.Release, Rollout: rs.Rollout, Ended: rs.Ended, Blocked: rs.Message}
	if r.Qualification.MinClusters != nil {
		v.MinClusters = int(*r.Qualification.MinClusters)
	}
	v.Hubs, v.HubsNotShown = firstOf(r.Hubs)
	v.Unreachable, v.UnreachableNotShown = firstOf(rs.Unreachable)
	for _, rel := range ledger {
		if rel.Version != rs.Release {
			continue
		}
		for _, lr := range rel.Rings {
			if lr.Name == r.Name {
				v.In = &RingRelease{State: string(lr.State), Clusters: lr.Clusters, Complete: lr.Complete, Failed: lr.Failed,
					StartedAt: lr.StartedAt, SoakingSince: lr.SoakingSince, DecidedAt: lr.DecidedAt}
				if lr.State == ranv1alpha1.RingSoaking && lr.SoakingSince != nil {
					end := metav1.NewTime(lr.SoakingSince.Add(soakOf(r.Qualification)))
					v.In.SoakEnds = &end
				}
			}
		}
	}
	return v
}

// firstOf keeps the first TrainHubLimit names and counts the others.
func firstOf(names []string) ([]string, int) {
	return names[:min(len(names), TrainHubLimit)], max(0, len(names)-TrainHubLimit)
}

// conditions keeps what matters of a train's conditions: Progressing, and HubsReporting,
// SourceRead and Reconciled while False.
func conditions(out *Train, list []metav1.Condition) {
	if c := meta.FindStatusCondition(list, ranv1alpha1.TrainConditionProgressing); c != nil {
		out.Progressing = conditionOf(c)
	}
	if c := meta.FindStatusCondition(list, ranv1alpha1.TrainConditionHubsReporting); c != nil && c.Status == metav1.ConditionFalse {
		out.Unreachable = conditionOf(c)
		var hubs []string
		for _, r := range out.Rings {
			for _, h := range r.Unreachable {
				hubs = append(hubs, r.Name+"/"+h)
			}
			// The ring's hubs not shown are not shown here either; they are counted.
			out.Unreachable.HubsNotShown += r.UnreachableNotShown
		}
		shown, more := firstOf(hubs)
		out.Unreachable.Hubs, out.Unreachable.HubsNotShown = shown, out.Unreachable.HubsNotShown+more
	}
	for _, kind := range []string{ranv1alpha1.TrainConditionSourceRead, ranv1alpha1.ConditionReconciled} {
		if c := meta.FindStatusCondition(list, kind); c != nil && c.Status == metav1.ConditionFalse {
			out.Problems = append(out.Problems, *conditionOf(c))
		}
	}
}

// conditionOf is a condition with its message within ranv1alpha1.MessageLimit.
func conditionOf(c *metav1.Condition) *TrainCondition {
	return &TrainCondition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: rollout.Truncate(c.Message, ranv1alpha1.MessageLimit)}
}
