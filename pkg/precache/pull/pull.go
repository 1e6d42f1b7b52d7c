package pull

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"k8s.io/utils/clock"

	"github.com/cgu-operator/cgu-operator/pkg/precache"
)

// Defaults of Options, and of the precache program's flags.
const (
	DefaultParallel           = 4
	DefaultRetries            = 3
	DefaultReportEvery        = 10
	DefaultReportInterval     = 15 * time.Second
	DefaultGCThresholdPercent = 85
)

// Options tune Pull. A zero field means its default.
type Options struct {
	// Run names the run in the summaries.
	Run string
	// Source fetches the images; an anonymous Remote when nil.
	Source Source
	// Parallel bounds the images checked or pulled at once; DefaultParallel when zero.
	Parallel int
	// Retries is how many times a step that failed for a retryable reason is tried again;
	// DefaultRetries when zero, none when negative.
	Retries int
	// Backoff is the wait before trying again after the attempt-th failure (1, 2, ...);
	// DefaultBackoff when nil.
	Backoff func(attempt int) time.Duration
	// Clock times the back-off waits (Clock.After) and the progress reports; the real
	// clock when nil.
	Clock clock.Clock
	// GCThresholdPercent is the kubelet's image GC high threshold: the pull must not fill
	// the store's filesystem past it. Zero turns the check off.
	GCThresholdPercent int
	// ReportEvery and ReportInterval space the progress reports: one when that many images
	// were handled or that much time passed since the last one, whichever comes first.
	// DefaultReportEvery and DefaultReportInterval when zero.
	ReportEvery    int
	ReportInterval time.Duration
}

// DefaultBackoff doubles the wait from 2 seconds after each failure, up to a minute.
func DefaultBackoff(attempt int) time.Duration {
	const first, ceiling = 2 * time.Second, time.Minute
	if attempt > 6 {
		return ceiling
	}
	return min(first<<max(attempt-1, 0), ceiling)
}

// withDefaults is o with its zero fields set to their defaults.
func (o Options) withDefaults() Options {
	if o.Source == nil {
		o.Source = Remote{}
	}
	if o.Parallel <= 0 {
		o.Parallel = DefaultParallel
	}
	if o.Retries == 0 {
		o.Retries = DefaultRetries
	}
	if o.Backoff == nil {
		o.Backoff = DefaultBackoff
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.ReportEvery <= 0 {
		o.ReportEvery = DefaultReportEvery
	}
	if o.ReportInterval <= 0 {
		o.ReportInterval = DefaultReportInterval
	}
	return o
}

// Retry calls try until it succeeds, fails for a reason that is not retryable, has been
// retried o.Retries times or ctx ends, waiting o.Backoff between attempts. It returns the
// last error.
func (o Options) Retry(ctx context.Context, try func() error) error {
	o = o.withDefaults()
	for attempt := 1; ; attempt++ {
		err := try()
		if err == nil || !IsRetryable(err) || attempt > o.Retries || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-o.Clock.After(o.Backoff(attempt)):
		}
	}
}

// item is one image of the plan: present in the store, or fetched (its manifest) for pulling,
// or failed.
type item struct {
	ref     string
	present bool
	img     v1.Image
	size    int64
	err     error
}

// failure is an image that could not be checked or pulled, and why.
type failure struct {
	ref string
	err error
}

// puller carries one Pull: its options, the summary so far and the progress reports.
type puller struct {
	store   Store
	opts    Options
	report  func(precache.Summary)
	summary precache.Summary
	failed  []failure
	pace    pace
}

// pace spaces the progress reports: one is due when every images were handled or interval
// passed since the last one.
type pace struct {
	every    int
	interval time.Duration
	clock    clock.PassiveClock
	// handled counts the images handled since the last report, made at last.
	handled int
	last    time.Time
}

// reported records a report made now.
func (p *pace) reported() {
	p.handled = 0
	p.last = p.clock.Now()
}

// handledOne records an image handled and tells whether a report is due.
func (p *pace) handledOne() bool {
	p.handled++
	return p.handled >= p.every || p.clock.Since(p.last) >= p.interval
}

