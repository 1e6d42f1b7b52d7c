package policies

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/hubapi"
	"github.com/cgu-operator/cgu-operator/pkg/hubtemplate"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/tenancy"
)

// GlobalClusterSet is the cluster set holding every managed cluster; Copy mode binds it to
// the ClusterGroupUpgrade's namespace when that namespace has no binding, so that the
// copies' Placements can select clusters.
const GlobalClusterSet = "global"

// Enforcement is what a rollout enforces now: for each managed policy, in order, the
// clusters working on it.
type Enforcement struct {
	// Upgrade owns the objects; those in its namespace get an owner reference too.
	Upgrade *ranv1alpha1.ClusterGroupUpgrade
	Mode    ranv1alpha1.EnforcementMode
	// Policies are the managed root policies, in order.
	Policies []*policyv1.Policy
	// Clusters holds, for each policy by index, the clusters to enforce it on; a policy
	// without clusters keeps its objects, bound to no cluster.
	Clusters map[int][]string
	// Frozen marks, by index, the policies whose enforce copies keep the content they have:
	// the policy changed since the rollout accepted it, and the change is not approved
	// yet. A missing copy is still made from the policy as it is. Override mode enforces
	// the policy itself and cannot freeze it.
	Frozen map[int]bool
}

// Writer writes and deletes a rollout's governance objects.
type Writer struct {
	Client client.Client
	// Reader reads what the cache does not hold (ConfigMaps).
	Reader client.Reader
	// Copies reads the ConfigMaps the Writer copied for hub templates, from a cache that
	// holds only those (labelled for their owner); nil reads them through Reader.
	Copies client.Reader
	Scheme *runtime.Scheme
	// Unserved marks the optional kinds the hub does not serve: Cleanup does not look for
	// them, and Apply binds no cluster set without the set binding API.
	Unserved hubapi.Unserved

	// Tenancy are the operator's tenancy rules: where they apply, Apply binds no cluster
	// set to the upgrade's namespace.
	Tenancy tenancy.Rules

	// written counts, during Apply, the objects ensure created or changed.
	written *int
}

func (w Writer) copies() client.Reader {
	if w.Copies != nil {
		return w.Copies
	}
	return w.Reader
}

// Apply makes the hub enforce e: in Copy mode an enforce copy of each policy in the
// upgrade's namespace (with the ConfigMaps its hub templates read), and for each policy a
// Placement selecting exactly its clusters with a PlacementBinding; in Override mode the
// Placement and a restricted, enforcing PlacementBinding of the original policy, in the
// policy's namespace. Objects are created or updated; an unchanged object is not written.
// It returns how many enforce copies, Placements and PlacementBindings it created or changed.
func (w Writer) Apply(ctx context.Context, e Enforcement) (int, error) {
	written := 0
	w.written = &written
	owner := ownership.OwnerOf(e.Upgrade)
	if e.Mode != ranv1alpha1.EnforcementOverride && !w.Unserved.SetBindings && !w.Tenancy.Applies(owner.Namespace) {
		// Without the set binding API, the Placements select from the cluster sets
		// bound to the namespace by other means. In tenancy mode the rollout's clusters
		// are those of the sets bound to its namespace already, and the operator never
		// binds a set for a tenant.
		if err := w.ensureClusterSetBinding(ctx, owner.Namespace); err != nil {
			return written, err
		}
	}
	for i, parent := range e.Policies {
		if err := w.applyPolicy(ctx, e, owner, parent, e.Clusters[i], e.Frozen[i]); err != nil {
			return written, fmt.Errorf("policy %s/%s: %w", parent.Namespace, parent.Name, err)
		}
	}
	return written, nil
}

