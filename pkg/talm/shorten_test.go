package talm

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/prestart"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

// longName is a distinct cluster name of 63 characters, the longest a cluster may have.
func longName(i int) string {
	s := fmt.Sprintf("sno-%d-", i)
	return s + strings.Repeat("x", 63-len(s))
}

// fleetStatus is the status of a rollout of clusters clusters in batches of size, running
// batch current (0-based), every earlier cluster timed out (the longest entries), each
// cluster pre-cached: TALM's fields in full, ours at their bounds.
func fleetStatus(clusters, size, current int) ranv1alpha1.ClusterGroupUpgradeStatus {
	var all []string
	for i := range clusters {
		all = append(all, longName(i))
	}
	p, _ := plan.Build(plan.Input{Clusters: all, MaxConcurrency: size})
	running := map[string]rollout.Cluster{}
	for _, c := range p.Batches[current].Clusters {
		running[c] = rollout.Cluster{State: ranv1alpha1.ClusterInProgress, Policy: 1, Since: at(10)}
	}
	recorded := map[string]ranv1alpha1.ClusterProgress{}
	for _, b := range p.Batches[:current] {
		for _, c := range b.Clusters {
			recorded[c] = ranv1alpha1.ClusterProgress{Name: c, State: ranv1alpha1.ClusterTimedOut, CurrentPolicy: strings.Repeat("p", 253)}
		}
	}
	st := Steps{Policies: []string{strings.Repeat("q", 253), strings.Repeat("p", 253)}}
	d := rollout.Decision{State: ranv1alpha1.StateNotCompleted, Progress: rollout.Progress{Started: at(0), Batch: current, BatchStarted: at(5), Clusters: running}}
	states := map[string]prestart.State{}
	for _, c := range all {
		states[c] = prestart.Timeout
	}
	status := ranv1alpha1.ClusterGroupUpgradeStatus{
		State: ranv1alpha1.StateNotCompleted, Message: strings.Repeat("m", ranv1alpha1.MessageLimit),
		RemediationPlan: RemediationPlan(p), Status: Progress(d, p, st, at(0)),
		Clusters:     Clusters(nil, p, FinishedFrom(recorded, d, st), st),
		Precaching:   &ranv1alpha1.PrecachingStatus{Counts: prestart.Counts(states)},
		CurrentBatch: &ranv1alpha1.BatchStatus{Index: current + 1},
	}
	status.Precaching.Status, status.Precaching.Clusters = JobStates(precache.Kind, all, states)
	now := metav1.NewTime(at(0))
	for i := range min(ranv1alpha1.ClusterDetailLimit, clusters) {
		status.CurrentBatch.Clusters = append(status.CurrentBatch.Clusters, ranv1alpha1.ClusterProgress{Name: all[i],
			State: ranv1alpha1.ClusterInProgress, CurrentPolicy: strings.Repeat("p", 253), Since: &now, CompliantSince: &now, Reason: strings.Repeat("R", 64)})
	}
	for _, kind := range []string{ranv1alpha1.ConditionClustersSelected, ranv1alpha1.ConditionValidated, ranv1alpha1.ConditionPrecacheSpecValid,
		ranv1alpha1.ConditionPrecachingSucceeded, ranv1alpha1.ConditionProgressing, ranv1alpha1.ConditionSucceeded, ranv1alpha1.ConditionUpgradeChecked} {
		status.Conditions = append(status.Conditions, metav1.Condition{Type: kind, Status: metav1.ConditionTrue, Reason: strings.Repeat("R", 64),
			Message: strings.Repeat("m", ranv1alpha1.MessageLimit), LastTransitionTime: now})
	}
	return status
}

