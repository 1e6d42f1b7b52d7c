package pull_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/precache/pull"
	"github.com/cgu-operator/cgu-operator/pkg/precache/pull/pulltest"
)

// instantClock is the real clock whose After fires at once and records the waits asked.
type instantClock struct {
	clock.RealClock
	mu    sync.Mutex
	waits []time.Duration
}

func (c *instantClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	ch := make(chan time.Time, 1)
	ch <- time.Time{}
	return ch
}

func (c *instantClock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

// fakeStore is an OCI layout whose space is what the test says, and which counts and can
// intercept its Puts.
type fakeStore struct {
	*pull.OCILayout
	free, total int64
	puts        atomic.Int64
	onPut       func(n int64)
}

func (s *fakeStore) Put(ctx context.Context, ref string, img v1.Image) (int64, error) {
	n := s.puts.Add(1)
	if s.onPut != nil {
		s.onPut(n)
	}
	return s.OCILayout.Put(ctx, ref, img)
}

func (s *fakeStore) FreeBytes() (int64, error)  { return s.free, nil }
func (s *fakeStore) TotalBytes() (int64, error) { return s.total, nil }

func newLayout(t testing.TB) *pull.OCILayout {
	t.Helper()
	l, err := pull.NewOCILayout(t.TempDir())
	if err != nil {
		t.Fatalf("NewOCILayout() error: %v", err)
	}
	return l
}

func newFakeStore(t testing.TB) *fakeStore {
	return &fakeStore{OCILayout: newLayout(t), free: 100 << 30, total: 200 << 30}
}

func resolve(t *testing.T, f *pulltest.Fixture) pull.Plan {
	t.Helper()
	plan, err := pull.Resolve(context.Background(), f.Spec(), pull.Remote{})
	if err != nil {
		t.Fatalf("Resolve() error: %v", err)
	}
	return plan
}

// options pull with the real source, retry at once and record the waits.
func options(c clock.Clock) pull.Options {
	return pull.Options{Run: "run-1", Source: pull.Remote{}, Clock: c}
}

func TestPullIntoOCILayout(t *testing.T) {
	f := pulltest.NewFixture(t)
	plan := resolve(t, f)
	store := newLayout(t)
	var reports []precache.Summary
	got := pull.Pull(context.Background(), plan, store, options(&instantClock{}), func(s precache.Summary) { reports = append(reports, s) })

	want := precache.Summary{Run: "run-1", Phase: precache.PhaseSucceeded, Images: len(f.Want()), Pulled: len(f.Want()), ToPull: got.Bytes, Bytes: got.Bytes}
	if diff := cmp.Diff(want, got); diff != "" || got.Bytes <= 0 {
		t.Errorf("summary mismatch (-want +got):\n%s\nbytes: %d", diff, got.Bytes)
	}
	refs, err := store.Refs()
	if err != nil {
		t.Fatalf("Refs() error: %v", err)
	}
	if diff := cmp.Diff(f.Want(), refs); diff != "" {
		t.Errorf("stored images mismatch (-want +got):\n%s", diff)
	}
	for _, ref := range refs {
		assertSameImage(t, store, ref)
	}
	if len(reports) == 0 || reports[0].Phase != precache.PhasePulling || reports[0].Images != len(f.Want()) ||
		reports[0].ToPull != got.Bytes || reports[0].Pulled != 0 {
		t.Errorf("first report = %+v, want Pulling with %d images and the %d bytes to pull, before any is pulled", reports, len(f.Want()), got.Bytes)
	}

	// A second run finds everything, in a layout opened again, and asks the registry nothing.
	again, err := pull.NewOCILayout(store.Dir())
	if err != nil {
		t.Fatalf("NewOCILayout() error: %v", err)
	}
	before := f.Registry.Requests()
	second := pull.Pull(context.Background(), plan, again, options(&instantClock{}), nil)
	want = precache.Summary{Run: "run-1", Phase: precache.PhaseSucceeded, Images: len(f.Want()), Present: len(f.Want())}
	if diff := cmp.Diff(want, second); diff != "" {
		t.Errorf("second summary mismatch (-want +got):\n%s", diff)
	}
	if n := f.Registry.Requests() - before; n != 0 {
		t.Errorf("the second run made %d requests, want none", n)
	}
}

// assertSameImage checks that the stored image is valid and is the registry's.
func assertSameImage(t *testing.T, store *pull.OCILayout, ref string) {
	t.Helper()
	img, err := store.Image(ref)
	if err != nil {
		t.Fatalf("Image(%s) error: %v", ref, err)
	}
	if err := validate.Image(img); err != nil {
		t.Errorf("stored %s is not valid: %v", ref, err)
	}
	parsed, err := name.ParseReference(ref)
	if err != nil {
		t.Fatalf("parsing %s: %v", ref, err)
	}
	desc, err := remote.Head(parsed)
	if err != nil {
		t.Fatalf("reading %s from the registry: %v", ref, err)
	}
	if got, err := img.Digest(); err != nil || got != desc.Digest {
		t.Errorf("stored %s has digest %v (%v), the registry's is %v", ref, got, err, desc.Digest)
	}
}

func TestPullExcludedCounted(t *testing.T) {
	f := pulltest.NewFixture(t)
	spec := f.Spec()
	spec.ExcludePrecachePatterns = []string{"ocp-v4.0-art-dev"}
	plan, err := pull.Resolve(context.Background(), spec, pull.Remote{})
	if err != nil {
		t.Fatalf("Resolve() error: %v", err)
	}
	store := newLayout(t)
	got := pull.Pull(context.Background(), plan, store, options(&instantClock{}), nil)
	if got.Phase != precache.PhaseSucceeded || got.Excluded != 5 || got.Images != len(f.Want())-5 || got.Pulled != got.Images {
		t.Errorf("summary = %+v, want 5 excluded and the rest pulled", got)
	}
	for _, ref := range f.ReleaseImages {
		if has, err := store.Has(context.Background(), ref); err != nil || has {
			t.Errorf("Has(%s) = %t, %v; want an excluded image absent", ref, has, err)
		}
	}
}

func TestPullMissingImage(t *testing.T) {
	f := pulltest.NewFixture(t)
	plan := resolve(t, f)
	missing := f.Registry.Ref("extra/tools", "deleted")
	plan.Images = append(plan.Images, missing)
	store := newLayout(t)
	got := pull.Pull(context.Background(), plan, store, options(&instantClock{}), nil)
	if got.Phase != precache.PhaseFailed || got.Retryable || got.Pulled != len(f.Want()) || !cmp.Equal(got.Failed, []string{missing}) {
		t.Errorf("summary = %+v, want Failed, unrecoverable, naming %s, after pulling the others", got, missing)
	}
	if !strings.Contains(got.Error, "MANIFEST_UNKNOWN") {
		t.Errorf("error = %q, want the registry's MANIFEST_UNKNOWN", got.Error)
	}
	if code := pull.ExitCode(got); code != precache.ExitUnrecoverable {
		t.Errorf("ExitCode() = %d, want %d", code, precache.ExitUnrecoverable)
	}
}

// flakyCase is a registry failing requests during a Pull, and what the Pull should make of it.
type flakyCase struct {
	failNext    int  // requests failed once the plan is resolved
	failOnPut   int  // requests failed when the first Put starts, during the downloads
	failAll     bool // every request fails once the plan is resolved
	retries     int
	wantPhase   string
	wantWaits   int
	wantFailed  int
	wantExit    int
	wantPulled  bool
	wantRetried int64
}

func TestPullFlakyRegistry(t *testing.T) {
	cases := map[string]flakyCase{
		"503s while checking, retried": {failNext: 3, wantPhase: precache.PhaseSucceeded, wantWaits: 3, wantPulled: true, wantRetried: 3},
		"503s while downloading, retried": {
			failOnPut: 2, wantPhase: precache.PhaseSucceeded, wantWaits: 2, wantPulled: true, wantRetried: 2,
		},
		"503s always": {
			failAll: true, retries: 2, wantPhase: precache.PhaseFailed, wantWaits: 13 * 2, wantFailed: precache.MaxListed,
			wantExit: precache.ExitRetryable, wantRetried: 13 * 3,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := pulltest.NewFixture(t)
			plan := resolve(t, f)
			if len(plan.Images) != 13 {
				t.Fatalf("plan has %d images, the cases count 13", len(plan.Images))
			}
			store := newFakeStore(t)
			store.onPut = func(n int64) {
				if n == 1 && tc.failOnPut > 0 {
					f.Registry.FailNext(tc.failOnPut)
				}
			}
			f.Registry.FailNext(tc.failNext)
			f.Registry.FailAll(tc.failAll)
			c := &instantClock{}
			opts := options(c)
			opts.Retries = tc.retries
			opts.Backoff = func(attempt int) time.Duration { return time.Duration(attempt) * time.Second }
			got := pull.Pull(context.Background(), plan, store, opts, nil)
			checkFlaky(t, tc, got, len(plan.Images), f.Registry.Failed(), c.Waits())
		})
	}
}

