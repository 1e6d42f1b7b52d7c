package blocking

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

const ns = "ztp"

var self = ref("self")

func ref(name string) Ref { return Ref{Namespace: ns, Name: name} }

func refs(names ...string) []Ref {
	out := make([]Ref, len(names))
	for i, n := range names {
		out[i] = ref(n)
	}
	return out
}

// cgu is a ClusterGroupUpgrade of the fake hub in namespace ns.
func cgu(name string, state ranv1alpha1.UpgradeState, blockers ...string) Upgrade {
	return Upgrade{Ref: ref(name), State: state, BlockingCRs: refs(blockers...)}
}

func timedOut(name string, notCompleted ...string) Upgrade {
	u := cgu(name, ranv1alpha1.StateTimedOut)
	u.NotCompleted = notCompleted
	return u
}

// hub is a fake set of ClusterGroupUpgrades that counts lookups.
type hub struct {
	cgus  map[Ref]Upgrade
	calls map[Ref]int
}

func newHub(cgus ...Upgrade) *hub {
	h := &hub{cgus: map[Ref]Upgrade{}, calls: map[Ref]int{}}
	for _, u := range cgus {
		h.cgus[u.Ref] = u
	}
	return h
}

func (h *hub) lookup(r Ref) (Upgrade, bool) {
	h.calls[r]++
	u, ok := h.cgus[r]
	return u, ok
}

var (
	partial          = map[string]string{AnnotationCompletionMode: CompletionModePartial}
	partialFiltering = map[string]string{AnnotationCompletionMode: CompletionModePartial, AnnotationClusterFiltering: "true"}
	filteringOnly    = map[string]string{AnnotationClusterFiltering: "true"}
)

