package sim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/openshift/library-go/pkg/operator/resource/resourcemerge"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	workv1 "open-cluster-management.io/api/work/v1"
	"open-cluster-management.io/ocm/pkg/work/helper"
	"open-cluster-management.io/ocm/pkg/work/spoke/conditions"
	"open-cluster-management.io/ocm/pkg/work/spoke/statusfeedback"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// The texts and reasons of OCM's work agent (open-cluster-management.io/ocm v1.2.0,
// pkg/work/spoke): the manifest controller's Applied conditions, the object reader's
// Available conditions and the status controller's StatusFeedbackSynced condition.
const (
	workAppliedComplete   = "AppliedManifestWorkComplete"
	workAppliedFailed     = "AppliedManifestWorkFailed"
	statusFeedbackSynced  = "StatusFeedbackSynced"
	appliedManifestWorkGV = "work.open-cluster-management.io/v1"
	appliedManifestWork   = "AppliedManifestWork"
)

// workKey names a ManifestWork; an empty name stands for every ManifestWork of the cluster
// namespace.
type workKey struct {
	namespace string
	name      string
}

// workAgent plays OCM's work agent on every simulated spoke: it applies the manifests of the
// ManifestWorks in the spoke's cluster namespace to the spoke and writes their status as the
// agent's manifest, available-status and finalize controllers do, with the agent's own
// condition-rule and status-feedback readers.
type workAgent struct {
	sim        *Simulator
	queue      workqueue.TypedRateLimitingInterface[workKey]
	conditions *conditions.ConditionReader
	feedback   *statusfeedback.StatusReader
	mapper     meta.RESTMapper
	hubHash    string
	// applied stands for the AppliedManifestWorks: the resources each ManifestWork applied,
	// read and written with the spoke of its namespace locked.
	mu      sync.Mutex
	applied map[workKey][]workv1.AppliedManifestResourceMeta
}

// startWorkAgent watches the ManifestWorks of the hub and runs the work agent's workers.
func (s *Simulator) startWorkAgent(ctx context.Context) (*workAgent, error) {
	reader, err := conditions.NewConditionReader()
	if err != nil {
		return nil, fmt.Errorf("work condition reader: %w", err)
	}
	w := &workAgent{
		sim: s, conditions: reader, feedback: statusfeedback.NewStatusReader(), mapper: spokeRESTMapper(),
		hubHash: helper.HubHash(s.hub.Config.Host), applied: map[workKey][]workv1.AppliedManifestResourceMeta{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[workKey](),
			workqueue.TypedRateLimitingQueueConfig[workKey]{Name: "spoke-work-agents", Clock: s.opts.Clock}),
	}
	informer, err := s.cache.GetInformer(ctx, &workv1.ManifestWork{})
	if err != nil {
		return nil, fmt.Errorf("informer for ManifestWorks: %w", err)
	}
	enqueue := func(obj any) {
		if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		if o, ok := obj.(client.Object); ok {
			w.queue.Add(workKey{namespace: o.GetNamespace(), name: o.GetName()})
		}
	}
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue,
	}); err != nil {
		return nil, fmt.Errorf("event handler for ManifestWorks: %w", err)
	}
	s.hub.Go(func(ctx context.Context) {
		<-ctx.Done()
		w.queue.ShutDown()
	})
	for range s.opts.Workers {
		s.hub.Go(w.work)
	}
	return w, nil
}

// spokeRESTMapper maps the kinds a simulated spoke serves, as the agent's discovery-backed
// REST mapper does.
func spokeRESTMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	for _, k := range spokeKinds {
		scope := meta.RESTScopeRoot
		if k.namespaced {
			scope = meta.RESTScopeNamespace
		}
		gv := k.gvk.GroupVersion()
		m.AddSpecific(k.gvk, gv.WithResource(k.resource), gv.WithResource(strings.ToLower(k.gvk.Kind)), scope)
	}
	return m
}

// notifier returns the operator that has a spoke's ManifestWorks reconciled after each of
// its rounds, so that their status follows the spoke's objects.
func (w *workAgent) notifier(cluster string) Operator {
	return workNotifier{w: w, cluster: cluster}
}

type workNotifier struct {
	w       *workAgent
	cluster string
}

