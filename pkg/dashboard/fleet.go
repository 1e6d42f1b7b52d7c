package dashboard

import (
	"cmp"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/words"
)

// Fleet is every cluster of a rollout's frozen plan, as the page's map draws it. The stream
// sends it once, then only the states that changed (Delta): a fleet of 10,000 clusters is
// about 160 KB of names and batches once, then a few bytes a change.
type Fleet struct {
	// Epoch names this list of clusters: it changes when a cluster joins, leaves or moves to
	// another batch, and a page drops its copy then.
	Epoch string `json:"epoch"`
	// Names are the clusters in plan order: by batch, then in natural order (sno-9 before
	// sno-10).
	Names []string `json:"names"`
	// Batches are each cluster's 1-based batch.
	Batches []int `json:"batches"`
	// Canaries counts the batches of canaries, the first ones.
	Canaries int `json:"canaries,omitempty"`
	// Stages are each cluster's stage in a Progressive batch, 0 before it starts; nil when no
	// cluster has one.
	Stages []int `json:"stages,omitempty"`
	// States has one letter per cluster (StateLetters).
	States string `json:"states"`
}

// StateLetters write a cluster's state in Fleet.States and in a Delta. Waiting is a pending
// cluster of the running batch that may not start yet (the hub's cap, another rollout).
var StateLetters = map[string]byte{
	string(ranv1alpha1.ClusterPending):    'p',
	waitingState:                          'w',
	string(ranv1alpha1.ClusterInProgress): 'r',
	string(ranv1alpha1.ClusterCompleted):  'c',
	string(ranv1alpha1.ClusterTimedOut):   't',
	string(ranv1alpha1.ClusterFailed):     'f',
	string(ranv1alpha1.ClusterHeld):       'h',
}

// waitingState is the map's state of a pending cluster that waits for something besides its
// turn.
const waitingState = "Waiting"

// FleetOf is the map of a rollout from its batch records (any order); nil before the plan is
// frozen (no record yet).
func FleetOf(records []ranv1alpha1.ClusterGroupUpgradeBatch, st ranv1alpha1.ClusterGroupUpgradeStatus) *Fleet {
	if len(records) == 0 {
		return nil
	}
	running := 0
	if st.CurrentBatch != nil {
		running = st.CurrentBatch.Index
	}
	cells, canaries := cellsOf(records, running)
	slices.SortFunc(cells, func(a, b cell) int {
		return cmp.Or(cmp.Compare(a.batch, b.batch), words.NaturalCompare(a.name, b.name))
	})
	f := &Fleet{Names: make([]string, len(cells)), Batches: make([]int, len(cells)), Canaries: canaries}
	states := make([]byte, len(cells))
	epoch := fnv.New64a()
	staged := false
	for i, c := range cells {
		f.Names[i], f.Batches[i], states[i] = c.name, c.batch, c.state
		staged = staged || c.stage > 0
		// A hash's Write never fails.
		_, _ = epoch.Write([]byte(c.name))
		_, _ = epoch.Write(strconv.AppendInt([]byte{0}, int64(c.batch), 10))
	}
	if staged {
		f.Stages = make([]int, len(cells))
		for i, c := range cells {
			f.Stages[i] = c.stage
		}
	}
	f.States = string(states)
	f.Epoch = strconv.FormatUint(epoch.Sum64(), 36)
	return f
}

// cell is one cluster on the map.
type cell struct {
	name         string
	batch, stage int
	state        byte
}

// cellsOf lists the records' clusters with their state letters, and counts the canary
// batches; a pending cluster of the running batch with a reason waits.
func cellsOf(records []ranv1alpha1.ClusterGroupUpgradeBatch, running int) ([]cell, int) {
	var cells []cell
	canaries := map[int]bool{}
	for i := range records {
		r := &records[i]
		if r.Spec.Canary {
			canaries[r.Spec.Index] = true
		}
		progress := make(map[string]*ranv1alpha1.ClusterProgress, len(r.Status.Clusters))
		for j := range r.Status.Clusters {
			progress[r.Status.Clusters[j].Name] = &r.Status.Clusters[j]
		}
		for _, name := range r.Spec.Clusters {
			c := cell{name: name, batch: r.Spec.Index, state: 'p'}
			if p := progress[name]; p != nil {
				c.stage = p.Stage
				if l, ok := StateLetters[string(p.State)]; ok {
					c.state = l
				}
				if c.state == 'p' && p.Reason != "" && r.Spec.Index == running {
					c.state = 'w'
				}
			}
			cells = append(cells, c)
		}
	}
	return cells, len(canaries)
}

// Delta is what changed in a fleet's states since the last push: Changes is a list of
// "<index><letter>" ("12c40r" says cluster 12 completed and 40 is in progress), or States
// the whole string when most clusters changed.
type Delta struct {
	Epoch   string `json:"epoch"`
	Changes string `json:"changes,omitempty"`
	States  string `json:"states,omitempty"`
}

// DeltaOf is what turns the states before into the states after, nil when nothing changed.
// Both are of the same epoch, so of the same length.
func DeltaOf(epoch, before, after string) *Delta {
	if before == after {
		return nil
	}
	var b strings.Builder
	for i := range len(after) {
		if i < len(before) && before[i] == after[i] {
			continue
		}
		b.WriteString(strconv.Itoa(i))
		b.WriteByte(after[i])
		// Past the size of the whole string, sending it is shorter.
		if b.Len() >= len(after) {
			return &Delta{Epoch: epoch, States: after}
		}
	}
	return &Delta{Epoch: epoch, Changes: b.String()}
}
