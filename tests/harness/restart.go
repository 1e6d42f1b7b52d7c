package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/cgu-operator/cgu-operator/pkg/operator"
)

// Lease timings of the replicas StartReplicas starts: a killed leader is replaced within
// about ReplicaLeaseDuration.
const (
	ReplicaLeaseDuration = 3 * time.Second
	ReplicaRenewDeadline = 2 * time.Second
	ReplicaRetryPeriod   = 500 * time.Millisecond
)

// errCut is what a killed operator's requests fail with.
var errCut = errors.New("the operator was killed: its connection to the hub is cut")

// operators are the operator managers of an Env: the current one (Start's, then each
// restart's), the options it was built with, and how many were built.
type operators struct {
	mu      sync.Mutex
	log     logr.Logger
	opts    operator.Options
	current *Operator
	started int
}

// Operator is one operator manager running on the hub, built by operator.New as the
// production binary builds it, in its own context. Its requests pass through a transport the
// harness can cut (Kill) and that counts what it writes.
type Operator struct {
	// Name tells the managers of one Env apart in logs: operator-1, operator-2, ...
	Name string

	mgr manager.Manager
	cut atomic.Bool
	// partitioned fails the manager's requests while it runs on (Partition, Heal).
	partitioned atomic.Bool
	writes      atomic.Int64
	// throttle, when set, makes the hub answer some requests 429 and delay the others.
	throttle atomic.Pointer[Throttle]
	stop     chan struct{}
	once     sync.Once
	done     chan struct{}
}

// startFirstOperator starts the operator of Start.
func (e *Env) startFirstOperator(log logr.Logger, opts operator.Options) error {
	e.operators.mu.Lock()
	defer e.operators.mu.Unlock()
	e.operators.log, e.operators.opts = log, opts
	o, err := e.runOperator(opts)
	if err != nil {
		return err
	}
	e.operators.current = o
	return nil
}

