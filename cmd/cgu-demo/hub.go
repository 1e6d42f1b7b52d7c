package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/dashboard"
	"github.com/cgu-operator/cgu-operator/pkg/operator"
	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/world"
	"github.com/cgu-operator/cgu-operator/tests/world/graphserver"
)

// The fleet's versions and channel, as the demo manifests expect them.
const (
	fromVersion = "4.16.10"
	toVersion   = "4.16.12"
	channel     = "stable-4.16"
)

// demo is a running embedded hub with its fleet and the operator.
type demo struct {
	opts    options
	hub     *world.Hub
	graph   *graphserver.Server
	sim     *sim.Simulator
	cache   cache.Cache
	cgu     client.ObjectKey
	logPath string
	term    *terminal
	// preview is the plan shown before the start, until the batch records hold it.
	preview []batchView
	// dashboard is the hub's dashboard, nil when none is served.
	dashboard *servedDashboard
}

// clusterName is the name of the fleet's i-th cluster: its number padded to the digits of
// the fleet's size, at least two (sno-01 of 12, sno-001 of 300, sno-0001 of 3500), so that
// the names sort as the numbers do.
func (o options) clusterName(i int) string {
	return fmt.Sprintf("sno-%0*d", max(2, len(strconv.Itoa(o.clusters))), i)
}

// fleetCluster returns the name of the fleet's cluster that name numbers, however padded
// (sno-5, sno-05 and sno-005 of 300 clusters are sno-005); false when it numbers none.
func (o options) fleetCluster(name string) (string, bool) {
	number, ok := strings.CutPrefix(name, "sno-")
	if !ok || number == "" || strings.Trim(number, "0123456789") != "" {
		return name, false
	}
	i, err := strconv.Atoi(number)
	if err != nil || i < 1 || i > o.clusters {
		return name, false
	}
	return o.clusterName(i), true
}

// fleetClusters renames the clusters a manifest names (the canaries of samples/demo) to the
// fleet's padding; other names stay.
func (o options) fleetClusters(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i], _ = o.fleetCluster(n)
	}
	return out
}

// startDemo starts the hub, the update service, the spokes and the operator, then applies
// the demo manifests. The returned demo is to be stopped even on error.
func startDemo(ctx context.Context, opts options, out *terminal) (*demo, error) {
	log, logPath, err := openLog()
	if err != nil {
		return nil, err
	}
	d := &demo{opts: opts, logPath: logPath, term: out}
	out.step("Starting the embedded hub: kube-apiserver, etcd, policy propagator, placement controller")
	if d.hub, err = world.StartHub(ctx, world.Options{Logger: log}); err != nil {
		return nil, fmt.Errorf("starting the hub (see %s): %w", d.logPath, err)
	}
	if err := d.startFleet(ctx, log, out); err != nil {
		return d, err
	}
	out.step("Starting cgu-operator, built by the same operator.New as the production manager")
	if err := d.startOperator(); err != nil {
		return d, err
	}
	if opts.dashboardPort >= 0 {
		d.dashboard = serveDashboard(ctx, d.hub.Config, opts.dashboardPort, "Dashboard", out)
	}
	out.step("Applying %s", opts.samples)
	if err := d.apply(ctx); err != nil {
		return d, err
	}
	return d, d.watch(ctx)
}

func (d *demo) startFleet(ctx context.Context, log logr.Logger, out *terminal) error {
	g, err := graphserver.NewGraph(channel).Versions(fromVersion, "4.16.11", toVersion).
		Chain(fromVersion, "4.16.11", toVersion).Edge(fromVersion, toVersion).Build()
	if err != nil {
		return err
	}
	eus, err := graphserver.NewGraph(eusChannel).Edge(eusFrom, eusHop).Edge(eusHop, toVersion).Edge(fromVersion, toVersion).Build()
	if err != nil {
		return err
	}
	if d.graph, err = graphserver.New(map[string]*updategraph.Graph{channel: g, eusChannel: eus}); err != nil {
		return err
	}
	d.sim, err = sim.Start(ctx, d.hub, sim.Options{Logger: log, Updates: sim.GraphUpdates(d.graph.URL(), nil)})
	if err != nil {
		return fmt.Errorf("starting the simulated spokes: %w", err)
	}
	n := d.opts.clusters
	out.step("Joining %d simulated single-node OpenShift clusters on %s (upgrades take %s each)", n, fromVersion, d.opts.upgradeDuration)
	clusters := make([]world.Cluster, n)
	spokes := make([]sim.SpokeSpec, n)
	for i := range n {
		name := d.opts.clusterName(i + 1)
		clusters[i] = world.Cluster{Name: name, Labels: map[string]string{"demo": "true", "common": "true"}}
		spokes[i] = sim.SpokeSpec{Name: name, Version: fromVersion, Channel: channel,
			Behaviour: sim.Behaviour{Duration: d.opts.upgradeDuration, Stall: name == d.opts.stall}}
		switch d.opts.kind {
		case kindIBGU:
			spokes[i].LifecycleAgent = lifecycleAgent(d.opts.upgradeDuration, name == d.opts.fail)
		case kindMCU:
			mcuSpoke(i, &spokes[i])
		}
		// The klusterlet's claim of the version the cluster runs.
		clusters[i].Claims = map[string]string{sim.ClaimVersion: spokes[i].Version}
	}
	if err := d.hub.AddClusters(ctx, clusters...); err != nil {
		return err
	}
	return d.sim.AddSpokes(spokes...)
}

