package bench_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/client-go/tools/clientcmd"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/cgu-operator/cgu-operator/pkg/operator"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// The operator side of a benchmark runs in a child process: this test binary started again
// with childEnv set to a directory holding the hub's kubeconfig and childEnforcementEnv to
// the enforcement mode of the phase (Copy or Override). It prints childSynced once its
// caches synced and it has been quiet for two seconds, runs until SIGTERM, and then writes
// childReportFile into the directory.
const (
	childEnv            = "CGU_BENCH_OPERATOR_DIR"
	childEnforcementEnv = "CGU_BENCH_OPERATOR_ENFORCEMENT"
	childSynced         = "synced"
	childReportFile     = "report.json"
	// operatorController is the ClusterGroupUpgrade controller's name in controller-runtime's
	// metrics.
	operatorController = "clustergroupupgrade"
)

// childReport is what the operator process measured of itself.
type childReport struct {
	// Before and After count requests by verb and resource, before and after the caches
	// synced.
	Before, After map[string]int
	// Largest is the largest request body written, LargestOf the request that wrote it.
	Largest   int64
	LargestOf string
	// Watched counts the bytes of watch events received after the caches synced, by
	// resource: what the operator decoded of each kind.
	Watched map[string]int64
	// Reconciles counts the ClusterGroupUpgrade controller's reconciles by result.
	Reconciles   map[string]int
	ReconcileP99 time.Duration
	MaxDepth     int
	// HeapPeak is the largest Go heap sampled (every 200 ms); RSSPeak the kernel's
	// high-water mark of the resident set (VmHWM) or the largest sample, whichever is
	// higher: the whole life of the process, the cache's initial sync included.
	HeapPeak, RSSPeak uint64
	// HeapLive is the heap after a collection at the end, before the manager stopped.
	HeapLive uint64
}

func (r childReport) counts() requestCounts {
	return requestCounts{before: r.Before, after: r.After, watched: r.Watched, largest: r.Largest, largestOf: r.LargestOf}
}

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		if err := runChild(dir); err != nil {
			fmt.Fprintln(os.Stderr, "operator process:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runChild runs the operator through operator.New, as the production binary does, with its
// production defaults except: no leader election, no metrics or probe endpoints, no ZTP
// controller (it would make a CGU for every cluster without the ztp-done label), and the
// default enforcement of childEnforcementEnv, the floor's mode it is compared with, whatever
// the hub's default. Every request it makes goes through a counting transport.
func runChild(dir string) error {
	mode := ranv1alpha1.EnforcementMode(os.Getenv(childEnforcementEnv))
	if mode != ranv1alpha1.EnforcementCopy && mode != ranv1alpha1.EnforcementOverride {
		return fmt.Errorf("%s=%q, want %s or %s", childEnforcementEnv, mode, ranv1alpha1.EnforcementCopy, ranv1alpha1.EnforcementOverride)
	}
	logs := os.Getenv("BENCH_LOG")
	if logs != "" {
		logs += ".operator"
	}
	closeLogs, err := setLogs(logs)
	if err != nil {
		return err
	}
	defer closeLogs()
	if err := quietMetrics(); err != nil {
		return err
	}
	mem := startMemorySampler(200 * time.Millisecond)
	defer mem.close()
	if path := os.Getenv("BENCH_CPUPROFILE"); path != "" {
		stopProfile, err := cpuProfile(path + "." + strings.ToLower(string(mode)))
		if err != nil {
			return err
		}
		defer stopProfile()
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
	if err != nil {
		return err
	}
	requests := newRequestCounter()
	cfg.WrapTransport = requests.wrap
	opts := operator.DefaultOptions()
	opts.LeaderElect, opts.MetricsAddr, opts.ProbeAddr, opts.ZTP = false, "0", "0", false
	opts.DefaultEnforcement = string(mode)
	mgr, err := operator.New(cfg, opts)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	managerCtx, stopManager := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(managerCtx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		stopManager()
		return fmt.Errorf("the caches did not sync: %w", <-stopped)
	}
	if err := waitUntil(ctx, 100*time.Millisecond, func() (bool, error) {
		return requests.quietSince() > 2*time.Second, nil
	}); err != nil {
		stopManager()
		return err
	}
	requests.markSynced()
	fmt.Println(childSynced)

	maxDepth := sampleQueue(ctx)
	rep := childReport{HeapLive: liveHeap()}
	rep.Reconciles, rep.ReconcileP99 = reconcileStats(controllerFamilies(), operatorController)
	stopManager()
	if err := <-stopped; err != nil {
		return fmt.Errorf("the manager: %w", err)
	}
	counts := requests.snapshot()
	rep.Before, rep.After, rep.Watched, rep.Largest, rep.LargestOf = counts.before, counts.after, counts.watched, counts.largest, counts.largestOf
	rep.MaxDepth = maxDepth
	rep.HeapPeak, rep.RSSPeak = mem.peaks()
	data, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, childReportFile), data, 0o600)
}

// sampleQueue samples the controller's work queue depth every 250 ms until ctx ends and
// returns the largest. Each sample gathers the registry, without the process and Go
// collectors (quietMetrics): with them, every 50 ms, it was about a tenth of the operator
// process's CPU in a 1,000-cluster rollout, charged to the operator.
func sampleQueue(ctx context.Context) int {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	depth := 0
	for {
		depth = max(depth, queueDepths(controllerFamilies())[operatorController])
		select {
		case <-ctx.Done():
			return depth
		case <-t.C:
		}
	}
}

// quietMetrics takes the process and Go runtime collectors out of controller-runtime's
// registry in the operator process: the queue sampler gathers the registry every 250 ms, and
// the process collector reads /proc at each gathering, CPU the benchmark would count as the
// operator's. The child measures its memory itself (startMemorySampler) and reads no other
// family of those collectors. It fails if controller-runtime no longer registers them as it
// does today.
func quietMetrics() error {
	if !ctrlmetrics.Registry.Unregister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})) ||
		!ctrlmetrics.Registry.Unregister(collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsAll))) {
		return errors.New("controller-runtime's registry does not hold its process and Go collectors as expected")
	}
	return nil
}

// cpuProfile writes the operator process's CPU profile to path until the returned function
// is called.
func cpuProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
