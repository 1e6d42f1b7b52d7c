// Package world is the hub test world every controller test, end-to-end scenario, the demo
// and the benchmarks run on: a real kube-apiserver and etcd (envtest) with the real Open
// Cluster Management CRDs, the real governance-policy-propagator and placement controller
// running in-process, and a fleet of managed clusters made on demand. Spokes are added by
// the simulator (tests/sim) or as real spokes (tests/world/realspoke).
package world

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/cgu-operator/cgu-operator/tests/testenv"
)

// Options configure a hub.
type Options struct {
	// Logger receives the in-process controllers' logs; the zero value discards them.
	Logger logr.Logger
	// Propagator tunes the governance-policy-propagator.
	Propagator PropagatorOptions
	// WithoutPlacementController leaves Placements without decisions, for tests that write
	// PlacementDecisions themselves.
	WithoutPlacementController bool
	// ClientQPS and ClientBurst bound the hub client the world's own helpers use (default
	// 500 and 1000, enough to create thousands of clusters quickly).
	ClientQPS   float32
	ClientBurst int
}

// Hub is a running hub.
type Hub struct {
	// Config reaches the hub's kube-apiserver as a cluster admin.
	Config *rest.Config
	// Client is an uncached client with every kind of the world (NewScheme).
	Client client.Client
	// Scheme is the scheme of Client.
	Scheme *runtime.Scheme

	env    *envtest.Environment
	ctx    context.Context //nolint:containedctx // the hub's lifetime, handed to what runs on it
	cancel context.CancelFunc
	wg     sync.WaitGroup
	log    logr.Logger
	once   sync.Once
	err    error
}

// StartHub starts a kube-apiserver and etcd with the hub CRDs and ours installed, then the
// propagator and the placement controller. On error, whatever was started is stopped.
func StartHub(ctx context.Context, opts Options) (*Hub, error) {
	ours, err := testenv.OperatorCRDs()
	if err != nil {
		return nil, err
	}
	hubCRDs, err := testenv.HubCRDs()
	if err != nil {
		return nil, err
	}
	env, cfg, err := testenv.Start(append(hubCRDs, ours)...)
	if err != nil {
		return nil, err
	}
	h := &Hub{Config: cfg, Scheme: NewScheme(), env: env, log: opts.Logger}
	if err := h.start(ctx, opts); err != nil {
		return nil, errors.Join(err, h.Stop())
	}
	return h, nil
}

func (h *Hub) start(ctx context.Context, opts Options) error {
	clientCfg := rest.CopyConfig(h.Config)
	clientCfg.QPS, clientCfg.Burst = 500, 1000
	if opts.ClientQPS > 0 {
		clientCfg.QPS, clientCfg.Burst = opts.ClientQPS, opts.ClientBurst
	}
	c, err := client.New(clientCfg, client.Options{Scheme: h.Scheme})
	if err != nil {
		return fmt.Errorf("hub client: %w", err)
	}
	h.Client = c

	// The controllers live as long as the hub, not as long as the caller's context.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h.ctx, h.cancel = runCtx, cancel
	if err := startPropagator(runCtx, h.Config, opts.Propagator, h.log.WithName("propagator"), &h.wg); err != nil {
		return err
	}
	if !opts.WithoutPlacementController {
		if err := startPlacement(runCtx, h.Config, h.log.WithName("placement"), &h.wg); err != nil {
			return err
		}
	}
	return nil
}

// Go runs f in the background until the hub stops: f must return once ctx is done. Stop
// waits for it before it stops the kube-apiserver, so that nothing talks to a dead server.
func (h *Hub) Go(f func(ctx context.Context)) {
	h.wg.Go(func() { f(h.ctx) })
}

// KubeConfig returns a kubeconfig reaching the hub as a cluster admin (system:masters), for
// a process run against the hub, such as the operator's binary.
func (h *Hub) KubeConfig() ([]byte, error) {
	user, err := h.env.AddUser(envtest.User{Name: "cgu-operator-binary", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, fmt.Errorf("adding a hub user: %w", err)
	}
	return user.KubeConfig()
}

// Stop stops the controllers, waits for them, then stops the kube-apiserver and etcd. It is
// safe to call more than once.
func (h *Hub) Stop() error {
	h.once.Do(func() {
		if h.cancel != nil {
			h.cancel()
		}
		h.wg.Wait()
		h.err = testenv.Stop(h.env)
	})
	return h.err
}

// ControlPlaneLog returns the last lines the hub's kube-apiserver and etcd wrote, for a
// spec that fails to report.
func (h *Hub) ControlPlaneLog() string { return testenv.ControlPlaneLog(h.env) }

// WriteKubeconfig writes a kubeconfig reaching the hub as its cluster admin to path, for
// kubectl and the plugin.
func (h *Hub) WriteKubeconfig(path string) error {
	return testenv.WriteKubeconfig(h.Config, "hub", path)
}
