package reliability_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

// doneLabel is the label afterCompletion puts on each cluster of a rollout.
const doneLabel = "reliability.cgu-operator.io/upgraded"

// rolloutOf is the enabled CGU "upgrade" in namespace over clusters and policies, in
// batches of maxConcurrency, labelling each cluster doneLabel=upgrade after it completes.
func rolloutOf(namespace string, clusters []string, maxConcurrency int, policyNames ...string) *ranv1alpha1.ClusterGroupUpgrade {
	const name = "upgrade"
	return &ranv1alpha1.ClusterGroupUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
			Clusters: clusters, ManagedPolicies: policyNames, Enable: ptr.To(true),
			RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: maxConcurrency, Timeout: 240},
			Actions: ranv1alpha1.Actions{AfterCompletion: &ranv1alpha1.AfterCompletion{
				ClusterActions: ranv1alpha1.ClusterActions{AddClusterLabels: map[string]ranv1alpha1.LabelValue{doneLabel: name}},
			}},
		},
	}
}

// upgradeRollout joins n clusters labelled fleet=<label> whose updates take duration,
// places the upgrade policy on them, and returns them with the rollout of that policy in
// namespace cgu-<label> (rolloutOf), its batch records watched from now on. The caller
// creates the rollout.
func upgradeRollout(ctx context.Context, label string, n, maxConcurrency int, duration time.Duration) ([]string, *ranv1alpha1.ClusterGroupUpgrade, *recordLog) {
	names := joinFleet(ctx, label, n, duration)
	p := fleet.MustPlaceUpgradePolicy(ctx, label, n, settle)
	cgu := rolloutOf("cgu-"+label, names, maxConcurrency, p.Name)
	return names, cgu, watchRecords(ctx, cgu)
}

// joinFleet adds n clusters labelled fleet=<label> whose updates take duration.
func joinFleet(ctx context.Context, label string, n int, duration time.Duration) []string {
	names, err := fleet.JoinFleetWith(ctx, label, n, func(s *sim.SpokeSpec) { s.Behaviour = sim.Behaviour{Duration: duration} })
	Expect(err).NotTo(HaveOccurred())
	return names
}

func stored(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) *ranv1alpha1.ClusterGroupUpgrade {
	return fleet.Stored(ctx, cgu)
}

func state(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) ranv1alpha1.UpgradeState {
	return func(g Gomega) ranv1alpha1.UpgradeState { return stored(ctx, cgu)(g).Status.State }
}

// condition returns one of the CGU's conditions, nil when absent.
func condition(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, kind string) func(Gomega) *metav1.Condition {
	return func(g Gomega) *metav1.Condition {
		for _, c := range stored(ctx, cgu)(g).Status.Conditions {
			if c.Type == kind {
				return &c
			}
		}
		return nil
	}
}

var pokes int

// passBatchDeadline moves the operator's clock past a batch deadline (batchDeadline) and
// touches the CGU, as the timer it asked for would on a real clock.
func passBatchDeadline(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) {
	fleet.Clock.Step(batchDeadline)
	pokes++
	fleet.MustUpdate(ctx, cgu, func(c *ranv1alpha1.ClusterGroupUpgrade) {
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations["test.cgu-operator.io/poke"] = strconv.Itoa(pokes)
	})
}

// watchedUntilTheTimeout checks that a rollout whose last batch ended with late, timed out in
// an earlier batch and not compliant, waits for it, as TALM does, until its overall timeout.
func watchedUntilTheTimeout(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, late string) {
	GinkgoHelper()
	Eventually(stored(ctx, cgu)).WithTimeout(settle).Should(And(
		HaveField("Status.State", ranv1alpha1.StateNotCompleted),
		HaveField("Status.Message", ContainSubstring(late+" timed out and is not compliant yet"))))
}

