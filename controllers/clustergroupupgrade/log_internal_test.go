package clustergroupupgrade

import (
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

// logged returns a scope whose logger keeps its lines, at debug too, and the lines.
func logged(cgu *ranv1alpha1.ClusterGroupUpgrade, before ranv1alpha1.ClusterGroupUpgradeStatus) (*scope, *[]string) {
	var lines []string
	log := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 1})
	s := newScope(cgu, time.Date(2026, 11, 26, 22, 0, 0, 0, time.UTC), log)
	s.before = before
	s.in.Plan = plan.Plan{Batches: []plan.Batch{{Canary: true, Clusters: []string{"c1"}}, {Clusters: []string{"a1", "a2"}}}}
	return s, &lines
}

// A reconcile's decisions read as a story: each transition a write carried is one info
// line with its counts and reason, and nothing is logged when nothing changed.
func TestDecisionLogs(t *testing.T) {
	started := metav1.NewTime(time.Date(2026, 11, 26, 21, 0, 0, 0, time.UTC))
	cgu := &ranv1alpha1.ClusterGroupUpgrade{}
	cgu.Status = ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotCompleted, StartedAt: &started,
		Enforcement: ranv1alpha1.EnforcementOverride, Counts: ranv1alpha1.ClusterCounts{Total: 3},
		Waiting: &ranv1alpha1.WaitingStatus{Reason: ranv1alpha1.ReasonWaitingForApproval, Batch: 2}}
	s, lines := logged(cgu, ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotStarted})
	var r Reconciler
	r.logTransitions(s)
	want := []string{`"msg"="Rollout started" "batches"=2 "clusters"=3 "enforcement"="Override"`,
		`"msg"="Batch waits" "batch"=2 "reason"="WaitingForApproval"`}
	if len(*lines) != len(want) {
		t.Fatalf("lines %q, want %d", *lines, len(want))
	}
	for i, w := range want {
		if !strings.Contains((*lines)[i], w) {
			t.Errorf("line %d %q, want it to contain %q", i, (*lines)[i], w)
		}
	}

	s, lines = logged(cgu, cgu.Status)
	r.logTransitions(s)
	if len(*lines) != 0 {
		t.Fatalf("nothing changed, yet %q was logged", *lines)
	}

	cgu.Status.State, cgu.Status.Counts = ranv1alpha1.StateTimedOut, ranv1alpha1.ClusterCounts{Total: 3, Completed: 2, TimedOut: 1}
	s, lines = logged(cgu, ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotCompleted, StartedAt: &started,
		Waiting: cgu.Status.Waiting})
	s.in.Decision = rollout.Decision{Reason: ranv1alpha1.ReasonTimedOut}
	r.logTransitions(s)
	if len(*lines) != 1 || !strings.Contains((*lines)[0], `"msg"="Rollout ended" "state"="TimedOut" "reason"="TimedOut" "completed"=2 "timedOut"=1`) {
		t.Fatalf("lines %q, want one Rollout ended with the counts", *lines)
	}
}

func TestBatchLogs(t *testing.T) {
	cgu := &ranv1alpha1.ClusterGroupUpgrade{}
	s, lines := logged(cgu, cgu.Status)
	t0 := metav1.NewTime(time.Date(2026, 11, 26, 21, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(10 * time.Minute))
	record := &ranv1alpha1.ClusterGroupUpgradeBatch{Spec: ranv1alpha1.ClusterGroupUpgradeBatchSpec{Index: 2}}
	record.Status = ranv1alpha1.ClusterGroupUpgradeBatchStatus{StartedAt: &t0, Clusters: []ranv1alpha1.ClusterProgress{
		{Name: "a1", State: ranv1alpha1.ClusterInProgress},
		{Name: "a2", State: ranv1alpha1.ClusterPending, Reason: ranv1alpha1.ReasonWaitingForOtherUpgrade},
	}}
	logBatch(s, record, ranv1alpha1.ClusterGroupUpgradeBatchStatus{})
	if len(*lines) != 2 || !strings.Contains((*lines)[0], `"msg"="Batch started" "batch"=2 "of"=2 "clusters"=2 "canary"=false`) ||
		!strings.Contains((*lines)[1], `"msg"="Clusters wait to start" "batch"=2 "byReason"={"WaitingForOtherUpgrade"=1}`) {
		t.Fatalf("lines %q, want the batch started and a2 waiting", *lines)
	}

	old := record.Status
	record.Status.FinishedAt = &t1
	record.Status.Clusters = []ranv1alpha1.ClusterProgress{{Name: "a1", State: ranv1alpha1.ClusterCompleted},
		{Name: "a2", State: ranv1alpha1.ClusterTimedOut}}
	s.in.Decision.Ended = []rollout.EndedBatch{{Index: 1, Clusters: map[string]rollout.Cluster{
		"a1": {State: ranv1alpha1.ClusterCompleted}, "a2": {State: ranv1alpha1.ClusterTimedOut}}}}
	*lines = nil
	logBatch(s, record, old)
	if len(*lines) != 1 || !strings.Contains((*lines)[0], `"msg"="Batch ended" "batch"=2 "of"=2 "Completed"=1 "TimedOut"=1 "Failed"=0 "Held"=0 "took"="10m0s"`) {
		t.Fatalf("lines %q, want the batch ended with its counts", *lines)
	}
}
