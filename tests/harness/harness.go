// Package harness starts what the operator's suites and the demo run the operator on: the
// hub test world (tests/world), simulated spokes (tests/sim) and the operator itself, built
// by the production operator.New, with a fake clock the suites move.
package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"k8s.io/utils/ptr"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/operator"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/world"
	"github.com/cgu-operator/cgu-operator/tests/world/graphserver"
)

// The policy namespace, the versions fleets upgrade between and their channel.
const (
	PolicyNamespace = "policies"
	From            = "4.16.10"
	To              = "4.16.12"
	Channel         = "stable-4.16"
)

// The update service of the harness serves Channel, where From updates to To
// unconditionally, NextMinorChannel (below), and RiskyChannel, where the same update carries
// the risk Risk: it
// applies to the clusters a spec exposes to it (Env.ExposeToRisk), and is Unknown on those
// whose evaluation fails (Env.RiskUnknown).
const (
	RiskyChannel = "fast-4.16"
	Risk         = "SRIOVFirmware"
)

// NextMinorChannel is the channel of the y-stream update From to NextMinor, the only update
// the harness's update service offers there.
const (
	NextMinorChannel = "stable-4.17"
	NextMinor        = "4.17.0"
)

// EUSChannel is the channel of release-named rollouts over mixed versions: EUSFrom reaches To
// only through EUSHop (EUS to EUS through the odd minor), From in one update, and Stranded,
// in the channel, reaches nothing.
const (
	EUSChannel = "eus-4.16"
	EUSFrom    = "4.14.30"
	EUSHop     = "4.15.40"
	Stranded   = "4.12.1"
)

// PrecacheTimeout is the operator's --precache-timeout on the harness: the precache Jobs of
// the simulated spokes, which run on real time, take a second or two.
const PrecacheTimeout = 20 * time.Second

// Epoch is when the operator's fake clock starts.
var Epoch = time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)

// Env is a running hub with its simulator and the operator.
type Env struct {
	Hub *world.Hub
	Sim *sim.Simulator
	// Clock is the operator's clock; the spokes run on real time.
	Clock *clocktesting.FakeClock
	// Graphs is the update service the spokes and the operator read.
	Graphs *graphserver.Server
	// precacheDir holds, per simulated cluster, the OCI layout that stands for its container
	// storage (PrecacheStore).
	precacheDir string

	mu sync.Mutex
	// risk says how Risk evaluates on a cluster: true applies, false does not, absent
	// fails (Unknown).
	risk map[string]bool
	// stalledPrecache are the clusters whose precache program hangs (StallPrecache);
	// slowPrecache those whose program, once it reported what it pulls, waits for its channel
	// to close (SlowPrecache).
	stalledPrecache map[string]bool
	slowPrecache    map[string]chan struct{}
	// stalledBackup are the clusters whose backup program hangs (StallBackup); nodeFree
	// is the free space of a cluster's recovery directory (SetNodeFreeSpace).
	stalledBackup map[string]bool
	nodeFree      map[string]uint64
	// operators are the operator managers running on the hub (restart.go).
	operators operators
	// pokes counts the touches of Advance.
	pokes atomic.Int64
}

// Start starts the hub, the simulator and the operator (leader election, metrics and probes
// off), and binds the cluster set to PolicyNamespace. On error, what started is stopped.
func Start(ctx context.Context, log logr.Logger) (*Env, error) {
	return StartWith(ctx, log, nil)
}

// StartWith is Start with the operator's options changed by configure (nil: none), for
// suites of operator flags such as --max-clusters-in-progress.
func StartWith(ctx context.Context, log logr.Logger, configure func(*operator.Options)) (*Env, error) {
	return startWith(ctx, log, configure, nil)
}

// StartWithSim is Start with the simulator's options changed by configure (nil: none), for
// suites that play the pods of spoke Jobs (sim.Options.JobRunner) or shorten the hub's
// action TTL (sim.Options.ActionTTL).
func StartWithSim(ctx context.Context, log logr.Logger, configure func(*sim.Options)) (*Env, error) {
	return startWith(ctx, log, nil, configure)
}

func startWith(ctx context.Context, log logr.Logger, configure func(*operator.Options), configureSim func(*sim.Options)) (*Env, error) {
	hub, err := world.StartHub(ctx, world.Options{Logger: log})
	if err != nil {
		return nil, err
	}
	e := &Env{Hub: hub, Clock: clocktesting.NewFakeClock(Epoch), risk: map[string]bool{}, stalledPrecache: map[string]bool{}, slowPrecache: map[string]chan struct{}{},
		stalledBackup: map[string]bool{}, nodeFree: map[string]uint64{}}
	if err := e.start(ctx, log, configure, configureSim); err != nil {
		return nil, errors.Join(err, hub.Stop())
	}
	return e, nil
}