// records returns the CGU's batch records, by index.
func records(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) []ranv1alpha1.ClusterGroupUpgradeBatch {
	return func(g Gomega) []ranv1alpha1.ClusterGroupUpgradeBatch {
		var list ranv1alpha1.ClusterGroupUpgradeBatchList
		g.Expect(fleet.Hub.Client.List(ctx, &list, client.InNamespace(cgu.Namespace),
			client.MatchingLabels{ranv1alpha1.LabelUpgradeName: names.LabelValue(cgu.Name)})).To(Succeed())
		slices.SortFunc(list.Items, func(a, b ranv1alpha1.ClusterGroupUpgradeBatch) int {
			return a.Spec.Index*1000 + a.Spec.Part - b.Spec.Index*1000 - b.Spec.Part
		})
		return list.Items
	}
}

// clusterStates returns each planned cluster's state in the batch records.
func clusterStates(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) map[string]ranv1alpha1.ClusterState {
	return func(g Gomega) map[string]ranv1alpha1.ClusterState {
		out := map[string]ranv1alpha1.ClusterState{}
		for _, b := range records(ctx, cgu)(g) {
			for _, c := range b.Status.Clusters {
				out[c.Name] = c.State
			}
		}
		return out
	}
}

// clusterState returns one cluster's state in the batch records, "" when not recorded.
func clusterState(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, cluster string) func(Gomega) ranv1alpha1.ClusterState {
	return func(g Gomega) ranv1alpha1.ClusterState { return clusterStates(ctx, cgu)(g)[cluster] }
}

// expectBatchesInOrder checks the records of a finished rollout: each batch started and
// ended, after the one before it ended, and every planned cluster is in exactly one batch,
// in the state want gives it (Completed when want has no entry).
func expectBatchesInOrder(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, planned []string, batches int, want map[string]ranv1alpha1.ClusterState) {
	GinkgoHelper()
	recs := records(ctx, cgu)(Default)
	Expect(recs).To(HaveLen(batches))
	seen := map[string]int{}
	for i, b := range recs {
		Expect(b.Spec.Index).To(Equal(i+1), "one record per batch")
		Expect(b.Status.StartedAt).NotTo(BeNil(), "batch %d started", i+1)
		Expect(b.Status.FinishedAt).NotTo(BeNil(), "batch %d finished", i+1)
		Expect(b.Status.FinishedAt.Before(b.Status.StartedAt)).To(BeFalse(), "batch %d ended before it started", i+1)
		if i > 0 {
			prev := recs[i-1].Status
			Expect(b.Status.StartedAt.Before(prev.FinishedAt)).To(BeFalse(), "batch %d started before batch %d ended", i+1, i)
		}
		for _, c := range b.Status.Clusters {
			seen[c.Name]++
			expected, ok := want[c.Name]
			if !ok {
				expected = ranv1alpha1.ClusterCompleted
			}
			Expect(c.State).To(Equal(expected), "cluster %s in batch %d", c.Name, i+1)
		}
		Expect(b.Status.Clusters).To(HaveLen(len(b.Spec.Clusters)))
	}
	Expect(seen).To(HaveLen(len(planned)))
	for _, c := range planned {
		Expect(seen[c]).To(Equal(1), "cluster %s is in exactly one batch", c)
	}
}

// version returns the version a simulated cluster runs: the latest Completed in its
// ClusterVersion history.
func version(name string) func(Gomega) string {
	return func(g Gomega) string {
		cv, err := fleet.Sim.ClusterVersion(name)
		g.Expect(err).NotTo(HaveOccurred())
		for _, h := range cv.Status.History {
			if h.State == configv1.CompletedUpdate {
				return h.Version
			}
		}
		return ""
	}
}

// expectUpgraded checks that every cluster runs harness.To.
func expectUpgraded(clusters []string) {
	GinkgoHelper()
	for _, c := range clusters {
		Eventually(version(c)).WithTimeout(settle).Should(Equal(harness.To), "cluster %s", c)
	}
}

// expectLabelled checks that afterCompletion labelled every cluster.
func expectLabelled(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, clusters []string) {
	GinkgoHelper()
	for _, c := range clusters {
		mc := &clusterv1.ManagedCluster{}
		Expect(fleet.Hub.Client.Get(ctx, client.ObjectKey{Name: c}, mc)).To(Succeed())
		Expect(mc.Labels).To(HaveKeyWithValue(doneLabel, cgu.Name), "cluster %s", c)
	}
}

