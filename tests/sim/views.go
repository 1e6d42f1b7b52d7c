package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// How the work-manager add-on answers views (multicloud-operators-foundation,
// pkg/klusterlet/view/view_controller.go): the view is refreshed every
// spec.scope.updateIntervalSeconds (DefaultViewInterval when zero), and an event on the view
// within that interval of the Processing condition's last transition is put off until the
// interval has passed.
const (
	// DefaultViewInterval is how often the agent refreshes a view that names no interval.
	DefaultViewInterval = 30 * time.Second
	// DefaultActionTTL is how long the hub keeps a ManagedClusterAction once it has a
	// Completed condition, True or False (the foundation hub's gc controller).
	DefaultActionTTL = 60 * time.Second

	viewWatching     = "Watching resources successfully"
	viewGetFailed    = "failed to get resource with err: "
	viewSecretDenied = "viewing secrets is not allowed"
	// noRoute is what the API server answers for a path that names no resource, for example
	// a cluster-scoped resource under a namespace.
	noRoute = "the server could not find the requested resource"
)

// agentKind tells what an agent work item is about.
type agentKind int

const (
	viewItem agentKind = iota
	actionItem
	actionGCItem
	// clusterItem asks for every view (and every unanswered action) of a cluster namespace.
	clusterItem
)

type agentKey struct {
	kind      agentKind
	namespace string
	name      string
}

// agents plays, for every simulated spoke, the work-manager add-on's view and action
// controllers, the hub's action garbage collector, and the Job controller.
type agents struct {
	sim       *Simulator
	queue     workqueue.TypedRateLimitingInterface[agentKey]
	jobs      *jobPool
	pollViews bool
	actionTTL time.Duration
	// completed holds the UIDs of the actions this agent completed, so that a cache that has
	// not seen the status yet does not get one carried out twice.
	completed sync.Map
	// works is the work agent of the spokes (work.go).
	works *workAgent
}

// startViewsAndActions answers ManagedClusterViews and ManagedClusterActions for the
// simulated spokes and runs their Jobs.
func (s *Simulator) startViewsAndActions(ctx context.Context) error {
	a := &agents{
		sim: s, pollViews: s.opts.PollViews, actionTTL: s.opts.ActionTTL,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[agentKey](),
			workqueue.TypedRateLimitingQueueConfig[agentKey]{Name: "spoke-agents", Clock: s.opts.Clock}),
	}
	if a.actionTTL == 0 {
		a.actionTTL = DefaultActionTTL
	}
	a.jobs = newJobPool(ctx, s.opts, s.Poke, s.hub.Go)
	s.hub.Go(func(ctx context.Context) {
		<-ctx.Done()
		a.queue.ShutDown()
		a.jobs.stop()
	})
	for kind, obj := range map[agentKind]client.Object{
		viewItem: &viewv1beta1.ManagedClusterView{}, actionItem: &actionv1beta1.ManagedClusterAction{},
	} {
		informer, err := s.cache.GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("informer for %T: %w", obj, err)
		}
		enqueue := a.enqueuer(kind)
		if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    enqueue,
			UpdateFunc: func(_, obj any) { enqueue(obj) },
		}); err != nil {
			return fmt.Errorf("event handler for %T: %w", obj, err)
		}
	}
	works, err := s.startWorkAgent(ctx)
	if err != nil {
		return err
	}
	a.works = works
	s.agents = a
	for range s.opts.Workers {
		s.hub.Go(a.work)
	}
	return nil
}

func (a *agents) enqueuer(kind agentKind) func(obj any) {
	return func(obj any) {
		if o, ok := obj.(client.Object); ok {
			a.queue.Add(agentKey{kind: kind, namespace: o.GetNamespace(), name: o.GetName()})
		}
	}
}

// operators returns what a spoke runs for the agents each round: the Job controller, then a
// step that has the spoke's views refreshed and its unanswered actions carried out, and one
// that has its ManifestWorks reconciled.
func (a *agents) operators(cluster string) []Operator {
	if a == nil {
		return nil
	}
	return []Operator{newJobController(cluster, a.jobs), roundNotifier{a: a, cluster: cluster}, a.works.notifier(cluster)}
}

// roundNotifier tells the agents that a spoke finished its operators' round, so that views
// follow the spoke's objects and actions left while the spoke was away are answered.
type roundNotifier struct {
	a       *agents
	cluster string
}