func (e *Env) start(ctx context.Context, log logr.Logger, configure func(*operator.Options), configureSim func(*sim.Options)) error {
	var err error
	if e.precacheDir, err = os.MkdirTemp("", "cgu-precache-"); err != nil {
		return err
	}
	if e.Graphs, err = updateService(); err != nil {
		return err
	}
	e.Hub.Go(func(ctx context.Context) {
		<-ctx.Done()
		e.Graphs.Close()
		_ = os.RemoveAll(e.precacheDir)
	})
	updates := sim.GraphUpdates(e.Graphs.URL(), e.matchRisk)
	simOpts := sim.Options{Logger: log, Updates: updates, JobRunner: e.runSpokeProgram}
	if configureSim != nil {
		configureSim(&simOpts)
	}
	if e.Sim, err = sim.Start(ctx, e.Hub, simOpts); err != nil {
		return err
	}
	if err := e.Hub.BindClusterSet(ctx, PolicyNamespace); err != nil {
		return err
	}
	opts := operator.DefaultOptions()
	opts.LeaderElect, opts.MetricsAddr, opts.ProbeAddr, opts.Clock = false, "0", "0", e.Clock
	opts.QPS, opts.Burst = 500, 1000
	opts.UpdateService = e.Graphs.URL()
	opts.PrecacheTimeout = PrecacheTimeout
	// ZTP would give every suite's clusters a ClusterGroupUpgrade; tests/ztp turns it on.
	opts.ZTP = false
	if configure != nil {
		configure(&opts)
	}
	return e.startFirstOperator(log, opts)
}

// updateService serves the harness's channels.
func updateService() (*graphserver.Server, error) {
	stable, err := graphserver.NewGraph(Channel).Edge(From, "4.16.11", To).Edge("4.16.11", To).Build()
	if err != nil {
		return nil, err
	}
	risky, err := graphserver.NewGraph(RiskyChannel).Edge(From, "4.16.11").
		Conditional(From, To, graphserver.PromQLRisk(Risk, `group(sriov_firmware{version="1.2"})`)).Build()
	if err != nil {
		return nil, err
	}
	minor, err := graphserver.NewGraph(NextMinorChannel).Edge(From, NextMinor).Build()
	if err != nil {
		return nil, err
	}
	eus, err := graphserver.NewGraph(EUSChannel).Edge(EUSFrom, EUSHop).Edge(EUSHop, To).Edge(From, To).Versions(Stranded).Build()
	if err != nil {
		return nil, err
	}
	return graphserver.New(map[string]*updategraph.Graph{Channel: stable, RiskyChannel: risky, NextMinorChannel: minor, EUSChannel: eus})
}

// matchRisk evaluates Risk on a cluster as its Prometheus would.
func (e *Env) matchRisk(cluster string, _ configv1.ConditionalUpdateRisk) (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	applies, ok := e.risk[cluster]
	if !ok {
		return false, fmt.Errorf("no sriov_firmware series on %s", cluster)
	}
	return applies, nil
}

// ExposeToRisk says whether Risk applies to each of clusters; their cluster-version
// operators evaluate it again at once.
func (e *Env) ExposeToRisk(applies bool, clusters ...string) {
	e.setRisk(applies, clusters)
	for _, c := range clusters {
		e.Sim.Poke(c)
	}
}

// RiskUnknown makes the evaluation of Risk fail on each of clusters, as a PromQL query
// without data does, so that their recommendation for the risky update is Unknown.
func (e *Env) RiskUnknown(clusters ...string) {
	e.mu.Lock()
	for _, c := range clusters {
		delete(e.risk, c)
	}
	e.mu.Unlock()
	for _, c := range clusters {
		e.Sim.Poke(c)
	}
}

func (e *Env) setRisk(applies bool, clusters []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range clusters {
		e.risk[c] = applies
	}
}

// JoinFleet adds n clusters named <label>-1..n, labelled fleet=<label>, each with a
// simulated spoke on From in Channel; it returns their names.
func (e *Env) JoinFleet(ctx context.Context, label string, n int) ([]string, error) {
	return e.JoinFleetOn(ctx, label, n, Channel)
}

// JoinFleetOn is JoinFleet with the spokes in channel; on RiskyChannel, Risk does not apply
// to them unless ExposeToRisk says otherwise.
func (e *Env) JoinFleetOn(ctx context.Context, label string, n int, channel string) ([]string, error) {
	return e.JoinFleetWith(ctx, label, n, func(s *sim.SpokeSpec) { s.Channel = channel })
}

// JoinFleetWith is JoinFleet with each spoke's spec changed by spoke (for example to install
// operators on it); Risk does not apply to the spokes unless ExposeToRisk says otherwise.
func (e *Env) JoinFleetWith(ctx context.Context, label string, n int, spoke func(*sim.SpokeSpec)) ([]string, error) {
	names := make([]string, n)
	clusters := make([]world.Cluster, n)
	specs := make([]sim.SpokeSpec, n)
	for i := range n {
		names[i] = fmt.Sprintf("%s-%d", label, i+1)
		clusters[i] = world.Cluster{Name: names[i], Labels: map[string]string{"fleet": label}}
		specs[i] = sim.SpokeSpec{Name: names[i], Version: From, Channel: Channel}
		if spoke != nil {
			spoke(&specs[i])
		}
		clusters[i].Claims = map[string]string{sim.ClaimVersion: specs[i].Version, sim.ClaimControlPlaneTopology: sim.Topology(specs[i])}
	}
	e.setRisk(false, names)
	if err := e.Hub.AddClusters(ctx, clusters...); err != nil {
		return nil, err
	}
	return names, e.Sim.AddSpokes(specs...)
}

