package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/testenv"
)

// Leftovers counts the governance objects made for the ClusterGroupUpgrade namespace/name,
// in every namespace: enforce copies (root policies, not their replicas), Placements and
// PlacementBindings carrying its owner labels.
func (e *Env) Leftovers(ctx context.Context, namespace, name string) (int, error) {
	selector := client.MatchingLabels(ownership.Owner{Namespace: namespace, Name: name}.Labels())
	var ps policyv1.PolicyList
	if err := e.Hub.Client.List(ctx, &ps, selector); err != nil {
		return 0, err
	}
	n := 0
	for _, p := range ps.Items {
		if p.Labels[sim.RootPolicyLabel] == "" { // replicas go with their root
			n++
		}
	}
	var pls clusterv1beta1.PlacementList
	if err := e.Hub.Client.List(ctx, &pls, selector); err != nil {
		return 0, err
	}
	var pbs policyv1.PlacementBindingList
	if err := e.Hub.Client.List(ctx, &pbs, selector); err != nil {
		return 0, err
	}
	return n + len(pls.Items) + len(pbs.Items), nil
}

// Made lists, as "Kind namespace/name" with their labels, every object of ownership.Kinds the
// operator made on the hub for the ClusterGroupUpgrade namespace/name, replicas of its
// policies left out. Kinds whose API the hub does not serve are skipped.
func (e *Env) Made(ctx context.Context, namespace, name string) (map[string]map[string]string, error) {
	selector := client.MatchingLabels(ownership.Owner{Namespace: namespace, Name: name}.Labels())
	out := map[string]map[string]string{}
	for _, k := range ownership.Kinds {
		list := k.List()
		if err := e.Hub.Client.List(ctx, list, selector); err != nil {
			if meta.IsNoMatchError(err) {
				continue
			}
			return nil, err
		}
		if err := meta.EachListItem(list, func(o runtime.Object) error {
			obj := o.(client.Object)
			if obj.GetLabels()[sim.RootPolicyLabel] == "" {
				kind := strings.TrimSuffix(fmt.Sprintf("%T", list), "List")
				out[fmt.Sprintf("%s %s/%s", kind[strings.LastIndex(kind, ".")+1:], obj.GetNamespace(), obj.GetName())] = obj.GetLabels()
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SampleTemplates reads the ManifestWorkReplicaSets of a file of samples/, put in namespace,
// by name.
func SampleTemplates(file, namespace string) (map[string]*workv1alpha1.ManifestWorkReplicaSet, error) {
	root, err := testenv.Root()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(root, "samples", file))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]*workv1alpha1.ManifestWorkReplicaSet{}
	decoder := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var u unstructured.Unstructured
		err := decoder.Decode(&u.Object)
		switch {
		case errors.Is(err, io.EOF):
			return out, nil
		case err != nil:
			return nil, fmt.Errorf("reading %s: %w", file, err)
		case u.GetKind() != "ManifestWorkReplicaSet":
			continue
		}
		t := &workv1alpha1.ManifestWorkReplicaSet{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, t); err != nil {
			return nil, fmt.Errorf("reading %s: %w", file, err)
		}
		t.Namespace = namespace
		out[t.Name] = t
	}
}
