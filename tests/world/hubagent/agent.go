// Package hubagent plays Open Cluster Management's work agent (open-cluster-management.io/ocm
// v1.2.0, pkg/work/spoke) between a global hub and one regional hub of the test world: the
// regional hub is a managed cluster of the global hub and, being a hub itself, a real
// kube-apiserver (world.StartHub, or a lighter envtest apiserver with the CRDs it needs).
//
// An Agent serves the ManifestWorks of its cluster namespace on the global hub as the agent's
// controllers do:
//
//   - the add-finalizer controller: cluster.open-cluster-management.io/manifest-work-cleanup;
//   - the manifest controller: an AppliedManifestWork named <hub hash>-<work> on the regional
//     hub, each manifest applied with OCM's own appliers (ocm/pkg/work/spoke/apply: Update by
//     default, CreateOnly, ServerSideApply, ReadOnly) and an owner reference to the
//     AppliedManifestWork, the Applied conditions, and what a work no longer holds deleted. It
//     applies when a work is first seen, when its generation or labels change, after an
//     error or while what a work no longer holds is being deleted, and on the agent's resync
//     (4 minutes, jittered by half, as the real one): an object changed on the regional hub
//     is put back only then, as by the real agent;
//   - the available-status controller: each manifest's Available condition read with OCM's
//     object reader, its statusFeedback.values with OCM's status reader, its condition rules
//     with OCM's condition reader, StatusFeedbackSynced, and the work's aggregated Available;
//   - the two finalize controllers: on deletion the work goes Deleting, its
//     AppliedManifestWork is deleted, what it recorded is deleted from the regional hub
//     (background propagation), and once all of it is gone the AppliedManifestWork's
//     finalizer and then the work's are removed.
//
// Status follows the regional hub by events: the agent watches, with one informer per
// resource and namespace started when a work first reports an object there, every object
// the works applied, and reads a work's status again when one changes (each object read
// afresh from the kube-apiserver, as the real agent's poll does). The real agent watches
// only manifests whose feedbackScrapeType is Watch (at most 50 informers); for the others
// it polls every 10 to 19 s (--status-sync-interval, jittered), so a test sees feedback
// sooner than a global hub would. One worker serves all the works of the agent.
//
// Disconnect and Reconnect cut the agent from the global hub and bring it back: meanwhile it
// neither applies nor reports, so the global hub keeps a stale status; on reconnect every
// work is reconciled again. DisconnectCluster and ReconnectCluster also set the
// ManagedCluster's Available condition as registration does.
//
// Left out: the executor subject's permission checks (spec.executor is not read), the
// cloud-events transports, the unmanaged-AppliedManifestWork eviction, AppliedManifestWorks
// deleted by hand on the regional hub (the agent finalizes one only for a deleted
// ManifestWork), and, on the global hub, the ManifestWork validating webhook. The regional
// hub gets the AppliedManifestWork CRD when the agent starts, as the klusterlet installs it.
// A test apiserver runs no namespace controller: a namespace the agent deletes stays
// Terminating, and the work Deleting, until FinalizeNamespace plays that controller.
package hubagent

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	workclientset "open-cluster-management.io/api/client/work/clientset/versioned"
	workv1client "open-cluster-management.io/api/client/work/clientset/versioned/typed/work/v1"
	workinformers "open-cluster-management.io/api/client/work/informers/externalversions"
	worklister "open-cluster-management.io/api/client/work/listers/work/v1"
	ocmfeature "open-cluster-management.io/api/feature"
	workv1 "open-cluster-management.io/api/work/v1"
	"open-cluster-management.io/ocm/pkg/features"
	"open-cluster-management.io/ocm/pkg/work/helper"
	"open-cluster-management.io/ocm/pkg/work/spoke/apply"
	"open-cluster-management.io/ocm/pkg/work/spoke/conditions"
	"open-cluster-management.io/ocm/pkg/work/spoke/objectreader"
	"open-cluster-management.io/ocm/pkg/work/spoke/statusfeedback"
	"open-cluster-management.io/sdk-go/pkg/basecontroller/events"
	"open-cluster-management.io/sdk-go/pkg/patcher"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/cgu-operator/cgu-operator/tests/testenv"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

const (
	// DefaultResyncInterval is how often the agent applies a work again without a change:
	// the manifest controller's ResyncInterval, jittered by up to half again.
	DefaultResyncInterval = 4 * time.Minute
	// userAgent is the real agent's default user agent.
	userAgent = "work-agent"
	// clientQPS and clientBurst are the klusterlet agents' default client limits.
	clientQPS   = 50
	clientBurst = 100
	// appliedCRD is the AppliedManifestWork CRD file in open-cluster-management.io/api.
	appliedCRD = "work/v1/0000_01_work.open-cluster-management.io_appliedmanifestworks.crd.yaml"
)