func (w Writer) applyPolicy(ctx context.Context, e Enforcement, owner ownership.Owner, parent *policyv1.Policy, clusters []string, frozen bool) error {
	name := owner.Placement(parent.Name)
	namespace, subject, override := owner.Namespace, "", e.Mode == ranv1alpha1.EnforcementOverride
	if override {
		namespace, subject = parent.Namespace, parent.Name
	} else {
		cp, err := w.applyCopy(ctx, e.Upgrade, owner, parent, frozen)
		if err != nil {
			return err
		}
		subject = cp.Name
	}
	placement := ExactPlacement(namespace, name, clusters, owner.ObjectLabels())
	if err := w.ensure(ctx, e.Upgrade, &clusterv1beta1.Placement{}, placement, func(existing, desired client.Object) {
		// Only the fields ExactPlacement sets: the API server defaults others (the
		// prioritizer policy, the decision strategy), and replacing the whole spec would
		// patch their defaults away, and the server put them back, at every reconcile.
		x, d := existing.(*clusterv1beta1.Placement), desired.(*clusterv1beta1.Placement)
		x.Spec.Predicates, x.Spec.NumberOfClusters, x.Spec.Tolerations = d.Spec.Predicates, d.Spec.NumberOfClusters, d.Spec.Tolerations
	}); err != nil {
		return fmt.Errorf("placement %s/%s: %w", namespace, name, err)
	}
	binding := Binding(namespace, name, name, subject, override, owner.ObjectLabels())
	if err := w.ensure(ctx, e.Upgrade, &policyv1.PlacementBinding{}, binding, func(existing, desired client.Object) {
		x, d := existing.(*policyv1.PlacementBinding), desired.(*policyv1.PlacementBinding)
		x.PlacementRef, x.Subjects, x.BindingOverrides, x.SubFilter = d.PlacementRef, d.Subjects, d.BindingOverrides, d.SubFilter
	}); err != nil {
		return fmt.Errorf("placement binding %s/%s: %w", namespace, name, err)
	}
	return nil
}

func (w Writer) applyCopy(ctx context.Context, upgrade *ranv1alpha1.ClusterGroupUpgrade, owner ownership.Owner, parent *policyv1.Policy, frozen bool) (*policyv1.Policy, error) {
	cp, err := EnforceCopy(parent, owner)
	if err != nil {
		return nil, err
	}
	if frozen {
		existing := &policyv1.Policy{}
		err := w.Client.Get(ctx, client.ObjectKeyFromObject(cp), existing)
		switch {
		case err == nil:
			return existing, nil // it keeps enforcing what the rollout accepted
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("reading enforce copy %s/%s: %w", cp.Namespace, cp.Name, err)
		}
	}
	var templates [][]byte
	for i, t := range cp.Spec.PolicyTemplates {
		raw := hubtemplate.Rewrite(t.ObjectDefinition.Raw, parent.Namespace, owner.Namespace)
		cp.Spec.PolicyTemplates[i].ObjectDefinition.Raw = raw
		templates = append(templates, raw)
	}
	for _, name := range hubtemplate.Analyze(parent.Namespace, templates).ConfigMaps {
		if parent.Namespace == owner.Namespace {
			break // the copy sits next to the ConfigMaps it reads
		}
		if err := w.copyConfigMap(ctx, upgrade, owner, parent.Namespace, name); err != nil {
			return nil, err
		}
	}
	err = w.ensure(ctx, upgrade, &policyv1.Policy{}, cp, func(existing, desired client.Object) {
		existing.(*policyv1.Policy).Spec = desired.(*policyv1.Policy).Spec
	})
	if err != nil {
		return nil, fmt.Errorf("enforce copy %s/%s: %w", cp.Namespace, cp.Name, err)
	}
	return cp, nil
}