// leftovers counts the governance objects made for the CGU, in every namespace: root
// policies (enforce copies), Placements and PlacementBindings.
func leftovers(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) int {
	return func(g Gomega) int {
		n, err := fleet.Leftovers(ctx, cgu.Namespace, cgu.Name)
		g.Expect(err).NotTo(HaveOccurred())
		return n
	}
}

// selected returns the clusters the Placements made for the CGU select.
func selected(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) []string {
	return func(g Gomega) []string {
		out := []string{}
		var pls clusterv1beta1.PlacementList
		g.Expect(fleet.Hub.Client.List(ctx, &pls, client.MatchingLabels(ownership.Owner{Namespace: cgu.Namespace, Name: cgu.Name}.Labels()))).To(Succeed())
		for _, p := range pls.Items {
			var decisions clusterv1beta1.PlacementDecisionList
			g.Expect(fleet.Hub.Client.List(ctx, &decisions, client.InNamespace(p.Namespace),
				client.MatchingLabels{clusterv1beta1.PlacementLabel: p.Name})).To(Succeed())
			for _, d := range decisions.Items {
				for _, c := range d.Status.Decisions {
					out = append(out, c.ClusterName)
				}
			}
		}
		slices.Sort(out)
		return out
	}
}

// enforcedOn returns the clusters any policy is enforced on among those given: their
// replicated policies with remediationAction enforce (the propagator writes "enforce" for
// a binding override, a copy carries "Enforce").
func enforcedOn(ctx context.Context, clusters []string) func(Gomega) []string {
	return func(g Gomega) []string {
		var list policyv1.PolicyList
		g.Expect(fleet.Hub.Client.List(ctx, &list, client.HasLabels{sim.RootPolicyLabel})).To(Succeed())
		out := []string{}
		for _, p := range list.Items {
			if strings.EqualFold(string(p.Spec.RemediationAction), string(policyv1.Enforce)) && slices.Contains(clusters, p.Namespace) {
				out = append(out, p.Namespace+"/"+p.Name)
			}
		}
		slices.Sort(out)
		return out
	}
}

// expectNothingEnforcing checks that no policy is enforced on the clusters and that no
// Placement of the CGU selects a cluster.
func expectNothingEnforcing(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, clusters []string) {
	GinkgoHelper()
	Eventually(enforcedOn(ctx, clusters)).WithTimeout(settle).Should(BeEmpty())
	Eventually(selected(ctx, cgu)).WithTimeout(settle).Should(BeEmpty())
}

// reconcileErrors returns how many reconciles of the ClusterGroupUpgrade controller failed
// in this process so far (controller-runtime's counter, shared by every manager).
func reconcileErrors() int {
	GinkgoHelper()
	families, err := ctrlmetrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_errors_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == "clustergroupupgrade" {
					return int(m.GetCounter().GetValue())
				}
			}
		}
	}
	return 0
}

// recordLog watches a CGU's batch records from the hub and checks every change it sees: a
// batch starts only after every earlier batch ended, in order, one at a time; once set, a
// record's startedAt and finishedAt never change and a cluster's terminal state is never
// left; records are not deleted.
type recordLog struct {
	mu         sync.Mutex
	last       map[string]ranv1alpha1.ClusterGroupUpgradeBatch
	starts     []int
	violations []string
	changes    int
}