func TestEvaluate(t *testing.T) {
	cases := map[string]struct {
		hub          []Upgrade
		blockers     []Ref
		annotations  map[string]string
		wantReason   string // empty: not blocked
		wantMessage  string
		wantExcluded []string
	}{
		"no blocking CRs": {},
		"completed blockers do not block": {
			hub:      []Upgrade{cgu("a", ranv1alpha1.StateCompleted), cgu("b", ranv1alpha1.StateCompleted)},
			blockers: refs("a", "b"),
		},
		"missing blockers are named in spec order": {
			hub:         []Upgrade{cgu("a", ranv1alpha1.StateCompleted)},
			blockers:    refs("lost", "a", "gone"),
			wantReason:  ranv1alpha1.ReasonMissingBlockingCR,
			wantMessage: "Blocked by ClusterGroupUpgrades that do not exist: ztp/lost, ztp/gone",
		},
		"a missing blocker wins over an incomplete one": {
			hub:         []Upgrade{cgu("a", ranv1alpha1.StateNotCompleted)},
			blockers:    refs("a", "gone"),
			wantReason:  ranv1alpha1.ReasonMissingBlockingCR,
			wantMessage: "Blocked by ClusterGroupUpgrades that do not exist: ztp/gone",
		},
		"a blocker in another namespace": {
			hub:         []Upgrade{{Ref: Ref{Namespace: "other", Name: "a"}, State: ranv1alpha1.StateCompleted}},
			blockers:    []Ref{{Namespace: "other", Name: "a"}, ref("a")},
			wantReason:  ranv1alpha1.ReasonMissingBlockingCR,
			wantMessage: "Blocked by ClusterGroupUpgrades that do not exist: ztp/a",
		},
		"incomplete blockers are named with their state": {
			hub: []Upgrade{
				cgu("a", ranv1alpha1.StateNotCompleted), timedOut("b"), cgu("c", ranv1alpha1.StateCompleted),
				cgu("d", ""), cgu("e", ranv1alpha1.StateNotStarted),
			},
			blockers:   refs("a", "b", "c", "d", "e"),
			wantReason: ranv1alpha1.ReasonIncompleteBlockingCR,
			wantMessage: "Blocked by ClusterGroupUpgrades that have not completed: " +
				"ztp/a (NotCompleted), ztp/b (TimedOut), ztp/d (no state yet), ztp/e (NotStarted)",
		},
		"a blocker listed twice is named once": {
			hub:         []Upgrade{cgu("a", ranv1alpha1.StateNotCompleted)},
			blockers:    refs("a", "a"),
			wantReason:  ranv1alpha1.ReasonIncompleteBlockingCR,
			wantMessage: "Blocked by ClusterGroupUpgrades that have not completed: ztp/a (NotCompleted)",
		},
		"partial mode accepts a timed-out blocker": {
			hub:         []Upgrade{timedOut("a", "sno-1"), cgu("b", ranv1alpha1.StateCompleted)},
			blockers:    refs("a", "b"),
			annotations: partial,
		},
		"partial mode still waits for a blocker that is running": {
			hub:         []Upgrade{timedOut("a"), cgu("b", ranv1alpha1.StateNotCompleted)},
			blockers:    refs("a", "b"),
			annotations: partial,
			wantReason:  ranv1alpha1.ReasonIncompleteBlockingCR,
			wantMessage: "Blocked by ClusterGroupUpgrades that have not completed: ztp/b (NotCompleted)",
		},
		"partial mode still waits for a blocker that cannot start": {
			hub:         []Upgrade{cgu("a", ranv1alpha1.StateCannotStart)},
			blockers:    refs("a"),
			annotations: partial,
			wantReason:  ranv1alpha1.ReasonIncompleteBlockingCR,
			wantMessage: "Blocked by ClusterGroupUpgrades that have not completed: ztp/a (CannotStart)",
		},
		"another completion mode requires completion": {
			hub:         []Upgrade{timedOut("a")},
			blockers:    refs("a"),
			annotations: map[string]string{AnnotationCompletionMode: "complete"},
			wantReason:  ranv1alpha1.ReasonIncompleteBlockingCR,
			wantMessage: "Blocked by ClusterGroupUpgrades that have not completed: ztp/a (TimedOut)",
		},
		"partial mode with filtering excludes what timed-out blockers did not complete": {
			hub:          []Upgrade{timedOut("a", "sno-3", "sno-1"), timedOut("b", "sno-2", "sno-1"), cgu("c", ranv1alpha1.StateCompleted)},
			blockers:     refs("a", "b", "c"),
			annotations:  partialFiltering,
			wantExcluded: []string{"sno-1", "sno-2", "sno-3"},
		},
		"partial mode without filtering excludes nothing": {
			hub:         []Upgrade{timedOut("a", "sno-1")},
			blockers:    refs("a"),
			annotations: partial,
		},
		"filtering set to something other than true excludes nothing": {
			hub:         []Upgrade{timedOut("a", "sno-1")},
			blockers:    refs("a"),
			annotations: map[string]string{AnnotationCompletionMode: CompletionModePartial, AnnotationClusterFiltering: "yes"},
		},
		"filtering without partial mode has no effect": {
			hub:         []Upgrade{timedOut("a", "sno-1")},
			blockers:    refs("a"),
			annotations: filteringOnly,
			wantReason:  ranv1alpha1.ReasonIncompleteBlockingCR,
			wantMessage: "Blocked by ClusterGroupUpgrades that have not completed: ztp/a (TimedOut)",
		},
		"filtering excludes nothing while another blocker blocks": {
			hub:         []Upgrade{timedOut("a", "sno-1"), cgu("b", ranv1alpha1.StateNotCompleted)},
			blockers:    refs("a", "b"),
			annotations: partialFiltering,
			wantReason:  ranv1alpha1.ReasonIncompleteBlockingCR,
			wantMessage: "Blocked by ClusterGroupUpgrades that have not completed: ztp/b (NotCompleted)",
		},
		"a blocker naming self with its namespace is a cycle": {
			blockers:    refs("self"),
			wantReason:  ranv1alpha1.ReasonBlockingCRCycle,
			wantMessage: "Blocking cycle: ztp/self -> ztp/self",
		},
		"a cycle through two CGUs": {
			hub:         []Upgrade{cgu("a", ranv1alpha1.StateCannotStart, "self")},
			blockers:    refs("a"),
			wantReason:  ranv1alpha1.ReasonBlockingCRCycle,
			wantMessage: "Blocking cycle: ztp/self -> ztp/a -> ztp/self",
		},
		"a cycle through three CGUs": {
			hub: []Upgrade{
				cgu("a", ranv1alpha1.StateCannotStart, "b"),
				cgu("b", ranv1alpha1.StateCannotStart, "self"),
			},
			blockers:    refs("a"),
			wantReason:  ranv1alpha1.ReasonBlockingCRCycle,
			wantMessage: "Blocking cycle: ztp/self -> ztp/a -> ztp/b -> ztp/self",
		},
		"a cycle wins over missing and incomplete blockers": {
			hub:         []Upgrade{cgu("a", ranv1alpha1.StateNotCompleted), cgu("b", ranv1alpha1.StateCannotStart, "self")},
			blockers:    refs("gone", "a", "b"),
			wantReason:  ranv1alpha1.ReasonBlockingCRCycle,
			wantMessage: "Blocking cycle: ztp/self -> ztp/b -> ztp/self",
		},
		"a cycle past a missing CGU down the graph": {
			hub: []Upgrade{
				cgu("a", ranv1alpha1.StateCannotStart, "gone", "b"),
				cgu("b", ranv1alpha1.StateCannotStart, "self"),
			},
			blockers:    refs("a"),
			wantReason:  ranv1alpha1.ReasonBlockingCRCycle,
			wantMessage: "Blocking cycle: ztp/self -> ztp/a -> ztp/b -> ztp/self",
		},
		"a cycle across namespaces": {
			hub:         []Upgrade{{Ref: Ref{Namespace: "other", Name: "self"}, BlockingCRs: []Ref{self}}},
			blockers:    []Ref{{Namespace: "other", Name: "self"}},
			wantReason:  ranv1alpha1.ReasonBlockingCRCycle,
			wantMessage: "Blocking cycle: ztp/self -> other/self -> ztp/self",
		},
		"a diamond is not a cycle": {
			hub: []Upgrade{
				cgu("a", ranv1alpha1.StateCompleted, "c"),
				cgu("b", ranv1alpha1.StateCompleted, "c"),
				cgu("c", ranv1alpha1.StateCompleted),
			},
			blockers: refs("a", "b"),
		},
		"a diamond waits for its incomplete branch": {
			hub: []Upgrade{
				cgu("a", ranv1alpha1.StateCompleted, "c"),
				cgu("b", ranv1alpha1.StateCannotStart, "c"),
				cgu("c", ranv1alpha1.StateNotCompleted),
			},
			blockers:    refs("a", "b"),
			wantReason:  ranv1alpha1.ReasonIncompleteBlockingCR,
			wantMessage: "Blocked by ClusterGroupUpgrades that have not completed: ztp/b (CannotStart)",
		},
		// Self waits for a, and a and b wait for each other: the cycle is a's and b's, so
		// Self is not in a cycle; it waits for a, which cannot complete until the cycle is
		// broken.
		"a cycle not through self leaves self waiting": {
			hub: []Upgrade{
				cgu("a", ranv1alpha1.StateCannotStart, "b"),
				cgu("b", ranv1alpha1.StateCannotStart, "a"),
			},
			blockers:    refs("a"),
			wantReason:  ranv1alpha1.ReasonIncompleteBlockingCR,
			wantMessage: "Blocked by ClusterGroupUpgrades that have not completed: ztp/a (CannotStart)",
		},
		"ten missing blockers are all named": {
			blockers:    refs(seq("m", 10)...),
			wantReason:  ranv1alpha1.ReasonMissingBlockingCR,
			wantMessage: "Blocked by ClusterGroupUpgrades that do not exist: " + joined(seq("m", 10), ", "),
		},
		"more than ten missing blockers are counted": {
			blockers:    refs(seq("m", 13)...),
			wantReason:  ranv1alpha1.ReasonMissingBlockingCR,
			wantMessage: "Blocked by ClusterGroupUpgrades that do not exist: " + joined(seq("m", 10), ", ") + " and 3 more",
		},
		"more than ten incomplete blockers are counted": {
			hub:        chain(seq("i", 11), ranv1alpha1.StateNotCompleted, false),
			blockers:   refs(seq("i", 11)...),
			wantReason: ranv1alpha1.ReasonIncompleteBlockingCR,
			wantMessage: "Blocked by ClusterGroupUpgrades that have not completed: " +
				strings.ReplaceAll(joined(seq("i", 10), " (NotCompleted), "), "i9", "i9 (NotCompleted)") + " and 1 more",
		},
		"a cycle of ten CGUs is named whole": {
			hub:         chain(seq("c", 9), ranv1alpha1.StateCannotStart, true),
			blockers:    refs("c0"),
			wantReason:  ranv1alpha1.ReasonBlockingCRCycle,
			wantMessage: "Blocking cycle: ztp/self -> " + joined(seq("c", 9), " -> ") + " -> ztp/self",
		},
		"a cycle of eleven CGUs is counted": {
			hub:         chain(seq("c", 10), ranv1alpha1.StateCannotStart, true),
			blockers:    refs("c0"),
			wantReason:  ranv1alpha1.ReasonBlockingCRCycle,
			wantMessage: "Blocking cycle: ztp/self -> " + joined(seq("c", 9), " -> ") + " and 1 more back to ztp/self",
		},
		"a cycle of more than ten CGUs is counted": {
			hub:         chain(seq("c", 12), ranv1alpha1.StateCannotStart, true),
			blockers:    refs("c0"),
			wantReason:  ranv1alpha1.ReasonBlockingCRCycle,
			wantMessage: "Blocking cycle: ztp/self -> " + joined(seq("c", 9), " -> ") + " and 3 more back to ztp/self",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHub(tc.hub...)
			got := Evaluate(Input{Self: self, BlockingCRs: tc.blockers, Annotations: tc.annotations, Lookup: h.lookup})
			switch {
			case tc.wantReason == "" && got.Problem != nil:
				t.Fatalf("blocked: %+v", *got.Problem)
			case tc.wantReason != "" && got.Problem == nil:
				t.Fatalf("not blocked, want %s", tc.wantReason)
			case tc.wantReason != "":
				if got.Problem.Reason != tc.wantReason || got.Problem.Message != tc.wantMessage {
					t.Errorf("got %s %q\nwant %s %q", got.Problem.Reason, got.Problem.Message, tc.wantReason, tc.wantMessage)
				}
			}
			if !slices.Equal(got.Excluded, tc.wantExcluded) {
				t.Errorf("excluded %v, want %v", got.Excluded, tc.wantExcluded)
			}
			checkLookups(t, h)
		})
	}
}