// Step queues the spoke's cluster namespace for the agents.
func (n roundNotifier) Step(configpolicy.Store, time.Time) (time.Duration, error) {
	n.a.queue.Add(agentKey{kind: clusterItem, namespace: n.cluster})
	return 0, nil
}

func (a *agents) work(ctx context.Context) {
	for {
		key, shutdown := a.queue.Get()
		if shutdown {
			return
		}
		err := a.handle(ctx, key)
		switch {
		case apierrors.IsConflict(err):
			// The cache had not caught up with a write yet: answer again from a fresh copy.
			a.queue.AddRateLimited(key)
		case err != nil && ctx.Err() == nil:
			a.sim.opts.Logger.Error(err, "Simulated agent failed, retrying", "namespace", key.namespace, "name", key.name)
			a.queue.AddRateLimited(key)
		default:
			a.queue.Forget(key)
		}
		a.queue.Done(key)
	}
}

func (a *agents) handle(ctx context.Context, key agentKey) error {
	switch key.kind {
	case viewItem:
		return a.answerView(ctx, key)
	case actionItem:
		return a.answerAction(ctx, key)
	case actionGCItem:
		return a.collectAction(ctx, key)
	default:
		return a.fanOut(ctx, key.namespace)
	}
}

// fanOut queues the views of a cluster namespace (when views only poll, those never
// answered) and its actions that have no answer yet.
func (a *agents) fanOut(ctx context.Context, namespace string) error {
	var views viewv1beta1.ManagedClusterViewList
	if err := a.sim.cache.List(ctx, &views, client.InNamespace(namespace)); err != nil {
		return err
	}
	for i := range views.Items {
		if !a.pollViews || len(views.Items[i].Status.Conditions) == 0 {
			a.queue.Add(agentKey{kind: viewItem, namespace: namespace, name: views.Items[i].Name})
		}
	}
	var actions actionv1beta1.ManagedClusterActionList
	if err := a.sim.cache.List(ctx, &actions, client.InNamespace(namespace)); err != nil {
		return err
	}
	for i := range actions.Items {
		if meta.FindStatusCondition(actions.Items[i].Status.Conditions, actionv1beta1.ConditionActionCompleted) == nil {
			a.queue.Add(agentKey{kind: actionItem, namespace: namespace, name: actions.Items[i].Name})
		}
	}
	return nil
}

// answerView writes what the spoke's view agent would: the viewed object in status.result
// and the Processing condition. An unreachable spoke answers nothing.
func (a *agents) answerView(ctx context.Context, key agentKey) error {
	view := &viewv1beta1.ManagedClusterView{}
	if err := a.sim.cache.Get(ctx, client.ObjectKey{Namespace: key.namespace, Name: key.name}, view); err != nil {
		return client.IgnoreNotFound(err)
	}
	sp := a.sim.spoke(key.namespace)
	if sp == nil {
		return nil
	}
	now := a.sim.opts.Clock.Now()
	interval := viewInterval(view.Spec.Scope)
	if wait := viewHoldoff(view.Status, interval, now); a.pollViews && wait > 0 {
		a.queue.AddAfter(key, wait)
		return nil
	}
	if interval > 0 {
		defer a.queue.AddAfter(key, interval)
	}
	status, reachable := sp.answerView(view.Spec.Scope, view.Status, now)
	if !reachable || sameViewStatus(view.Status, status) {
		return nil
	}
	updated := view.DeepCopy()
	updated.Status = status
	if err := a.sim.hub.Client.Status().Update(ctx, updated); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("status of view %s/%s: %w", key.namespace, key.name, err)
	}
	return nil
}

// viewInterval is the refresh interval of a view, as the agent reads it.
func viewInterval(scope viewv1beta1.ViewScope) time.Duration {
	if scope.UpdateIntervalSeconds != 0 {
		return time.Duration(scope.UpdateIntervalSeconds) * time.Second
	}
	return DefaultViewInterval
}

// viewHoldoff is how long the agent puts off a view it was asked about at now: until the
// interval has passed since its Processing condition last changed. Since the condition
// changes only with its status, a view whose answer stays the same is refreshed every
// interval, and at once on any event after the first interval.
func viewHoldoff(status viewv1beta1.ViewStatus, interval time.Duration, now time.Time) time.Duration {
	c := meta.FindStatusCondition(status.Conditions, viewv1beta1.ConditionViewProcessing)
	if c == nil {
		return 0
	}
	if since := now.Sub(c.LastTransitionTime.Time); since < interval {
		return interval - since
	}
	return 0
}