// Pull pulls into store the images of the plan it does not hold yet. It first checks every
// image (present, or fetch its manifest) and, when some are missing, that the store has the
// space the plan requires and room for their estimated size under opts.GCThresholdPercent;
// then it pulls them, opts.Parallel at a time, retrying retryable failures. It calls report,
// when not nil, with the summary in phase Pulling once the images are checked and then as
// opts.ReportEvery and opts.ReportInterval allow, from the calling goroutine. It returns the
// final summary: Succeeded, or Failed naming the images that could not be pulled (at most
// precache.MaxListed), with Retryable when every failure may pass on another run. It pulls
// every image it can even when some fail.
func Pull(ctx context.Context, plan Plan, store Store, opts Options, report func(precache.Summary)) precache.Summary {
	p := &puller{store: store, opts: opts.withDefaults(), report: report}
	p.pace = pace{every: p.opts.ReportEvery, interval: p.opts.ReportInterval, clock: p.opts.Clock}
	p.summary = precache.Summary{Run: opts.Run, Phase: precache.PhasePulling, Images: len(plan.Images), Excluded: plan.Excluded}
	missing, estimate := p.inspectAll(ctx, plan.Images)
	p.summary.ToPull = estimate
	if len(missing) > 0 {
		if err := CheckSpace(store, plan.SpaceRequired, estimate, p.opts.GCThresholdPercent); err != nil {
			return Failure(p.snapshot(), err)
		}
	}
	p.emit()
	p.pullAll(ctx, missing)
	return p.final()
}

// inspectAll checks every image and returns those to pull and their estimated total size.
func (p *puller) inspectAll(ctx context.Context, refs []string) (missing []item, estimate int64) {
	items := make([]item, len(refs))
	forEach(len(refs), p.opts.Parallel, func(i int) { items[i] = p.inspect(ctx, refs[i]) }, func(int) {})
	for _, it := range items {
		switch {
		case it.err != nil:
			p.failed = append(p.failed, failure{ref: it.ref, err: it.err})
		case it.present:
			p.summary.Present++
		default:
			missing = append(missing, it)
			estimate += it.size
		}
	}
	return missing, estimate
}

// inspect tells whether the store has ref and, when it does not, fetches its manifest.
func (p *puller) inspect(ctx context.Context, ref string) item {
	var present bool
	err := p.opts.Retry(ctx, func() error {
		var err error
		present, err = p.store.Has(ctx, ref)
		return err
	})
	if err != nil {
		return item{ref: ref, err: fmt.Errorf("checking whether the store has %s: %w", ref, err)}
	}
	if present {
		return item{ref: ref, present: true}
	}
	it := item{ref: ref}
	it.err = p.opts.Retry(ctx, func() error {
		var err error
		if it.img, err = p.opts.Source.Image(ctx, ref); err != nil {
			return err
		}
		it.size, err = ImageSize(it.img)
		return err
	})
	return it
}

// pullAll pulls the missing images, counting and reporting as they finish.
func (p *puller) pullAll(ctx context.Context, missing []item) {
	bytes := make([]int64, len(missing))
	errs := make([]error, len(missing))
	work := func(i int) {
		errs[i] = p.opts.Retry(ctx, func() error {
			var err error
			bytes[i], err = p.store.Put(ctx, missing[i].ref, missing[i].img)
			return err
		})
	}
	handled := 0
	done := func(i int) {
		handled++
		if errs[i] != nil {
			p.failed = append(p.failed, failure{ref: missing[i].ref, err: errs[i]})
		} else {
			p.summary.Pulled++
			p.summary.Bytes += bytes[i]
		}
		if p.pace.handledOne() && handled < len(missing) {
			p.emit()
		}
	}
	forEach(len(missing), p.opts.Parallel, work, done)
}

// emit reports the summary so far.
func (p *puller) emit() {
	p.pace.reported()
	if p.report != nil {
		p.report(p.snapshot())
	}
}

// snapshot is the summary so far, naming the failed images.
func (p *puller) snapshot() precache.Summary {
	s := p.summary
	sort.Slice(p.failed, func(i, j int) bool { return p.failed[i].ref < p.failed[j].ref })
	for i := 0; i < len(p.failed) && i < precache.MaxListed; i++ {
		s.Failed = append(s.Failed, p.failed[i].ref)
	}
	return s
}

// final is the summary at the end: Succeeded, or Failed with the first failure's error,
// retryable when every failure is.
func (p *puller) final() precache.Summary {
	s := p.snapshot()
	if len(p.failed) == 0 {
		s.Phase = precache.PhaseSucceeded
		return s
	}
	err := p.failed[0].err
	if len(p.failed) > 1 {
		err = fmt.Errorf("%d images could not be pulled, the first: %w", len(p.failed), err)
	}
	s = Failure(s, err)
	s.Retryable = true
	for _, f := range p.failed {
		s.Retryable = s.Retryable && IsRetryable(f.err)
	}
	return s
}

// forEach calls work on each index below n, at most workers at once, and done in the
// calling goroutine each time one returns, in the order they return.
func forEach(n, workers int, work func(i int), done func(i int)) {
	if n == 0 {
		return
	}
	next := make(chan int)
	finished := make(chan int, n)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for i := range next {
				work(i)
				finished <- i
			}
		})
	}
	go func() {
		for i := range n {
			next <- i
		}
		close(next)
	}()
	for range n {
		done(<-finished)
	}
	wg.Wait()
}
