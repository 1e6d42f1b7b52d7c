package story

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/policies"
	"github.com/cgu-operator/cgu-operator/pkg/preview"
	"github.com/cgu-operator/cgu-operator/pkg/views"
)

// Gather reads the facts of a cluster's story: the ClusterGroupUpgrade key names, then what
// GatherFor reads. A missing ClusterGroupUpgrade is an error apierrors.IsNotFound tells.
func Gather(ctx context.Context, r client.Reader, key client.ObjectKey, cluster string, now time.Time) (Facts, error) {
	cgu := &ranv1alpha1.ClusterGroupUpgrade{}
	if err := r.Get(ctx, key, cgu); err != nil {
		return Facts{}, fmt.Errorf("reading ClusterGroupUpgrade %s: %w", key, err)
	}
	return GatherFor(ctx, r, cgu, cluster, now)
}

// GatherFor reads the facts of cluster's story in cgu's rollout: the rollout's batch records
// (listed by their label), one object per managed policy in the cluster's namespace (its
// replica, and in Copy mode the enforce copy's), the rollout's view of the cluster's
// ClusterVersion, and the rollout's events (listed by a field selector on the involved
// object). It only reads; a cluster the rollout does not select is a *NotSelectedError,
// returned before anything of the cluster is read. The events are read as unstructured
// objects, so that r's scheme need not know core/v1; a cache must index the events'
// involvedObject.kind and involvedObject.name.
func GatherFor(ctx context.Context, r client.Reader, cgu *ranv1alpha1.ClusterGroupUpgrade, cluster string, now time.Time) (Facts, error) {
	records, err := preview.Records(ctx, r, cgu.Namespace, cgu.Name)
	if err != nil {
		return Facts{}, err
	}
	f := Facts{Upgrade: cgu, Records: records, Cluster: cluster, Now: now}
	if _, err := locate(f); err != nil {
		return Facts{}, err
	}
	if f.Policies, err = replicas(ctx, r, cgu, cluster); err != nil {
		return Facts{}, err
	}
	f.ClusterVersion, f.NoClusterVersion, err = views.ReadClusterVersion(ctx, r, ownership.OwnerOf(cgu), cluster)
	if apierrors.IsForbidden(err) {
		f.NoClusterVersion, err = "its view cannot be read: "+err.Error(), nil
	}
	if err != nil {
		return Facts{}, fmt.Errorf("reading the ClusterVersion view of cluster %s: %w", cluster, err)
	}
	if f.Events, err = events(ctx, r, cgu); err != nil {
		return Facts{}, err
	}
	return f, nil
}

// replicas reads, for each managed policy whose namespace the rollout resolved, its replica
// in the cluster's namespace and, when the rollout binds an enforce copy, the copy's.
func replicas(ctx context.Context, r client.Reader, cgu *ranv1alpha1.ClusterGroupUpgrade, cluster string) (map[string]PolicyFacts, error) {
	mode := cgu.Status.Enforcement
	if mode == "" {
		mode = cgu.Spec.Enforcement
	}
	out := make(map[string]PolicyFacts, len(cgu.Spec.ManagedPolicies))
	for _, name := range cgu.Spec.ManagedPolicies {
		namespace := policyNamespace(cgu.Status, name)
		if namespace == "" {
			out[name] = PolicyFacts{}
			continue
		}
		pf := PolicyFacts{Namespace: namespace}
		var err error
		if pf.Replica, err = readReplica(ctx, r, cluster, namespace+"."+name); err != nil {
			return nil, err
		}
		if mode != "" {
			bound := policies.EnforcedOn(ownership.OwnerOf(cgu), mode, namespace, name, cluster)
			if replica := bound.Namespace + "." + bound.Name; replica != pf.Replica.Name {
				b, err := readReplica(ctx, r, cluster, replica)
				if err != nil {
					return nil, err
				}
				pf.Bound = &b
			}
		}
		out[name] = pf
	}
	return out, nil
}

// policyNamespace is the namespace the rollout resolved a managed policy to, "" when none.
func policyNamespace(st ranv1alpha1.ClusterGroupUpgradeStatus, name string) string {
	if ns := st.ManagedPoliciesNs[name]; ns != "" {
		return ns
	}
	for _, p := range st.ManagedPoliciesForUpgrade {
		if p.Name == name {
			return p.Namespace
		}
	}
	return ""
}

// readReplica reads one replicated policy of the cluster's namespace; a missing one is not
// found, one the reader may not read says so.
func readReplica(ctx context.Context, r client.Reader, cluster, name string) (Replica, error) {
	p := &policyv1.Policy{}
	err := r.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, p)
	switch {
	case apierrors.IsNotFound(err):
		return Replica{Name: name}, nil
	case apierrors.IsForbidden(err):
		return Replica{Name: name, Problem: "cannot be read: " + err.Error()}, nil
	case err != nil:
		return Replica{}, fmt.Errorf("reading policy %s/%s: %w", cluster, name, err)
	}
	return Replica{Name: name, Found: true, Compliance: p.Status.ComplianceState, RemediationAction: p.Spec.RemediationAction}, nil
}

// events lists the events whose involved object is the ClusterGroupUpgrade.
func events(ctx context.Context, r client.Reader, cgu *ranv1alpha1.ClusterGroupUpgrade) ([]corev1.Event, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("EventList"))
	if err := r.List(ctx, list, client.InNamespace(cgu.Namespace), client.MatchingFields{
		"involvedObject.kind": "ClusterGroupUpgrade", "involvedObject.name": cgu.Name,
	}); err != nil {
		return nil, fmt.Errorf("listing the events of ClusterGroupUpgrade %s/%s: %w", cgu.Namespace, cgu.Name, err)
	}
	out := make([]corev1.Event, len(list.Items))
	var errs []error
	for i := range list.Items {
		errs = append(errs, runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, &out[i]))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("decoding the events of ClusterGroupUpgrade %s/%s: %w", cgu.Namespace, cgu.Name, err)
	}
	return out, nil
}