// Options configure an agent.
type Options struct {
	// Logger receives the agent's logs, and those of the OCM code it calls; the zero value
	// discards them.
	Logger logr.Logger
	// ResyncInterval replaces DefaultResyncInterval.
	ResyncInterval time.Duration
}

// Agent is a running work agent for one regional hub. Its methods are safe for concurrent
// use.
type Agent struct {
	cluster string
	global  *world.Hub
	log     logr.Logger
	resync  time.Duration
	hubHash string

	// On the global hub.
	works       worklister.ManifestWorkNamespaceLister
	workPatcher patcher.Patcher[*workv1.ManifestWork, workv1.ManifestWorkSpec, workv1.ManifestWorkStatus]
	informers   workinformers.SharedInformerFactory

	// On the regional hub.
	dynamic         dynamic.Interface
	mapper          meta.RESTMapper
	applied         workv1client.AppliedManifestWorkInterface
	appliedPatcher  patcher.Patcher[*workv1.AppliedManifestWork, workv1.AppliedManifestWorkSpec, workv1.AppliedManifestWorkStatus]
	appliers        *apply.Appliers
	recorder        events.Recorder
	objects         objectreader.ObjectReader
	feedback        *statusfeedback.StatusReader
	conditionReader *conditions.ConditionReader
	watches         *watches

	queue workqueue.TypedRateLimitingInterface[string]
	// deleting paces the passes over a work waiting for resources to be deleted on the
	// regional hub: 50 ms doubling up to a minute, the AppliedManifestWork finalize
	// controller's backoff (the manifest controller's, for what a work no longer holds,
	// starts at 5 ms).
	deleting workqueue.TypedRateLimiter[string]
	// records is what the manifest controller last did per work; only the worker uses it.
	records map[string]applyRecord

	// connection is held for reading by a pass and for writing by Disconnect, so that no pass
	// writes anything once Disconnect returns.
	connection sync.RWMutex
	connected  bool

	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   chan struct{}
}

// registerFeatures registers the work agent's feature gates once per process, as its command
// does; OCM's status reader reads one.
var registerFeatures = sync.OnceValue(func() error {
	return features.SpokeMutableFeatureGate.Add(ocmfeature.DefaultSpokeWorkFeatureGates)
})

// Start starts an agent serving the ManifestWorks of namespace cluster on the global hub
// (normally the name of the regional hub's ManagedCluster there) and applying them to the
// regional hub that regional reaches as a cluster admin. The agent runs until Stop, until
// ctx is done (so ctx must outlive its users: not a Ginkgo node's context when later nodes
// use the agent), or until the global hub stops. Stop it before stopping the regional hub's
// kube-apiserver.
func Start(ctx context.Context, global *world.Hub, cluster string, regional *rest.Config, opts Options) (*Agent, error) {
	if err := registerFeatures(); err != nil {
		return nil, fmt.Errorf("registering the work agent's feature gates: %w", err)
	}
	if err := installAppliedCRD(regional); err != nil {
		return nil, err
	}
	a := &Agent{
		cluster: cluster, global: global, log: opts.Logger.WithValues("cluster", cluster),
		resync: opts.ResyncInterval, hubHash: helper.HubHash(global.Config.Host),
		recorder: events.NewContextualLoggingEventRecorder(userAgent), feedback: statusfeedback.NewStatusReader(),
		records: map[string]applyRecord{}, connected: true, done: make(chan struct{}),
		deleting: workqueue.NewTypedItemExponentialFailureRateLimiter[string](50*time.Millisecond, time.Minute),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "hubagent-" + cluster}),
	}
	if a.resync <= 0 {
		a.resync = DefaultResyncInterval
	}
	reader, err := conditions.NewConditionReader()
	if err != nil {
		return nil, fmt.Errorf("work condition reader: %w", err)
	}
	a.conditionReader = reader
	if err := a.connectRegional(regional); err != nil {
		return nil, err
	}
	if err := a.connectGlobal(); err != nil {
		return nil, err
	}
	a.run(ctx)
	return a, nil
}

// installAppliedCRD installs the AppliedManifestWork CRD on the regional hub, as the
// klusterlet does, and waits until it is served.
func installAppliedCRD(regional *rest.Config) error {
	dir, err := testenv.ModuleDir("open-cluster-management.io/api")
	if err != nil {
		return err
	}
	_, err = envtest.InstallCRDs(regional, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(dir, appliedCRD)}, ErrorIfPathMissing: true,
	})
	if err != nil {
		return fmt.Errorf("installing the AppliedManifestWork CRD on the regional hub: %w", err)
	}
	return nil
}

// agentConfig is cfg as the agent's clients use it.
func agentConfig(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.UserAgent, c.QPS, c.Burst = userAgent, clientQPS, clientBurst
	return c
}

