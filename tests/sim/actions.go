package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// What the work-manager add-on's action controller writes
// (multicloud-operators-foundation, pkg/klusterlet/action/handle_action.go).
const (
	// ReasonActionDone is the reason of a Completed=True condition.
	ReasonActionDone  = "ActionDone"
	actionDoneMessage = "Resource action is done."
)

// errUnanswered marks an action the agent leaves without status: the real agent panics on it
// (no spec.kube, or a Delete without spec.kube.resource) and the panic is recovered.
var errUnanswered = errors.New("action left unanswered")

// answerAction carries out an action the way the spoke's action agent does, once: an action
// whose Completed condition is True is never looked at again; a failed one is tried again
// on its next event. The hub's garbage collector then deletes it.
func (a *agents) answerAction(ctx context.Context, key agentKey) error {
	action := &actionv1beta1.ManagedClusterAction{}
	if err := a.sim.cache.Get(ctx, client.ObjectKey{Namespace: key.namespace, Name: key.name}, action); err != nil {
		return client.IgnoreNotFound(err)
	}
	if meta.IsStatusConditionTrue(action.Status.Conditions, actionv1beta1.ConditionActionCompleted) {
		a.scheduleCollection(key, action.Status, a.sim.opts.Clock.Now())
		return nil
	}
	if _, done := a.completed.Load(action.UID); done {
		return nil
	}
	sp := a.sim.spoke(key.namespace)
	if sp == nil {
		return nil
	}
	now := a.sim.opts.Clock.Now()
	status, wrote, answered := sp.carryOut(action, now)
	if wrote {
		a.sim.Poke(key.namespace)
	}
	if !answered {
		return nil
	}
	defer a.scheduleCollection(key, status, now)
	if equality.Semantic.DeepEqual(action.Status.Conditions, status.Conditions) && sameRaw(action.Status.Result.Raw, status.Result.Raw) {
		return nil
	}
	updated := action.DeepCopy()
	updated.Status = status
	if err := a.sim.hub.Client.Status().Update(ctx, updated); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("status of action %s/%s: %w", key.namespace, key.name, err)
	}
	if meta.IsStatusConditionTrue(status.Conditions, actionv1beta1.ConditionActionCompleted) {
		a.completed.Store(action.UID, struct{}{})
	}
	return nil
}

// scheduleCollection queues an action for the hub's garbage collector, which deletes it once
// its Completed condition (True or False) is older than the TTL.
func (a *agents) scheduleCollection(key agentKey, status actionv1beta1.ActionStatus, now time.Time) {
	c := meta.FindStatusCondition(status.Conditions, actionv1beta1.ConditionActionCompleted)
	if c == nil || a.actionTTL < 0 {
		return
	}
	a.queue.AddAfter(agentKey{kind: actionGCItem, namespace: key.namespace, name: key.name},
		max(c.LastTransitionTime.Add(a.actionTTL).Sub(now), 0))
}

// collectAction deletes an action whose Completed condition is older than the TTL.
func (a *agents) collectAction(ctx context.Context, key agentKey) error {
	action := &actionv1beta1.ManagedClusterAction{}
	if err := a.sim.cache.Get(ctx, client.ObjectKey{Namespace: key.namespace, Name: key.name}, action); err != nil {
		return client.IgnoreNotFound(err)
	}
	c := meta.FindStatusCondition(action.Status.Conditions, actionv1beta1.ConditionActionCompleted)
	if c == nil {
		return nil
	}
	if left := c.LastTransitionTime.Add(a.actionTTL).Sub(a.sim.opts.Clock.Now()); left > 0 {
		a.queue.AddAfter(key, left)
		return nil
	}
	if err := a.sim.hub.Client.Delete(ctx, action); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("collecting action %s/%s: %w", key.namespace, key.name, err)
	}
	a.completed.Delete(action.UID)
	return nil
}

