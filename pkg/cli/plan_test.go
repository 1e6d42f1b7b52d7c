package cli

import (
	"fmt"
	"strings"
	"testing"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

func TestBatchLines(t *testing.T) {
	clusters := func(n int, state ranv1alpha1.ClusterState) []PlanCluster {
		out := make([]PlanCluster, n)
		for i := range out {
			out[i] = PlanCluster{Name: fmt.Sprintf("spoke-%d", i+1), State: state}
		}
		return out
	}
	cases := map[string]struct {
		batch PlanBatch
		on    bool
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
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := batchLines(painter{on: tc.on}, tc.batch, 40)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("batchLines =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
