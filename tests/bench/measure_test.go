package bench_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// requestCounter counts the requests a client makes, by verb and resource, split at the
// moment the caller marks (after the caches synced), and keeps the largest request body.
type requestCounter struct {
	mu      sync.Mutex
	synced  bool
	before  map[string]int
	after   map[string]int
	largest int64
	// largestOf names the request of the largest body.
	largestOf string
	last      time.Time
	// watched counts the bytes received by watches after the caches synced, by resource.
	watched map[string]int64
}

func newRequestCounter() *requestCounter {
	return &requestCounter{before: map[string]int{}, after: map[string]int{}, watched: map[string]int64{}}
}

// wrap is a rest.Config WrapTransport.
func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		c.record(req)
		resp, err := rt.RoundTrip(req)
		if verb, resource, _ := classify(req.Method, req.URL); err == nil && verb == "WATCH" {
			resp.Body = &watchBody{ReadCloser: resp.Body, counter: c, resource: resource}
		}
		return resp, err
	})
}

// watchBody counts the bytes of a watch's events, by resource, once the caches synced:
// what the operator decodes of each kind during a rollout.
type watchBody struct {
	io.ReadCloser
	counter  *requestCounter
	resource string
}

func (b *watchBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.counter.mu.Lock()
	if b.counter.synced {
		b.counter.watched[b.resource] += int64(n)
	}
	b.counter.mu.Unlock()
	return n, err
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func (c *requestCounter) record(req *http.Request) {
	verb, resource, named := classify(req.Method, req.URL)
	key := verb + " " + resource
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = time.Now()
	if c.synced {
		c.after[key]++
	} else {
		c.before[key]++
	}
	if isWrite(verb) && req.ContentLength > c.largest {
		c.largest = req.ContentLength
		c.largestOf = key
		if named != "" {
			c.largestOf += " " + named
		}
	}
}

// markSynced starts counting requests as made after the caches synced.
func (c *requestCounter) markSynced() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.synced = true
}

// quietSince returns how long no request was made.
func (c *requestCounter) quietSince() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Since(c.last)
}

type requestCounts struct {
	before, after map[string]int
	largest       int64
	largestOf     string
	watched       map[string]int64
}

func (c *requestCounter) snapshot() requestCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := requestCounts{before: maps.Clone(c.before), after: maps.Clone(c.after), watched: maps.Clone(c.watched), largest: c.largest, largestOf: c.largestOf}
	return out
}

// total sums the counts whose verb passes keep.
func total(counts map[string]int, keep func(verb string) bool) int {
	n := 0
	for k, v := range counts {
		if keep(strings.SplitN(k, " ", 2)[0]) {
			n += v
		}
	}
	return n
}

func isWrite(verb string) bool {
	switch verb {
	case "CREATE", "UPDATE", "PATCH", "DELETE", "DELETECOLLECTION":
		return true
	}
	return false
}

func anyVerb(string) bool { return true }

// classify names a Kubernetes API request by verb (LIST, WATCH, GET, CREATE, UPDATE, PATCH,
// DELETE) and resource ("placements", "clustergroupupgrades/status"; "discovery" for the
// discovery documents), and returns the object's name when the request names one.
func classify(method string, u *url.URL) (verb, resource, name string) {
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	var rest []string
	switch {
	case len(segs) > 2 && segs[0] == "api":
		rest = segs[2:]
	case len(segs) > 3 && segs[0] == "apis":
		rest = segs[3:]
	default:
		return method, "discovery", ""
	}
	if rest[0] == "namespaces" && len(rest) > 2 {
		rest = rest[2:]
	}
	resource = rest[0]
	if len(rest) > 1 {
		name = rest[1]
	}
	if len(rest) > 2 {
		resource += "/" + rest[2]
	}
	return verbOf(method, u.Query().Get("watch"), name), resource, name
}

// verbs names the verb of each method that does not depend on the request's target.
var verbs = map[string]string{
	http.MethodPost: "CREATE", http.MethodPut: "UPDATE", http.MethodPatch: "PATCH",
}

func verbOf(method, watch, name string) string {
	switch {
	case method == http.MethodGet && (watch == "true" || watch == "1"):
		return "WATCH"
	case method == http.MethodGet && name == "":
		return "LIST"
	case method == http.MethodGet:
		return "GET"
	case method == http.MethodDelete && name == "":
		return "DELETECOLLECTION"
	case method == http.MethodDelete:
		return "DELETE"
	case verbs[method] != "":
		return verbs[method]
	}
	return method
}

// memorySampler samples the process's Go heap; the resident set's peak is the kernel's
// (VmHWM), which reset starts again. Reading /proc/self/status at each sample cost the
// operator's process 3% of its CPU in a rollout, the bench measuring itself.
type memorySampler struct {
	mu       sync.Mutex
	heapPeak uint64
	rssPeak  uint64
	stop     chan struct{}
	done     chan struct{}
}

