package bench_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

// Namespaces of the managed (inform) policies and of the rollout's objects (the floor
// driver's and the CGU's), and the versions the fleet upgrades between.
const (
	policyNamespace  = "policies"
	rolloutNamespace = "bench"
	fromVersion      = "4.16.10"
	toVersion        = "4.16.12"
	channel          = "stable-4.16"
	fleetLabel       = "fleet"
)

// config is one fleet benchmark.
type config struct {
	clusters, policies, maxConcurrency int
	// upgrade is how long a cluster's platform upgrade takes; zero completes it at once.
	upgrade time.Duration
	// longNames gives every cluster a 63-character name, the longest a cluster may have.
	longNames bool
	// timeout bounds each phase (joining, settling and the rollout).
	timeout time.Duration
	// phases are run in order, each one of phaseKinds.
	phases []string
	// propagator tunes the hub world's governance-policy-propagator (zero: its defaults).
	propagator world.PropagatorOptions
	// mode is the operator's rollout mode (BENCH_MODE; empty: Batches, TALM's).
	mode ranv1alpha1.RolloutMode
	// runs is how many times the phases run, in turn (BENCH_RUNS; 1 without it): the ratio
	// to the floor is judged on the median of the runs.
	runs int
}

func (c config) String() string {
	s := fmt.Sprintf("%dx%d/%d", c.clusters, c.policies, c.maxConcurrency)
	if c.upgrade > 0 {
		s += " upgrade " + c.upgrade.String()
	} else {
		s += " instant"
	}
	if c.mode != "" {
		s += ", mode " + string(c.mode)
	}
	return s
}

// defaultPhases are the phases run without BENCH_PHASES: each floor before the operator of
// its mode.
var defaultPhases = []string{overrideFloor, "operator-override", "floor", "operator"}

// smokePhases are the smoke fleet's phases: every phase, so that each driver runs in make
// test.
var smokePhases = append(slices.Clone(defaultPhases), windowFloor)

// configFromEnv reads BENCH_FLEET ("<clusters>x<policies>/<maxConcurrency>"), BENCH_UPGRADE
// (a duration), BENCH_NAMES ("long", the default, or "short"), BENCH_TIMEOUT, BENCH_PHASES
// (comma-separated names of phaseKinds; defaultPhases without it), BENCH_MODE (the
// operator's rollout mode: Batches, the default, Window or Progressive) and BENCH_PROPAGATOR
// ("<qps>/<root-status workers>/<replicated-policy workers>", the propagator's client QPS,
// burst twice that). Without BENCH_FLEET it returns the smoke fleet.
func configFromEnv() (config, bool, error) {
	c := config{clusters: 50, policies: 2, maxConcurrency: 25, longNames: true, timeout: 3 * time.Minute,
		phases: defaultPhases, runs: 1}
	spec := os.Getenv("BENCH_FLEET")
	smoke := spec == ""
	if !smoke {
		c.timeout = 30 * time.Minute
		if _, err := fmt.Sscanf(strings.ReplaceAll(spec, "/", " "), "%dx%d %d", &c.clusters, &c.policies, &c.maxConcurrency); err != nil {
			return c, false, fmt.Errorf("BENCH_FLEET=%q, want <clusters>x<policies>/<maxConcurrency>: %w", spec, err)
		}
	}
	err := c.timesFromEnv()
	if err != nil {
		return c, smoke, err
	}
	c.longNames = os.Getenv("BENCH_NAMES") != "short"
	if c.mode, err = modeFromEnv(); err != nil {
		return c, smoke, err
	}
	if c.phases, err = phasesFromEnv(); err != nil {
		return c, smoke, err
	}
	if smoke && os.Getenv("BENCH_PHASES") == "" {
		c.phases = smokePhases
	}
	if v := os.Getenv("BENCH_PROPAGATOR"); v != "" {
		p := &c.propagator
		if _, err := fmt.Sscanf(strings.ReplaceAll(v, "/", " "), "%f %d %d", &p.QPS, &p.RootStatusWorkers, &p.ReplicatedPolicyWorkers); err != nil {
			return c, smoke, fmt.Errorf("BENCH_PROPAGATOR=%q, want <qps>/<root-status workers>/<replicated-policy workers>: %w", v, err)
		}
		p.Burst = 2 * int(p.QPS)
	}
	if c.clusters < 1 || c.policies < 1 || c.maxConcurrency < 1 {
		return c, smoke, fmt.Errorf("BENCH_FLEET=%q: every number must be positive", spec)
	}
	return c, smoke, nil
}