// carryOut applies an action to the spoke and returns the action's new status, whether the
// spoke's objects changed, and whether the agent answers at all (an unreachable or silenced
// spoke does not).
func (sp *Spoke) carryOut(action *actionv1beta1.ManagedClusterAction, now time.Time) (actionv1beta1.ActionStatus, bool, bool) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if !sp.reachable || sp.silent {
		return actionv1beta1.ActionStatus{}, false, false
	}
	status := *action.Status.DeepCopy()
	result, wrote, reason, err := ApplyAction(sp.objects, action.Spec, status.Result, now)
	if errors.Is(err, errUnanswered) {
		return status, wrote, false
	}
	cond := metav1.Condition{Type: actionv1beta1.ConditionActionCompleted, LastTransitionTime: metav1.NewTime(now)}
	if err != nil {
		cond.Status, cond.Reason = metav1.ConditionFalse, reason
		cond.Message = fmt.Sprintf("failed to handle %v action with err: %v", action.Spec.ActionType, err)
	} else {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, ReasonActionDone, actionDoneMessage
		status.Result = result
	}
	meta.SetStatusCondition(&status.Conditions, cond)
	return status, wrote, true
}

// ApplyAction carries out an action's spec on a cluster's objects as the action agent does
// and returns the action's result (the template for Create and Update, nothing for Delete),
// whether objects changed, and on failure the condition reason with the error:
//
//   - Create creates spec.kube.template in spec.kube.namespace (else the template's
//     namespace); a namespaced object needs a namespace, and the namespace must exist.
//   - Update reads the object the template names (namespace as for Create) and makes it
//     the template, as the agent's three-way merge patch with the live object as the
//     original does: fields the template leaves out are removed, except the metadata the
//     API server keeps and the status. When nothing changes, the previous result stays.
//   - Delete deletes spec.kube.resource (a resource argument as for views) named
//     spec.kube.name in spec.kube.namespace.
//
// Errors read like the API server's ("jobs.batch \"x\" already exists", "namespaces \"x\"
// not found").
func ApplyAction(objects configpolicy.Store, spec actionv1beta1.ActionSpec, previous runtime.RawExtension,
	now time.Time) (runtime.RawExtension, bool, string, error) {
	kube := spec.KubeWork
	if kube == nil && knownActionType(spec.ActionType) {
		return runtime.RawExtension{}, false, "", errUnanswered
	}
	switch spec.ActionType {
	case actionv1beta1.CreateActionType:
		err := createFromTemplate(objects, kube, now)
		return kube.ObjectTemplate, err == nil, actionv1beta1.ReasonCreateResourceFailed, err
	case actionv1beta1.UpdateActionType:
		result, wrote, err := updateFromTemplate(objects, kube, previous)
		return result, wrote, actionv1beta1.ReasonUpdateResourceFailed, err
	case actionv1beta1.DeleteActionType:
		if kube.Resource == "" {
			return runtime.RawExtension{}, false, "", errUnanswered
		}
		err := deleteResource(objects, kube)
		return runtime.RawExtension{}, err == nil, actionv1beta1.ReasonDeleteResourceFailed, err
	default:
		return runtime.RawExtension{}, false, actionv1beta1.ReasonActionTypeInvalid, errors.New("invalid action type")
	}
}

func knownActionType(t actionv1beta1.ActionType) bool {
	return t == actionv1beta1.CreateActionType || t == actionv1beta1.UpdateActionType || t == actionv1beta1.DeleteActionType
}

// decodeTemplate decodes an action's template and finds its kind and namespace.
func decodeTemplate(objects configpolicy.Store, kube *actionv1beta1.KubeWorkSpec) (*unstructured.Unstructured, spokeKind, string, error) {
	obj := &unstructured.Unstructured{}
	if err := json.Unmarshal(kube.ObjectTemplate.Raw, obj); err != nil {
		return nil, spokeKind{}, "", err
	}
	kind, err := kindByGVK(obj.GroupVersionKind(), objects)
	if err != nil {
		return nil, spokeKind{}, "", err
	}
	namespace := kube.Namespace
	if namespace == "" {
		namespace = obj.GetNamespace()
	}
	return obj, kind, namespace, nil
}

func createFromTemplate(objects configpolicy.Store, kube *actionv1beta1.KubeWorkSpec, now time.Time) error {
	obj, kind, namespace, err := decodeTemplate(objects, kube)
	if err != nil {
		return err
	}
	if kind.namespaced && namespace == "" {
		return errors.New("namespace must be set")
	}
	if err := nameForCreate(obj, kind); err != nil {
		return err
	}
	if err := checkPath(kind, namespace, obj.GetName()); err != nil {
		return err
	}
	if ns := obj.GetNamespace(); ns != "" && ns != namespace {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if namespace != "" {
		if _, err := objects.Get(configpolicy.NamespaceGVK, "", namespace); err != nil {
			return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, namespace)
		}
		obj.SetNamespace(namespace)
	}
	// The API server drops the status of a new object and stamps its creation.
	delete(obj.Object, "status")
	obj.SetCreationTimestamp(metav1.NewTime(now))
	err = objects.Create(obj)
	if errors.Is(err, configpolicy.ErrAlreadyExists) {
		return apierrors.NewAlreadyExists(kind.groupResource(), obj.GetName())
	}
	return err
}