// copyConfigMap copies a ConfigMap a hub template reads into the copy's namespace, under the
// same name. It refuses to overwrite a ConfigMap the operator did not make.
func (w Writer) copyConfigMap(ctx context.Context, upgrade *ranv1alpha1.ClusterGroupUpgrade, owner ownership.Owner, from, name string) error {
	src := &corev1.ConfigMap{}
	if err := w.Reader.Get(ctx, client.ObjectKey{Namespace: from, Name: name}, src); err != nil {
		return fmt.Errorf("reading ConfigMap %s/%s for a hub template: %w", from, name, err)
	}
	dst := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: owner.Namespace, Name: name, Labels: owner.ObjectLabels()},
		Data: src.Data, BinaryData: src.BinaryData}
	existing := &corev1.ConfigMap{}
	err := w.copies().Get(ctx, client.ObjectKeyFromObject(dst), existing)
	if apierrors.IsNotFound(err) {
		if err := ownership.Adopt(upgrade, dst, w.Scheme); err != nil {
			return err
		}
		if err = w.Client.Create(ctx, dst); !apierrors.IsAlreadyExists(err) {
			return err
		}
		// Someone else's ConfigMap, which the cache of copies does not hold, or a copy
		// made so recently that the cache has not seen it yet.
		err = w.Reader.Get(ctx, client.ObjectKeyFromObject(dst), existing)
	}
	switch {
	case err != nil:
		return err
	case !owner.Owns(existing.Labels):
		return fmt.Errorf("ConfigMap %s/%s exists and was not copied by this ClusterGroupUpgrade", dst.Namespace, dst.Name)
	case maps.Equal(existing.Data, dst.Data) && maps.EqualFunc(existing.BinaryData, dst.BinaryData, bytesEqual):
		return nil
	}
	existing.Data, existing.BinaryData = dst.Data, dst.BinaryData
	return w.Client.Update(ctx, existing)
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// ensure creates desired, or patches the existing object with set when that changes it;
// ownership.Adopt marks it as the upgrade's. The patch is a merge
// patch without a resourceVersion: the operator is the only writer of these objects' spec
// and metadata, while the placement controller and the propagator keep writing their
// status, so an update checked against the cached resourceVersion would often conflict and
// cost the reconcile (and a back-off) for nothing.
func (w Writer) ensure(ctx context.Context, upgrade *ranv1alpha1.ClusterGroupUpgrade, existing, desired client.Object, set func(existing, desired client.Object)) error {
	existing.SetNamespace(desired.GetNamespace())
	existing.SetName(desired.GetName())
	result, err := controllerutil.CreateOrPatch(ctx, w.Client, existing, func() error {
		set(existing, desired)
		labels := existing.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		maps.Copy(labels, desired.GetLabels())
		existing.SetLabels(labels)
		return ownership.Adopt(upgrade, existing, w.Scheme)
	})
	if err == nil && result != controllerutil.OperationResultNone && w.written != nil {
		*w.written++
	}
	return err
}

func (w Writer) ensureClusterSetBinding(ctx context.Context, namespace string) error {
	var bindings clusterv1beta2.ManagedClusterSetBindingList
	if err := w.Client.List(ctx, &bindings, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("listing cluster set bindings in %s: %w", namespace, err)
	}
	if len(bindings.Items) > 0 {
		return nil
	}
	err := w.Client.Create(ctx, &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Name: GlobalClusterSet, Namespace: namespace,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "cgu-operator"}},
		Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: GlobalClusterSet},
	})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("binding cluster set %s to %s: %w", GlobalClusterSet, namespace, err)
	}
	return nil
}

// Made returns the objects, named but empty, that Apply makes to enforce the managed policy
// namespace/name for owner in mode: the PlacementBinding, then (Copy mode) the enforce copy,
// then the Placement, in the order to delete them.
func Made(owner ownership.Owner, mode ranv1alpha1.EnforcementMode, namespace, name string) []client.Object {
	placement := owner.Placement(name)
	where := owner.Namespace
	if mode == ranv1alpha1.EnforcementOverride {
		where = namespace
	}
	out := []client.Object{&policyv1.PlacementBinding{ObjectMeta: metav1.ObjectMeta{Namespace: where, Name: placement}}}
	if mode != ranv1alpha1.EnforcementOverride {
		out = append(out, &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{
			Namespace: owner.Namespace, Name: names.PolicyCopy(owner.Namespace, owner.Name, name)}})
	}
	return append(out, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: where, Name: placement}})
}

// Release deletes what enforces the managed policy namespace/name for owner (Made), once
// that policy is deleted during the rollout: an enforce copy outlives its parent and would
// go on enforcing on the clusters its Placement last selected. Only objects labelled for
// owner are deleted; those already gone are skipped.
func (w Writer) Release(ctx context.Context, owner ownership.Owner, mode ranv1alpha1.EnforcementMode, namespace, name string) error {
	return ownership.Cleaner{Client: w.Client}.Delete(ctx, owner, Made(owner, mode, namespace, name)...)
}