// Step queues every ManifestWork of the spoke's cluster namespace.
func (n workNotifier) Step(configpolicy.Store, time.Time) (time.Duration, error) {
	n.w.queue.Add(workKey{namespace: n.cluster})
	return 0, nil
}

func (w *workAgent) work(ctx context.Context) {
	for {
		key, shutdown := w.queue.Get()
		if shutdown {
			return
		}
		err := w.sync(ctx, key)
		switch {
		case apierrors.IsConflict(err):
			// The cache had not caught up with a write yet: reconcile again from a fresh copy.
			w.queue.AddRateLimited(key)
		case err != nil && ctx.Err() == nil:
			w.sim.opts.Logger.Error(err, "Simulated work agent failed, retrying", "namespace", key.namespace, "name", key.name)
			w.queue.AddRateLimited(key)
		default:
			w.queue.Forget(key)
		}
		w.queue.Done(key)
	}
}

func (w *workAgent) sync(ctx context.Context, key workKey) error {
	sp := w.sim.spoke(key.namespace)
	if sp == nil {
		return nil
	}
	if key.name == "" {
		return w.fanOut(ctx, key.namespace)
	}
	work := &workv1.ManifestWork{}
	if err := w.sim.cache.Get(ctx, client.ObjectKey{Namespace: key.namespace, Name: key.name}, work); err != nil {
		if apierrors.IsNotFound(err) {
			w.setApplied(key, nil)
		}
		return client.IgnoreNotFound(err)
	}
	if !sp.isReachable() {
		return nil
	}
	if !work.DeletionTimestamp.IsZero() {
		return w.finalize(ctx, sp, work)
	}
	if !controllerutil.ContainsFinalizer(work, workv1.ManifestWorkFinalizer) {
		// The add-finalizer controller; the manifest controller waits for the finalizer.
		updated := work.DeepCopy()
		controllerutil.AddFinalizer(updated, workv1.ManifestWorkFinalizer)
		if err := w.sim.hub.Client.Update(ctx, updated); err != nil {
			return client.IgnoreNotFound(err)
		}
		work = updated
	}
	return w.apply(ctx, sp, work)
}

// fanOut queues every ManifestWork of a cluster namespace.
func (w *workAgent) fanOut(ctx context.Context, namespace string) error {
	var works workv1.ManifestWorkList
	if err := w.sim.cache.List(ctx, &works, client.InNamespace(namespace)); err != nil {
		return err
	}
	for i := range works.Items {
		w.queue.Add(workKey{namespace: namespace, name: works.Items[i].Name})
	}
	return nil
}

// apply reconciles a ManifestWork with the spoke and writes its status when it changed.
func (w *workAgent) apply(ctx context.Context, sp *Spoke, work *workv1.ManifestWork) error {
	var (
		status workv1.ManifestWorkStatus
		wrote  bool
	)
	if !sp.whileReachable(func(objects configpolicy.Store) {
		status, wrote = w.reconcile(ctx, objects, work, w.sim.opts.Clock.Now())
	}) {
		return nil
	}
	if wrote {
		w.sim.Poke(work.Namespace)
	}
	if equality.Semantic.DeepEqual(work.Status.Conditions, status.Conditions) &&
		equality.Semantic.DeepEqual(work.Status.ResourceStatus, status.ResourceStatus) {
		return nil
	}
	updated := work.DeepCopy()
	updated.Status = status
	if err := w.sim.hub.Client.Status().Update(ctx, updated); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("status of ManifestWork %s/%s: %w", work.Namespace, work.Name, err)
	}
	return nil
}

// isReachable tells whether the spoke answers.
func (sp *Spoke) isReachable() bool {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.reachable
}

// whileReachable runs f on the spoke's objects with the spoke locked; false, without
// running f, when the spoke is unreachable.
func (sp *Spoke) whileReachable(f func(objects configpolicy.Store)) bool {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if !sp.reachable {
		return false
	}
	f(sp.objects)
	return true
}

