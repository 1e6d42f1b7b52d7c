// Package train decides a ReleaseTrain's pass: which release a ring takes next, whether a
// release qualified in a ring or failed it, and what the ledger says. It reads facts and
// returns intents; the controller (controllers/releasetrain) gathers and applies them.
//
// A release enters the first ring once the train found it (and, where asked, once approved),
// and ring k+1 once it qualified in ring k. A ring runs one release at a time: it takes a
// newer one only after its rollout ended. A release that failed a ring is never offered to a
// later ring. Rollouts are ManagedClustersUpgrades, on this hub or, through ManifestWorks, on
// regional hubs; a ring whose regional hub does not report is held where it stands.
package train

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/words"
)

// DefaultCheckInterval is how often the channel's graph is read when the train does not say.
const DefaultCheckInterval = time.Hour

// Event reasons.
const (
	EventReleaseFound     = "ReleaseFound"
	EventReleaseApproved  = "ReleaseApproved"
	EventReleaseEntered   = "ReleaseEnteredRing"
	EventReleaseQualified = "ReleaseQualified"
	EventReleaseFailed    = "ReleaseFailed"
	EventReleaseDelivered = "ReleaseDelivered"
	EventHubUnreachable   = "HubUnreachable"
)

// Facts are what a pass knows.
type Facts struct {
	Train *ranv1alpha1.ReleaseTrain
	Now   time.Time
	// Source is what the release source said in this pass.
	Source Source
	// Rollouts are the train's rollouts that exist, by ring and release.
	Rollouts map[Key]Rollout
}

// Source is the releases the source offers.
type Source struct {
	// Versions are the channel's releases, or those named by hand.
	Versions []string
	// Read is true when the channel's graph was read in this pass (or versions are named).
	Read bool
	// Err says why the graph could not be read.
	Err string
}

// Key names one rollout: a release in a ring.
type Key struct{ Ring, Version string }

// Rollout is one rollout as observed: the ManagedClustersUpgrade on this hub, or one part per
// regional hub.
type Rollout struct {
	Parts []Part
}

// Part is a rollout on this hub or on one regional hub.
type Part struct {
	// Hub is the regional hub's name, empty on this hub.
	Hub string
	// Reporting is false while a regional hub is not available or its work does not report.
	Reporting bool
	// Reported is true once the rollout reported its counts at least once.
	Reported bool
	// Counts of the rollout's clusters, as the ManagedClustersUpgrade summarizes them.
	Total, Complete, Failed, Held int
	// Ended is true once the rollout ended (no cluster upgrades any longer).
	Ended bool
	// Blocked says why the rollout cannot go on by itself, for a person to fix: its work not
	// applied on the regional hub, or the rollout refusing its spec (no cluster selected, a
	// Placement missing, the graph unavailable). Empty while it goes on or waits as expected.
	Blocked string
}

// Intents are what a pass writes.
type Intents struct {
	// Status is the train's new status.
	Status ranv1alpha1.ReleaseTrainStatus
	// Ensure are the rollouts that must exist.
	Ensure []Planned
	// Delete are the rollouts that must go.
	Delete []Key
	// Events to record, in order.
	Events []Event
	// After is when the pass must run again though nothing changed: the next read of the
	// channel or the end of a soak; zero for never.
	After time.Duration
}

// Planned is a rollout to make: a release in a ring.
type Planned struct {
	Key
	// Name is the rollout's name (the ManagedClustersUpgrade's and the ManifestWorks').
	Name string
	// Index is the ring's index in the spec.
	Index int
}

// Event is one event to record.
type Event struct {
	Warning bool
	Reason  string
	Message string
}

// CheckInterval is how often a train reads its channel's graph.
func CheckInterval(t *ranv1alpha1.ReleaseTrain) time.Duration {
	if ci := t.Spec.Releases.CheckInterval; ci != nil {
		return ci.Duration
	}
	return DefaultCheckInterval
}

