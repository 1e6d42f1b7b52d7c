// Package sim simulates the spokes of a fleet for the hub test world (scale mode): one
// in-memory spoke per managed cluster, evaluating the ConfigurationPolicy templates of the
// policies replicated to its cluster namespace and writing the replicated policy status the
// way the real governance framework's status-sync does, with a simulated cluster-version
// operator that carries out ClusterVersion updates over time. A metrics endpoint
// (ServeMetrics, metrics.go) serves each spoke's series as ACM Observability collects them,
// for a real Prometheus to scrape.
package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/tests/world"
)

// RootPolicyLabel marks a replicated policy with its root policy's "<namespace>.<name>".
const RootPolicyLabel = "policy.open-cluster-management.io/root-policy"

// Options configure a simulator.
type Options struct {
	// Clock drives the simulated operators; the default is the real clock.
	Clock clock.WithTicker
	// Updates is what the update service offers; nil offers nothing.
	Updates UpdateSource
	// Workers is the number of spokes evaluated at once (default 8).
	Workers int
	// Logger receives errors that are retried.
	Logger logr.Logger
	// JobRunner plays the pods of spoke Jobs (jobs.go); nil completes each after JobDuration.
	JobRunner JobRunner
	// JobDuration is how long a Job's pod runs without a JobRunner (default 1s).
	JobDuration time.Duration
	// JobWorkers bounds the JobRunner calls running at once (default 16).
	JobWorkers int
	// PollViews refreshes ManagedClusterViews only as the real agent does, every
	// updateIntervalSeconds; by default they also follow every change of the spoke.
	PollViews bool
	// ActionTTL is how long the hub keeps a completed ManagedClusterAction (default 60s, as
	// ACM's gc controller; negative keeps them).
	ActionTTL time.Duration
}

// Simulator runs the simulated spokes of a hub.
type Simulator struct {
	hub      *world.Hub
	opts     Options
	cache    cache.Cache
	queue    workqueue.TypedRateLimitingInterface[string]
	mu       sync.RWMutex
	spokes   map[string]*Spoke
	prepared preparedCache
	agents   *agents
}

// Start starts a simulator on hub: it watches replicated policies and runs until the hub
// stops (the hub waits for it).
func Start(ctx context.Context, hub *world.Hub, opts Options) (*Simulator, error) {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Workers == 0 {
		opts.Workers = 8
	}
	replicated, err := labels.NewRequirement(RootPolicyLabel, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	c, err := cache.New(hub.Config, cache.Options{
		Scheme: hub.Scheme,
		ByObject: map[client.Object]cache.ByObject{
			&policyv1.Policy{}: {Label: labels.NewSelector().Add(*replicated)},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("simulator cache: %w", err)
	}
	s := &Simulator{
		hub: hub, opts: opts, cache: c, spokes: map[string]*Spoke{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "spokes", Clock: opts.Clock}),
	}
	informer, err := c.GetInformer(ctx, &policyv1.Policy{})
	if err != nil {
		return nil, fmt.Errorf("replicated policy informer: %w", err)
	}
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    s.enqueueObject,
		UpdateFunc: func(_, obj any) { s.enqueueObject(obj) },
		DeleteFunc: s.enqueueObject,
	}); err != nil {
		return nil, err
	}
	hub.Go(func(ctx context.Context) { _ = c.Start(ctx) })
	if !c.WaitForCacheSync(ctx) {
		return nil, errors.New("simulator cache did not sync")
	}
	for range opts.Workers {
		hub.Go(s.work)
	}
	if err := s.startViewsAndActions(ctx); err != nil {
		return nil, err
	}
	hub.Go(func(ctx context.Context) {
		<-ctx.Done()
		s.queue.ShutDown()
	})
	return s, nil
}

func (s *Simulator) enqueueObject(obj any) {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if o, ok := obj.(client.Object); ok {
		s.queue.Add(o.GetNamespace())
	}
}

func (s *Simulator) spoke(name string) *Spoke {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.spokes[name]
}

func (s *Simulator) work(ctx context.Context) {
	for {
		name, shutdown := s.queue.Get()
		if shutdown {
			return
		}
		again, err := s.sync(ctx, name)
		switch {
		case err != nil && ctx.Err() == nil:
			s.opts.Logger.Error(err, "Simulated spoke failed a sync, retrying", "cluster", name)
			s.queue.AddRateLimited(name)
		case again > 0:
			s.queue.Forget(name)
			s.queue.AddAfter(name, again)
		default:
			s.queue.Forget(name)
		}
		s.queue.Done(name)
	}
}