func (d *demo) startOperator() error {
	opts := operator.DefaultOptions()
	opts.LeaderElect, opts.MetricsAddr, opts.ProbeAddr = false, "0", "0"
	opts.SkipNameValidation = true // the demo's tests play it twice in one process
	opts.UpdateService = d.graph.URL()
	// The demo's clusters joined long ago: day-one ZTP would only label them ztp-done.
	opts.ZTP = false
	mgr, err := operator.New(d.hub.Config, opts)
	if err != nil {
		return fmt.Errorf("building the operator: %w", err)
	}
	d.hub.Go(func(ctx context.Context) {
		if err := mgr.Start(ctx); err != nil {
			ctrl.Log.Error(err, "The operator stopped")
		}
	})
	return nil
}

// apply creates the namespaces and every object of the demo manifests; the CGU's spec takes
// the demo's options.
func (d *demo) apply(ctx context.Context) error {
	objs, err := readManifests(d.opts.samples)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if err := d.ensureNamespace(ctx, o.GetNamespace()); err != nil {
			return err
		}
		if err := d.take(o); err != nil {
			return err
		}
		if err := d.hub.Client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
	if d.cgu.Name == "" {
		kind := map[string]string{"": "ClusterGroupUpgrade", kindCGU: "ClusterGroupUpgrade", kindIBGU: "ImageBasedGroupUpgrade", kindMCU: "ManagedClustersUpgrade"}[d.opts.kind]
		return fmt.Errorf("%s holds no %s", d.opts.samples, kind)
	}
	return nil
}

// take notes the rollout the demo plays, the demo's kind among the manifests, and applies
// the demo's options to it.
func (d *demo) take(o *unstructured.Unstructured) error {
	kinds := map[string]struct {
		kind string
		tune func(*unstructured.Unstructured) error
	}{
		"ClusterGroupUpgrade":    {kindCGU, d.tune},
		"ImageBasedGroupUpgrade": {kindIBGU, d.tuneSteps},
		"ManagedClustersUpgrade": {kindMCU, d.tuneMCU},
	}
	k, ok := kinds[o.GetKind()]
	if !ok {
		return nil
	}
	if d.opts.kind == k.kind || d.opts.kind == "" && k.kind == kindCGU {
		d.cgu = client.ObjectKeyFromObject(o)
	}
	return k.tune(o)
}

// tune applies the demo's options to the CGU manifest, its canaries named as the fleet's
// clusters are.
func (d *demo) tune(o *unstructured.Unstructured) error {
	canaries, found, err := unstructured.NestedStringSlice(o.Object, "spec", "remediationStrategy", "canaries")
	if err != nil {
		return err
	}
	if found {
		if err := unstructured.SetNestedStringSlice(o.Object, d.opts.fleetClusters(canaries), "spec", "remediationStrategy", "canaries"); err != nil {
			return err
		}
	}
	if err := unstructured.SetNestedField(o.Object, int64(d.opts.maxConcurrency), "spec", "remediationStrategy", "maxConcurrency"); err != nil {
		return err
	}
	if d.opts.mode != "" {
		if err := unstructured.SetNestedField(o.Object, d.opts.mode, "spec", "remediationStrategy", "mode"); err != nil {
			return err
		}
	}
	if d.opts.mode == string(ranv1alpha1.ModeProgressive) {
		// Stages of 1, 2, 4, ...: the default 1%, 5%, 25% are all one cluster on a demo's fleet.
		if err := unstructured.SetNestedField(o.Object, int64(2), "spec", "remediationStrategy", "progressive", "factor"); err != nil {
			return err
		}
	}
	if d.opts.timeout > 0 {
		return unstructured.SetNestedField(o.Object, int64(d.opts.timeout), "spec", "remediationStrategy", "timeout")
	}
	return nil
}

func (d *demo) ensureNamespace(ctx context.Context, name string) error {
	if name == "" {
		return nil
	}
	err := d.hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// readManifests decodes every object of the YAML files of dir, in file name order.
func readManifests(dir string) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no manifests in %s (run the demo from the repository root)", dir)
	}
	slices.Sort(files)
	var out []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var m map[string]any
			if err := dec.Decode(&m); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if len(m) > 0 {
				out = append(out, &unstructured.Unstructured{Object: m})
			}
		}
	}
	return out, nil
}