// RolloutName is the name of a release's rollout in a ring.
func RolloutName(train, ring, version string) string {
	return names.Safe(48, train, ring, version)
}

// pass is one Decide's working state.
type pass struct {
	f      Facts
	t      *ranv1alpha1.ReleaseTrain
	now    metav1.Time
	ledger []ranv1alpha1.LedgerRelease
	in     Intents
}

// Decide returns what a pass writes.
func Decide(f Facts) Intents {
	p := &pass{f: f, t: f.Train, now: metav1.NewTime(f.Now), ledger: cloneLedger(f.Train.Status.Ledger)}
	newest := p.readSource()
	p.approve()
	p.adopt()
	p.observe()
	held := p.heldRings()
	if !p.t.Spec.Paused {
		for i := range p.t.Spec.Rings {
			if !held[i] {
				p.advance(i)
			}
		}
	}
	p.settle()
	p.trim()
	p.status(newest, held)
	p.rollouts()
	p.in.After = p.after()
	return p.in
}

func cloneLedger(l []ranv1alpha1.LedgerRelease) []ranv1alpha1.LedgerRelease {
	out := make([]ranv1alpha1.LedgerRelease, len(l))
	for i := range l {
		l[i].DeepCopyInto(&out[i])
	}
	return out
}

func (p *pass) event(warning bool, reason, format string, args ...any) {
	p.in.Events = append(p.in.Events, Event{Warning: warning, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// entry returns the ledger's release of a version.
func (p *pass) entry(version string) *ranv1alpha1.LedgerRelease {
	for i := range p.ledger {
		if p.ledger[i].Version == version {
			return &p.ledger[i]
		}
	}
	return nil
}

// readSource adds the source's newest release to the ledger when the train has not seen it
// and it is newer than every release there; it returns the newest release.
func (p *pass) readSource() string {
	newest := Newest(p.f.Source.Versions)
	if newest == "" || p.entry(newest) != nil {
		return newest
	}
	for _, r := range p.ledger {
		if !Newer(newest, r.Version) {
			return newest
		}
	}
	state := ranv1alpha1.ReleaseWaiting
	msg := "waits for ring " + p.t.Spec.Rings[0].Name
	if a := p.t.Spec.Approval; a != nil && a.Required && !slices.Contains(a.Approved, newest) {
		state, msg = ranv1alpha1.ReleaseAwaitingApproval, "waits for an approval (kubectl cgu train approve)"
	}
	p.ledger = append(p.ledger, ranv1alpha1.LedgerRelease{Version: newest, State: state, FoundAt: p.now, Message: msg})
	p.event(false, EventReleaseFound, "Release %s found in %s", newest, p.t.Spec.Releases.Channel)
	return newest
}

// approve lets the approved releases that waited for it wait for the first ring.
func (p *pass) approve() {
	a := p.t.Spec.Approval
	for i := range p.ledger {
		r := &p.ledger[i]
		if r.State != ranv1alpha1.ReleaseAwaitingApproval {
			continue
		}
		if a == nil || !a.Required || slices.Contains(a.Approved, r.Version) {
			r.State, r.Message = ranv1alpha1.ReleaseWaiting, "waits for ring "+p.t.Spec.Rings[0].Name
			p.event(false, EventReleaseApproved, "Release %s approved", r.Version)
		}
	}
}

// adopt records a rollout that exists though the ledger does not know it (a pass whose
// status write failed after the rollout was made): the ring runs it, nothing starts twice.
func (p *pass) adopt() {
	for _, ring := range p.t.Spec.Rings {
		for key := range p.f.Rollouts {
			if key.Ring != ring.Name {
				continue
			}
			r := p.entry(key.Version)
			if r == nil {
				p.ledger = append(p.ledger, ranv1alpha1.LedgerRelease{Version: key.Version, State: ranv1alpha1.ReleaseRolling, FoundAt: p.now})
				r = &p.ledger[len(p.ledger)-1]
			}
			if ringOf(r, ring.Name) == nil && !terminal(r.State) {
				r.Rings = append(r.Rings, ranv1alpha1.LedgerRing{Name: ring.Name, State: ranv1alpha1.RingRolling, StartedAt: p.now})
			}
		}
	}
}

func ringOf(r *ranv1alpha1.LedgerRelease, ring string) *ranv1alpha1.LedgerRing {
	for i := range r.Rings {
		if r.Rings[i].Name == ring {
			return &r.Rings[i]
		}
	}
	return nil
}

func terminal(s ranv1alpha1.ReleaseState) bool {
	return s == ranv1alpha1.ReleaseStopped || s == ranv1alpha1.ReleaseSuperseded || s == ranv1alpha1.ReleaseDelivered
}

// observe reads each ring's counts of the release it runs from its rollout, and judges the
// release there while it is undecided.
func (p *pass) observe() {
	for i := range p.ledger {
		r := &p.ledger[i]
		for j := range r.Rings {
			lr := &r.Rings[j]
			spec := p.ring(lr.Name)
			ro, ok := p.f.Rollouts[Key{lr.Name, r.Version}]
			// Counts come only from a rollout whose every part reports and has reported once (no
			// partial sums), and only while the ring runs this release: a rollout being deleted
			// for a newer one leaves the counts it was judged on.
			if cur, _ := p.current(lr.Name); spec == nil || !ok || !reporting(ro) || !reported(ro) || cur != r {
				continue
			}
			total, complete, failed, held, ended := sum(ro)
			lr.Clusters, lr.Complete, lr.Failed = total-held, complete, failed
			if lr.DecidedAt == nil {
				p.judge(r, lr, spec, ended)
			}
		}
	}
}

// ring returns the spec of a ring by name.
func (p *pass) ring(name string) *ranv1alpha1.TrainRing {
	for i := range p.t.Spec.Rings {
		if p.t.Spec.Rings[i].Name == name {
			return &p.t.Spec.Rings[i]
		}
	}
	return nil
}

func reporting(ro Rollout) bool {
	for _, pt := range ro.Parts {
		if !pt.Reporting {
			return false
		}
	}
	return len(ro.Parts) > 0
}

func reported(ro Rollout) bool {
	for _, pt := range ro.Parts {
		if !pt.Reported {
			return false
		}
	}
	return len(ro.Parts) > 0
}

func sum(ro Rollout) (total, complete, failed, held int, ended bool) {
	ended = len(ro.Parts) > 0
	for _, pt := range ro.Parts {
		total += pt.Total
		complete += pt.Complete
		failed += pt.Failed
		held += pt.Held
		ended = ended && pt.Ended
	}
	return total, complete, failed, held, ended
}

// judge decides a release in a ring: failed beyond the budget, qualified once minClusters ran
// it for the soak (and, on a ring with analysis gates, once its rollout ended: every gate
// passed then, since a failed one fails clusters or ends the rollout short), or failed when its
// rollout ended short of minClusters.
func (p *pass) judge(r *ranv1alpha1.LedgerRelease, lr *ranv1alpha1.LedgerRing, ring *ranv1alpha1.TrainRing, ended bool) {
	q := ring.Qualification
	need := lr.Clusters - lr.Failed
	if q.MinClusters != nil {
		need = int(*q.MinClusters)
	}
	switch {
	case lr.Failed > int(q.MaxFailed):
		p.fail(r, lr, fmt.Sprintf("%s failed in ring %s, more than its budget of %d", words.Plural(lr.Failed, "cluster"), lr.Name, q.MaxFailed))
		return
	case need == 0:
		if ended {
			p.fail(r, lr, fmt.Sprintf("its rollout in ring %s upgraded no cluster", lr.Name))
		}
		return
	case lr.Complete < need:
		if ended {
			p.fail(r, lr, fmt.Sprintf("its rollout in ring %s ended with %d clusters running it, fewer than %d", lr.Name, lr.Complete, need))
		}
		return
	}
	if lr.SoakingSince == nil {
		lr.SoakingSince, lr.State = ptrTime(p.now), ranv1alpha1.RingSoaking
	}
	if p.f.Now.Sub(lr.SoakingSince.Time) >= soakOf(q) && (ended || !gated(ring)) {
		lr.State, lr.DecidedAt = ranv1alpha1.RingQualified, ptrTime(p.now)
		p.event(false, EventReleaseQualified, "Release %s qualified in ring %s: %d clusters run it", r.Version, lr.Name, lr.Complete)
	}
}

func (p *pass) fail(r *ranv1alpha1.LedgerRelease, lr *ranv1alpha1.LedgerRing, why string) {
	lr.State, lr.DecidedAt = ranv1alpha1.RingFailed, ptrTime(p.now)
	r.State, r.Message = ranv1alpha1.ReleaseStopped, "stopped: "+why
	p.event(true, EventReleaseFailed, "Release %s stopped: %s", r.Version, why)
}

// gated says whether a ring's rollouts judge their batches by analysis gates.
func gated(ring *ranv1alpha1.TrainRing) bool {
	return ring.Rollout != nil && ring.Rollout.Analysis != nil && len(ring.Rollout.Analysis.Gates) > 0
}

func soakOf(q ranv1alpha1.RingQualification) time.Duration {
	if q.Soak == nil {
		return 0
	}
	return q.Soak.Duration
}

func ptrTime(t metav1.Time) *metav1.Time { return &t }

// current returns the release a ring runs or last ran: the one whose rollout in it started
// last.
func (p *pass) current(ring string) (*ranv1alpha1.LedgerRelease, *ranv1alpha1.LedgerRing) {
	var best *ranv1alpha1.LedgerRelease
	var bestRing *ranv1alpha1.LedgerRing
	for i := range p.ledger {
		lr := ringOf(&p.ledger[i], ring)
		if lr != nil && (best == nil || Newer(p.ledger[i].Version, best.Version)) {
			best, bestRing = &p.ledger[i], lr
		}
	}
	return best, bestRing
}

// heldRings are the rings whose running rollout has a regional hub that does not report.
func (p *pass) heldRings() map[int]bool {
	out := map[int]bool{}
	for i, ring := range p.t.Spec.Rings {
		if r, _ := p.current(ring.Name); r != nil {
			if ro, ok := p.f.Rollouts[Key{ring.Name, r.Version}]; ok && !reporting(ro) {
				out[i] = true
			}
		}
	}
	return out
}

// free reports whether a ring may take a release: it ran none, or its rollout ended and
// its release was judged there (a release soaking keeps its ring).
func (p *pass) free(ring string) bool {
	r, lr := p.current(ring)
	if r == nil {
		return true
	}
	if lr.DecidedAt == nil {
		return false
	}
	ro, ok := p.f.Rollouts[Key{ring, r.Version}]
	if !ok {
		return false // made in this pass, or to be made again
	}
	_, _, _, _, ended := sum(ro)
	return ended && reporting(ro)
}

// advance lets the newest release that may enter ring i do so, once the ring is free; the
// older ones that could have are superseded.
func (p *pass) advance(i int) {
	ring := p.t.Spec.Rings[i].Name
	if !p.free(ring) {
		return
	}
	cur, _ := p.current(ring)
	var ready []*ranv1alpha1.LedgerRelease
	for j := range p.ledger {
		r := &p.ledger[j]
		if p.mayEnter(r, i) && (cur == nil || Newer(r.Version, cur.Version)) {
			ready = append(ready, r)
		}
	}
	if len(ready) == 0 {
		return
	}
	slices.SortFunc(ready, func(a, b *ranv1alpha1.LedgerRelease) int { return compareVersions(b.Version, a.Version) })
	take := ready[0]
	take.Rings = append(take.Rings, ranv1alpha1.LedgerRing{Name: ring, State: ranv1alpha1.RingRolling, StartedAt: p.now})
	take.State, take.Message = ranv1alpha1.ReleaseRolling, "rolls out in ring "+ring
	p.event(false, EventReleaseEntered, "Release %s entered ring %s", take.Version, ring)
	for j := range p.ledger {
		r := &p.ledger[j]
		older := r != take && !terminal(r.State) && Newer(take.Version, r.Version)
		// The older releases that could have entered, and, at the first ring, the older ones
		// still awaiting an approval: none will enter now.
		if older && (slices.Contains(ready, r) || i == 0 && len(r.Rings) == 0) {
			r.State, r.Message = ranv1alpha1.ReleaseSuperseded, fmt.Sprintf("superseded: %s entered ring %s first", take.Version, ring)
		}
	}
}

// mayEnter reports whether a release may enter ring i: approved and not yet in a ring for the
// first, qualified in ring i-1 and not yet in ring i for the others.
func (p *pass) mayEnter(r *ranv1alpha1.LedgerRelease, i int) bool {
	if terminal(r.State) || r.State == ranv1alpha1.ReleaseAwaitingApproval {
		return false
	}
	rings := p.t.Spec.Rings
	if ringOf(r, rings[i].Name) != nil {
		return false
	}
	if i == 0 {
		return len(r.Rings) == 0
	}
	prev := ringOf(r, rings[i-1].Name)
	return prev != nil && prev.State == ranv1alpha1.RingQualified
}

// settle sets the state of every release that has not ended from its rings.
func (p *pass) settle() {
	rings := p.t.Spec.Rings
	for i := range p.ledger {
		r := &p.ledger[i]
		if terminal(r.State) || len(r.Rings) == 0 {
			continue
		}
		last := r.Rings[len(r.Rings)-1]
		switch {
		case last.State != ranv1alpha1.RingQualified:
			r.State, r.Message = ranv1alpha1.ReleaseRolling, ringMessage(last)
		case last.Name == rings[len(rings)-1].Name:
			r.State, r.Message = ranv1alpha1.ReleaseDelivered, "qualified in every ring"
			p.event(false, EventReleaseDelivered, "Release %s delivered: qualified in every ring", r.Version)
		default:
			next := p.next(last.Name)
			r.State, r.Message = ranv1alpha1.ReleaseWaiting, "qualified in ring "+last.Name+"; waits for ring "+next
		}
	}
}

// next names the ring after the one named.
func (p *pass) next(ring string) string {
	rings := p.t.Spec.Rings
	for i := range rings[:len(rings)-1] {
		if rings[i].Name == ring {
			return rings[i+1].Name
		}
	}
	return ""
}

func ringMessage(lr ranv1alpha1.LedgerRing) string {
	if lr.State == ranv1alpha1.RingSoaking {
		return fmt.Sprintf("soaks in ring %s: %d of %d clusters run it", lr.Name, lr.Complete, lr.Clusters)
	}
	return fmt.Sprintf("rolls out in ring %s: %d of %d clusters run it", lr.Name, lr.Complete, lr.Clusters)
}

// trim keeps the ledger newest first and within TrainLedgerLimit, dropping the oldest ended
// releases no ring runs first, then the oldest that wait; never one a ring runs.
func (p *pass) trim() {
	slices.SortStableFunc(p.ledger, func(a, b ranv1alpha1.LedgerRelease) int { return compareVersions(b.Version, a.Version) })
	for len(p.ledger) > ranv1alpha1.TrainLedgerLimit {
		drop := p.oldest(func(r *ranv1alpha1.LedgerRelease) bool { return terminal(r.State) })
		if drop < 0 {
			// Releases that wait, the oldest first: a ring runs one release at a time, so the
			// running ones are never more than the rings, which are never more than the limit.
			drop = p.oldest(func(*ranv1alpha1.LedgerRelease) bool { return true })
		}
		p.ledger = slices.Delete(p.ledger, drop, drop+1)
	}
}

// oldest returns the index of the oldest release no ring runs that passes keep; -1 for none.
func (p *pass) oldest(keep func(*ranv1alpha1.LedgerRelease) bool) int {
	for i := len(p.ledger) - 1; i >= 0; i-- {
		if r := &p.ledger[i]; keep(r) && !p.running(r) {
			return i
		}
	}
	return -1
}

// running reports whether some ring's current rollout is a release's.
func (p *pass) running(r *ranv1alpha1.LedgerRelease) bool {
	for _, ring := range p.t.Spec.Rings {
		if cur, _ := p.current(ring.Name); cur != nil && cur.Version == r.Version {
			return true
		}
	}
	return false
}

// rollouts: each ring's current rollout must exist; the others go.
func (p *pass) rollouts() {
	keep := map[Key]bool{}
	for i, ring := range p.t.Spec.Rings {
		r, _ := p.current(ring.Name)
		if r == nil {
			continue
		}
		k := Key{ring.Name, r.Version}
		keep[k] = true
		p.in.Ensure = append(p.in.Ensure, Planned{Key: k, Name: RolloutName(p.t.Name, ring.Name, r.Version), Index: i})
	}
	for k := range p.f.Rollouts {
		if !keep[k] {
			p.in.Delete = append(p.in.Delete, k)
		}
	}
	slices.SortFunc(p.in.Delete, func(a, b Key) int {
		return strings.Compare(a.Ring+"/"+a.Version, b.Ring+"/"+b.Version)
	})
}

// status writes the rings, the ledger and the conditions.
func (p *pass) status(newest string, held map[int]bool) {
	t := p.t
	st := ranv1alpha1.ReleaseTrainStatus{
		ObservedGeneration: t.Generation, Newest: newest, CheckedAt: t.Status.CheckedAt,
		Ledger: p.ledger, Conditions: slices.Clone(t.Status.Conditions),
	}
	if st.Newest == "" {
		st.Newest = t.Status.Newest
	}
	set := func(kind string, s metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: kind, Status: s, Reason: reason, Message: msg, ObservedGeneration: t.Generation, LastTransitionTime: p.now})
	}
	src := p.f.Source
	switch {
	case src.Err != "":
		set(ranv1alpha1.TrainConditionSourceRead, metav1.ConditionFalse, ranv1alpha1.TrainReasonGraphUnavailable, src.Err)
	case len(t.Spec.Releases.Versions) > 0:
		set(ranv1alpha1.TrainConditionSourceRead, metav1.ConditionTrue, ranv1alpha1.TrainReasonVersionsNamed, "the releases are named by hand; the newest is "+newest)
	case src.Read:
		st.CheckedAt = ptrTime(p.now)
		set(ranv1alpha1.TrainConditionSourceRead, metav1.ConditionTrue, ranv1alpha1.TrainReasonGraphRead,
			fmt.Sprintf("%s's newest release is %s", t.Spec.Releases.Channel, newest))
	}
	var unreachable []string
	for i, ring := range t.Spec.Rings {
		rs := ranv1alpha1.RingStatus{Name: ring.Name}
		if r, _ := p.current(ring.Name); r != nil {
			rs.Release, rs.Rollout = r.Version, RolloutName(t.Name, ring.Name, r.Version)
			if ro, ok := p.f.Rollouts[Key{ring.Name, r.Version}]; ok {
				_, _, _, _, rs.Ended = sum(ro)
				rs.Ended = rs.Ended && reporting(ro)
				rs.Message = blocked(ro)
				if held[i] {
					rs.Unreachable = lost(ro)
					unreachable = append(unreachable, ring.Name+" ("+strings.Join(rs.Unreachable, ", ")+")")
				}
			}
		}
		st.Rings = append(st.Rings, rs)
	}
	if len(unreachable) > 0 {
		set(ranv1alpha1.TrainConditionHubsReporting, metav1.ConditionFalse, ranv1alpha1.TrainReasonHubUnreachable,
			"held until their regional hubs report again: "+strings.Join(unreachable, "; "))
		if c := meta.FindStatusCondition(t.Status.Conditions, ranv1alpha1.TrainConditionHubsReporting); c == nil || c.Status != metav1.ConditionFalse {
			p.event(true, EventHubUnreachable, "Rings held, their regional hubs do not report: %s", strings.Join(unreachable, "; "))
		}
	} else {
		set(ranv1alpha1.TrainConditionHubsReporting, metav1.ConditionTrue, ranv1alpha1.TrainReasonAllReporting, "every regional hub of a running ring reports")
	}
	p.progressing(set)
	p.in.Status = st
}

// blocked joins what blocks the parts of a rollout, each with its hub.
func blocked(ro Rollout) string {
	var out []string
	for _, pt := range ro.Parts {
		switch {
		case pt.Blocked == "":
		case pt.Hub == "":
			out = append(out, pt.Blocked)
		default:
			out = append(out, pt.Hub+": "+pt.Blocked)
		}
	}
	return truncate(strings.Join(out, "; "))
}

func lost(ro Rollout) []string {
	var out []string
	for _, pt := range ro.Parts {
		if !pt.Reporting && len(out) < ranv1alpha1.TrainHubLimit {
			out = append(out, pt.Hub)
		}
	}
	return out
}

// progressing sets Progressing from the ledger.
func (p *pass) progressing(set func(string, metav1.ConditionStatus, string, string)) {
	var rolling, awaiting []string
	for _, r := range p.ledger {
		switch r.State {
		case ranv1alpha1.ReleaseRolling, ranv1alpha1.ReleaseWaiting:
			rolling = append(rolling, r.Version+" "+r.Message)
		case ranv1alpha1.ReleaseAwaitingApproval:
			awaiting = append(awaiting, r.Version)
		}
	}
	switch {
	case p.t.Spec.Paused:
		set(ranv1alpha1.TrainConditionProgressing, metav1.ConditionFalse, ranv1alpha1.TrainReasonPaused, "spec.paused: no release enters a ring; running rollouts go on")
	case len(rolling) > 0:
		set(ranv1alpha1.TrainConditionProgressing, metav1.ConditionTrue, ranv1alpha1.TrainReasonRolling, truncate(strings.Join(rolling, "; ")))
	case len(awaiting) > 0:
		set(ranv1alpha1.TrainConditionProgressing, metav1.ConditionFalse, ranv1alpha1.TrainReasonAwaitingApproval, "waiting for an approval: "+strings.Join(awaiting, ", "))
	default:
		set(ranv1alpha1.TrainConditionProgressing, metav1.ConditionFalse, ranv1alpha1.TrainReasonIdle, "every release the train knows has ended")
	}
}

func truncate(s string) string {
	if len(s) <= ranv1alpha1.MessageLimit {
		return s
	}
	return s[:ranv1alpha1.MessageLimit-3] + "..."
}

// after is when the pass must run again: the next read of the channel, or the end of the
// first soak to end.
func (p *pass) after() time.Duration {
	var out time.Duration
	soonest := func(d time.Duration) {
		if d > 0 && (out == 0 || d < out) {
			out = d
		}
	}
	if checked := p.in.Status.CheckedAt; checked != nil && len(p.t.Spec.Releases.Versions) == 0 {
		soonest(max(checked.Add(CheckInterval(p.t)).Sub(p.f.Now), time.Second))
	}
	for _, r := range p.ledger {
		for _, lr := range r.Rings {
			if lr.State == ranv1alpha1.RingSoaking {
				if spec := p.ring(lr.Name); spec != nil {
					soonest(lr.SoakingSince.Add(soakOf(spec.Qualification)).Sub(p.f.Now))
				}
			}
		}
	}
	return out
}
