package pull_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/precache/pull"
	"github.com/cgu-operator/cgu-operator/pkg/precache/pull/pulltest"
)

// The benchmark's images: 100 images of two 1 MiB layers of random (incompressible) bytes,
// about 200 MiB in all.
const (
	benchImages    = 100
	benchLayers    = 2
	benchLayerSize = 1 << 20
)

// BenchmarkPull pulls the 100 images from the in-process registry into a new OCI layout at
// each iteration, one at a time and several at once, with the registry answering at once and
// with 5 ms of latency on each request, as a registry across a network would.
func BenchmarkPull(b *testing.B) {
	r := pulltest.NewRegistry(b)
	plan := pull.Plan{}
	for i := range benchImages {
		plan.Images = append(plan.Images, r.PushRandom(b, fmt.Sprintf("bench/image-%03d", i), "latest", benchLayerSize, benchLayers))
	}
	sort.Strings(plan.Images)
	total := planBytes(b, plan)
	for _, latency := range []time.Duration{0, 5 * time.Millisecond} {
		for _, parallel := range []int{1, 4, 8} {
			b.Run(fmt.Sprintf("latency=%v/parallel=%d", latency, parallel), func(b *testing.B) {
				r.SetLatency(latency)
				defer r.SetLatency(0)
				benchmarkPull(b, plan, total, parallel)
			})
		}
	}
}

// benchmarkPull pulls the plan into a new OCI layout at each iteration.
func benchmarkPull(b *testing.B, plan pull.Plan, total int64, parallel int) {
	b.SetBytes(total)
	for range b.N {
		b.StopTimer()
		dir, err := os.MkdirTemp(b.TempDir(), "layout")
		if err != nil {
			b.Fatal(err)
		}
		store, err := pull.NewOCILayout(dir)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		s := pull.Pull(context.Background(), plan, store, pull.Options{Parallel: parallel}, nil)
		b.StopTimer()
		if s.Phase != precache.PhaseSucceeded || s.Pulled != benchImages {
			b.Fatalf("summary = %+v, want %d images pulled", s, benchImages)
		}
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(benchImages)*float64(b.N)/b.Elapsed().Seconds(), "images/s")
}

// planBytes is the size of the plan's images in the registry.
func planBytes(b *testing.B, plan pull.Plan) int64 {
	b.Helper()
	var total int64
	for _, ref := range plan.Images {
		img, err := pull.Remote{}.Image(context.Background(), ref)
		if err != nil {
			b.Fatal(err)
		}
		n, err := pull.ImageSize(img)
		if err != nil {
			b.Fatal(err)
		}
		total += n
	}
	return total
}