func (a *Agent) connectRegional(regional *rest.Config) error {
	cfg := agentConfig(regional)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	crds, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	works, err := workclientset.NewForConfig(cfg)
	if err != nil {
		return err
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return fmt.Errorf("REST mapper of the regional hub: %w", err)
	}
	a.dynamic, a.mapper = dyn, mapper
	a.applied = works.WorkV1().AppliedManifestWorks()
	a.appliedPatcher = patcher.NewPatcher[*workv1.AppliedManifestWork, workv1.AppliedManifestWorkSpec, workv1.AppliedManifestWorkStatus](a.applied)
	a.appliers = apply.NewAppliers(dyn, kube, crds)
	return nil
}

func (a *Agent) connectGlobal() error {
	works, err := workclientset.NewForConfig(agentConfig(a.global.Config))
	if err != nil {
		return err
	}
	a.workPatcher = patcher.NewPatcher[*workv1.ManifestWork, workv1.ManifestWorkSpec, workv1.ManifestWorkStatus](
		works.WorkV1().ManifestWorks(a.cluster))
	// The real agent's hub informer: the cluster namespace only, resynced daily.
	a.informers = workinformers.NewSharedInformerFactoryWithOptions(works, 24*time.Hour, workinformers.WithNamespace(a.cluster))
	informer := a.informers.Work().V1().ManifestWorks()
	a.works = informer.Lister().ManifestWorks(a.cluster)
	// OCM's object reader gives the Available conditions; its own informers are not used.
	if a.objects, err = objectreader.NewOptions().NewObjectReader(a.dynamic, informer); err != nil {
		return fmt.Errorf("object reader: %w", err)
	}
	enqueue := func(obj any) {
		if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		if o, err := meta.Accessor(obj); err == nil {
			a.queue.Add(o.GetName())
		}
	}
	_, err = informer.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue,
	})
	return err
}

// run starts the informers and the worker; everything ends when ctx is done or Stop is
// called, and done is closed once it has.
func (a *Agent) run(ctx context.Context) {
	runCtx, cancel := context.WithCancel(klog.NewContext(ctx, a.log))
	a.cancel = cancel
	a.watches = newWatches(runCtx, a.dynamic, a.queue.Add, &a.wg)
	a.informers.Start(runCtx.Done())
	// One worker: the real agent runs a few per controller, but never two on one work.
	a.wg.Go(func() {
		a.informers.WaitForCacheSync(runCtx.Done())
		a.work(runCtx)
	})
	go func() {
		<-runCtx.Done()
		a.queue.ShutDown()
		a.wg.Wait()
		a.informers.Shutdown()
		close(a.done)
	}()
	// The agent stops before the global hub's kube-apiserver does.
	a.global.Go(func(hubCtx context.Context) {
		select {
		case <-hubCtx.Done():
			a.Stop()
		case <-a.done:
		}
	})
}

// Stop stops the agent and waits until all it started has ended. It is safe to call more
// than once.
func (a *Agent) Stop() {
	a.cancel()
	<-a.done
}

// Done is closed once the agent has stopped.
func (a *Agent) Done() <-chan struct{} {
	return a.done
}

// Disconnect cuts the agent from the global hub, as when the regional hub loses its
// connection: until Reconnect it neither applies nor reports anything. Once Disconnect
// returns, no pass of the agent writes.
func (a *Agent) Disconnect() {
	a.connection.Lock()
	a.connected = false
	a.connection.Unlock()
	a.log.Info("Disconnected from the global hub")
}

// Reconnect ends a Disconnect: every work of the cluster namespace is reconciled again,
// which applies what changed meanwhile and reports the current status.
func (a *Agent) Reconnect() {
	a.connection.Lock()
	a.connected = true
	a.connection.Unlock()
	a.log.Info("Reconnected to the global hub")
	works, err := a.works.List(labels.Everything())
	if err != nil {
		// The lister of a namespace fails on nothing but a bad selector.
		a.log.Error(err, "Listing the ManifestWorks failed")
		return
	}
	for _, w := range works {
		a.queue.Add(w.Name)
	}
}

// DisconnectCluster disconnects the agent, then marks the cluster's Available condition
// Unknown on the global hub, as registration does once the agent's lease expires.
func (a *Agent) DisconnectCluster(ctx context.Context) error {
	a.Disconnect()
	return a.global.SetAvailable(ctx, a.cluster, metav1.ConditionUnknown)
}

// ReconnectCluster reconnects the agent and marks the cluster Available again.
func (a *Agent) ReconnectCluster(ctx context.Context) error {
	a.Reconnect()
	return a.global.SetAvailable(ctx, a.cluster, metav1.ConditionTrue)
}

// AppliedManifestWorkName is the name of the AppliedManifestWork that records on the
// regional hub what the agent applied for a ManifestWork.
func (a *Agent) AppliedManifestWorkName(work string) string {
	return a.hubHash + "-" + work
}
