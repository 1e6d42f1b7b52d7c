package bench_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/mcu"
	"github.com/cgu-operator/cgu-operator/pkg/operator"
	"github.com/cgu-operator/cgu-operator/pkg/train"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/world"
	"github.com/cgu-operator/cgu-operator/tests/world/hubagent"
)

// trainNamespace is the train's namespace on the global hub and on the regional hubs.
const trainNamespace = "bench-train"

// trainConfig is one train benchmark: hubs regional hubs of clusters simulated clusters each,
// one ring per hub, rolled out maxConcurrency clusters at a time.
type trainConfig struct {
	hubs, clusters, maxConcurrency int
	timeout                        time.Duration
}

func (c trainConfig) String() string {
	return fmt.Sprintf("%d hubs x %d clusters, maxConcurrency %d", c.hubs, c.clusters, c.maxConcurrency)
}

// trainConfigFromEnv reads BENCH_TRAIN=<hubs>x<clusters>/<maxConcurrency> (a smoke train of
// 3 hubs of 10 clusters without it) and FLEET_TIMEOUT.
func trainConfigFromEnv() (trainConfig, error) {
	c := trainConfig{hubs: 3, clusters: 10, maxConcurrency: 5, timeout: 10 * time.Minute}
	if s := os.Getenv("BENCH_TRAIN"); s != "" {
		var err error
		hubs, rest, ok1 := strings.Cut(s, "x")
		clusters, batch, ok2 := strings.Cut(rest, "/")
		if !ok1 || !ok2 {
			return c, fmt.Errorf("BENCH_TRAIN=%q: want <hubs>x<clusters>/<maxConcurrency>", s)
		}
		for _, f := range []struct {
			text string
			to   *int
		}{{hubs, &c.hubs}, {clusters, &c.clusters}, {batch, &c.maxConcurrency}} {
			if *f.to, err = strconv.Atoi(f.text); err != nil || *f.to < 1 {
				return c, fmt.Errorf("BENCH_TRAIN=%q: %q is not a positive number", s, f.text)
			}
		}
		c.timeout = time.Hour
	}
	if s := os.Getenv("FLEET_TIMEOUT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return c, fmt.Errorf("FLEET_TIMEOUT: %w", err)
		}
		c.timeout = d
	}
	return c, nil
}

// ringTimes is what the benchmark saw of one ring's rollout on its regional hub, on the
// wall clock: when its ManagedClustersUpgrade appeared there and when every cluster of it ran
// the release (or failed, or was held), or it ended.
type ringTimes struct {
	hub            string
	appeared, done time.Time
}

// TestTrainOverhead measures a release train's overhead: one train of one ring per regional
// hub, the time from the release appearing (the train's creation, when it reads the channel)
// to the release delivered, against the sum of the rings' own rollout times on their hubs
// (from each rollout appearing on its hub to its end). What is left is what the train adds:
// delivering each rollout as a ManifestWork, the work agent applying it, the feedback coming
// back, and the train's decision to start the next ring.
func TestTrainOverhead(t *testing.T) {
	c, err := trainConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	several := func(o *operator.Options) { o.SkipNameValidation = true }
	global, err := harness.StartWith(ctx, logr.Discard(), several)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = global.Hub.Stop() }()
	if err := global.Hub.BindClusterSet(ctx, trainNamespace); err != nil {
		t.Fatal(err)
	}
	tr := &ranv1alpha1.ReleaseTrain{
		ObjectMeta: metav1.ObjectMeta{Namespace: trainNamespace, Name: "bench"},
		Spec:       ranv1alpha1.ReleaseTrainSpec{Releases: ranv1alpha1.TrainReleases{Channel: harness.Channel}},
	}
	hubs := make([]*harness.Env, c.hubs)
	start := time.Now()
	for i := range c.hubs {
		name := fmt.Sprintf("hub-%d", i+1)
		if hubs[i], err = startRegionalHub(ctx, t, global, name, c.clusters); err != nil {
			t.Fatal(err)
		}
		tr.Spec.Rings = append(tr.Spec.Rings, ranv1alpha1.TrainRing{
			Name: fmt.Sprintf("ring-%d", i+1), Hubs: []string{name},
			ClusterSelector: &ranv1alpha1.MCUClusterSelector{MatchLabels: map[string]string{fleetLabel: "bench"}},
			UpgradeStrategy: ranv1alpha1.MCUUpgradeStrategy{MaxConcurrency: c.maxConcurrency},
		})
	}
	t.Logf("%s: %d hubs joined in %s", c, c.hubs+1, time.Since(start).Round(time.Second))

	watch := newRingWatch(tr, hubs)
	go watch.run(ctx)
	appeared := time.Now()
	if err := global.Hub.Client.Create(ctx, tr); err != nil {
		t.Fatal(err)
	}
	delivered, err := waitDelivered(ctx, global, tr)
	if err != nil {
		t.Fatalf("%v; the rings as seen: %s", err, watch.summary())
	}
	total := delivered.Sub(appeared)
	rings := watch.settle(ctx, delivered)
	var own time.Duration
	var b strings.Builder
	fmt.Fprintf(&b, "| ring | hub | rollout on its hub | started after the release appeared |\n|---|---|---|---|\n")
	for i, r := range rings {
		if r.appeared.IsZero() || r.done.IsZero() {
			t.Fatalf("ring %d: the benchmark missed its rollout's start or end: %+v", i+1, r)
		}
		own += r.done.Sub(r.appeared)
		fmt.Fprintf(&b, "| ring-%d | %s | %.1f s | %.1f s |\n", i+1, r.hub, r.done.Sub(r.appeared).Seconds(), r.appeared.Sub(appeared).Seconds())
	}
	overhead := total - own
	fmt.Fprintf(&b, "\n%s: release appeared to delivered %.1f s; the rings' own rollouts %.1f s in all; "+
		"the train's overhead %.1f s (%.1f s per ring, %.0f%% of the total)\n",
		c, total.Seconds(), own.Seconds(), overhead.Seconds(), overhead.Seconds()/float64(len(rings)), 100*overhead.Seconds()/total.Seconds())
	t.Log("\n" + b.String())
	if out := os.Getenv("BENCH_OUT"); out != "" {
		if err := appendFile(out, b.String()); err != nil {
			t.Error(err)
		}
	}
	if own <= 0 || own > total {
		t.Errorf("the rings' own rollouts (%s) do not fit in the train's time (%s)", own, total)
	}
}

