package precache

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

func TestPlanText(t *testing.T) {
	at := func(s string) *metav1.Time {
		v, _ := time.Parse(time.RFC3339, s)
		return &metav1.Time{Time: v}
	}
	for _, tc := range []struct {
		plan *ranv1alpha1.PrecachePlan
		want string
	}{
		{nil, ""},
		{&ranv1alpha1.PrecachePlan{Bytes: 900},
			"Pre-cache plan: no end known yet (no payloadSize, and no cluster reported what it pulls); 900 B left to pull"},
		{&ranv1alpha1.PrecachePlan{Bytes: 3 << 30},
			"Pre-cache plan: no end known yet (no payloadSize, and no cluster reported what it pulls); 3.0 GiB left to pull"},
		{&ranv1alpha1.PrecachePlan{ETA: at("2026-12-03T18:00:00Z"), Bound: "registry", Bytes: 1 << 40},
			"Pre-cache plan: ends at 2026-12-03T18:00:00Z; bound by the registry; 1.0 TiB left to pull"},
		{&ranv1alpha1.PrecachePlan{ETA: at("2026-12-03T18:00:00Z"), Deadline: at("2026-12-03T17:00:00Z"), Late: "1h0m0s",
			Bound: "link rack-7", Bytes: 1 << 29, SlowCount: 12, Slow: []ranv1alpha1.SlowPull{{Cluster: "sno-1", Kbps: 80, ShareKbps: 10000}}},
			"Pre-cache plan: ends at 2026-12-03T18:00:00Z, 1h0m0s after the start at 2026-12-03T17:00:00Z (LATE); bound by the link rack-7; 512.0 MiB left to pull\n" +
				"Slow pulls (12, under a quarter of their share): sno-1 (80 of 10000 kbit/s)"},
	} {
		if got := PlanText(tc.plan); got != tc.want {
			t.Errorf("PlanText(%+v)\n got %q\nwant %q", tc.plan, got, tc.want)
		}
	}
}