// watchRecords starts a recordLog of the CGU's records; it runs until ctx ends, watching
// again from where it was when the watch ends (an API server restart).
func watchRecords(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) *recordLog {
	GinkgoHelper()
	wc, err := client.NewWithWatch(fleet.Hub.Config, client.Options{Scheme: fleet.Hub.Scheme})
	Expect(err).NotTo(HaveOccurred())
	l := &recordLog{last: map[string]ranv1alpha1.ClusterGroupUpgradeBatch{}}
	selector := client.MatchingLabels{ranv1alpha1.LabelUpgradeName: names.LabelValue(cgu.Name)}
	var list ranv1alpha1.ClusterGroupUpgradeBatchList
	Expect(wc.List(ctx, &list, client.InNamespace(cgu.Namespace), selector)).To(Succeed())
	Expect(list.Items).To(BeEmpty(), "the log starts before the rollout")
	rv := list.ResourceVersion
	watching := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		once := sync.OnceFunc(func() { close(watching) })
		for ctx.Err() == nil {
			w, err := wc.Watch(ctx, &ranv1alpha1.ClusterGroupUpgradeBatchList{}, client.InNamespace(cgu.Namespace), selector,
				&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}})
			if err != nil { // the API server is down: try again shortly
				select {
				case <-ctx.Done():
				case <-time.After(200 * time.Millisecond):
				}
				continue
			}
			once()
			for ev := range w.ResultChan() {
				b, ok := ev.Object.(*ranv1alpha1.ClusterGroupUpgradeBatch)
				if !ok {
					if ev.Type == watch.Error {
						// A restarted API server forgets older versions (410 Gone): list
						// again, and see what changed meanwhile as one change per record.
						rv = l.relist(ctx, wc, cgu.Namespace, selector, rv)
					}
					continue
				}
				rv = b.ResourceVersion
				if ev.Type != watch.Bookmark {
					l.see(ev.Type, *b)
				}
			}
			w.Stop()
		}
	}()
	Eventually(watching).WithTimeout(10 * time.Second).Should(BeClosed())
	return l
}

// relist lists the records, sees each as changed and any missing as deleted, and returns
// the list's resourceVersion (rv when listing fails).
func (l *recordLog) relist(ctx context.Context, c client.Reader, namespace string, selector client.MatchingLabels, rv string) string {
	var list ranv1alpha1.ClusterGroupUpgradeBatchList
	if err := c.List(ctx, &list, client.InNamespace(namespace), selector); err != nil {
		return rv
	}
	present := map[string]bool{}
	for _, b := range list.Items {
		present[b.Name] = true
		l.see(watch.Modified, b)
	}
	l.mu.Lock()
	var gone []ranv1alpha1.ClusterGroupUpgradeBatch
	for name, b := range l.last {
		if !present[name] {
			gone = append(gone, b)
		}
	}
	l.mu.Unlock()
	for _, b := range gone {
		l.see(watch.Deleted, b)
	}
	return list.ResourceVersion
}

func (l *recordLog) see(kind watch.EventType, b ranv1alpha1.ClusterGroupUpgradeBatch) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.changes++
	prev, known := l.last[b.Name]
	l.last[b.Name] = b
	if kind == watch.Deleted {
		l.violations = append(l.violations, fmt.Sprintf("record %s deleted during the rollout", b.Name))
		return
	}
	if known {
		l.checkRewrites(prev, b)
	}
	if prev.Status.StartedAt == nil && b.Status.StartedAt != nil {
		l.checkStart(b)
	}
}

// checkRewrites checks that a record's change keeps what was final: its start and end, and
// its clusters' terminal states.
func (l *recordLog) checkRewrites(prev, b ranv1alpha1.ClusterGroupUpgradeBatch) {
	was, now := prev.Status, b.Status
	if was.StartedAt != nil && (now.StartedAt == nil || !now.StartedAt.Equal(was.StartedAt)) {
		l.violations = append(l.violations, fmt.Sprintf("record %s: startedAt %v rewritten to %v", b.Name, was.StartedAt, now.StartedAt))
	}
	if was.FinishedAt != nil && (now.FinishedAt == nil || !now.FinishedAt.Equal(was.FinishedAt)) {
		l.violations = append(l.violations, fmt.Sprintf("record %s: finishedAt %v rewritten to %v", b.Name, was.FinishedAt, now.FinishedAt))
	}
	terminal := map[string]ranv1alpha1.ClusterState{}
	for _, c := range was.Clusters {
		switch c.State {
		case ranv1alpha1.ClusterCompleted, ranv1alpha1.ClusterTimedOut, ranv1alpha1.ClusterFailed, ranv1alpha1.ClusterHeld:
			terminal[c.Name] = c.State
		}
	}
	for _, c := range now.Clusters {
		if s, ok := terminal[c.Name]; ok && c.State != s {
			l.violations = append(l.violations, fmt.Sprintf("record %s: cluster %s left its terminal state %s for %s", b.Name, c.Name, s, c.State))
		}
	}
	l.checkClusterStarts(prev, b)
}