// answerView computes a view's status from the spoke's objects; false when the spoke is
// unreachable or silenced.
func (sp *Spoke) answerView(scope viewv1beta1.ViewScope, current viewv1beta1.ViewStatus, now time.Time) (viewv1beta1.ViewStatus, bool) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if !sp.reachable || sp.silent {
		return viewv1beta1.ViewStatus{}, false
	}
	return ViewAnswer(scope, current, sp.objects, now), true
}

// ViewAnswer returns the status the view agent writes for a view with scope on a cluster
// holding objects, given the view's current status, at now:
//
//   - the scope names its object by spec.scope.resource (a resource argument as kubectl takes
//     it: "clusterversions", "clusterversion", "ClusterVersion", "jobs.batch",
//     "jobs.v1.batch"), or else by kind, version and apiGroup;
//   - found: Processing True, reason GetResourceProcessing, and status.result the object as
//     the cluster's API server returns it;
//   - not found, or any other failure: Processing False with the reasons
//     ResourceNameInvalid, ResourceTypeInvalid, ResourceGVKInvalid or GetResourceFailed and a
//     message "failed to get resource with err: ..." (for a missing object: `<resource>.<group>
//     "<name>" not found`); status.result keeps what it held, as the agent leaves it;
//   - Secrets are never shown (ResourceTypeInvalid, "viewing secrets is not allowed").
//
// The condition's lastTransitionTime changes only when its status does.
func ViewAnswer(scope viewv1beta1.ViewScope, current viewv1beta1.ViewStatus, objects configpolicy.Store, now time.Time) viewv1beta1.ViewStatus {
	status := *current.DeepCopy()
	cond := metav1.Condition{Type: viewv1beta1.ConditionViewProcessing, LastTransitionTime: metav1.NewTime(now)}
	obj, failure := lookupView(scope, objects)
	if failure != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, failure.reason, failure.message
		meta.SetStatusCondition(&status.Conditions, cond)
		return status
	}
	cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, viewv1beta1.ReasonGetResource, viewWatching
	meta.SetStatusCondition(&status.Conditions, cond)
	raw, err := json.Marshal(obj.Object)
	if err == nil && !bytes.Equal(raw, status.Result.Raw) {
		status.Result = runtime.RawExtension{Raw: raw}
	}
	return status
}

// viewFailure is why a view shows no object.
type viewFailure struct {
	reason  string
	message string
}

func lookupView(scope viewv1beta1.ViewScope, objects configpolicy.Store) (*unstructured.Unstructured, *viewFailure) {
	if scope.Name == "" {
		return nil, &viewFailure{viewv1beta1.ReasonResourceNameInvalid, viewGetFailed + "invalid resource name"}
	}
	if scope.Resource == "" && (scope.Kind == "" || scope.Version == "") {
		return nil, &viewFailure{viewv1beta1.ReasonResourceTypeInvalid, viewGetFailed + "invalid resource type"}
	}
	var (
		kind spokeKind
		err  error
	)
	if scope.Resource == "" {
		kind, err = kindByGVK(schema.GroupVersionKind{Group: scope.Group, Version: scope.Version, Kind: scope.Kind}, objects)
		if err != nil {
			return nil, &viewFailure{viewv1beta1.ReasonResourceGVKInvalid, viewGetFailed + err.Error()}
		}
	} else if kind, err = kindByResource(scope.Resource, objects); err != nil {
		return nil, &viewFailure{viewv1beta1.ReasonResourceTypeInvalid, viewGetFailed + err.Error()}
	}
	if kind.resource == "secrets" && kind.gvk.Group == "" {
		return nil, &viewFailure{viewv1beta1.ReasonResourceTypeInvalid, viewSecretDenied}
	}
	obj, err := getObject(objects, kind, scope.Namespace, scope.Name)
	if err != nil {
		return nil, &viewFailure{viewv1beta1.ReasonGetResourceFailed, viewGetFailed + err.Error()}
	}
	return obj, nil
}