// timesFromEnv reads BENCH_UPGRADE, BENCH_TIMEOUT and BENCH_RUNS into c.
func (c *config) timesFromEnv() error {
	var err error
	if v := os.Getenv("BENCH_UPGRADE"); v != "" {
		if c.upgrade, err = time.ParseDuration(v); err != nil {
			return fmt.Errorf("BENCH_UPGRADE: %w", err)
		}
	}
	if v := os.Getenv("BENCH_TIMEOUT"); v != "" {
		if c.timeout, err = time.ParseDuration(v); err != nil {
			return fmt.Errorf("BENCH_TIMEOUT: %w", err)
		}
	}
	if v := os.Getenv("BENCH_RUNS"); v != "" {
		if c.runs, err = strconv.Atoi(v); err != nil || c.runs < 1 {
			return fmt.Errorf("BENCH_RUNS=%q, want a positive number", v)
		}
	}
	return nil
}

// phasesFromEnv reads BENCH_PHASES, defaultPhases without it.
func phasesFromEnv() ([]string, error) {
	phases := defaultPhases
	if v := os.Getenv("BENCH_PHASES"); v != "" {
		phases = strings.Split(v, ",")
	}
	for _, p := range phases {
		if _, ok := phaseKinds[p]; !ok {
			return nil, fmt.Errorf("BENCH_PHASES: unknown phase %q (%s)", p, strings.Join(slices.Sorted(maps.Keys(phaseKinds)), ", "))
		}
	}
	return phases, nil
}

// modeFromEnv reads BENCH_MODE: the operator's rollout mode, empty for TALM's batches.
func modeFromEnv() (ranv1alpha1.RolloutMode, error) {
	switch m := ranv1alpha1.RolloutMode(os.Getenv("BENCH_MODE")); m {
	case "", ranv1alpha1.ModeBatches, ranv1alpha1.ModeWindow, ranv1alpha1.ModeProgressive:
		return m, nil
	default:
		return "", fmt.Errorf("BENCH_MODE=%q, want Batches, Window or Progressive", m)
	}
}

// clusterName is the i-th cluster's name: 63 characters with longNames.
func clusterName(i int, long bool) string {
	if long {
		return strings.Repeat("c", 57) + "-" + fmt.Sprintf("%05d", i)
	}
	return fmt.Sprintf("sno-%05d", i)
}

// fleet is a hub world with its simulated spokes and the managed inform policies, settled:
// every cluster NonCompliant with every policy on the root policies' status.
type fleet struct {
	hub      *world.Hub
	sim      *sim.Simulator
	clusters []string
	policies []*policyv1.Policy
	joined   time.Duration
	settled  time.Duration
}

// managedPolicies are the rollout's inform policies: a platform upgrade to toVersion, then
// policies that each ask for a namespace on the spoke.
func managedPolicies(n int) []*policyv1.Policy {
	out := []*policyv1.Policy{world.UpgradePolicy(policyNamespace, "upgrade", toVersion, policyv1.Inform)}
	for i := 1; i < n; i++ {
		name := fmt.Sprintf("config-%d", i)
		ns := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "bench-" + name}}
		out = append(out, world.NewPolicy(policyNamespace, name, policyv1.Inform, world.ConfigPolicy{Name: name, Objects: []map[string]any{ns}}))
	}
	return out
}

// startFleet starts a hub, joins the fleet and places the managed policies, and waits until
// the root policies report every cluster. progress receives a line now and then.
func startFleet(ctx context.Context, c config, progress func(string)) (f *fleet, err error) {
	hub, err := world.StartHub(ctx, world.Options{Logger: logr.Discard(), Propagator: c.propagator})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = hub.Stop()
		}
	}()
	s, err := sim.Start(ctx, hub, sim.Options{Logger: logr.Discard()})
	if err != nil {
		return nil, err
	}
	f = &fleet{hub: hub, sim: s}
	start := time.Now()
	clusters := make([]world.Cluster, c.clusters)
	spokes := make([]sim.SpokeSpec, c.clusters)
	for i := range c.clusters {
		name := clusterName(i, c.longNames)
		f.clusters = append(f.clusters, name)
		clusters[i] = world.Cluster{Name: name, Labels: map[string]string{fleetLabel: "bench"}}
		spokes[i] = sim.SpokeSpec{Name: name, Version: fromVersion, Channel: channel, Behaviour: sim.Behaviour{Duration: c.upgrade}}
	}
	if err := hub.AddClusters(ctx, clusters...); err != nil {
		return nil, err
	}
	if err := s.AddSpokes(spokes...); err != nil {
		return nil, err
	}
	f.joined = time.Since(start)
	for _, ns := range []string{policyNamespace, rolloutNamespace} {
		if err := hub.BindClusterSet(ctx, ns); err != nil {
			return nil, err
		}
	}
	f.policies = managedPolicies(c.policies)
	for _, p := range f.policies {
		if err := hub.PlacePolicy(ctx, p, metav1.LabelSelector{MatchLabels: map[string]string{fleetLabel: "bench"}}); err != nil {
			return nil, err
		}
	}
	if err := f.waitSettled(ctx, progress); err != nil {
		return nil, err
	}
	f.settled = time.Since(start)
	return f, nil
}