// nameForCreate names an object that asks for a generated name, as the API server does.
func nameForCreate(obj *unstructured.Unstructured, kind spokeKind) error {
	if obj.GetName() != "" {
		return nil
	}
	if prefix := obj.GetGenerateName(); prefix != "" {
		obj.SetName(prefix + utilrand.String(5))
		return nil
	}
	return apierrors.NewInvalid(kind.gvk.GroupKind(), "", field.ErrorList{
		field.Required(field.NewPath("metadata", "name"), "name or generateName is required"),
	})
}

func updateFromTemplate(objects configpolicy.Store, kube *actionv1beta1.KubeWorkSpec,
	previous runtime.RawExtension) (runtime.RawExtension, bool, error) {
	tmpl, kind, namespace, err := decodeTemplate(objects, kube)
	if err != nil {
		return runtime.RawExtension{}, false, err
	}
	current, err := getObject(objects, kind, namespace, tmpl.GetName())
	if err != nil {
		return runtime.RawExtension{}, false, err
	}
	updated := replacedBy(current, tmpl)
	if equalJSON(updated.Object, current.Object) {
		return previous, false, nil
	}
	if err := objects.Update(updated); err != nil {
		return runtime.RawExtension{}, false, err
	}
	return kube.ObjectTemplate, true, nil
}

// replacedBy returns current made into tmpl, keeping what the API server keeps on an update:
// identity, creation and version metadata, and the status.
func replacedBy(current, tmpl *unstructured.Unstructured) *unstructured.Unstructured {
	out := tmpl.DeepCopy()
	out.SetNamespace(current.GetNamespace())
	out.SetUID(current.GetUID())
	out.SetResourceVersion(current.GetResourceVersion())
	out.SetCreationTimestamp(current.GetCreationTimestamp())
	if g := current.GetGeneration(); g != 0 {
		out.SetGeneration(g)
	}
	delete(out.Object, "status")
	if status, ok := current.Object["status"]; ok {
		out.Object["status"] = runtime.DeepCopyJSONValue(status)
	}
	return out
}

func deleteResource(objects configpolicy.Store, kube *actionv1beta1.KubeWorkSpec) error {
	kind, err := kindByResource(kube.Resource, objects)
	if err != nil {
		return err
	}
	if err := checkPath(kind, kube.Namespace, kube.Name); err != nil {
		return err
	}
	err = objects.Delete(kind.gvk, kube.Namespace, kube.Name)
	if errors.Is(err, configpolicy.ErrNotFound) {
		return apierrors.NewNotFound(kind.groupResource(), kube.Name)
	}
	return err
}

// Mutate changes a simulated spoke's objects as a test or an outside actor would: f runs on
// the spoke's store while its simulated controllers wait, then the spoke syncs (its
// operators react, policies are evaluated, views follow).
func (s *Simulator) Mutate(cluster string, f func(objects configpolicy.Store) error) error {
	sp := s.spoke(cluster)
	if sp == nil {
		return fmt.Errorf("no simulated spoke %q", cluster)
	}
	sp.mu.Lock()
	err := f(sp.objects)
	sp.mu.Unlock()
	s.Poke(cluster)
	if err != nil {
		return fmt.Errorf("changing %s: %w", cluster, err)
	}
	return nil
}

// AddNamespace creates the namespace name on the spokes of clusters, as the cluster's own
// installation would have (the lifecycle agent's, OADP's).
func (s *Simulator) AddNamespace(name string, clusters ...string) error {
	for _, c := range clusters {
		err := s.Mutate(c, func(objects configpolicy.Store) error {
			ns := &unstructured.Unstructured{}
			ns.SetAPIVersion("v1")
			ns.SetKind("Namespace")
			ns.SetName(name)
			return objects.Create(ns)
		})
		if err != nil {
			return err
		}
	}
	return nil
}
