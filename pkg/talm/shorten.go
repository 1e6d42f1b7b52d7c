package talm

import (
	"encoding/json"
	"maps"
	"slices"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/prestart"
)

// JobStates are each planned cluster's pre-start job state in TALM's words (a kind's
// status.precaching.status or status.backup.status), and the clusters that have one, in
// plan order.
func JobStates(k prestart.Kind, order []string, states map[string]prestart.State) (map[string]string, []string) {
	if len(order) == 0 {
		return nil, nil
	}
	status := make(map[string]string, len(order))
	clusters := make([]string, 0, len(order))
	for _, c := range order {
		s, ok := states[c]
		if !ok {
			continue
		}
		status[c] = k.Word(s)
		clusters = append(clusters, c)
	}
	return status, clusters
}

// Size is the length of the status in JSON.
func Size(st *ranv1alpha1.ClusterGroupUpgradeStatus) int {
	raw, err := json.Marshal(st)
	if err != nil {
		return 0
	}
	return len(raw)
}

// shortestLimit is the fewest entries a shortened list keeps.
const shortestLimit = 15

// Shorten keeps a status within ranv1alpha1.TALMStatusBudget. While it fits, TALM's
// fleet-sized fields stay whole and status.shortened is absent. Otherwise each is cut by one
// rule, to a limit of ClusterDetailLimit (250) entries, halved while the status is still over
// the budget, down to 15; status.shortened counts what each left out:
//   - remediationPlan keeps every batch in place, so that remediationPlan[currentBatch-1] is
//     still the running batch, but lists only the clusters of the running batch and the next
//     (the first two before the start, the last two after the end), at most the limit each;
//     the other batches are empty lists;
//   - status.clusters keeps the clusters that did not complete first, then the others;
//   - currentBatchRemediationProgress keeps the clusters not done first;
//   - precaching.status and precaching.clusters keep the clusters not succeeded first, and so
//     do backup.status and backup.clusters; before the start, when these states are what the
//     pre-caching and the backup move on from, they keep every cluster that started, and
//     leave out only clusters NotStarted (about 40 bytes a cluster: 10,000 clusters that all
//     pre-cached hold about 400 KB, within what the API server stores).
//
// current is the 0-based index of the running (or next) batch.
func Shorten(st *ranv1alpha1.ClusterGroupUpgradeStatus, current int) {
	st.Shortened = nil
	if sizeBound(st) <= ranv1alpha1.TALMStatusBudget || Size(st) <= ranv1alpha1.TALMStatusBudget {
		return
	}
	full := st.DeepCopy()
	for limit := ranv1alpha1.ClusterDetailLimit; ; limit /= 2 {
		c := full.DeepCopy()
		st.RemediationPlan, st.Clusters, st.Precaching, st.Backup = c.RemediationPlan, c.Clusters, c.Precaching, c.Backup
		st.Status.CurrentBatchRemediationProgress = c.Status.CurrentBatchRemediationProgress
		st.Shortened = shortenTo(st, current, limit)
		if limit/2 < shortestLimit || Size(st) <= ranv1alpha1.TALMStatusBudget {
			return
		}
	}
}

// shortenTo cuts TALM's fleet-sized fields of st to limit entries each and says what they
// left out.
func shortenTo(st *ranv1alpha1.ClusterGroupUpgradeStatus, current, limit int) *ranv1alpha1.ShortenedStatus {
	s := &ranv1alpha1.ShortenedStatus{}
	s.RemediationPlanClustersNotShown = shortenPlan(st.RemediationPlan, current, limit)
	s.ClustersNotShown = shortenClusters(&st.Clusters, limit)
	s.RemediationProgressNotShown = shortenProgress(st.Status.CurrentBatchRemediationProgress, limit)
	// Before the start the pre-start Jobs' states are what the next pass moves on from
	// (pkg/talmjob, as TALM keeps them): only the clusters not started yet may be left out.
	pending := st.Status.StartedAt == nil
	if p := st.Precaching; p != nil {
		s.PrecachingClustersNotShown = shortenStates(p.Status, &p.Clusters, limit, pending)
	}
	if b := st.Backup; b != nil {
		s.BackupClustersNotShown = shortenStates(b.Status, &b.Clusters, limit, pending)
	}
	if *s == (ranv1alpha1.ShortenedStatus{}) {
		return nil
	}
	return s
}

func shortenPlan(batches [][]string, current, limit int) int {
	current = min(max(current, 0), max(len(batches)-2, 0))
	left := 0
	for i := range batches {
		keep := 0
		if i == current || i == current+1 {
			keep = min(len(batches[i]), limit)
		}
		left += len(batches[i]) - keep
		batches[i] = batches[i][:keep:keep]
	}
	return left
}

func shortenClusters(clusters *[]ranv1alpha1.ClusterFinalState, limit int) int {
	all := *clusters
	if len(all) <= limit {
		return 0
	}
	slices.SortStableFunc(all, func(a, b ranv1alpha1.ClusterFinalState) int {
		return boolOrder(a.State != ranv1alpha1.TALMClusterComplete, b.State != ranv1alpha1.TALMClusterComplete)
	})
	*clusters = all[:limit:limit]
	return len(all) - limit
}

func shortenProgress(progress map[string]*ranv1alpha1.ClusterRemediationProgress, limit int) int {
	if len(progress) <= limit {
		return 0
	}
	keys := slices.Sorted(maps.Keys(progress))
	slices.SortStableFunc(keys, func(a, b string) int {
		return boolOrder(progress[a].State != ranv1alpha1.RemediationCompleted, progress[b].State != ranv1alpha1.RemediationCompleted)
	})
	for _, k := range keys[limit:] {
		delete(progress, k)
	}
	return len(keys) - limit
}

// shortenStates keeps, of a cluster-to-state map and the list of its clusters, those not
// Succeeded first, at most limit; with keepStarted, every cluster that is not NotStarted too.
func shortenStates(states map[string]string, clusters *[]string, limit int, keepStarted bool) int {
	const done = "Succeeded"
	if len(states) <= limit {
		if len(*clusters) > limit {
			*clusters = (*clusters)[:limit:limit]
		}
		return 0
	}
	mustKeep := func(k string) bool { return keepStarted && states[k] != "NotStarted" }
	keys := slices.Sorted(maps.Keys(states))
	slices.SortStableFunc(keys, func(a, b string) int { return boolOrder(states[a] != done, states[b] != done) })
	kept, shown, cut := map[string]bool{}, 0, 0
	for _, k := range keys {
		switch {
		case mustKeep(k):
			kept[k] = true
		case shown < limit:
			kept[k] = true
			shown++
		default:
			delete(states, k)
			cut++
		}
	}
	*clusters = slices.DeleteFunc(*clusters, func(c string) bool { return !kept[c] })
	return cut
}

// boolOrder sorts true before false.
func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}