// runOperator builds and starts a manager; the caller holds e.operators.mu. The hub waits
// for it when it stops. Every manager after the first skips controller-runtime's check that
// controller names are unique in the process.
func (e *Env) runOperator(opts operator.Options) (*Operator, error) {
	e.operators.started++
	opts.SkipNameValidation = opts.SkipNameValidation || e.operators.started > 1
	o := &Operator{Name: fmt.Sprintf("operator-%d", e.operators.started), stop: make(chan struct{}), done: make(chan struct{})}
	cfg := rest.CopyConfig(e.Hub.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &faultyTransport{next: rt, op: o} })
	mgr, err := operator.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	o.mgr = mgr
	log := e.operators.log.WithValues("operator", o.Name)
	e.Hub.Go(func(hubCtx context.Context) {
		defer close(o.done)
		ctx, cancel := context.WithCancel(hubCtx)
		defer cancel()
		go func() {
			select {
			case <-o.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		if err := mgr.Start(ctx); err != nil && !o.cut.Load() {
			log.Error(err, "The operator stopped")
		}
	})
	return o, nil
}

// Operator returns the operator running now: Start's, or the last RestartOperator's; nil
// after StopOperator or StartReplicas.
func (e *Env) Operator() *Operator {
	e.operators.mu.Lock()
	defer e.operators.mu.Unlock()
	return e.operators.current
}

// StopOperator stops the current operator, as Operator.Stop (kill false) or Operator.Kill
// (kill true) does, and waits until it stopped. Nothing runs the rollouts until
// StartOperator.
func (e *Env) StopOperator(kill bool) error {
	e.operators.mu.Lock()
	o := e.operators.current
	e.operators.current = nil
	e.operators.mu.Unlock()
	if o == nil {
		return nil
	}
	if kill {
		return o.Kill()
	}
	return o.Stop()
}

// StartOperator starts a new operator, with the options of Start, as the current one. It
// fails while one is running.
func (e *Env) StartOperator() (*Operator, error) {
	e.operators.mu.Lock()
	defer e.operators.mu.Unlock()
	if e.operators.current != nil {
		return nil, fmt.Errorf("%s is still running", e.operators.current.Name)
	}
	o, err := e.runOperator(e.operators.opts)
	if err != nil {
		return nil, err
	}
	e.operators.current = o
	return o, nil
}

// RestartOperator stops the current operator (killing it when kill is true), waits until
// it stopped, and starts a new one with the same options on the same hub: what a restarted
// or rescheduled operator pod does.
func (e *Env) RestartOperator(kill bool) (*Operator, error) {
	if err := e.StopOperator(kill); err != nil {
		return nil, err
	}
	return e.StartOperator()
}

// StartReplicas stops the current operator and starts n replicas with the options of Start
// and leader election on, their lease in namespace (created when missing), with the
// shortened timings ReplicaLeaseDuration, ReplicaRenewDeadline and ReplicaRetryPeriod.
func (e *Env) StartReplicas(ctx context.Context, n int, namespace string) ([]*Operator, error) {
	if err := e.StopOperator(false); err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := e.Hub.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	e.operators.mu.Lock()
	defer e.operators.mu.Unlock()
	opts := e.operators.opts
	opts.LeaderElect, opts.LeaderElectionNamespace = true, namespace
	opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod = ReplicaLeaseDuration, ReplicaRenewDeadline, ReplicaRetryPeriod
	out := make([]*Operator, 0, n)
	for range n {
		o, err := e.runOperator(opts)
		if err != nil {
			for _, started := range out {
				_ = started.Stop()
			}
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// Stop stops the manager as a SIGTERM does: its context is cancelled, running reconciles
// finish, the leader lease (if held) is released. It returns once the manager stopped.
func (o *Operator) Stop() error {
	o.once.Do(func() { close(o.stop) })
	<-o.done
	return nil
}

// Kill stops the manager as a crash does: first its connection to the hub is cut, so that
// nothing it still tries reaches the hub (a reconcile half done stays half done, the leader
// lease is not released and must expire), then it is stopped. It returns once the manager
// stopped.
func (o *Operator) Kill() error {
	o.cut.Store(true)
	return o.Stop()
}

// Partition cuts the manager off the hub while it runs on, as a network partition does:
// every request it sends fails, its lease renewals included, until Heal. Watches it had open
// stay open (a partition would end them too; nothing is written through a watch).
func (o *Operator) Partition() { o.partitioned.Store(true) }

// Heal ends a Partition: the manager's requests reach the hub again, if it still runs.
func (o *Operator) Heal() { o.partitioned.Store(false) }

// Stopped is closed once the manager stopped.
func (o *Operator) Stopped() <-chan struct{} { return o.done }

// Leading reports whether the manager was elected leader (always true without leader
// election) and runs.
func (o *Operator) Leading() bool {
	select {
	case <-o.done:
		return false
	default:
	}
	select {
	case <-o.mgr.Elected():
		return true
	default:
		return false
	}
}

// Writes counts the requests that changed something on the hub, other than the leader
// lease and events, that the manager sent (including those the hub refused).
func (o *Operator) Writes() int64 { return o.writes.Load() }

// faultyTransport carries an operator's requests to the hub, counts its writes, and fails
// every request once the operator is killed.
type faultyTransport struct {
	next http.RoundTripper
	op   *Operator
}

func (t *faultyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.op.cut.Load() || t.op.partitioned.Load() {
		drain(req)
		return nil, errCut
	}
	if th := t.op.throttle.Load(); th != nil {
		if resp := th.answer(req); resp != nil {
			return resp, nil
		}
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if !strings.Contains(req.URL.Path, "/leases/") && !strings.HasSuffix(req.URL.Path, "/leases") &&
			!strings.Contains(req.URL.Path, "/events") {
			t.op.writes.Add(1)
		}
	}
	return t.next.RoundTrip(req)
}

func drain(req *http.Request) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
}

// Throttle is an overloaded hub as one operator sees it: a share of its requests answered
// 429 Too Many Requests with a Retry-After of one second (API Priority and Fairness
// rejecting them), the others delayed by up to MaxDelay (queued) before they reach the hub.
// Watches are left alone: a throttled hub slows requests, it does not cut open streams.
type Throttle struct {
	// Rejected is the share of requests answered 429, in [0, 1].
	Rejected float64
	MaxDelay time.Duration

	mu   sync.Mutex
	rand *rand.Rand
	// Rejections counts the 429s answered.
	Rejections atomic.Int64
}

// NewThrottle is a Throttle drawing from a fixed seed, so that a run can be played again.
func NewThrottle(rejected float64, maxDelay time.Duration, seed uint64) *Throttle {
	// A seeded generator on purpose: the faults of a run can be played again.
	return &Throttle{Rejected: rejected, MaxDelay: maxDelay, rand: rand.New(rand.NewPCG(seed, seed))} //nolint:gosec // G404: reproducible test faults, not secrets
}

// answer returns the 429 for a rejected request, or nil after the request's delay.
func (th *Throttle) answer(req *http.Request) *http.Response {
	if req.URL.Query().Get("watch") == "true" {
		return nil
	}
	th.mu.Lock()
	reject := th.rand.Float64() < th.Rejected
	delay := time.Duration(th.rand.Int64N(int64(th.MaxDelay) + 1))
	th.mu.Unlock()
	if reject {
		drain(req)
		th.Rejections.Add(1)
		body := `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too many requests","reason":"TooManyRequests","code":429}`
		return &http.Response{StatusCode: http.StatusTooManyRequests, Status: "429 Too Many Requests", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Retry-After": []string{"1"}, "Content-Type": []string{"application/json"}},
			Body:   io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: req}
	}
	select {
	case <-time.After(delay):
	case <-req.Context().Done():
	}
	return nil
}

// Throttled makes the hub throttle this operator's requests, nil to stop.
func (o *Operator) Throttled(th *Throttle) { o.throttle.Store(th) }

// Supervisor keeps n replicas running as a Deployment does: a replica whose manager stops
// by itself (a lost leader lease ends the process) is replaced by a new one, throttled as the
// others are.
type Supervisor struct {
	env      *Env
	ns       string
	throttle *Throttle
	mu       sync.Mutex
	replicas []*Operator
	// Replaced counts the replicas that stopped by themselves and were replaced.
	Replaced atomic.Int64
	stop     chan struct{}
	done     chan struct{}
}

// SuperviseReplicas starts n replicas as StartReplicas does, each throttled by th (nil: not
// throttled), and replaces any that stops until the Supervisor is stopped.
func (e *Env) SuperviseReplicas(ctx context.Context, n int, namespace string, th *Throttle) (*Supervisor, error) {
	replicas, err := e.StartReplicas(ctx, n, namespace)
	if err != nil {
		return nil, err
	}
	sv := &Supervisor{env: e, ns: namespace, throttle: th, replicas: replicas, stop: make(chan struct{}), done: make(chan struct{})}
	for _, r := range replicas {
		r.Throttled(th)
	}
	go sv.run()
	return sv, nil
}

func (sv *Supervisor) run() {
	defer close(sv.done)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-sv.stop:
			return
		case <-tick.C:
		}
		sv.mu.Lock()
		for i, r := range sv.replicas {
			select {
			case <-r.Stopped():
			default:
				continue
			}
			sv.env.operators.mu.Lock()
			o, err := sv.env.runOperator(sv.replicaOptions())
			sv.env.operators.mu.Unlock()
			if err != nil {
				continue // tried again at the next tick
			}
			o.Throttled(sv.throttle)
			sv.replicas[i] = o
			sv.Replaced.Add(1)
		}
		sv.mu.Unlock()
	}
}

// replicaOptions are StartReplicas' options.
func (sv *Supervisor) replicaOptions() operator.Options {
	opts := sv.env.operators.opts
	opts.LeaderElect, opts.LeaderElectionNamespace = true, sv.ns
	opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod = ReplicaLeaseDuration, ReplicaRenewDeadline, ReplicaRetryPeriod
	return opts
}

// Replicas are the replicas running now.
func (sv *Supervisor) Replicas() []*Operator {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return slices.Clone(sv.replicas)
}

// Stop stops supervising, then stops every replica.
func (sv *Supervisor) Stop() {
	close(sv.stop)
	<-sv.done
	for _, r := range sv.Replicas() {
		_ = r.Stop()
	}
}
