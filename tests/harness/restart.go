package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
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

	mgr    manager.Manager
	cut    atomic.Bool
	writes atomic.Int64
	stop   chan struct{}
	once   sync.Once
	done   chan struct{}
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
	if t.op.cut.Load() {
		if req.Body != nil {
			_, _ = io.Copy(io.Discard, req.Body)
			_ = req.Body.Close()
		}
		return nil, errCut
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