// PlaceUpgradePolicy creates the inform policy <label>-upgrade in PolicyNamespace, upgrading
// to To, placed on the clusters labelled fleet=<label>.
func (e *Env) PlaceUpgradePolicy(ctx context.Context, label string) (*policyv1.Policy, error) {
	p := world.UpgradePolicy(PolicyNamespace, label+"-upgrade", To, policyv1.Inform)
	return p, e.Hub.PlacePolicy(ctx, p, metav1.LabelSelector{MatchLabels: map[string]string{"fleet": label}})
}

// MustJoinFleet is JoinFleet for a Ginkgo spec: it fails the spec on error.
func (e *Env) MustJoinFleet(ctx context.Context, label string, n int) []string {
	names, err := e.JoinFleet(ctx, label, n)
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
	return names
}

// MustJoinFleetOn is JoinFleetOn for a Ginkgo spec: it fails the spec on error.
func (e *Env) MustJoinFleetOn(ctx context.Context, label string, n int, channel string) []string {
	names, err := e.JoinFleetOn(ctx, label, n, channel)
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
	return names
}

// MustPlaceUpgradePolicy is PlaceUpgradePolicy for a Ginkgo spec: it fails the spec on error
// and waits (up to timeout) until the root policy reports on clusters clusters.
func (e *Env) MustPlaceUpgradePolicy(ctx context.Context, label string, clusters int, timeout time.Duration) *policyv1.Policy {
	p, err := e.PlaceUpgradePolicy(ctx, label)
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
	gomega.EventuallyWithOffset(1, func(g gomega.Gomega) map[string]policyv1.ComplianceState {
		out, err := e.Hub.Compliance(ctx, PolicyNamespace, p.Name)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		return out
	}).WithTimeout(timeout).Should(gomega.HaveLen(clusters))
	return p
}

// MustCreate creates a ClusterGroupUpgrade, and its namespace when missing, for a Ginkgo spec.
func (e *Env) MustCreate(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cgu.Namespace}}
	if err := e.Hub.Client.Create(ctx, ns); err != nil {
		gomega.ExpectWithOffset(1, client.IgnoreAlreadyExists(err)).To(gomega.Succeed())
	}
	gomega.ExpectWithOffset(1, e.Hub.Client.Create(ctx, cgu)).To(gomega.Succeed())
}

// MustStandIn creates a disabled ClusterGroupUpgrade for owner, selecting nothing, for specs
// that make objects for a rollout themselves: without one, the operator's orphan sweep
// deletes them as objects of a rollout that is gone.
func (e *Env) MustStandIn(ctx context.Context, owner ownership.Owner) {
	e.MustCreate(ctx, &ranv1alpha1.ClusterGroupUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: owner.Namespace, Name: owner.Name},
		Spec: ranv1alpha1.ClusterGroupUpgradeSpec{Enable: ptr.To(false),
			RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: 1}},
	})
}

// Stored returns a function reading the ClusterGroupUpgrade as stored, for Eventually.
func (e *Env) Stored(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) func(gomega.Gomega) *ranv1alpha1.ClusterGroupUpgrade {
	return func(g gomega.Gomega) *ranv1alpha1.ClusterGroupUpgrade {
		out := &ranv1alpha1.ClusterGroupUpgrade{}
		g.Expect(e.Hub.Client.Get(ctx, client.ObjectKeyFromObject(cgu), out)).To(gomega.Succeed())
		return out
	}
}

// MustUpdate changes the stored ClusterGroupUpgrade with f, retrying on conflicts.
func (e *Env) MustUpdate(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, f func(*ranv1alpha1.ClusterGroupUpgrade)) {
	gomega.EventuallyWithOffset(1, func(g gomega.Gomega) {
		cur := e.Stored(ctx, cgu)(g)
		f(cur)
		g.Expect(e.Hub.Client.Update(ctx, cur)).To(gomega.Succeed())
	}).Should(gomega.Succeed())
}

// Advance moves the operator's clock on by d and touches each ClusterGroupUpgrade (an
// annotation that changes every time), so that the operator looks at them again, as the
// timers it asked for would on a real clock. The annotation is a merge patch without a
// resource version: a busy operator writing the object in between does not refuse it.
func (e *Env) Advance(ctx context.Context, d time.Duration, cgus ...*ranv1alpha1.ClusterGroupUpgrade) {
	e.Clock.Step(d)
	for _, cgu := range cgus {
		poke := strconv.FormatInt(e.pokes.Add(1), 10)
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"test.cgu-operator.io/poke":%q}}}`, poke)
		target := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: cgu.Namespace, Name: cgu.Name}}
		gomega.ExpectWithOffset(1, e.Hub.Client.Patch(ctx, target, client.RawPatch(types.MergePatchType, []byte(patch)))).To(gomega.Succeed())
	}
}
