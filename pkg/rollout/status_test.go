package rollout

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

func statusOf(d Decision, p plan.Plan) ranv1alpha1.ClusterGroupUpgradeStatus {
	var st ranv1alpha1.ClusterGroupUpgradeStatus
	Status(&st, d, p)
	return st
}

func TestStatusBeforeTheStart(t *testing.T) {
	fl := newFleet(t, canaryAndTwo(), 1)
	fl.f.Enabled = false
	st := statusOf(fl.decide(0), fl.f.Plan)
	if st.State != ranv1alpha1.StateNotStarted || st.Progress.Batch != "0/3" || st.Progress.Clusters != "0/4" ||
		st.Counts.Pending != 4 || st.CurrentBatch != nil || st.StartedAt != nil || st.Plan.Batches != 3 || st.Plan.CanaryBatches != 1 {
		t.Fatalf("status before the start: %+v", st)
	}
}

func TestStatusOfARunningRollout(t *testing.T) {
	fl := newFleet(t, canaryAndTwo(), 2)
	fl.f.Abort = false
	fl.comply("c1", 0)
	fl.comply("c1", 1)
	fl.decide(0) // the canary completes, batch 2 starts
	fl.comply("a2", 0)
	d := fl.decide(5 * time.Minute)
	st := statusOf(d, fl.f.Plan)

	want := ranv1alpha1.ClusterCounts{Total: 4, Completed: 1, InProgress: 2, Pending: 1}
	if st.Counts != want || st.Progress.Batch != "2/3" || st.Progress.Clusters != "1/4" {
		t.Fatalf("counts %+v progress %+v, want %+v 2/3 1/4", st.Counts, st.Progress, want)
	}
	cb := st.CurrentBatch
	if cb == nil || cb.Index != 2 || cb.Canary || len(cb.Clusters) != 2 || !cb.TimeoutAt.Time.Equal(t0.Add(30*time.Minute)) {
		t.Fatalf("current batch %+v", cb)
	}
	// a1 started its first policy at 0; a2 moved to its second policy at 5m: a1 waits longest.
	if cb.Clusters[0].Name != "a1" || cb.Clusters[1].Name != "a2" || cb.Clusters[0].State != ranv1alpha1.ClusterInProgress {
		t.Fatalf("clusters %+v, want a1 then a2, in progress", cb.Clusters)
	}
}

func TestStatusTimesAreStoredToTheSecond(t *testing.T) {
	fl := newFleet(t, canaryAndTwo(), 2)
	fl.f.Abort = false
	d := fl.decide(1500 * time.Millisecond)
	// A deadline derived again at each reconcile can fall inside a second (TALM's rule
	// divides what is left of the timeout among the batches left).
	d.BatchDeadline = d.BatchDeadline.Add(666 * time.Millisecond)
	st := statusOf(d, fl.f.Plan)
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var stored ranv1alpha1.ClusterGroupUpgradeStatus
	if err := json.Unmarshal(raw, &stored); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(st, stored) {
		t.Errorf("the status derived differs from the status stored:\nderived %+v\nstored  %+v", st.CurrentBatch, stored.CurrentBatch)
	}
}

func TestStatusCountsTimedOutClusters(t *testing.T) {
	fl := newFleet(t, canaryAndTwo(), 1)
	fl.comply("c1", 0)
	fl.decide(0)
	fl.comply("a1", 0)
	d := fl.decide(30 * time.Minute) // a2 times out, Continue: batch 3 starts
	st := statusOf(d, fl.f.Plan)
	want := ranv1alpha1.ClusterCounts{Total: 4, Completed: 2, TimedOut: 1, InProgress: 1}
	if st.Counts != want || st.Progress.Clusters != "3/4" {
		t.Fatalf("counts %+v (%s), want %+v", st.Counts, st.Progress.Clusters, want)
	}
}

// TestStatusOfTenThousandClusters builds the status of a rollout of 10,000 clusters with
// 63-character names in one batch, the largest the status can be, and checks its size.
func TestStatusOfTenThousandClusters(t *testing.T) {
	names := make([]string, 10_000)
	for i := range names {
		prefix := fmt.Sprintf("sno-%05d-", i)
		names[i] = prefix + strings.Repeat("x", 63-len(prefix))
	}
	fl := newFleet(t, []plan.Batch{{Clusters: names}}, 3)
	d := fl.decide(0)
	d.Message = strings.Repeat("m", 5000)
	st := statusOf(d, fl.f.Plan)
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 256*1024 {
		t.Fatalf("status of 10,000 clusters is %d bytes, more than 256 KiB", len(data))
	}
	if len(st.CurrentBatch.Clusters) != ranv1alpha1.ClusterDetailLimit || st.CurrentBatch.ClustersNotShown != 10_000-ranv1alpha1.ClusterDetailLimit {
		t.Fatalf("shown %d, not shown %d", len(st.CurrentBatch.Clusters), st.CurrentBatch.ClustersNotShown)
	}
	if len(st.Message) > ranv1alpha1.MessageLimit {
		t.Fatalf("message of %d bytes", len(st.Message))
	}
	t.Logf("status of 10,000 clusters in one batch: %d bytes", len(data))
}

func TestTruncate(t *testing.T) {
	cases := map[string]struct {
		in    string
		limit int
		want  string
	}{
		"short":              {"abc", 10, "abc"},
		"cut":                {"abcdefghij", 8, "abcde..."},
		"on a rune boundary": {"aé€xyz", 6, "aé..."},
		"trailing space":     {"ab  cdefgh", 7, "ab..."},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Truncate(tc.in, tc.limit); got != tc.want || len(got) > tc.limit {
				t.Fatalf("Truncate(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
			}
		})
	}
}