// reconcile applies a ManifestWork to a spoke, unless the work is Complete, and returns its
// new status and whether the spoke's objects changed: the manifest controller, then the
// available-status controller.
func (w *workAgent) reconcile(ctx context.Context, objects configpolicy.Store, work *workv1.ManifestWork, now time.Time) (workv1.ManifestWorkStatus, bool) {
	status := *work.Status.DeepCopy()
	wrote := false
	if !meta.IsStatusConditionTrue(status.Conditions, workv1.WorkComplete) {
		wrote = w.applyWork(objects, work, &status, now)
	}
	if meta.FindStatusCondition(status.Conditions, workv1.WorkApplied) != nil {
		w.readStatus(ctx, objects, work, &status, now)
	}
	return status, wrote
}

// applyResult is how one manifest was applied.
type applyResult struct {
	meta workv1.ManifestResourceMeta
	gvk  schema.GroupVersionKind
	// uid is the applied object's, when it exists.
	uid   types.UID
	wrote bool
	err   error
}

// applyWork applies each manifest, records the Applied conditions in status, and deletes
// what the work applied before and no longer holds, as the manifest and applied-manifest-work
// reconcilers do. It reports whether the spoke's objects changed.
func (w *workAgent) applyWork(objects configpolicy.Store, work *workv1.ManifestWork, status *workv1.ManifestWorkStatus, now time.Time) bool {
	owner := w.owner(work)
	results := make([]applyResult, len(work.Spec.Workload.Manifests))
	manifests := make([]workv1.ManifestCondition, 0, len(results))
	wrote := false
	for i, m := range work.Spec.Workload.Manifests {
		results[i] = w.applyManifest(objects, i, m.Raw, work, status, owner, now)
		wrote = wrote || results[i].wrote
		manifests = append(manifests, workv1.ManifestCondition{
			ResourceMeta: results[i].meta,
			Conditions:   []metav1.Condition{appliedCondition(results[i].err, work.Generation, now)},
		})
	}
	status.ResourceStatus.Manifests = helper.MergeManifestConditions(status.ResourceStatus.Manifests, manifests)
	if all, exists := allApplied(manifests); exists {
		c := metav1.Condition{Type: workv1.WorkApplied, Status: metav1.ConditionFalse, ObservedGeneration: work.Generation,
			Reason: workAppliedFailed, Message: "Failed to apply manifest work"}
		if all {
			c.Status, c.Reason, c.Message = metav1.ConditionTrue, workAppliedComplete, "Apply manifest work complete"
		}
		setCondition(&status.Conditions, c, now)
	}
	deleted, _ := w.trackApplied(objects, workKey{namespace: work.Namespace, name: work.Name}, results, owner)
	return wrote || deleted
}

// applyManifest applies the index-th manifest with the update strategy its manifestConfigs
// give it (Update by default); a manifest whose Complete condition is True is left alone.
func (w *workAgent) applyManifest(objects configpolicy.Store, index int, raw []byte, work *workv1.ManifestWork,
	status *workv1.ManifestWorkStatus, owner metav1.OwnerReference, now time.Time) applyResult {
	required := &unstructured.Unstructured{}
	if err := required.UnmarshalJSON(raw); err != nil {
		return applyResult{meta: workv1.ManifestResourceMeta{Ordinal: int32(index)}, err: err} //nolint:gosec // few manifests
	}
	required.SetUID("")
	resMeta, gvr, err := helper.BuildResourceMeta(index, required, w.mapper)
	result := applyResult{meta: resMeta, gvk: required.GroupVersionKind()}
	if err != nil {
		result.err = err
		return result
	}
	if c := helper.FindManifestCondition(resMeta, status.ResourceStatus.Manifests); c != nil &&
		meta.IsStatusConditionTrue(c.Conditions, workv1.ManifestComplete) {
		result.uid = existingUID(objects, result.gvk, resMeta.Namespace, resMeta.Name)
		return result
	}
	kind, err := kindByGVK(result.gvk, objects)
	if err != nil {
		result.err = err
		return result
	}
	// An owner reference the work holds, or one removed from what the work orphans.
	ref := owner
	if !helper.OwnedByTheWork(gvr, resMeta.Namespace, resMeta.Name, work.Spec.DeleteOption) {
		ref.UID += "-"
	}
	strategy := workv1.UpdateStrategyTypeUpdate
	if option := helper.FindManifestConfiguration(resMeta, work.Spec.ManifestConfigs); option != nil && option.UpdateStrategy != nil {
		strategy = option.UpdateStrategy.Type
	}
	var obj *unstructured.Unstructured
	switch strategy {
	case workv1.UpdateStrategyTypeReadOnly:
		obj = required
	case workv1.UpdateStrategyTypeCreateOnly:
		obj, result.wrote, result.err = createOnly(objects, kind, required, ref, now)
	default:
		// Update, and ServerSideApply, which the simulation does not tell from Update.
		obj, result.wrote, result.err = applyUpdate(objects, kind, required, ref, now)
	}
	if result.err == nil && obj != nil {
		result.uid = obj.GetUID()
	}
	return result
}