// waitSettled waits until every root policy reports every cluster NonCompliant.
func (f *fleet) waitSettled(ctx context.Context, progress func(string)) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	lastReport := time.Now()
	for {
		counts, err := f.reported(ctx)
		if err != nil {
			return err
		}
		settled := true
		for _, n := range counts {
			settled = settled && n == len(f.clusters)
		}
		if settled {
			return nil
		}
		if time.Since(lastReport) >= 30*time.Second {
			lastReport = time.Now()
			progress(fmt.Sprintf("settling: %s policies on the hub; clusters reported NonCompliant per root policy %v;%s",
				f.policyCount(ctx), counts, controllerSummary(controllerFamilies())))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the fleet did not settle: clusters reported NonCompliant per root policy %v of %d: %w",
				counts, len(f.clusters), ctx.Err())
		case <-tick.C:
		}
	}
}

// reported counts, per root policy, the clusters its status reports NonCompliant.
func (f *fleet) reported(ctx context.Context) ([]int, error) {
	out := make([]int, len(f.policies))
	for i, p := range f.policies {
		root := &policyv1.Policy{}
		if err := f.hub.Client.Get(ctx, client.ObjectKeyFromObject(p), root); err != nil {
			return nil, err
		}
		for _, st := range root.Status.Status {
			if st.ComplianceState == policyv1.NonCompliant {
				out[i]++
			}
		}
	}
	return out, nil
}

func (f *fleet) policyNames() []string {
	out := make([]string, len(f.policies))
	for i, p := range f.policies {
		out[i] = p.Name
	}
	return out
}

// batches splits the fleet as the operator's plan does without canaries, in name order:
// maxConcurrency clusters at a time, or, for the Progressive mode, its stages as they grow
// with every stage healthy (stages), so that the floor driver starts each stage the moment
// the previous one is done.
func (f *fleet) batches(maxConcurrency int, mode ranv1alpha1.RolloutMode) [][]string {
	if mode == ranv1alpha1.ModeProgressive {
		return stages([][]string{f.clusters}, maxConcurrency)
	}
	return chunks(f.clusters, []int{maxConcurrency})
}

// stages splits each batch of a Progressive plan into the stages the operator starts, in
// plan order, when every stage is healthy: plan.DefaultGrowth's sizes (1%, 5%, 25%, then
// maxConcurrency) over the batch's clusters.
func stages(batches [][]string, maxConcurrency int) [][]string {
	var out [][]string
	for _, b := range batches {
		out = append(out, chunks(b, plan.DefaultGrowth.Sizes(len(b), maxConcurrency))...)
	}
	return out
}

// chunks splits clusters in order into groups of the sizes, the last size repeating.
func chunks(clusters []string, sizes []int) [][]string {
	var out [][]string
	for i, step := 0, 0; i < len(clusters); step++ {
		n := sizes[min(step, len(sizes)-1)]
		out = append(out, clusters[i:min(i+n, len(clusters))])
		i += n
	}
	return out
}

// policyCount counts the policies on the hub, root and replicated, from the remaining-items
// count of a one-item list ("?" when the API server does not say).
func (f *fleet) policyCount(ctx context.Context) string {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(policyv1.GroupVersion.WithKind("PolicyList"))
	if err := f.hub.Client.List(ctx, list, client.Limit(1)); err != nil || list.RemainingItemCount == nil {
		return "?"
	}
	return fmt.Sprint(*list.RemainingItemCount + int64(len(list.Items)))
}
