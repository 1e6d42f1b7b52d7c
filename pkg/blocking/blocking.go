// Package blocking decides whether a ClusterGroupUpgrade's spec.blockingCRs keep it from
// starting. It follows TALM: every blocking ClusterGroupUpgrade must exist and be Completed,
// or, with the partial completion mode annotation, may also have ended TimedOut. It adds
// cycle detection: a ClusterGroupUpgrade that, through blockingCRs, waits for itself is
// reported as such, since waiting never resolves it. It is pure: the caller looks the other
// ClusterGroupUpgrades up.
package blocking

import (
	"fmt"
	"slices"
	"strings"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

// Annotations TALM reads on the blocked ClusterGroupUpgrade (the one listing blockingCRs).
const (
	// AnnotationCompletionMode set to CompletionModePartial lets a blocking
	// ClusterGroupUpgrade that ended without completing (state TimedOut) count as done.
	// Any other value, or none, requires every blocking ClusterGroupUpgrade to be Completed.
	AnnotationCompletionMode = "ran.openshift.io/blocking-cgu-completion-mode"
	// CompletionModePartial is the value of AnnotationCompletionMode that accepts a
	// blocking ClusterGroupUpgrade that timed out.
	CompletionModePartial = "partial"
	// AnnotationClusterFiltering set to "true", together with the partial completion mode,
	// leaves out of the blocked ClusterGroupUpgrade the clusters that a timed-out blocking
	// ClusterGroupUpgrade did not complete. Without the partial completion mode it has no
	// effect, as in TALM.
	AnnotationClusterFiltering = "ran.openshift.io/blocking-cgu-cluster-filtering"
)

// maxNamed is how many ClusterGroupUpgrades a message names at most; the rest are counted.
const maxNamed = 10

// Ref names a ClusterGroupUpgrade.
type Ref struct{ Namespace, Name string }

// String returns "namespace/name".
func (r Ref) String() string { return r.Namespace + "/" + r.Name }

// Upgrade is what blocking needs of another ClusterGroupUpgrade.
type Upgrade struct {
	Ref
	// State is its status.state; empty before its first status.
	State ranv1alpha1.UpgradeState
	// BlockingCRs are its spec.blockingCRs, namespaces already defaulted to its own.
	BlockingCRs []Ref
	// NotCompleted are the clusters of its plan that did not complete (timed out, failed,
	// pending, in progress). Only cluster filtering reads them.
	NotCompleted []string
}

// Input is what blocking needs of the ClusterGroupUpgrade being decided.
type Input struct {
	// Self names the ClusterGroupUpgrade being decided.
	Self Ref
	// BlockingCRs are its spec.blockingCRs, in spec order, namespaces already defaulted to
	// Self.Namespace.
	BlockingCRs []Ref
	// Annotations are its metadata.annotations.
	Annotations map[string]string
	// Lookup returns another ClusterGroupUpgrade, or false when it does not exist. It is
	// called at most once per ClusterGroupUpgrade and never for Self.
	Lookup func(Ref) (Upgrade, bool)
}

// Result is the outcome.
type Result struct {
	// Problem is why the ClusterGroupUpgrade cannot start; nil when it is not blocked.
	Problem *rollout.Problem
	// Excluded are the clusters to leave out of the ClusterGroupUpgrade's selection
	// (cluster filtering), sorted and deduplicated. It is set only when Problem is nil:
	// until then a blocking ClusterGroupUpgrade may still complete more clusters.
	Excluded []string
}

// Evaluate decides whether the blocking ClusterGroupUpgrades of in.Self keep it from starting.
// In order:
//
//   - a cycle through Self (following blockingCRs from Self reaches Self again) blocks it
//     with ReasonBlockingCRCycle, naming the path; CGUs that do not exist are skipped;
//   - blocking CGUs that do not exist block it with ReasonMissingBlockingCR;
//   - blocking CGUs that are not done block it with ReasonIncompleteBlockingCR. Done means
//     Completed, or TimedOut under the partial completion mode.
//
// A cycle that does not pass through Self (Self waits for a, a and b wait for each other)
// is not Self's cycle: a and b report it. Self stays blocked with ReasonIncompleteBlockingCR,
// since a can never complete, and unblocks once the cycle is broken and a completes.
func Evaluate(in Input) Result {
	lookup := memoize(in.Lookup)
	if path := cycle(in.Self, in.BlockingCRs, lookup); path != nil {
		return blocked(ranv1alpha1.ReasonBlockingCRCycle, "Blocking cycle: "+cycleMessage(path))
	}
	partial := in.Annotations[AnnotationCompletionMode] == CompletionModePartial
	filtering := in.Annotations[AnnotationClusterFiltering] == "true" // read only under partial
	var missing, incomplete, excluded []string
	for _, ref := range dedupe(in.BlockingCRs) {
		u, ok := lookup(ref)
		switch {
		case !ok:
			missing = append(missing, ref.String())
		case u.State == ranv1alpha1.StateCompleted:
		case partial && u.State == ranv1alpha1.StateTimedOut:
			if filtering {
				excluded = append(excluded, u.NotCompleted...)
			}
		default:
			incomplete = append(incomplete, fmt.Sprintf("%s (%s)", ref, stateName(u.State)))
		}
	}
	switch {
	case len(missing) > 0:
		return blocked(ranv1alpha1.ReasonMissingBlockingCR,
			"Blocked by ClusterGroupUpgrades that do not exist: "+list(missing))
	case len(incomplete) > 0:
		return blocked(ranv1alpha1.ReasonIncompleteBlockingCR,
			"Blocked by ClusterGroupUpgrades that have not completed: "+list(incomplete))
	}
	if len(excluded) == 0 {
		return Result{}
	}
	slices.Sort(excluded)
	return Result{Excluded: slices.Compact(excluded)}
}

// cycle walks blockingCRs depth first from self, visiting each ClusterGroupUpgrade once,
// and returns the first path found from self back to self, both ends included, or nil.
// A ClusterGroupUpgrade fully explored without reaching self cannot reach it later, so
// skipping it when met again loses no cycle.
func cycle(self Ref, blockers []Ref, lookup func(Ref) (Upgrade, bool)) []Ref {
	type frame struct {
		ref  Ref
		next []Ref // the blockers of ref still to follow
	}
	visited := map[Ref]bool{self: true}
	stack := []frame{{ref: self, next: blockers}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if len(top.next) == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		ref := top.next[0]
		top.next = top.next[1:]
		if ref == self {
			path := make([]Ref, 0, len(stack)+1)
			for _, f := range stack {
				path = append(path, f.ref)
			}
			return append(path, self)
		}
		if visited[ref] {
			continue
		}
		visited[ref] = true
		if u, ok := lookup(ref); ok {
			stack = append(stack, frame{ref: ref, next: u.BlockingCRs})
		}
	}
	return nil
}

// cycleMessage writes a cycle path "a -> b -> a". A cycle of more than maxNamed
// ClusterGroupUpgrades names the first maxNamed and counts the rest.
func cycleMessage(path []Ref) string {
	distinct := path[:len(path)-1] // the last is the first again
	shown := distinct
	if len(distinct) > maxNamed {
		shown = distinct[:maxNamed]
	}
	names := make([]string, len(shown))
	for i, r := range shown {
		names[i] = r.String()
	}
	msg := strings.Join(names, " -> ")
	if len(distinct) > maxNamed {
		return fmt.Sprintf("%s and %d more back to %s", msg, len(distinct)-maxNamed, path[0])
	}
	return msg + " -> " + path[0].String()
}

// list joins items with commas; more than maxNamed items are cut and counted.
func list(items []string) string {
	if len(items) <= maxNamed {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:maxNamed], ", "), len(items)-maxNamed)
}

// memoize calls lookup at most once per Ref.
func memoize(lookup func(Ref) (Upgrade, bool)) func(Ref) (Upgrade, bool) {
	type found struct {
		u  Upgrade
		ok bool
	}
	seen := map[Ref]found{}
	return func(r Ref) (Upgrade, bool) {
		if f, ok := seen[r]; ok {
			return f.u, f.ok
		}
		u, ok := lookup(r)
		seen[r] = found{u, ok}
		return u, ok
	}
}

// dedupe drops repeated refs, keeping the first of each in order.
func dedupe(refs []Ref) []Ref {
	seen := make(map[Ref]bool, len(refs))
	out := make([]Ref, 0, len(refs))
	for _, r := range refs {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// stateName is how a message shows a state; a ClusterGroupUpgrade without status has none.
func stateName(s ranv1alpha1.UpgradeState) string {
	if s == "" {
		return "no state yet"
	}
	return string(s)
}

func blocked(reason, message string) Result {
	return Result{Problem: &rollout.Problem{Reason: reason, Message: message}}
}