// checkClusterStarts checks the clusters of a window or a progressive batch: each starts
// once (its start never changes), and a window never has more clusters in progress than it
// allows.
func (l *recordLog) checkClusterStarts(prev, b ranv1alpha1.ClusterGroupUpgradeBatch) {
	startedAt := map[string]*metav1.Time{}
	for _, c := range prev.Status.Clusters {
		startedAt[c.Name] = c.StartedAt
	}
	inProgress := 0
	for _, c := range b.Status.Clusters {
		if old := startedAt[c.Name]; old != nil && (c.StartedAt == nil || !c.StartedAt.Equal(old)) {
			l.violations = append(l.violations, fmt.Sprintf("record %s: cluster %s started again (%v, then %v)", b.Name, c.Name, old, c.StartedAt))
		}
		if c.State == ranv1alpha1.ClusterInProgress {
			inProgress++
		}
	}
	if w := b.Spec.Window; w > 0 && inProgress > w {
		l.violations = append(l.violations, fmt.Sprintf("record %s: %d clusters in progress in a window of %d", b.Name, inProgress, w))
	}
}

// checkStart checks a batch that starts: every earlier batch ended, and it is the next one.
func (l *recordLog) checkStart(b ranv1alpha1.ClusterGroupUpgradeBatch) {
	for _, other := range l.last {
		if other.Spec.Index < b.Spec.Index && other.Status.FinishedAt == nil {
			l.violations = append(l.violations, fmt.Sprintf("batch %d started before batch %d ended", b.Spec.Index, other.Spec.Index))
		}
	}
	if want := len(l.starts) + 1; b.Spec.Index != want {
		l.violations = append(l.violations, fmt.Sprintf("batch %d started where batch %d was next", b.Spec.Index, want))
	}
	l.starts = append(l.starts, b.Spec.Index)
}

// started returns how many batches the log saw start.
func (l *recordLog) started() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.starts)
}

// finished reports whether the log saw batch index end.
func (l *recordLog) finished(index int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range l.last {
		if b.Spec.Index == index && b.Status.FinishedAt != nil {
			return true
		}
	}
	return false
}

// completedIn counts the clusters the log last saw Completed in batch index.
func (l *recordLog) completedIn(index int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, b := range l.last {
		if b.Spec.Index != index {
			continue
		}
		for _, c := range b.Status.Clusters {
			if c.State == ranv1alpha1.ClusterCompleted {
				n++
			}
		}
	}
	return n
}

// expectClean checks what the log saw: no violation, and the batches started 1..batches in
// order, each once.
func (l *recordLog) expectClean(batches int) {
	GinkgoHelper()
	l.mu.Lock()
	defer l.mu.Unlock()
	Expect(l.violations).To(BeEmpty())
	want := make([]int, batches)
	for i := range want {
		want[i] = i + 1
	}
	Expect(l.starts).To(Equal(want), "every batch started once, in order")
	AddReportEntry("record changes watched", l.changes)
}

// expectEachBatchStartedOnce checks the batch-started events (TALM's CguStarted,
// RemediationInBatchStarted): at most one per batch (an operator killed between the record
// write and the event loses the event; a repeated batch would show two).
func expectEachBatchStartedOnce(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		var list eventsv1.EventList
		g.Expect(fleet.Hub.Client.List(ctx, &list, client.InNamespace(cgu.Namespace))).To(Succeed())
		started := map[string]int{}
		for _, e := range list.Items {
			if e.Regarding.Name == cgu.Name && e.Action == talm.ActionBatchStarted {
				started[e.Note]++ // the note names the batch
			}
		}
		for note, n := range started {
			g.Expect(n).To(Equal(1), note)
		}
	}).Should(Succeed())
}

func keyOf(o client.Object) client.ObjectKey { return client.ObjectKeyFromObject(o) }