func existingUID(objects configpolicy.Store, gvk schema.GroupVersionKind, namespace, name string) types.UID {
	if obj, err := objects.Get(gvk, namespace, name); err == nil {
		return obj.GetUID()
	}
	return ""
}

// applyUpdate is the Update strategy: create the object, or make the existing one the
// manifest, keeping its status and finalizers and merging labels, annotations and owner
// references into its own; nothing is written when nothing changes.
func applyUpdate(objects configpolicy.Store, kind spokeKind, required *unstructured.Unstructured, owner metav1.OwnerReference,
	now time.Time) (*unstructured.Unstructured, bool, error) {
	required.SetOwnerReferences([]metav1.OwnerReference{owner})
	existing, err := getObject(objects, kind, required.GetNamespace(), required.GetName())
	if apierrors.IsNotFound(err) {
		return createObject(objects, kind, required, now)
	}
	if err != nil {
		return nil, false, err
	}
	modified := false
	labels, annotations, owners := existing.GetLabels(), existing.GetAnnotations(), existing.GetOwnerReferences()
	resourcemerge.MergeMap(&modified, &labels, required.GetLabels())
	resourcemerge.MergeMap(&modified, &annotations, required.GetAnnotations())
	resourcemerge.MergeOwnerRefs(&modified, &owners, required.GetOwnerReferences())
	required.SetLabels(labels)
	required.SetAnnotations(annotations)
	required.SetOwnerReferences(owners)
	required.SetFinalizers(existing.GetFinalizers())
	if !modified && sameUnstructured(required, existing) {
		return existing, false, nil
	}
	updated := replacedBy(existing, required)
	if err := objects.Update(updated); err != nil {
		return nil, false, err
	}
	stored, err := objects.Get(kind.gvk, updated.GetNamespace(), updated.GetName())
	return stored, true, err
}

// createOnly is the CreateOnly strategy: create the object when missing, else only manage
// the work's owner reference on it.
func createOnly(objects configpolicy.Store, kind spokeKind, required *unstructured.Unstructured, owner metav1.OwnerReference,
	now time.Time) (*unstructured.Unstructured, bool, error) {
	existing, err := getObject(objects, kind, required.GetNamespace(), required.GetName())
	if apierrors.IsNotFound(err) {
		required.SetOwnerReferences([]metav1.OwnerReference{owner})
		return createObject(objects, kind, required, now)
	}
	if err != nil {
		return nil, false, err
	}
	return mergeOwner(objects, existing, owner)
}

// mergeOwner adds (or, for a UID ending in "-", removes) an owner reference on an object.
func mergeOwner(objects configpolicy.Store, obj *unstructured.Unstructured, owner metav1.OwnerReference) (*unstructured.Unstructured, bool, error) {
	modified := false
	owners := obj.GetOwnerReferences()
	resourcemerge.MergeOwnerRefs(&modified, &owners, []metav1.OwnerReference{owner})
	if !modified {
		return obj, false, nil
	}
	updated := obj.DeepCopy()
	updated.SetOwnerReferences(owners)
	if err := objects.Update(updated); err != nil {
		return nil, false, err
	}
	stored, err := objects.Get(obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName())
	return stored, true, err
}

// createObject creates an object as the API server does: removal keys cleaned, status
// dropped, creation stamped.
func createObject(objects configpolicy.Store, kind spokeKind, required *unstructured.Unstructured, now time.Time) (*unstructured.Unstructured, bool, error) {
	obj, ok := resourcemerge.WithCleanLabelsAndAnnotations(required.DeepCopy()).(*unstructured.Unstructured)
	if !ok {
		return nil, false, errors.New("cleaning the manifest's metadata")
	}
	delete(obj.Object, "status")
	obj.SetCreationTimestamp(metav1.NewTime(now))
	err := objects.Create(obj)
	if errors.Is(err, configpolicy.ErrAlreadyExists) {
		return nil, false, apierrors.NewAlreadyExists(kind.groupResource(), obj.GetName())
	}
	if err != nil {
		return nil, false, err
	}
	stored, err := objects.Get(kind.gvk, obj.GetNamespace(), obj.GetName())
	return stored, true, err
}