// startMemorySampler samples every interval until stopped.
func startMemorySampler(interval time.Duration) *memorySampler {
	m := &memorySampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			m.sample()
			select {
			case <-m.stop:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

func (m *memorySampler) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.heapPeak = max(m.heapPeak, ms.HeapAlloc)
}

// reset collects garbage, returns freed memory to the system, resets the kernel's peak RSS
// (VmHWM, through /proc/self/clear_refs) and starts the peaks again from now; it returns the
// heap and RSS right after.
func (m *memorySampler) reset() (heap, rss uint64) {
	runtime.GC()
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss = procStatus("VmRSS")
	m.mu.Lock()
	defer m.mu.Unlock()
	m.heapPeak, m.rssPeak = ms.HeapAlloc, rss
	return ms.HeapAlloc, rss
}

// peaks returns the largest heap sampled since the last reset, and the resident set's peak:
// the kernel's high-water mark, or the RSS now or at the reset where that is higher.
func (m *memorySampler) peaks() (heap, rss uint64) {
	m.sample()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.heapPeak, max(m.rssPeak, procStatus("VmHWM"), procStatus("VmRSS"))
}

func (m *memorySampler) close() {
	close(m.stop)
	<-m.done
}

// procStatus reads a field of /proc/self/status in bytes (0 when unknown).
func procStatus(field string) uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, field+":") {
			continue
		}
		f := strings.Fields(strings.TrimPrefix(line, field+":"))
		if len(f) == 0 {
			return 0
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}

// controllerFamilies gathers controller-runtime's registry (the operator's controllers and,
// in this process, the propagator's) and returns the metric families by name.
func controllerFamilies() map[string]*dto.MetricFamily {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return nil
	}
	out := make(map[string]*dto.MetricFamily, len(families))
	for _, f := range families {
		out[f.GetName()] = f
	}
	return out
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// reconcileStats reads controller-runtime's reconcile count by result and the 99th
// percentile of reconcile durations (interpolated in the histogram's buckets, as
// histogram_quantile does) for a controller.
func reconcileStats(families map[string]*dto.MetricFamily, controller string) (byResult map[string]int, p99 time.Duration) {
	byResult = map[string]int{}
	if f := families["controller_runtime_reconcile_total"]; f != nil {
		for _, m := range f.GetMetric() {
			if labelValue(m, "controller") == controller {
				byResult[labelValue(m, "result")] += int(m.GetCounter().GetValue())
			}
		}
	}
	if f := families["controller_runtime_reconcile_time_seconds"]; f != nil {
		for _, m := range f.GetMetric() {
			if labelValue(m, "controller") == controller {
				p99 = quantile(0.99, m.GetHistogram())
			}
		}
	}
	return byResult, p99
}

func quantile(q float64, h *dto.Histogram) time.Duration {
	count := float64(h.GetSampleCount())
	if count == 0 {
		return 0
	}
	rank := q * count
	lower, below := 0.0, 0.0
	for _, b := range h.GetBucket() {
		upper, cum := b.GetUpperBound(), float64(b.GetCumulativeCount())
		if cum >= rank {
			if math.IsInf(upper, 1) {
				return time.Duration(lower * float64(time.Second))
			}
			v := lower + (upper-lower)*(rank-below)/math.Max(cum-below, 1)
			return time.Duration(v * float64(time.Second))
		}
		lower, below = upper, cum
	}
	return time.Duration(lower * float64(time.Second))
}

// queueDepths returns the current depth of every controller-runtime work queue by name.
func queueDepths(families map[string]*dto.MetricFamily) map[string]int {
	out := map[string]int{}
	if f := families["workqueue_depth"]; f != nil {
		for _, m := range f.GetMetric() {
			out[labelValue(m, "name")] = int(m.GetGauge().GetValue())
		}
	}
	return out
}

// controllerSummary is one line per controller of the registry: reconciles by result and
// queue depth, to tell which controller is the bottleneck of a run.
func controllerSummary(families map[string]*dto.MetricFamily) string {
	results := map[string]map[string]int{}
	if f := families["controller_runtime_reconcile_total"]; f != nil {
		for _, m := range f.GetMetric() {
			c := labelValue(m, "controller")
			if results[c] == nil {
				results[c] = map[string]int{}
			}
			results[c][labelValue(m, "result")] += int(m.GetCounter().GetValue())
		}
	}
	depths := queueDepths(families)
	var b strings.Builder
	for _, c := range slices.Sorted(maps.Keys(results)) {
		r := results[c]
		fmt.Fprintf(&b, " %s{ok=%d requeue=%d requeue_after=%d error=%d depth=%d}", c,
			r["success"], r["requeue"], r["requeue_after"], r["error"], depths[c])
	}
	return b.String()
}

// cpuTimes returns the CPU time (user and system) each process of the benchmark has used so
// far: this test process (the hub world's controllers, simulators and drivers), and its
// children by command name (kube-apiserver, etcd), and the operator's process (a child
// running this test binary). A rollout's CPU is the difference of two readings.
func cpuTimes() map[string]time.Duration {
	out := map[string]time.Duration{}
	self := os.Getpid()
	selfComm, _, cpu, ok := procCPU("self")
	if ok {
		out["test process"] = cpu
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		comm, ppid, cpu, ok := procCPU(e.Name())
		switch {
		case !ok || ppid != self:
		case comm == selfComm:
			out["operator process"] += cpu
		default:
			out[comm] += cpu
		}
	}
	return out
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat's times, 100 on Linux.
const clockTicks = 100

// procCPU reads a process's command name, parent and CPU time from /proc/<pid>/stat.
func procCPU(pid string) (comm string, ppid int, cpu time.Duration, ok bool) {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return "", 0, 0, false
	}
	s := string(data)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return "", 0, 0, false
	}
	comm = s[open+1 : closing]
	// After the name: state, ppid, ..., utime (the 14th field of the line) and stime (15th).
	f := strings.Fields(s[closing+1:])
	if len(f) < 13 {
		return "", 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return comm, ppid, time.Duration(utime+stime) * time.Second / clockTicks, true
}

// cpuUsed returns, per process, the CPU time used between two readings of cpuTimes.
func cpuUsed(before, after map[string]time.Duration) map[string]time.Duration {
	out := map[string]time.Duration{}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}