// kindByGVK finds a kind the cluster serves, as a REST mapping by kind and version does.
func kindByGVK(gvk schema.GroupVersionKind, objects configpolicy.Store) (spokeKind, error) {
	if m, ok := objects.Mapping(gvk); ok {
		return spokeKind{gvk: gvk, resource: m.Resource, namespaced: m.Namespaced}, nil
	}
	return spokeKind{}, &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
}

// kindByResource finds the kind a resource argument names, as the agent's MappingFor does: a
// fully specified resource.version.group, then resource.group (an empty group matching any),
// plural or singular and case-insensitive, then the same forms read as a kind.
func kindByResource(arg string, objects configpolicy.Store) (spokeKind, error) {
	gvr, gr := schema.ParseResourceArg(arg)
	if gvr != nil {
		if k, ok := matchResource(*gvr, objects); ok {
			return k, nil
		}
	}
	if k, ok := matchResource(gr.WithVersion(""), objects); ok {
		return k, nil
	}
	gvk, gk := schema.ParseKindArg(arg)
	if gvk != nil {
		if k, err := kindByGVK(*gvk, objects); err == nil {
			return k, nil
		}
	}
	for _, k := range spokeKinds {
		if k.gvk.GroupKind() == gk {
			return kindByGVK(k.gvk, objects)
		}
	}
	return spokeKind{}, fmt.Errorf("fail to mapping GroupKind %v, GroupKindVersion %v, resource:%s err: %w",
		gk, "", arg, &meta.NoKindMatchError{GroupKind: gk})
}

func matchResource(gvr schema.GroupVersionResource, objects configpolicy.Store) (spokeKind, bool) {
	name := strings.ToLower(gvr.Resource)
	for _, k := range spokeKinds {
		if (gvr.Group != "" && gvr.Group != k.gvk.Group) || (gvr.Version != "" && gvr.Version != k.gvk.Version) {
			continue
		}
		if name != k.resource && name != strings.ToLower(k.gvk.Kind) {
			continue
		}
		if _, ok := objects.Mapping(k.gvk); ok {
			return k, true
		}
	}
	return spokeKind{}, false
}

// getObject reads an object the way a dynamic client GET does, with the API server's errors.
func getObject(objects configpolicy.Store, kind spokeKind, namespace, name string) (*unstructured.Unstructured, error) {
	if err := checkPath(kind, namespace, name); err != nil {
		return nil, err
	}
	obj, err := objects.Get(kind.gvk, namespace, name)
	if errors.Is(err, configpolicy.ErrNotFound) {
		return nil, apierrors.NewNotFound(kind.groupResource(), name)
	}
	return obj, err
}

// checkPath rejects what the API server has no route for: a namespaced resource without a
// namespace or a cluster-scoped one under a namespace, and an empty name.
func checkPath(kind spokeKind, namespace, name string) error {
	if name == "" {
		return errors.New("resource name may not be empty")
	}
	if kind.namespaced != (namespace != "") {
		return errors.New(noRoute)
	}
	return nil
}

func (k spokeKind) groupResource() schema.GroupResource {
	return schema.GroupResource{Group: k.gvk.Group, Resource: k.resource}
}

// sameViewStatus compares view statuses as the API server stores them: conditions, and
// results as JSON values.
func sameViewStatus(a, b viewv1beta1.ViewStatus) bool {
	return equality.Semantic.DeepEqual(a.Conditions, b.Conditions) && sameRaw(a.Result.Raw, b.Result.Raw)
}

func sameRaw(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// Object returns a copy of an object on a simulated spoke, or an error wrapping
// configpolicy.ErrNotFound.
func (s *Simulator) Object(cluster string, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	sp := s.spoke(cluster)
	if sp == nil {
		return nil, fmt.Errorf("no simulated spoke %q", cluster)
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	obj, err := sp.objects.Get(gvk, namespace, name)
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", gvk.Kind, cluster, err)
	}
	return obj.DeepCopy(), nil
}

// Objects returns copies of the objects of a kind on a simulated spoke, in one namespace or,
// with "", in all.
func (s *Simulator) Objects(cluster string, gvk schema.GroupVersionKind, namespace string) ([]*unstructured.Unstructured, error) {
	sp := s.spoke(cluster)
	if sp == nil {
		return nil, fmt.Errorf("no simulated spoke %q", cluster)
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	objs, err := sp.objects.List(gvk, namespace)
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", gvk.Kind, cluster, err)
	}
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = o.DeepCopy()
	}
	return out, nil
}