// checkFlaky checks the summary of a Pull from a flaky registry, the requests the registry
// failed and the waits of the retries.
func checkFlaky(t *testing.T, tc flakyCase, got precache.Summary, images int, failed int64, waits []time.Duration) {
	t.Helper()
	if got.Phase != tc.wantPhase || len(got.Failed) != tc.wantFailed || pull.ExitCode(got) != tc.wantExit {
		t.Errorf("summary = %+v (exit %d), want %s with %d failed images, exit %d", got, pull.ExitCode(got), tc.wantPhase, tc.wantFailed, tc.wantExit)
	}
	if tc.wantPulled && got.Pulled != images {
		t.Errorf("pulled %d images, want %d", got.Pulled, images)
	}
	if failed != tc.wantRetried {
		t.Errorf("the registry failed %d requests, want %d", failed, tc.wantRetried)
	}
	if len(waits) != tc.wantWaits {
		t.Errorf("waited %d times (%v), want %d", len(waits), waits, tc.wantWaits)
	}
	if tc.failAll && (!got.Retryable || !strings.Contains(got.Error, "13 images could not be pulled, the first: ") || !strings.Contains(got.Error, "503")) {
		t.Errorf("summary = %+v, want a retryable failure of the 13 images for a 503", got)
	}
}

func TestPullSpace(t *testing.T) {
	cases := map[string]struct {
		required    int64
		free, total int64
		gcThreshold int
		want        string
	}{
		"less free than required": {
			required: 30 << 30, free: 1 << 30, total: 100 << 30,
			want: "too little space in the image store: 1.0GiB free, the spec requires 30.0GiB",
		},
		"past the image GC threshold": {
			free: 16 << 10, total: 100 << 10, gcThreshold: 85,
			want: "past the image GC high threshold of 85%",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := pulltest.NewFixture(t)
			plan := resolve(t, f)
			plan.SpaceRequired = tc.required
			store := newFakeStore(t)
			store.free, store.total = tc.free, tc.total
			opts := options(&instantClock{})
			opts.GCThresholdPercent = tc.gcThreshold
			reported := 0
			got := pull.Pull(context.Background(), plan, store, opts, func(precache.Summary) { reported++ })
			if got.Phase != precache.PhaseFailed || got.Retryable || !strings.Contains(got.Error, tc.want) || pull.ExitCode(got) != precache.ExitUnrecoverable {
				t.Errorf("summary = %+v, want an unrecoverable failure saying %q", got, tc.want)
			}
			if n := store.puts.Load(); n != 0 || got.Pulled != 0 || reported != 0 {
				t.Errorf("%d Puts, %d pulled, %d reports before failing; want none", n, got.Pulled, reported)
			}
		})
	}
}