// checkLookups checks that each CGU was looked up at most once, and self never.
func checkLookups(t *testing.T, h *hub) {
	t.Helper()
	for r, n := range h.calls {
		if n > 1 {
			t.Errorf("%s looked up %d times", r, n)
		}
	}
	if h.calls[self] > 0 {
		t.Errorf("self looked up")
	}
}

// TestEvaluateBoundedWork checks that a dense graph is walked once per CGU: each of n CGUs
// blocks on every later one, n*(n-1)/2 edges, and the last waits for self.
func TestEvaluateBoundedWork(t *testing.T) {
	const n = 300
	names := seq("d", n)
	var cgus []Upgrade
	for i, name := range names {
		u := cgu(name, ranv1alpha1.StateCannotStart, names[i+1:]...)
		if i == n-1 {
			u.BlockingCRs = []Ref{self}
		}
		cgus = append(cgus, u)
	}
	h := newHub(cgus...)
	got := Evaluate(Input{Self: self, BlockingCRs: refs(names...), Lookup: h.lookup})
	if got.Problem == nil || got.Problem.Reason != ranv1alpha1.ReasonBlockingCRCycle {
		t.Fatalf("got %+v, want a cycle", got.Problem)
	}
	if want := "Blocking cycle: ztp/self -> ztp/d0 -> ztp/d1"; !strings.HasPrefix(got.Problem.Message, want) {
		t.Errorf("message %q, want prefix %q", got.Problem.Message, want)
	}
	if want := fmt.Sprintf(" and %d more back to ztp/self", n+1-maxNamed); !strings.HasSuffix(got.Problem.Message, want) {
		t.Errorf("message %q, want suffix %q", got.Problem.Message, want)
	}
	if len(h.calls) != n {
		t.Errorf("looked up %d CGUs, want %d", len(h.calls), n)
	}
	checkLookups(t, h)
}

// seq returns prefix0 ... prefix(n-1).
func seq(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

// joined names CGUs of namespace ns, joined by sep.
func joined(names []string, sep string) string {
	rs := refs(names...)
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.String()
	}
	return strings.Join(out, sep)
}

// chain makes CGUs in the given state; linked, each blocks on the next and the last on self.
func chain(names []string, state ranv1alpha1.UpgradeState, linked bool) []Upgrade {
	out := make([]Upgrade, len(names))
	for i, name := range names {
		out[i] = cgu(name, state)
		if !linked {
			continue
		}
		next := self
		if i+1 < len(names) {
			next = ref(names[i+1])
		}
		out[i].BlockingCRs = []Ref{next}
	}
	return out
}
