package bench_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// TestFleetRollout runs one fleet benchmark (BENCH_FLEET and the other variables of
// configFromEnv; a 50-cluster smoke fleet without them): each phase (the floor driver or the
// operator, in Copy or Override mode: phaseKinds) on a fresh hub world of its own, the same
// fleet on each, and logs a report (appended to the file BENCH_OUT names too).
func TestFleetRollout(t *testing.T) {
	c, smoke, err := configFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if smoke && testing.Short() {
		t.Skip("the smoke fleet takes a minute or two")
	}
	closeLogs, err := setLogs(os.Getenv("BENCH_LOG"))
	if err != nil {
		t.Fatal(err)
	}
	defer closeLogs()
	mem := startMemorySampler(200 * time.Millisecond)
	defer mem.close()
	runs := make([][]phaseResult, c.runs)
	var reports []string
	for k := range runs {
		for _, phase := range c.phases {
			r := runPhase(t, c, phase, k+1, mem)
			t.Log(r.summary())
			runs[k] = append(runs[k], r)
		}
		rep := report(c, runs[k])
		if c.runs > 1 {
			rep = fmt.Sprintf("Run %d of %d.\n\n%s", k+1, c.runs, rep)
		}
		reports = append(reports, rep)
	}
	verdicts := targets(c, runs)
	var b strings.Builder
	writeTargets(&b, verdicts)
	rep := strings.Join(reports, "\n") + b.String()
	t.Log("\n" + rep)
	if err := writeOutputs(c, slices.Concat(runs...), rep); err != nil {
		t.Error(err)
	}
	for _, r := range slices.Concat(runs...) {
		if r.err != nil {
			t.Errorf("%s: %v", r.phase, r.err)
		}
	}
	// The smoke fleet of make test is too small and too busy a harness for the ratio and
	// switch targets: it checks what holds at any size.
	for _, v := range verdicts {
		if !v.met && (!smoke || !sizeDependent(v.target)) {
			t.Errorf("%s missed its target: %s (%s)", v.phase, v.target, v.figure)
		}
	}
}

// writeOutputs appends the report to the file BENCH_OUT names, and the figures to the one
// BENCH_JSON names, when they do.
func writeOutputs(c config, results []phaseResult, rep string) error {
	if out := os.Getenv("BENCH_OUT"); out != "" {
		if err := appendFile(out, rep); err != nil {
			return err
		}
	}
	if out := os.Getenv("BENCH_JSON"); out != "" {
		return appendFile(out, figuresJSON(c, results))
	}
	return nil
}

// sizeDependent reports whether a target is meant for a real fleet: the ratio to the floor
// and the batch switch, which a 50-cluster fleet measures in noise.
func sizeDependent(target string) bool {
	return strings.HasPrefix(target, "converged") || strings.HasPrefix(target, "batch switch")
}

// setLogs sends controller-runtime's logs to the file at path, or nowhere when path is
// empty, and klog's nowhere; the returned function closes the file.
func setLogs(path string) (func(), error) {
	klog.SetLogger(logr.Discard())
	if path == "" {
		ctrl.SetLogger(logr.Discard())
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(f)))
	return func() { _ = f.Close() }, nil
}

// eventCreates is the request key of the events the operator writes.
const eventCreates = "CREATE events"

// phaseKind is what a phase runs: the floor driver or the operator, in an enforcement mode.
type phaseKind struct {
	operator bool
	mode     ranv1alpha1.EnforcementMode
	// window makes the floor driver keep the fleet in one window of maxConcurrency
	// clusters, each freed slot taken at once, whatever the rollout mode.
	window bool
	// floor is the floor phase of the same mode, that an operator phase is read against.
	floor string
}

// overrideFloor is the Override-mode floor phase: no enforce copies, the least a rollout can
// write on the hub, so the fastest any operator can be there. The report reads every
// operator phase against it when it ran.
const overrideFloor = "floor-override"