// startRegionalHub starts a regional hub with its operator and clusters simulated clusters,
// registers it with the global hub and connects it with a work agent.
func startRegionalHub(ctx context.Context, t *testing.T, global *harness.Env, name string, clusters int) (*harness.Env, error) {
	env, err := harness.StartWith(ctx, logr.Discard(), func(o *operator.Options) { o.SkipNameValidation = true })
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = env.Hub.Stop() })
	if err := env.Hub.BindClusterSet(ctx, trainNamespace); err != nil {
		return nil, err
	}
	if _, err := env.JoinFleet(ctx, "bench", clusters); err != nil {
		return nil, err
	}
	if err := global.Hub.AddClusters(ctx, world.Cluster{Name: name}); err != nil {
		return nil, err
	}
	agent, err := hubagent.Start(ctx, global.Hub, name, env.Hub.Config, hubagent.Options{Logger: logr.Discard()})
	if err != nil {
		return nil, err
	}
	t.Cleanup(agent.Stop)
	return env, nil
}

// ringWatch reads each ring's rollout on its regional hub every 100 ms and keeps when it
// first appeared and when it first ended, on the wall clock.
type ringWatch struct {
	train *ranv1alpha1.ReleaseTrain
	hubs  []*harness.Env
	mu    sync.Mutex
	seen  []ringTimes
}

func newRingWatch(t *ranv1alpha1.ReleaseTrain, hubs []*harness.Env) *ringWatch {
	w := &ringWatch{train: t, hubs: hubs, seen: make([]ringTimes, len(hubs))}
	for i := range hubs {
		w.seen[i].hub = t.Spec.Rings[i].Hubs[0]
	}
	return w
}

func (w *ringWatch) run(ctx context.Context) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for i, h := range w.hubs {
			name := train.RolloutName(w.train.Name, w.train.Spec.Rings[i].Name, harness.To)
			m := &ranv1alpha1.ManagedClustersUpgrade{}
			if err := h.Hub.Client.Get(ctx, client.ObjectKey{Namespace: trainNamespace, Name: name}, m); err != nil {
				continue
			}
			now := time.Now()
			c := meta.FindStatusCondition(m.Status.Conditions, ranv1alpha1.MCUConditionInProgress)
			w.mu.Lock()
			if w.seen[i].appeared.IsZero() {
				w.seen[i].appeared = now
			}
			if w.seen[i].done.IsZero() && (c != nil && c.Reason == mcu.ReasonEnded || allDone(m.Status.ClustersSummary)) {
				w.seen[i].done = now
			}
			w.mu.Unlock()
		}
	}
}

// allDone reports whether every cluster of a rollout ran the release, failed or was held:
// what the train's qualification waits for, which may come before the rollout's
// ClusterGroupUpgrade records its end.
func allDone(s *ranv1alpha1.ClustersSummary) bool {
	return s != nil && s.Total > 0 && s.Complete+s.Failed+s.Held == s.Total
}

// settle returns the rings' times once the train is delivered. The train may see the last
// ring's end (through the work agent's feedback) before the watch's next read does; every
// ring ended before the delivery, so settle keeps reading for up to ten seconds and takes an
// end seen after the delivery as the delivery's time.
func (w *ringWatch) settle(ctx context.Context, delivered time.Time) []ringTimes {
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		rings := w.times()
		ended := true
		for i := range rings {
			if rings[i].done.After(delivered) {
				rings[i].done = delivered
			}
			ended = ended && !rings[i].done.IsZero()
		}
		if ended {
			return rings
		}
		select {
		case <-ctx.Done():
			return rings
		case <-deadline.C:
			return rings
		case <-tick.C:
		}
	}
}

func (w *ringWatch) times() []ringTimes {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]ringTimes(nil), w.seen...)
}

func (w *ringWatch) summary() string {
	var parts []string
	for _, r := range w.times() {
		parts = append(parts, fmt.Sprintf("%s appeared %v ended %v", r.hub, !r.appeared.IsZero(), !r.done.IsZero()))
	}
	return strings.Join(parts, "; ")
}

// waitDelivered waits until the train's newest release is delivered, and returns when it saw
// that (every 100 ms).
func waitDelivered(ctx context.Context, global *harness.Env, tr *ranv1alpha1.ReleaseTrain) (time.Time, error) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last []ranv1alpha1.LedgerRelease
	for {
		got := &ranv1alpha1.ReleaseTrain{}
		if err := global.Hub.Client.Get(ctx, client.ObjectKeyFromObject(tr), got); err == nil {
			last = got.Status.Ledger
			if len(last) > 0 && last[0].State == ranv1alpha1.ReleaseDelivered {
				return time.Now(), nil
			}
			if len(last) > 0 && last[0].State == ranv1alpha1.ReleaseStopped {
				return time.Time{}, fmt.Errorf("the release stopped: %s", last[0].Message)
			}
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("the release was not delivered: ledger %+v: %w", last, ctx.Err())
		case <-tick.C:
		}
	}
}
