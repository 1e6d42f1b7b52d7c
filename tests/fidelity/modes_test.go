package fidelity_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
	"github.com/cgu-operator/cgu-operator/tests/world"
	"github.com/cgu-operator/cgu-operator/tests/world/realspoke"
)

// spokes is how a mode runs the managed clusters of its hub.
type spokes interface {
	// clusterVersion returns a cluster's ClusterVersion as its spoke stores it.
	clusterVersion(ctx context.Context, cluster string) (*configv1.ClusterVersion, error)
	// setDesiredUpdate writes spec.desiredUpdate on a cluster, as an earlier update would have
	// left it.
	setDesiredUpdate(ctx context.Context, cluster, version string) error
	// stop stops the spokes; the hub stops afterwards.
	stop() error
}

// mode is a hub with the scenario's clusters joined, and their spokes.
type mode struct {
	name   string
	hub    *world.Hub
	spokes spokes
	// startup tells how long the hub and each spoke took to start, for the report.
	startup []string
}

// stop stops the spokes, then the hub: spokes talk to the hub until they stop.
func (m *mode) stop() error {
	var err error
	if m.spokes != nil {
		err = m.spokes.stop()
	}
	if m.hub != nil {
		err = errors.Join(err, m.hub.Stop())
	}
	return err
}

// startHub starts a hub of the world with the scenario's clusters joined and the policy
// namespace bound to every cluster. On error, the hub is stopped.
func startHub(ctx context.Context, log logr.Logger) (*world.Hub, error) {
	hub, err := world.StartHub(ctx, world.Options{Logger: log})
	if err != nil {
		return nil, fmt.Errorf("starting a hub: %w", err)
	}
	joined := make([]world.Cluster, len(clusters))
	for i, c := range clusters {
		joined[i] = world.Cluster{Name: c.name, Labels: map[string]string{fleetLabel: fleetName}}
	}
	if err := hub.AddClusters(ctx, joined...); err != nil {
		return nil, errors.Join(fmt.Errorf("joining the clusters: %w", err), hub.Stop())
	}
	if err := hub.BindClusterSet(ctx, policyNS); err != nil {
		return nil, errors.Join(fmt.Errorf("binding the cluster set: %w", err), hub.Stop())
	}
	return hub, nil
}

// startScale starts the scale mode: a hub whose clusters are simulated spokes.
func startScale(ctx context.Context, log logr.Logger) (*mode, error) {
	began := time.Now()
	hub, err := startHub(ctx, log)
	if err != nil {
		return nil, err
	}
	m := &mode{name: "scale", hub: hub, startup: []string{"hub " + since(began)}}
	simulator, err := sim.Start(ctx, hub, sim.Options{Logger: log})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("starting the simulator: %w", err), m.stop())
	}
	specs := make([]sim.SpokeSpec, len(clusters))
	for i, c := range clusters {
		specs[i] = sim.SpokeSpec{Name: c.name, Version: c.version, Channel: channel, Behaviour: behaviour}
	}
	if err := simulator.AddSpokes(specs...); err != nil {
		return nil, errors.Join(fmt.Errorf("adding simulated spokes: %w", err), m.stop())
	}
	m.spokes = simSpokes{simulator}
	return m, nil
}

// startReal starts the real-spoke mode: a hub whose clusters are real spokes, started at once.
func startReal(ctx context.Context, log logr.Logger) (*mode, error) {
	began := time.Now()
	hub, err := startHub(ctx, log)
	if err != nil {
		return nil, err
	}
	byName := realSpokes{}
	m := &mode{name: "real", hub: hub, spokes: byName, startup: []string{"hub " + since(began)}}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs []error
	)
	for _, c := range clusters {
		wg.Go(func() {
			began := time.Now()
			spoke, err := startRealSpoke(ctx, hub.Config, c.name, c.version, log)
			mu.Lock()
			defer mu.Unlock()
			m.startup = append(m.startup, c.name+" "+since(began))
			errs = append(errs, err)
			if spoke != nil {
				byName[c.name] = spoke
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, errors.Join(err, m.stop())
	}
	return m, nil
}

func startRealSpoke(ctx context.Context, hubConfig *rest.Config, name, version string, log logr.Logger) (*realspoke.Spoke, error) {
	spoke, err := realspoke.Start(ctx, realspoke.Options{
		HubConfig:   hubConfig,
		ClusterName: name,
		Version:     version,
		Channel:     channel,
		Behaviour:   behaviour,
		Logger:      log.WithName(name),
	})
	if err != nil {
		return nil, fmt.Errorf("starting real spoke %s: %w", name, err)
	}
	return spoke, nil
}

// since returns the time since began, rounded for reports.
func since(began time.Time) string {
	return time.Since(began).Round(10 * time.Millisecond).String()
}

// simSpokes are the simulated spokes of the scale mode; they stop with their hub.
type simSpokes struct{ sim *sim.Simulator }

func (s simSpokes) clusterVersion(_ context.Context, cluster string) (*configv1.ClusterVersion, error) {
	return s.sim.ClusterVersion(cluster)
}

func (s simSpokes) setDesiredUpdate(_ context.Context, cluster, version string) error {
	return s.sim.Mutate(cluster, func(objects configpolicy.Store) error {
		cv, err := objects.Get(configv1.GroupVersion.WithKind("ClusterVersion"), "", realspoke.ClusterVersionName)
		if err != nil {
			return fmt.Errorf("reading the ClusterVersion: %w", err)
		}
		if err := unstructured.SetNestedField(cv.Object, version, "spec", "desiredUpdate", "version"); err != nil {
			return fmt.Errorf("setting spec.desiredUpdate: %w", err)
		}
		return objects.Update(cv)
	})
}

func (simSpokes) stop() error { return nil }

// realSpokes are the real spokes of the real-spoke mode, by cluster name.
type realSpokes map[string]*realspoke.Spoke

func (r realSpokes) clusterVersion(ctx context.Context, cluster string) (*configv1.ClusterVersion, error) {
	cv := &configv1.ClusterVersion{}
	err := r[cluster].Client().Get(ctx, client.ObjectKey{Name: realspoke.ClusterVersionName}, cv)
	return cv, err
}

func (r realSpokes) setDesiredUpdate(ctx context.Context, cluster, version string) error {
	cv, err := r.clusterVersion(ctx, cluster)
	if err != nil {
		return fmt.Errorf("reading the ClusterVersion of %s: %w", cluster, err)
	}
	patch := client.MergeFrom(cv.DeepCopy())
	cv.Spec.DesiredUpdate = &configv1.Update{Version: version}
	if err := r[cluster].Client().Patch(ctx, cv, patch); err != nil {
		return fmt.Errorf("setting spec.desiredUpdate of %s: %w", cluster, err)
	}
	return nil
}

// stop stops every spoke; each stops its controllers before its apiserver.
func (r realSpokes) stop() error {
	var errs []error
	for _, spoke := range r {
		errs = append(errs, spoke.Stop())
	}
	return errors.Join(errs...)
}