// windowFloor is the Override floor driven as one window of maxConcurrency clusters, each
// freed slot taken at once: the fastest a Window rollout can be on the harness. Its ratio to
// the Override floor is what windowing itself costs the hub on instant spokes, where no
// straggler holds a batch back.
const windowFloor = "floor-window"

// phaseKinds are the phases BENCH_PHASES may name.
var phaseKinds = map[string]phaseKind{
	"floor":             {mode: ranv1alpha1.EnforcementCopy},
	"operator":          {operator: true, mode: ranv1alpha1.EnforcementCopy, floor: "floor"},
	overrideFloor:       {mode: ranv1alpha1.EnforcementOverride},
	windowFloor:         {mode: ranv1alpha1.EnforcementOverride, window: true},
	"operator-override": {operator: true, mode: ranv1alpha1.EnforcementOverride, floor: overrideFloor},
}

// phaseResult holds what one phase measured.
type phaseResult struct {
	phase           string
	joined, settled time.Duration
	batches         int
	converged       time.Duration // rollout start to the last cluster done
	completed       time.Duration // rollout start to the CGU Completed (operator)
	switches        []time.Duration
	// firstEnforced is the time from the rollout's start to its first cluster enforced, and
	// batchTimes each batch's time from its first cluster enforced to its last done.
	firstEnforced     time.Duration
	batchTimes        []time.Duration
	heapBase, rssBase uint64
	heapPeak, rssPeak uint64
	// heapLive is the heap after a collection at the end of the rollout, the hub world still
	// running: what the process keeps, without the garbage the peak includes.
	heapLive     uint64
	requests     *requestCounts
	reconciles   map[string]int
	reconcileP99 time.Duration
	maxDepth     int
	// operator is the operator process's own report (the operator phases).
	operator *childReport
	// cpuStart is the CPU time of each process at the start of the rollout (cpuTimes), cpu
	// what each used during it.
	cpuStart, cpu map[string]time.Duration
	// served is what the kube-apiserver served during the rollout (readRequestTimes), nil
	// when its metrics could not be read.
	served requestTimes
	// load is the 1-minute load average at the start and at the end of the rollout.
	load [2]string
	// probe is the median CPU time of the speed probe's work during the rollout, over
	// probes samples (speedProbe): more is a slower machine.
	probe  time.Duration
	probes int
	// rootUpdates counts the managed root policies' versions the observer saw during the
	// rollout.
	rootUpdates int
	clusters    int
	err         error
}

func runPhase(t *testing.T, c config, phase string, run int, mem *memorySampler) phaseResult {
	r := phaseResult{phase: phase, clusters: c.clusters}
	ctx, cancel := context.WithTimeout(t.Context(), c.timeout)
	defer cancel()
	progress := func(s string) { t.Logf("%s %s: %s", phase, time.Now().Format(time.TimeOnly), s) }
	f, err := startFleet(ctx, c, progress)
	if err != nil {
		r.err = err
		return r
	}
	defer func() {
		if err := f.hub.Stop(); err != nil {
			t.Errorf("%s: stopping the hub: %v", phase, err)
		}
		runtime.GC()
	}()
	r.joined, r.settled = f.joined, f.settled
	progress(fmt.Sprintf("joined in %s, settled in %s", r.joined.Round(time.Millisecond), r.settled.Round(time.Millisecond)))
	obs, err := startObserver(ctx, f.hub, f.policyNames())
	if err != nil {
		r.err = err
		return r
	}
	r.load[0] = loadAverage()
	r.cpuStart = cpuTimes()
	r.heapBase, r.rssBase = mem.reset()
	servedBefore, servedErr := readRequestTimes(ctx, f.hub.Config)
	profiled := hubProfile(ctx, f.hub.Config, fmt.Sprintf("%s.%d", phase, run))
	probe := startSpeedProbe()
	updates := obs.rootUpdates()
	if k := phaseKinds[phase]; k.operator {
		r.err = runOperator(ctx, f, obs, c, k.mode, &r)
	} else {
		r.err = runFloor(ctx, f, obs, c, k, &r)
	}
	r.probe, r.probes = probe.close()
	r.rootUpdates = obs.rootUpdates() - updates
	if err := profiled(); err != nil {
		t.Errorf("%s: %v", phase, err)
	}
	if servedErr == nil {
		var served requestTimes
		if served, servedErr = readRequestTimes(ctx, f.hub.Config); servedErr == nil {
			r.served = served.since(servedBefore)
		}
	}
	if servedErr != nil {
		t.Logf("%s: the kube-apiserver's request times are not in the report: %v", phase, servedErr)
	}
	r.heapPeak, r.rssPeak = mem.peaks()
	r.load[1] = loadAverage()
	r.heapLive = liveHeap()
	return r
}

