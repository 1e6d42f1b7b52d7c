package harness

import (
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// TrainRing is a ReleaseTrain's ring of the simulated clusters labelled fleet=<label> (those
// JoinFleet made with that label), upgrading one at a time, qualifying a release after soak
// (none when 0).
func TrainRing(name, label string, soak time.Duration) ranv1alpha1.TrainRing {
	r := ranv1alpha1.TrainRing{
		Name:            name,
		ClusterSelector: &ranv1alpha1.MCUClusterSelector{MatchLabels: map[string]string{"fleet": label}},
		UpgradeStrategy: ranv1alpha1.MCUUpgradeStrategy{MaxConcurrency: 1},
	}
	if soak > 0 {
		r.Qualification.Soak = &metav1.Duration{Duration: soak}
	}
	return r
}

// Ledger writes a train's ledger, newest first, a line a release, as specs compare it:
// "version state ring:state,ring:state" (no rings: "version state").
func Ledger(t *ranv1alpha1.ReleaseTrain) []string {
	var out []string
	for _, r := range t.Status.Ledger {
		rings := make([]string, 0, len(r.Rings))
		for _, lr := range r.Rings {
			rings = append(rings, lr.Name+":"+string(lr.State))
		}
		out = append(out, strings.TrimSpace(r.Version+" "+string(r.State)+" "+strings.Join(rings, ",")))
	}
	return out
}