func TestCheckSpace(t *testing.T) {
	const gib = 1 << 30
	cases := map[string]struct {
		free, total, required, estimate int64
		threshold                       int
		want                            string
	}{
		"enough":                     {free: 40 * gib, total: 100 * gib, required: 30 * gib, estimate: 20 * gib, threshold: 85},
		"exactly the required space": {free: 30 * gib, total: 100 * gib, required: 30 * gib},
		"short of the required":      {free: 29 * gib, total: 100 * gib, required: 30 * gib, want: "29.0GiB free, the spec requires 30.0GiB"},
		"the estimate passes the threshold": {
			free: 20 * gib, total: 100 * gib, estimate: 6 * gib, threshold: 85,
			want: "pulling an estimated 6.0GiB into its 20.0GiB free of 100.0GiB would fill it to 86%, past the image GC high threshold of 85%",
		},
		"no threshold": {free: 20 * gib, total: 100 * gib, estimate: 19 * gib},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := pull.CheckSpace(&fakeStore{free: tc.free, total: tc.total}, tc.required, tc.estimate, tc.threshold)
			if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckSpace() = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestPullReportsProgress(t *testing.T) {
	f := pulltest.NewFixture(t)
	plan := resolve(t, f)
	// The pace in time is tested on its own (TestPace): here the Puts and the reports run
	// in different goroutines, so when a time-paced report comes is not deterministic.
	cases := map[string]struct {
		every    int
		interval time.Duration
		want     []int // images pulled at each report
	}{
		"every 5 images":                  {every: 5, interval: time.Hour, want: []int{0, 5, 10}},
		"every image, not after the last": {every: 1, interval: time.Hour, want: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		"never between the first and end": {every: 1000, interval: time.Hour, want: []int{0}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := clocktesting.NewFakeClock(time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC))
			store := newFakeStore(t)
			opts := options(c)
			opts.Parallel = 1
			opts.ReportEvery, opts.ReportInterval = tc.every, tc.interval
			var pulled []int
			got := pull.Pull(context.Background(), plan, store, opts, func(s precache.Summary) {
				if s.Phase != precache.PhasePulling || s.Run != "run-1" || s.Images != 13 {
					t.Errorf("report %+v, want Pulling 13 images for run-1", s)
				}
				pulled = append(pulled, s.Pulled)
			})
			if got.Phase != precache.PhaseSucceeded {
				t.Fatalf("summary = %+v, want Succeeded", got)
			}
			if diff := cmp.Diff(tc.want, pulled); diff != "" {
				t.Errorf("pulled at each report mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// gatedStore holds its first Puts until parallel of them run at once, and records the most
// Puts that ran at once.
type gatedStore struct {
	*fakeStore
	gate     sync.WaitGroup
	inFlight atomic.Int64
	most     atomic.Int64
	first    atomic.Int64
	parallel int64
	timedOut atomic.Bool
}

func (s *gatedStore) Put(ctx context.Context, ref string, img v1.Image) (int64, error) {
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
	}
	if s.first.Add(1) <= s.parallel {
		s.gate.Done()
		waited := make(chan struct{})
		go func() { s.gate.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-time.After(10 * time.Second):
			s.timedOut.Store(true)
		}
	}
	return s.fakeStore.Put(ctx, ref, img)
}

func TestPullParallelism(t *testing.T) {
	f := pulltest.NewFixture(t)
	plan := resolve(t, f)
	for _, parallel := range []int{1, 4, 8} {
		store := &gatedStore{fakeStore: newFakeStore(t), parallel: int64(parallel)}
		store.gate.Add(parallel)
		opts := options(&instantClock{})
		opts.Parallel = parallel
		got := pull.Pull(context.Background(), plan, store, opts, nil)
		if got.Phase != precache.PhaseSucceeded || store.timedOut.Load() || store.most.Load() != int64(parallel) {
			t.Errorf("parallel %d: %s, timed out %t, at most %d at once; want Succeeded with %d at once",
				parallel, got.Phase, store.timedOut.Load(), store.most.Load(), parallel)
		}
	}
}

func TestRetry(t *testing.T) {
	retryable := pull.MarkRetryable(errors.New("busy"))
	cases := map[string]struct {
		retries   int
		errs      []error
		cancel    bool
		wantCalls int
		wantWaits []time.Duration
	}{
		"success at once":                {errs: []error{nil}, wantCalls: 1},
		"retryable, then success":        {errs: []error{retryable, retryable, nil}, wantCalls: 3, wantWaits: []time.Duration{2 * time.Second, 4 * time.Second}},
		"retryable until out of retries": {retries: 2, errs: []error{retryable, retryable, retryable, nil}, wantCalls: 3, wantWaits: []time.Duration{2 * time.Second, 4 * time.Second}},
		"not retryable":                  {errs: []error{errors.New("no such image"), nil}, wantCalls: 1},
		"no retries":                     {retries: -1, errs: []error{retryable, nil}, wantCalls: 1},
		"cancelled":                      {cancel: true, errs: []error{retryable, nil}, wantCalls: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				cancel()
			}
			c := &instantClock{}
			calls := 0
			err := pull.Options{Retries: tc.retries, Clock: c}.Retry(ctx, func() error {
				calls++
				return tc.errs[calls-1]
			})
			if calls != tc.wantCalls || !errors.Is(err, tc.errs[calls-1]) {
				t.Errorf("Retry() = %v after %d calls, want the error of call %d", err, calls, tc.wantCalls)
			}
			if diff := cmp.Diff(tc.wantWaits, c.Waits()); diff != "" {
				t.Errorf("waits mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultBackoff(t *testing.T) {
	want := map[int]time.Duration{0: 2 * time.Second, 1: 2 * time.Second, 2: 4 * time.Second, 3: 8 * time.Second, 5: 32 * time.Second, 6: time.Minute, 7: time.Minute, 100: time.Minute}
	for attempt, d := range want {
		if got := pull.DefaultBackoff(attempt); got != d {
			t.Errorf("DefaultBackoff(%d) = %v, want %v", attempt, got, d)
		}
	}
}