// liveHeap collects garbage and returns the heap left.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// loadAverage is the machine's 1-minute load average.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(data))[0]
}

func runFloor(ctx context.Context, f *fleet, obs *observer, c config, k phaseKind, r *phaseResult) error {
	batches := f.batches(c.maxConcurrency, c.mode)
	d := &floorDriver{client: f.hub.Client, obs: obs, mode: k.mode, policies: f.policies, batches: batches}
	run := d.run
	if k.window {
		batches = [][]string{f.clusters}
		run = func(ctx context.Context) error { return d.runWindow(ctx, f.clusters, c.maxConcurrency) }
	}
	r.batches = len(batches)
	start := time.Now()
	err := run(ctx)
	r.cpu = cpuUsed(r.cpuStart, cpuTimes())
	_, last := obs.done(f.clusters)
	if !last.IsZero() {
		r.converged = last.Sub(start)
	}
	r.switches, _ = obs.switches(batches)
	r.firstEnforced, r.batchTimes = obs.spans(start, batches)
	return err
}

func runOperator(ctx context.Context, f *fleet, obs *observer, c config, mode ranv1alpha1.EnforcementMode, r *phaseResult) error {
	run, err := startOperator(ctx, f, mode)
	if err != nil {
		return err
	}
	cgu := newUpgrade(f, c.maxConcurrency, c.mode)
	start := time.Now()
	if err := f.hub.Client.Create(ctx, cgu); err != nil {
		_, _ = run.stop()
		return err
	}
	err = rollOut(ctx, f, obs, cgu, c, start, r)
	r.cpu = cpuUsed(r.cpuStart, cpuTimes()) // before the operator's process exits
	rep, stopErr := run.stop()
	if stopErr != nil {
		return errors.Join(err, stopErr)
	}
	counts := rep.counts()
	r.requests = &counts
	r.reconciles, r.reconcileP99, r.maxDepth = rep.Reconciles, rep.ReconcileP99, rep.MaxDepth
	r.operator = &rep
	return err
}

// rollOut waits for the operator's rollout to complete and its cleanup to finish.
// In the Progressive mode its batches are split into the stages the operator starts (stages),
// so that each stage's time and the switch between stages compare with the floor's.
func rollOut(ctx context.Context, f *fleet, obs *observer, cgu *ranv1alpha1.ClusterGroupUpgrade, c config, start time.Time, r *phaseResult) error {
	completedAt, err := waitCompleted(ctx, f, cgu)
	_, last := obs.done(f.clusters)
	if !last.IsZero() {
		r.converged = last.Sub(start)
	}
	batches, planErr := planOf(ctx, f)
	if c.mode == ranv1alpha1.ModeProgressive {
		batches = stages(batches, c.maxConcurrency)
	}
	r.batches = len(batches)
	r.switches, _ = obs.switches(batches)
	r.firstEnforced, r.batchTimes = obs.spans(start, batches)
	if err != nil {
		n, _ := obs.done(f.clusters)
		return fmt.Errorf("operator: %d of %d clusters done: %w", n, len(f.clusters), err)
	}
	r.completed = completedAt.Sub(start)
	if planErr != nil {
		return planErr
	}
	return waitCleanedUp(ctx, f)
}