// watch starts a cache of the CGU's namespace, which the display reads.
func (d *demo) watch(ctx context.Context) error {
	c, err := cache.New(d.hub.Config, cache.Options{Scheme: d.hub.Scheme,
		DefaultNamespaces: map[string]cache.Config{d.cgu.Namespace: {}}})
	if err != nil {
		return err
	}
	for _, o := range []client.Object{&ranv1alpha1.ClusterGroupUpgrade{}, &ranv1alpha1.ClusterGroupUpgradeBatch{}, &lcmv1alpha1.ImageBasedGroupUpgrade{},
		&ranv1alpha1.ManagedClustersUpgrade{}} {
		if _, err := c.GetInformer(ctx, o); err != nil {
			return err
		}
	}
	d.hub.Go(func(ctx context.Context) { _ = c.Start(ctx) })
	if !c.WaitForCacheSync(ctx) {
		return errors.New("the display's cache did not sync")
	}
	d.cache = c
	return nil
}

// enable sets spec.enable, as a user would with oc patch.
func (d *demo) enable(ctx context.Context) error {
	cgu := &ranv1alpha1.ClusterGroupUpgrade{}
	if err := d.hub.Client.Get(ctx, d.cgu, cgu); err != nil {
		return err
	}
	patch := client.MergeFrom(cgu.DeepCopy())
	cgu.Spec.Enable = ptr.To(true)
	return d.hub.Client.Patch(ctx, cgu, patch)
}

// keep leaves the hub running for kubectl and the plugin until ctx ends.
func (d *demo) keep(ctx context.Context, out *terminal) {
	path := filepath.Join(os.TempDir(), "cgu-demo.kubeconfig")
	if err := d.hub.WriteKubeconfig(path); err != nil {
		out.fail("writing the kubeconfig: %v", err)
		return
	}
	out.keep(path, d.opts.kind, d.cgu, d.dashboard.address())
	<-ctx.Done()
}

// servedDashboard is kubectl cgu's dashboard of one hub, as the demo serves it.
type servedDashboard struct {
	url string
	// cancel stops it; done is closed once it stopped.
	cancel context.CancelFunc
	done   <-chan struct{}
}

// serveDashboard serves kubectl cgu's dashboard of the hub cfg reaches, as `kubectl cgu
// dashboard -A` would, on port, or on a free one when that one is taken, and names it with
// label. It returns nil when it cannot start: the demo goes on without it.
func serveDashboard(ctx context.Context, cfg *rest.Config, port int, label string, out *terminal) *servedDashboard {
	opts := dashboard.Options{Config: cfg}
	// The dashboard stops before the hub (stop), or the hub's API server would wait for its
	// watches to end.
	ctx, cancel := context.WithCancel(ctx)
	ports := []int{port}
	if port != 0 {
		ports = append(ports, 0)
	}
	for _, port := range ports {
		ready, result := make(chan string, 1), make(chan error, 1)
		go func() {
			address := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
			result <- dashboard.Serve(ctx, opts, address, func(url string) { ready <- url })
		}()
		select {
		case url := <-ready:
			out.step("%s: %s (live; KEEP=1 keeps it after the rollout)", label, url)
			done := make(chan struct{})
			go func() {
				defer close(done)
				if err := <-result; err != nil {
					out.note("The dashboard stopped: %v", err)
				}
			}()
			return &servedDashboard{url: url, cancel: cancel, done: done}
		case err := <-result:
			out.note("The dashboard did not start on port %d: %v", port, err)
		}
	}
	cancel()
	return nil
}

// address is where the dashboard is served, empty when it is not.
func (s *servedDashboard) address() string {
	if s == nil {
		return ""
	}
	return s.url
}

// stop stops the dashboard and waits until it stopped.
func (s *servedDashboard) stop() {
	if s != nil {
		s.cancel()
		<-s.done
	}
}

// openLog sends the logs of the controllers, and klog's, to a new temporary file, whose
// path it returns.
func openLog() (logr.Logger, string, error) {
	logFile, err := os.CreateTemp("", "cgu-demo-*.log")
	if err != nil {
		return logr.Logger{}, "", err
	}
	log := zap.New(zap.WriteTo(logFile), zap.UseDevMode(true))
	ctrl.SetLogger(log)
	// The placement controller and the work agent log through klog, outside zap's development
	// mode: it panics on a malformed key-value list, which some of their code logs.
	klog.SetLogger(zap.New(zap.WriteTo(logFile), zap.ConsoleEncoder()).WithName("klog"))
	return log, logFile.Name(), nil
}

func (d *demo) stop(out *terminal) {
	d.dashboard.stop()
	if d.graph != nil {
		d.graph.Close()
	}
	if d.hub != nil {
		if err := d.hub.Stop(); err != nil {
			out.fail("stopping the hub: %v", err)
		}
	}
	out.note("Logs of the hub and the operator: %s", d.logPath)
}
