package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/tests/golden"
)

// clustersNamed returns the plan's clusters named by format from 1 to n, in state.
func clustersNamed(format string, n int, state ranv1alpha1.ClusterState) []PlanCluster {
	out := make([]PlanCluster, n)
	for i := range out {
		out[i] = PlanCluster{Name: fmt.Sprintf(format, i+1), State: state}
	}
	return out
}

func TestBatchLines(t *testing.T) {
	clusters := func(n int, state ranv1alpha1.ClusterState) []PlanCluster { return clustersNamed("spoke-%d", n, state) }
	// A batch of 40 in the order a plan may take them: by name, sno-10 before sno-9.
	byName := append(clustersNamed("sno-%d", 40, ""), PlanCluster{Name: "edge"})
	byName = append(byName[9:], byName[:9]...)
	frozen := clustersNamed("sno-%03d", 40, ranv1alpha1.ClusterCompleted)
	frozen[4].State, frozen[30].State, frozen[31].State = ranv1alpha1.ClusterTimedOut, ranv1alpha1.ClusterInProgress, ranv1alpha1.ClusterTimedOut
	// Every other cluster, as a spread over sites may take them.
	spread := clustersNamed("sno-%d", 60, "")
	for i := range 30 {
		spread[i] = spread[2*i]
	}
	spread = spread[:30]
	cases := map[string]struct {
		batch PlanBatch
		on    bool
		all   bool
		// width is the width the lines wrap at, 40 unless set.
		width int
		want  []string
	}{
		"a canary": {
			batch: PlanBatch{Index: 1, Canary: true, Clusters: clusters(1, "")},
			want:  []string{"Batch 1 (canary): spoke-1"},
		},
		"a long batch wraps under its first cluster": {
			batch: PlanBatch{Index: 3, Clusters: clusters(7, "")},
			want:  []string{"Batch 3: spoke-1 spoke-2 spoke-3 spoke-4", "         spoke-5 spoke-6 spoke-7"},
		},
		"states, coloured, wrap by their visible width": {
			batch: PlanBatch{Index: 2, Clusters: clusters(3, ranv1alpha1.ClusterCompleted)},
			on:    true,
			want: []string{
				"Batch 2: spoke-1 (\x1b[32mCompleted\x1b[0m)",
				"         spoke-2 (\x1b[32mCompleted\x1b[0m)",
				"         spoke-3 (\x1b[32mCompleted\x1b[0m)",
			},
		},
		"ten clusters are listed": {
			batch: PlanBatch{Index: 4, Clusters: clusters(10, "")},
			want: []string{"Batch 4: spoke-1 spoke-2 spoke-3 spoke-4", "         spoke-5 spoke-6 spoke-7 spoke-8",
				"         spoke-9 spoke-10"},
		},
		"eleven are abbreviated": {
			batch: PlanBatch{Index: 4, Clusters: clusters(11, "")},
			want:  []string{"Batch 4: 11 clusters: spoke-1..spoke-11"},
		},
		"an abbreviated batch in natural order": {
			batch: PlanBatch{Index: 3, Clusters: byName},
			width: 100,
			want:  []string{"Batch 3: 41 clusters: edge, sno-1..sno-40"},
		},
		"a frozen batch counts its clusters by state": {
			batch: PlanBatch{Index: 5, Clusters: frozen},
			width: 60,
			want:  []string{"Batch 5: 40 clusters: sno-001..sno-040 (37 Completed,", "         1 InProgress, 2 TimedOut)"},
		},
		"a spread batch: its first runs and how many more": {
			batch: PlanBatch{Index: 6, Clusters: spread},
			width: 100,
			want:  []string{"Batch 6: 30 clusters: sno-1, sno-3, sno-5, sno-7, sno-9 and 25 more"},
		},
		"the counts coloured": {
			batch: PlanBatch{Index: 5, Clusters: frozen[:20]},
			on:    true,
			width: 100,
			want:  []string{"Batch 5: 20 clusters: sno-001..sno-020 (19 \x1b[32mCompleted\x1b[0m, 1 \x1b[33mTimedOut\x1b[0m)"},
		},
		"--all-clusters lists them all, in plan order": {
			batch: PlanBatch{Index: 3, Clusters: byName[:12]},
			all:   true,
			want: []string{"Batch 3: sno-10 sno-11 sno-12 sno-13", "         sno-14 sno-15 sno-16 sno-17",
				"         sno-18 sno-19 sno-20 sno-21"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			width := tc.width
			if width == 0 {
				width = 40
			}
			got := batchLines(painter{on: tc.on}, tc.batch, width, tc.all)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("batchLines =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// matchTextGolden compares got with testdata/<name>.golden, or rewrites the file with
// -update.
func matchTextGolden(t *testing.T, name, got string) {
	t.Helper()
	if err := golden.Check(name, got); err != nil {
		t.Error(err)
	}
}

// The plan of a fleet of 300 (sno-001 and sno-002 the canaries, then batches of 40, the
// last 12 clusters already compliant): long batches abbreviated, before the start and once
// frozen with the clusters' states.
func TestWritePlanOfAFleetOf300(t *testing.T) {
	now := time.Date(2026, 11, 21, 8, 10, 0, 0, time.UTC)
	all := clustersNamed("sno-%03d", 300, "")
	preview := PlanOutput{Batches: []PlanBatch{{Index: 1, Canary: true, Clusters: all[:1]}, {Index: 2, Canary: true, Clusters: all[1:2]}}}
	for i := 2; i < 288; i += 40 {
		preview.Batches = append(preview.Batches, PlanBatch{Index: len(preview.Batches) + 1, Clusters: all[i:min(i+40, 288)]})
	}
	for _, c := range all[288:] {
		preview.SkippedCompliant = append(preview.SkippedCompliant, c.Name)
	}
	frozen := PlanOutput{Frozen: true}
	for _, b := range preview.Batches {
		b.Clusters = clustersNamed("sno-%03d", len(b.Clusters), "")
		for i := range b.Clusters {
			b.Clusters[i].Name = preview.Batches[b.Index-1].Clusters[i].Name
			b.Clusters[i].State = map[bool]ranv1alpha1.ClusterState{true: ranv1alpha1.ClusterCompleted, false: ranv1alpha1.ClusterPending}[b.Index <= 4]
		}
		frozen.Batches = append(frozen.Batches, b)
	}
	frozen.Batches[4].Clusters[7].State, frozen.Batches[4].Clusters[8].State = ranv1alpha1.ClusterInProgress, ranv1alpha1.ClusterTimedOut
	cgu := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "upgrade"},
		Status: ranv1alpha1.ClusterGroupUpgradeStatus{Plan: &ranv1alpha1.PlanSummary{SkippedCompliant: 12}}}
	cases := map[string]planText{
		"plan-300-preview": {cgu: cgu, plan: preview, now: now, width: 100},
		"plan-300-frozen":  {cgu: cgu, plan: frozen, frozenAt: now.Add(-10 * time.Minute), now: now, width: 100},
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			if err := writePlan(&b, painter{}, text); err != nil {
				t.Fatal(err)
			}
			matchTextGolden(t, name, b.String())
		})
	}
}