// sync runs one round on a spoke: the simulated operators step, the policies replicated to
// it are evaluated (enforcing what they enforce) and the replicated policy statuses that
// changed are written to the hub. When enforcement changed the spoke, another round follows.
func (s *Simulator) sync(ctx context.Context, name string) (time.Duration, error) {
	sp := s.spoke(name)
	if sp == nil {
		return 0, nil
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if !sp.reachable {
		return 0, nil
	}
	var policies policyv1.PolicyList
	if err := s.cache.List(ctx, &policies, client.InNamespace(name)); err != nil {
		return 0, err
	}
	now := s.opts.Clock.Now()
	again, err := sp.stepOperators(now)
	if err != nil {
		return 0, err
	}
	sp.changedSince()
	// The oldest policy keeps a template name that several claim, as the first one synced
	// to the spoke does.
	slices.SortStableFunc(policies.Items, func(a, b policyv1.Policy) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	claimed := map[string]string{}
	results := make([]evaluated, len(policies.Items))
	for i := range policies.Items {
		results[i] = sp.evaluate(&policies.Items[i], &s.prepared, claimed, now)
	}
	if sp.changedSince() {
		// Enforcement changed the spoke: the operators react and the policies are evaluated
		// again in a new round, as the real controllers react to each other's writes.
		defer s.queue.Add(name)
	}
	// The klusterlet's claim controller is an agent of its own: its failure to reach the
	// hub holds nothing else back.
	errs := []error{s.reportVersion(ctx, sp)}
	for i := range policies.Items {
		if err := s.writeStatus(ctx, &policies.Items[i], results[i].status); err != nil {
			errs = append(errs, err)
			continue
		}
		sp.commit(results[i])
	}
	return again, errors.Join(errs...)
}

// reportVersion updates the cluster's version claim on its ManagedCluster once an update
// completed, as the klusterlet's claim controller does.
func (s *Simulator) reportVersion(ctx context.Context, sp *Spoke) error {
	v := sp.runningVersion()
	if v == "" || v == sp.claimed {
		return nil
	}
	mc := &clusterv1.ManagedCluster{}
	if err := s.hub.Client.Get(ctx, client.ObjectKey{Name: sp.name}, mc); err != nil {
		return client.IgnoreNotFound(err)
	}
	claims := slices.DeleteFunc(mc.Status.ClusterClaims, func(c clusterv1.ManagedClusterClaim) bool { return c.Name == ClaimVersion })
	mc.Status.ClusterClaims = append(claims, clusterv1.ManagedClusterClaim{Name: ClaimVersion, Value: v})
	if err := s.hub.Client.Status().Update(ctx, mc); client.IgnoreNotFound(err) != nil {
		return err
	}
	sp.claimed = v
	return nil
}

// ClaimVersion is the cluster claim of the version a cluster runs.
const ClaimVersion = "version.openshift.io"

func (s *Simulator) writeStatus(ctx context.Context, p *policyv1.Policy, status policyv1.PolicyStatus) error {
	if equality.Semantic.DeepEqual(p.Status, status) {
		return nil
	}
	updated := p.DeepCopy()
	updated.Status = status
	err := s.hub.Client.Status().Update(ctx, updated)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// AddSpokes registers simulated spokes for clusters already on the hub (world.Hub
// AddClusters) and syncs each once.
func (s *Simulator) AddSpokes(specs ...SpokeSpec) error {
	now := s.opts.Clock.Now()
	for _, spec := range specs {
		sp, err := newSpoke(spec, s.opts.Updates, now)
		if err != nil {
			return err
		}
		sp.operators = append(sp.operators, s.agents.operators(spec.Name)...)
		s.mu.Lock()
		s.spokes[spec.Name] = sp
		s.mu.Unlock()
		s.queue.Add(spec.Name)
	}
	return nil
}

// RemoveSpoke stops simulating a spoke, as when its cluster is detached (world.Hub
// RemoveCluster): it reports nothing more.
func (s *Simulator) RemoveSpoke(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.spokes, name)
}

// SetBehaviour changes how a spoke's cluster-version operator carries out updates, for
// example to make it stall or fail.
func (s *Simulator) SetBehaviour(name string, b Behaviour) {
	if sp := s.spoke(name); sp != nil {
		sp.mu.Lock()
		sp.cvo.Behaviour = b
		sp.mu.Unlock()
		s.queue.Add(name)
	}
}

// SetReachable makes a spoke stop (false) or resume (true) reporting, and sets its
// ManagedCluster's Available condition as registration would: Unknown while unreachable.
func (s *Simulator) SetReachable(ctx context.Context, name string, reachable bool) error {
	if err := s.setAgent(name, func(sp *Spoke) { sp.reachable = reachable }); err != nil {
		return err
	}
	status := metav1.ConditionUnknown
	if reachable {
		status = metav1.ConditionTrue
		s.queue.Add(name)
	}
	return s.hub.SetAvailable(ctx, name, status)
}

// Silence makes a spoke's work-manager add-on stop (true) or resume (false) answering views
// and actions, while the cluster stays Available and its policies report, as when the
// add-on is down; TALM's scenarios play the add-on this way, writing the views' status
// themselves.
func (s *Simulator) Silence(name string, silent bool) error {
	if err := s.setAgent(name, func(sp *Spoke) { sp.silent = silent }); err != nil {
		return err
	}
	if !silent {
		s.queue.Add(name)
	}
	return nil
}

// setAgent changes how a spoke's agents answer, under its lock.
func (s *Simulator) setAgent(name string, set func(*Spoke)) error {
	sp := s.spoke(name)
	if sp == nil {
		return fmt.Errorf("no simulated spoke %q", name)
	}
	sp.mu.Lock()
	set(sp)
	sp.mu.Unlock()
	return nil
}

// Poke makes the simulator sync a spoke now, for example after a test changed its objects.
func (s *Simulator) Poke(name string) { s.queue.Add(name) }

// ClusterVersion returns a copy of a spoke's ClusterVersion.
func (s *Simulator) ClusterVersion(name string) (*configv1.ClusterVersion, error) {
	sp := s.spoke(name)
	if sp == nil {
		return nil, fmt.Errorf("no simulated spoke %q", name)
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.clusterVersion()
}

// DesiredVersion returns the version a spoke's ClusterVersion asks for in
// spec.desiredUpdate, "" when it asks for none.
func (s *Simulator) DesiredVersion(name string) (string, error) {
	cv, err := s.ClusterVersion(name)
	if err != nil || cv.Spec.DesiredUpdate == nil {
		return "", err
	}
	return cv.Spec.DesiredUpdate.Version, nil
}