// sameUnstructured compares two objects as the agent does before an update: kind, name and
// namespace, then everything but metadata and status.
func sameUnstructured(a, b *unstructured.Unstructured) bool {
	if a.GroupVersionKind() != b.GroupVersionKind() || a.GetName() != b.GetName() || a.GetNamespace() != b.GetNamespace() {
		return false
	}
	strip := func(u *unstructured.Unstructured) map[string]any {
		out := make(map[string]any, len(u.Object))
		for k, v := range u.Object {
			if k != "metadata" && k != "status" {
				out[k] = v
			}
		}
		return out
	}
	return equality.Semantic.DeepEqual(strip(a), strip(b))
}

func appliedCondition(err error, generation int64, now time.Time) metav1.Condition {
	c := metav1.Condition{Type: workv1.ManifestApplied, Status: metav1.ConditionTrue, Reason: workv1.AppliedManifestComplete,
		Message: "Apply manifest complete", ObservedGeneration: generation, LastTransitionTime: metav1.NewTime(now)}
	if err != nil {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, workv1.AppliedManifestFailed, fmt.Sprintf("Failed to apply manifest: %v", err)
	}
	return c
}

// allApplied tells whether every manifest is applied, and whether any has an Applied
// condition.
func allApplied(manifests []workv1.ManifestCondition) (bool, bool) {
	exists := false
	for _, m := range manifests {
		for _, c := range m.Conditions {
			if c.Type != workv1.ManifestApplied {
				continue
			}
			exists = true
			if c.Status == metav1.ConditionFalse {
				return false, true
			}
		}
	}
	return exists, exists
}

// trackApplied records the resources a work applied, as its AppliedManifestWork does, and
// deletes those it applied before and no longer holds. It reports whether it deleted any.
func (w *workAgent) trackApplied(objects configpolicy.Store, key workKey, results []applyResult, owner metav1.OwnerReference) (bool, error) {
	var applied []workv1.AppliedManifestResourceMeta
	for _, r := range results {
		if r.meta.Resource == "" || r.meta.Version == "" || r.meta.Name == "" {
			// The agent cannot read the resource back, and keeps what it recorded.
			return false, nil
		}
		if r.uid == "" {
			continue
		}
		applied = append(applied, appliedResource(r.meta, r.uid))
	}
	untracked := helper.FindUntrackedResources(w.appliedOf(key), applied)
	w.setApplied(key, applied)
	return w.deleteApplied(objects, untracked, owner)
}

func appliedResource(m workv1.ManifestResourceMeta, uid types.UID) workv1.AppliedManifestResourceMeta {
	return workv1.AppliedManifestResourceMeta{
		ResourceIdentifier: workv1.ResourceIdentifier{Group: m.Group, Resource: m.Resource, Namespace: m.Namespace, Name: m.Name},
		Version:            m.Version, UID: string(uid),
	}
}

func (w *workAgent) appliedOf(key workKey) []workv1.AppliedManifestResourceMeta {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.applied[key]
}

func (w *workAgent) setApplied(key workKey, applied []workv1.AppliedManifestResourceMeta) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if applied == nil {
		delete(w.applied, key)
		return
	}
	w.applied[key] = applied
}