// TestShortenKeepsTenThousandClustersSmall: at 10,000 clusters of 63-character names the
// whole ClusterGroupUpgrade stays within 256 KiB, in batches of 500 and in one batch of all,
// while TALM's fields in full would take megabytes.
func TestShortenKeepsTenThousandClustersSmall(t *testing.T) {
	const limit = 256 * 1024
	for _, size := range []int{500, 10000} {
		t.Run(fmt.Sprintf("batches of %d", size), func(t *testing.T) {
			g := NewWithT(t)
			current := (10000 / size) / 2
			st := fleetStatus(10000, size, current)
			g.Expect(Size(&st)).To(BeNumerically(">", 4*limit), "unshortened, TALM's fields are over the limit")
			Shorten(&st, current)
			cgu := ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("n", 253), Namespace: strings.Repeat("s", 63)},
				Spec: ranv1alpha1.ClusterGroupUpgradeSpec{ManagedPolicies: []string{strings.Repeat("q", 253), strings.Repeat("p", 253)},
					RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: size}}, Status: st}
			raw, err := json.Marshal(cgu)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(len(raw)).To(BeNumerically("<=", limit))
			s := st.Shortened
			g.Expect(s).NotTo(BeNil())
			shown := 0
			for _, b := range st.RemediationPlan {
				shown += len(b)
			}
			g.Expect(shown+s.RemediationPlanClustersNotShown).To(Equal(10000), "the plan's clusters are shown or counted")
			g.Expect(st.RemediationPlan).To(HaveLen(10000/size), "every batch keeps its place")
			g.Expect(st.RemediationPlan[current]).NotTo(BeEmpty(), "the running batch is listed")
			g.Expect(len(st.Clusters) + s.ClustersNotShown).To(Equal(current * size))
			g.Expect(len(st.Status.CurrentBatchRemediationProgress) + s.RemediationProgressNotShown).To(Equal(size))
			g.Expect(len(st.Precaching.Status) + s.PrecachingClustersNotShown).To(Equal(10000))
			g.Expect(st.Precaching.Clusters).To(HaveLen(len(st.Precaching.Status)))
		})
	}
}

func TestShortenKeepsWhatFits(t *testing.T) {
	st := fleetStatus(40, 10, 1)
	before := st.DeepCopy()
	Shorten(&st, 1)
	NewWithT(t).Expect(st).To(Equal(*before), "a status within the budget is left whole, without status.shortened")
}

func TestShortenPicksWhatMatters(t *testing.T) {
	g := NewWithT(t)
	batches := [][]string{{"a"}, {"b", "c"}, {"d"}, {"e"}}
	g.Expect(shortenPlan(batches, 1, 1)).To(Equal(3))
	g.Expect(batches).To(Equal([][]string{{}, {"b"}, {"d"}, {}}), "the running and next batches, each cut to the limit")

	clusters := []ranv1alpha1.ClusterFinalState{{Name: "a", State: "complete"}, {Name: "b", State: "timedout"}, {Name: "c", State: "complete"}, {Name: "d", State: "failed"}}
	g.Expect(shortenClusters(&clusters, 2)).To(Equal(2))
	g.Expect(clusters).To(Equal([]ranv1alpha1.ClusterFinalState{{Name: "b", State: "timedout"}, {Name: "d", State: "failed"}}), "those that did not complete first")

	progress := map[string]*ranv1alpha1.ClusterRemediationProgress{"a": {State: "Completed"}, "b": {State: "InProgress"}, "c": {State: "NotStarted"}}
	g.Expect(shortenProgress(progress, 2)).To(Equal(1))
	g.Expect(progress).To(HaveKey("b"))
	g.Expect(progress).To(HaveKey("c"))

	states := map[string]string{"a": "Succeeded", "b": "Active", "c": "Succeeded"}
	list := []string{"a", "b", "c"}
	g.Expect(shortenStates(states, &list, 2, false)).To(Equal(1))
	g.Expect(states).To(Equal(map[string]string{"a": "Succeeded", "b": "Active"}))
	g.Expect(list).To(Equal([]string{"a", "b"}))

	// Before the start the states are what pre-caching moves on from: only the clusters not
	// started may be left out, however many the others are.
	states = map[string]string{"a": "Succeeded", "b": "NotStarted", "c": "Succeeded", "d": "NotStarted", "e": "UnrecoverableError"}
	list = []string{"a", "b", "c", "d", "e"}
	g.Expect(shortenStates(states, &list, 1, true)).To(Equal(1))
	g.Expect(states).To(Equal(map[string]string{"a": "Succeeded", "b": "NotStarted", "c": "Succeeded", "e": "UnrecoverableError"}))
	g.Expect(list).To(Equal([]string{"a", "b", "c", "e"}))
}