func (r phaseResult) summary() string {
	s := fmt.Sprintf("%s: converged in %s over %d batches, switches %v, heap peak %s, RSS peak %s",
		r.phase, r.converged.Round(time.Millisecond), r.batches, roundAll(r.switches), mib(r.heapPeak), mib(r.rssPeak))
	if r.operator != nil {
		s += fmt.Sprintf("; operator process heap peak %s, RSS peak %s", mib(r.operator.HeapPeak), mib(r.operator.RSSPeak))
	}
	if r.err != nil {
		s += fmt.Sprintf(" (error: %v)", r.err)
	}
	return s
}

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}

func mib(b uint64) string { return fmt.Sprintf("%d MiB", b>>20) }

// percentile is the nearest-rank percentile of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	i := int(p*float64(len(s))+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

// report renders the results as the markdown of docs/benchmarks.md: a column per phase, in
// the order they ran.
func report(c config, results []phaseResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#### %s (%s names)\n\n", c, map[bool]string{true: "63-character", false: "short"}[c.longNames])
	byPhase := map[string]*phaseResult{}
	b.WriteString("|")
	for i := range results {
		byPhase[results[i].phase] = &results[i]
		b.WriteString(" | " + results[i].phase)
	}
	b.WriteString(" |\n|---|" + strings.Repeat("---|", len(results)) + "\n")
	row := func(name string, f func(*phaseResult) string) {
		b.WriteString("| " + name)
		for i := range results {
			b.WriteString(" | " + f(&results[i]))
		}
		b.WriteString(" |\n")
	}
	row("fleet joined / settled", func(r *phaseResult) string {
		return fmt.Sprintf("%s / %s", r.joined.Round(100*time.Millisecond), r.settled.Round(100*time.Millisecond))
	})
	row("converged (start to last cluster Compliant)", func(r *phaseResult) string {
		s := r.converged.Round(100 * time.Millisecond).String()
		if ratios := againstFloors(r, byPhase); ratios != "" {
			s += " (" + ratios + ")"
		}
		if r.completed > 0 {
			s += fmt.Sprintf("; CGU Completed at %s", r.completed.Round(100*time.Millisecond))
		}
		if r.err != nil {
			s += " — " + strings.ReplaceAll(r.err.Error(), "|", "/")
		}
		return s
	})
	row("batches; switch p50 / p99 / max", func(r *phaseResult) string {
		return fmt.Sprintf("%d; %s / %s / %s", r.batches, percentile(r.switches, 0.5).Round(time.Millisecond),
			percentile(r.switches, 0.99).Round(time.Millisecond), percentile(r.switches, 1).Round(time.Millisecond))
	})
	row("first cluster enforced after the start; each batch, first enforced to last done", func(r *phaseResult) string {
		return fmt.Sprintf("%s; %v", r.firstEnforced.Round(100*time.Millisecond), roundAll(r.batchTimes))
	})
	row("CPU time during the rollout: kube-apiserver / etcd / test process (hub world) / operator process", func(r *phaseResult) string {
		sec := func(k string) string { return fmt.Sprintf("%.1fs", r.cpu[k].Seconds()) }
		return fmt.Sprintf("%s / %s / %s / %s", sec("kube-apiserver"), sec("etcd"), sec("test process"), sec("operator process"))
	})
	row("kube-apiserver time serving requests (the hub's, the operator's; watches aside): total; the five longest", func(r *phaseResult) string {
		if r.served == nil {
			return "—"
		}
		parts := []string{r.served.total().Round(100 * time.Millisecond).String()}
		for _, k := range r.served.top(5) {
			parts = append(parts, fmt.Sprintf("%s %.1fs (%d)", k, r.served[k].seconds, r.served[k].count))
		}
		return strings.Join(parts, "; ")
	})
	row("root-policy status writes seen during the rollout (each carries every cluster's compliance)", func(r *phaseResult) string {
		return fmt.Sprint(r.rootUpdates)
	})
	row("load average at start / end of the rollout", func(r *phaseResult) string { return r.load[0] + " / " + r.load[1] })
	row("machine speed: CPU time of the speed probe's fixed work, median (more is slower)", func(r *phaseResult) string {
		if r.probes == 0 {
			return "—"
		}
		return fmt.Sprintf("%s (%d samples)", r.probe.Round(10*time.Microsecond), r.probes)
	})
	row("operator process: heap peak / RSS peak / live heap at the end", func(r *phaseResult) string {
		if r.operator == nil {
			return "—"
		}
		return fmt.Sprintf("%s / %s / %s", mib(r.operator.HeapPeak), mib(r.operator.RSSPeak), mib(r.operator.HeapLive))
	})
	row("test process (hub world, floor driver) heap peak / RSS peak (at start)", func(r *phaseResult) string {
		return fmt.Sprintf("%s / %s (%s / %s)", mib(r.heapPeak), mib(r.rssPeak), mib(r.heapBase), mib(r.rssBase))
	})
	row("test process live heap at the end", func(r *phaseResult) string { return mib(r.heapLive) })
	for i := range results {
		if results[i].requests != nil {
			writeRequests(&b, c, &results[i])
		}
	}
	return b.String()
}