// deleteApplied deletes applied resources as the agent does: only those the work's owner
// reference is on and that are the instance it applied; when other AppliedManifestWorks own
// one too, only the reference goes.
func (w *workAgent) deleteApplied(objects configpolicy.Store, resources []workv1.AppliedManifestResourceMeta, owner metav1.OwnerReference) (bool, error) {
	deleted := false
	var errs []error
	for _, r := range resources {
		gvk, err := w.mapper.KindFor(schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		obj, err := objects.Get(gvk, r.Namespace, r.Name)
		if errors.Is(err, configpolicy.ErrNotFound) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !helper.IsOwnedBy(owner, obj.GetOwnerReferences()) {
			continue
		}
		if otherAppliedOwners(owner, obj.GetOwnerReferences()) {
			removal := owner
			removal.UID += "-"
			_, wrote, err := mergeOwner(objects, obj, removal)
			deleted = deleted || wrote
			errs = append(errs, err)
			continue
		}
		if r.UID != string(obj.GetUID()) {
			continue
		}
		if err := objects.Delete(gvk, r.Namespace, r.Name); err != nil && !errors.Is(err, configpolicy.ErrNotFound) {
			errs = append(errs, err)
			continue
		}
		deleted = true
	}
	return deleted, errors.Join(errs...)
}

func otherAppliedOwners(owner metav1.OwnerReference, owners []metav1.OwnerReference) bool {
	for _, o := range owners {
		if o.APIVersion == appliedManifestWorkGV && o.Kind == appliedManifestWork && o.UID != owner.UID {
			return true
		}
	}
	return false
}

// owner is the owner reference of the work's AppliedManifestWork, "<hub hash>-<work name>",
// which the agent puts on what the work owns; its UID follows the ManifestWork's, as a
// new AppliedManifestWork is made for a new ManifestWork.
func (w *workAgent) owner(work *workv1.ManifestWork) metav1.OwnerReference {
	sum := sha256.Sum256([]byte(w.hubHash + "/" + string(work.UID)))
	h := hex.EncodeToString(sum[:16])
	uid := h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	return metav1.OwnerReference{APIVersion: appliedManifestWorkGV, Kind: appliedManifestWork,
		Name: w.hubHash + "-" + work.Name, UID: types.UID(uid)}
}

// readStatus is the available-status controller: each manifest's Available condition, its
// status feedback and its condition rules, then the work's aggregated conditions.
func (w *workAgent) readStatus(ctx context.Context, objects configpolicy.Store, work *workv1.ManifestWork,
	status *workv1.ManifestWorkStatus, now time.Time) {
	for i := range status.ResourceStatus.Manifests {
		m := &status.ResourceStatus.Manifests[i]
		obj, available := readManifest(objects, m.ResourceMeta)
		setCondition(&m.Conditions, available, now)
		if obj == nil {
			continue
		}
		option := helper.FindManifestConfiguration(m.ResourceMeta, work.Spec.ManifestConfigs)
		values, synced := w.feedbackValues(obj, option)
		if !equality.Semantic.DeepEqual(m.StatusFeedbacks.Values, values) {
			meta.RemoveStatusCondition(&m.Conditions, synced.Type)
		}
		setCondition(&m.Conditions, synced, now)
		m.StatusFeedbacks.Values = values
		if option != nil && len(option.ConditionRules) > 0 {
			for _, c := range w.conditions.EvaluateConditions(ctx, obj, option.ConditionRules) {
				c.ObservedGeneration = work.Generation
				setCondition(&m.Conditions, c, now)
			}
		}
		conditions.PruneConditionsGeneratedByConditionRules(&m.Conditions, work.Generation)
	}
	for _, c := range conditions.AggregateManifestConditions(work.Generation, status.ResourceStatus.Manifests) {
		setCondition(&status.Conditions, c, now)
	}
	conditions.PruneConditionsGeneratedByConditionRules(&status.Conditions, work.Generation)
}

// readManifest reads a manifest's object as the agent's object reader does, with its
// Available condition; nil when it cannot be read.
func readManifest(objects configpolicy.Store, m workv1.ManifestResourceMeta) (*unstructured.Unstructured, metav1.Condition) {
	c := metav1.Condition{Type: workv1.ManifestAvailable}
	if m.Resource == "" || m.Version == "" || m.Name == "" {
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, "IncompleteResourceMeta", "Resource meta is incomplete"
		return nil, c
	}
	gvk := schema.GroupVersionKind{Group: m.Group, Version: m.Version, Kind: m.Kind}
	kind, err := kindByGVK(gvk, objects)
	var obj *unstructured.Unstructured
	if err == nil {
		obj, err = getObject(objects, kind, m.Namespace, m.Name)
	}
	switch {
	case apierrors.IsNotFound(err):
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "ResourceNotAvailable", "Resource is not available"
		return nil, c
	case err != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, "FetchingResourceFailed", fmt.Sprintf("Failed to fetch resource: %v", err)
		return nil, c
	}
	c.Status, c.Reason, c.Message = metav1.ConditionTrue, "ResourceAvailable", "Resource is available"
	return obj, c
}

// feedbackValues reads the values of a manifest's feedback rules with the agent's status
// reader, and the StatusFeedbackSynced condition the agent sets.
func (w *workAgent) feedbackValues(obj *unstructured.Unstructured, option *workv1.ManifestConfigOption) ([]workv1.FeedbackValue, metav1.Condition) {
	c := metav1.Condition{Type: statusFeedbackSynced, Status: metav1.ConditionTrue, Reason: "NoStatusFeedbackSynced"}
	if option == nil || len(option.FeedbackRules) == 0 {
		return nil, c
	}
	var (
		values []workv1.FeedbackValue
		errs   []error
	)
	for _, rule := range option.FeedbackRules {
		v, err := w.feedback.GetValuesByRule(obj, rule)
		if err != nil {
			errs = append(errs, err)
		}
		values = append(values, v...)
	}
	if err := errors.Join(errs...); err != nil {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "StatusFeedbackSyncFailed", fmt.Sprintf("Sync status feedback failed with error %v", err)
		return values, c
	}
	c.Reason = statusFeedbackSynced
	return values, c
}

// setCondition sets a condition as meta.SetStatusCondition does, its transition time now.
func setCondition(conds *[]metav1.Condition, c metav1.Condition, now time.Time) {
	c.LastTransitionTime = metav1.NewTime(now)
	meta.SetStatusCondition(conds, c)
}

// finalize carries out the deletion of a ManifestWork as the agent's finalize controllers do:
// the work is marked Deleting, the resources it owns are deleted (what its deleteOption
// orphans carries no owner reference and stays), then the finalizer goes.
func (w *workAgent) finalize(ctx context.Context, sp *Spoke, work *workv1.ManifestWork) error {
	if !controllerutil.ContainsFinalizer(work, workv1.ManifestWorkFinalizer) {
		return nil
	}
	key := workKey{namespace: work.Namespace, name: work.Name}
	updated := work.DeepCopy()
	setCondition(&updated.Status.Conditions, metav1.Condition{Type: workv1.WorkDeleting, Status: metav1.ConditionTrue,
		Reason: "WorkDeleting", Message: "ManifestWork is being deleted", ObservedGeneration: work.Generation}, w.sim.opts.Clock.Now())
	if !equality.Semantic.DeepEqual(work.Status.Conditions, updated.Status.Conditions) {
		if err := w.sim.hub.Client.Status().Update(ctx, updated); err != nil {
			return client.IgnoreNotFound(err)
		}
	}
	var (
		deleted bool
		err     error
	)
	if !sp.whileReachable(func(objects configpolicy.Store) {
		deleted, err = w.deleteApplied(objects, w.resourcesOf(objects, key, work), w.owner(work))
	}) {
		return nil
	}
	if deleted {
		w.sim.Poke(work.Namespace)
	}
	if err != nil {
		return err
	}
	controllerutil.RemoveFinalizer(updated, workv1.ManifestWorkFinalizer)
	if err := w.sim.hub.Client.Update(ctx, updated); err != nil {
		return client.IgnoreNotFound(err)
	}
	w.setApplied(key, nil)
	return nil
}

// resourcesOf returns what a work applied; when the agent holds no record (the simulator
// started after the work was applied), the resources its status names.
func (w *workAgent) resourcesOf(objects configpolicy.Store, key workKey, work *workv1.ManifestWork) []workv1.AppliedManifestResourceMeta {
	if applied := w.appliedOf(key); applied != nil {
		return applied
	}
	var out []workv1.AppliedManifestResourceMeta
	for _, m := range work.Status.ResourceStatus.Manifests {
		if uid := existingUID(objects, schema.GroupVersionKind{Group: m.ResourceMeta.Group, Version: m.ResourceMeta.Version,
			Kind: m.ResourceMeta.Kind}, m.ResourceMeta.Namespace, m.ResourceMeta.Name); uid != "" {
			out = append(out, appliedResource(m.ResourceMeta, uid))
		}
	}
	return out
}
