package talm

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// randomName is a name of up to 63 bytes, now and then with bytes JSON escapes.
func randomName(r *rand.Rand) string {
	const plain, odd = "abcdefghijklmnopqrstuvwxyz0123456789-.", "\"\\<>&\n\x01é"
	var b strings.Builder
	for range r.IntN(64) {
		if r.IntN(20) == 0 {
			b.WriteByte(odd[r.IntN(len(odd))])
		} else {
			b.WriteByte(plain[r.IntN(len(plain))])
		}
	}
	return b.String()
}

// randomStatus fills every fleet-sized field of a status, each entry in any of its shapes.
func randomStatus(r *rand.Rand) ranv1alpha1.ClusterGroupUpgradeStatus {
	name := func() string { return randomName(r) }
	st := ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotCompleted, Message: name()}
	for range r.IntN(5) {
		var batch []string
		if r.IntN(4) > 0 {
			batch = []string{}
		}
		for range r.IntN(30) {
			batch = append(batch, name())
		}
		st.RemediationPlan = append(st.RemediationPlan, batch)
	}
	st.Clusters = randomClusters(r)
	if r.IntN(4) > 0 {
		st.Status.CurrentBatchRemediationProgress = randomProgress(r)
	}
	states := func() (map[string]string, []string) {
		m := map[string]string{}
		var names []string
		for range r.IntN(30) {
			m[name()] = name()
			names = append(names, name())
		}
		return m, names
	}
	if r.IntN(2) == 0 {
		st.Precaching = &ranv1alpha1.PrecachingStatus{Counts: map[string]int{name(): r.IntN(9)}}
		st.Precaching.Status, st.Precaching.Clusters = states()
	}
	if r.IntN(2) == 0 {
		st.Backup = &ranv1alpha1.BackupStatus{}
		st.Backup.Status, st.Backup.Clusters = states()
	}
	return st
}

func randomClusters(r *rand.Rand) []ranv1alpha1.ClusterFinalState {
	name := func() string { return randomName(r) }
	var out []ranv1alpha1.ClusterFinalState
	for range r.IntN(30) {
		c := ranv1alpha1.ClusterFinalState{Name: name(), State: name()}
		if r.IntN(2) == 0 {
			c.CurrentPolicy = &ranv1alpha1.PolicyStatus{Name: name(), Status: name()}
		}
		if r.IntN(3) == 0 {
			c.CurrentManifestWork = &ranv1alpha1.ManifestWorkStatus{Name: name()}
			if r.IntN(2) == 0 {
				c.CurrentManifestWork.Status = &workv1.ManifestResourceStatus{Manifests: []workv1.ManifestCondition{
					{Conditions: []metav1.Condition{{Type: name(), Message: name()}}}}}
			}
		}
		out = append(out, c)
	}
	return out
}

func randomProgress(r *rand.Rand) map[string]*ranv1alpha1.ClusterRemediationProgress {
	index := func() *int {
		if r.IntN(2) == 0 {
			return nil
		}
		i := r.IntN(2000) - 1000
		return &i
	}
	out := map[string]*ranv1alpha1.ClusterRemediationProgress{}
	for range r.IntN(30) {
		var p *ranv1alpha1.ClusterRemediationProgress
		if r.IntN(8) > 0 {
			p = &ranv1alpha1.ClusterRemediationProgress{State: randomName(r), PolicyIndex: index(), ManifestWorkIndex: index()}
			if r.IntN(2) == 0 {
				at := metav1.NewTime(time.Date(2026, 12, 3, 20, 0, r.IntN(60), 0, time.FixedZone("x", 3600)))
				p.FirstCompliantAt = &at
			}
		}
		out[randomName(r)] = p
	}
	return out
}

// The bound is never below the status's size, whatever its entries hold: Shorten trusts it
// to leave a status whole without encoding it.
func TestSizeBoundIsNeverBelowTheSize(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 1))
	for i := range 3000 {
		st := randomStatus(r)
		before := st.DeepCopy()
		if bound, size := sizeBound(&st), Size(&st); bound < size {
			t.Fatalf("status %d: bound %d below the size %d: %+v", i, bound, size, st)
		}
		if Size(&st) != Size(before) {
			t.Fatalf("status %d: sizeBound changed the status", i)
		}
	}
}

// On the statuses of a real rollout (cluster names, TALM's states) the bound is close
// enough to the size to settle the passes within the budget: within 5% of it.
func TestSizeBoundIsTightOnARollout(t *testing.T) {
	for _, current := range []int{0, 2} {
		st := fleetStatus(1000, 250, current)
		bound, size := sizeBound(&st), Size(&st)
		if bound < size || float64(bound) > 1.05*float64(size) {
			t.Errorf("batch %d of a 1,000-cluster rollout: bound %d against the size %d", current+1, bound, size)
		}
	}
}

// BenchmarkShortenWithinBudget: whether a 1,000-cluster status is within the budget (about
// 93 KB: the plan and the first batch's progress), the common case, by the bound and by
// encoding it.
func BenchmarkShortenWithinBudget(b *testing.B) {
	st := fleetStatus(1000, 250, 0)
	st.Message, st.Conditions, st.Precaching, st.CurrentBatch = "", nil, nil, nil
	if Size(&st) > ranv1alpha1.TALMStatusBudget {
		b.Fatalf("the status is over the budget: %d bytes", Size(&st))
	}
	for _, c := range []struct {
		name string
		fits func(*ranv1alpha1.ClusterGroupUpgradeStatus) bool
	}{
		{"bound", func(s *ranv1alpha1.ClusterGroupUpgradeStatus) bool {
			return sizeBound(s) <= ranv1alpha1.TALMStatusBudget
		}},
		{"encoding", func(s *ranv1alpha1.ClusterGroupUpgradeStatus) bool { return Size(s) <= ranv1alpha1.TALMStatusBudget }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.fits(&st)
			}
		})
	}
}