// againstFloors renders an operator phase's convergence time as a multiple of the floor of
// its mode and, when that is not the Override floor, of the Override floor too, then of the
// window floor, for the floors that ran without error: "1.02x floor, 1.10x floor-override,
// 1.04x floor-window". It is empty for a floor phase.
func againstFloors(r *phaseResult, byPhase map[string]*phaseResult) string {
	k := phaseKinds[r.phase]
	if !k.operator || r.converged <= 0 {
		return ""
	}
	floors := []string{k.floor}
	if k.floor != overrideFloor {
		floors = append(floors, overrideFloor)
	}
	floors = append(floors, windowFloor)
	var out []string
	for _, name := range floors {
		if f := byPhase[name]; f != nil && f.err == nil && f.converged > 0 {
			out = append(out, fmt.Sprintf("%.2fx %s", r.converged.Seconds()/f.converged.Seconds(), name))
		}
	}
	return strings.Join(out, ", ")
}

func writeRequests(b *strings.Builder, c config, op *phaseResult) {
	rq := op.requests
	n := float64(c.clusters)
	all := total(rq.after, anyVerb)
	writes := total(rq.after, isWrite)
	lists := total(rq.after, func(v string) bool { return v == "LIST" })
	fmt.Fprintf(b, "\n%s: %d requests during the rollout (%.3f per cluster), %d writes (%.3f per cluster), "+
		"%d LISTs after the caches synced, %d requests before; largest object written %d bytes (%s); "+
		"%d reconciles %v, p99 %s; work queue depth at most %d.\n\n",
		op.phase, all, float64(all)/n, writes, float64(writes)/n, lists, total(rq.before, anyVerb), rq.largest, rq.largestOf,
		sum(op.reconciles), op.reconciles, op.reconcileP99.Round(time.Millisecond), op.maxDepth)
	b.WriteString("| request | during the rollout | per cluster |\n|---|---|---|\n")
	for _, k := range slices.Sorted(maps.Keys(rq.after)) {
		fmt.Fprintf(b, "| %s | %d | %.3f |\n", k, rq.after[k], float64(rq.after[k])/n)
	}
	writeWatched(b, rq.watched, n)
}

// writeWatched renders the bytes the operator's watches received, by resource: the kinds
// that carried 1% of the bytes or more, then the others together.
func writeWatched(b *strings.Builder, watched map[string]int64, n float64) {
	if len(watched) == 0 {
		return
	}
	b.WriteString("\n| watch events of | received during the rollout | per cluster |\n|---|---|---|\n")
	var bytes, quiet int64
	for _, v := range watched {
		bytes += v
	}
	for _, k := range slices.Sorted(maps.Keys(watched)) {
		if watched[k] < bytes/100 {
			quiet += watched[k]
			continue
		}
		fmt.Fprintf(b, "| %s | %.1f MB | %.1f KB |\n", k, float64(watched[k])/1e6, float64(watched[k])/1e3/n)
	}
	fmt.Fprintf(b, "| the other kinds (each under 1%% of the bytes) | %.3f MB | |\n", float64(quiet)/1e6)
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func appendFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s + "\n")
	return errors.Join(err, f.Close())
}
