package precache

import (
	"fmt"
	"strings"
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// PlanText says when the bandwidth plan of pre-caching ends, how late, what bounds it and
// which pulls are slow, as kubectl cgu preflight and the dashboard show it; "" without a
// plan.
func PlanText(p *ranv1alpha1.PrecachePlan) string {
	if p == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("Pre-cache plan: ")
	switch {
	case p.ETA == nil:
		b.WriteString("no end known yet (no payloadSize, and no cluster reported what it pulls)")
	case p.Late != "":
		fmt.Fprintf(&b, "ends at %s, %s after the start at %s (LATE)", p.ETA.UTC().Format(time.RFC3339), p.Late,
			p.Deadline.UTC().Format(time.RFC3339))
	default:
		fmt.Fprintf(&b, "ends at %s", p.ETA.UTC().Format(time.RFC3339))
	}
	if p.Bound != "" {
		fmt.Fprintf(&b, "; bound by the %s", p.Bound)
	}
	fmt.Fprintf(&b, "; %s left to pull", size(p.Bytes))
	if p.SlowCount > 0 {
		var names []string
		for _, s := range p.Slow {
			names = append(names, fmt.Sprintf("%s (%d of %d kbit/s)", s.Cluster, s.Kbps, s.ShareKbps))
		}
		fmt.Fprintf(&b, "\nSlow pulls (%d, under a quarter of their share): %s", p.SlowCount, strings.Join(names, ", "))
	}
	return b.String()
}

// size writes bytes in the largest binary unit that keeps a whole number before the point.
func size(bytes int64) string {
	for _, u := range []struct {
		name  string
		bytes float64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if float64(bytes) >= u.bytes {
			return fmt.Sprintf("%.1f %s", float64(bytes)/u.bytes, u.name)
		}
	}
	return fmt.Sprintf("%d B", bytes)
}
