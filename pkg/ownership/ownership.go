// Package ownership owns what ties the objects the operator creates on the hub to their
// ClusterGroupUpgrade, and finding and deleting all of them. Every such object carries
// Owner.Labels() (it is created with Owner.ObjectLabels(), which keep it out of the hub
// backup too); those in the rollout's namespace also have an owner reference to it. The
// objects are built elsewhere, each by the package of its concern, with names from
// pkg/names: enforcement (enforce copies, copied ConfigMaps, Placements, PlacementBindings)
// by pkg/policies, ManagedClusterViews by pkg/views, the health check and precache Jobs'
// views and actions by pkg/spokejob, ManifestWorks by pkg/manifestwork, the batch records by
// pkg/plan. Kinds lists them all; Cleaner deletes them.
package ownership

import (
	"maps"

	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/hubapi"
	"github.com/cgu-operator/cgu-operator/pkg/names"
)

// LabelUpgradeNamespace is the namespace of the ClusterGroupUpgrade an object was made for;
// ranv1alpha1.LabelUpgradeName (TALM's label) is its name, shortened by names.LabelValue.
const LabelUpgradeNamespace = "ran.openshift.io/cgu-namespace"

// Owner names the ClusterGroupUpgrade objects belong to.
type Owner struct {
	Namespace, Name string
	// NameSuffix, set, names the owner's Placements, PlacementBindings and step
	// ManifestWorks as TALM does with its name-suffix annotation (OwnerOf).
	NameSuffix string
}

// OwnerOf is the owner of the objects made for a ClusterGroupUpgrade, with the name suffix
// it uses: status.nameSuffix once the rollout started (frozen then), before that TALM's
// name-suffix annotation as names.Suffix bounds it.
func OwnerOf(upgrade *ranv1alpha1.ClusterGroupUpgrade) Owner {
	o := Owner{Namespace: upgrade.Namespace, Name: upgrade.Name}
	if upgrade.Status.StartedAt != nil {
		o.NameSuffix = upgrade.Status.NameSuffix
	} else {
		o.NameSuffix = names.Suffix(upgrade.Annotations[ranv1alpha1.AnnotationNameSuffix])
	}
	return o
}

// Placement is the name of the Placement and PlacementBinding that bind the managed policy
// policy (or its copy) to the owner's clusters: names.Placement, or TALM's name with the
// owner's suffix.
func (o Owner) Placement(policy string) string {
	if o.NameSuffix != "" {
		return names.TALMPlacement(o.Name, policy, o.NameSuffix)
	}
	return names.Placement(o.Namespace, o.Name, policy)
}

// Labels are the labels every object made for the owner carries. A ClusterGroupUpgrade name
// may be longer than a label value may be; names.LabelValue shortens it deterministically.
func (o Owner) Labels() map[string]string {
	return map[string]string{ranv1alpha1.LabelUpgradeName: names.LabelValue(o.Name), LabelUpgradeNamespace: o.Namespace}
}

// LabelExcludeFromBackup ("true") keeps an object out of the ACM hub backup, as TALM marks its
// Placements and PlacementBindings: restored on another hub without the rollout that drives
// it, an enforcement object or a spoke action would enforce or act with nothing watching.
const LabelExcludeFromBackup = "velero.io/exclude-from-backup"

// ObjectLabels are the labels an object made for the owner is created with: Labels, by
// which it is found, and LabelExcludeFromBackup. Objects are found by Labels alone, so
// that those made before an object carried LabelExcludeFromBackup are found too.
func (o Owner) ObjectLabels() map[string]string {
	return ExcludedFromBackup(o.Labels())
}

// ExcludedFromBackup adds LabelExcludeFromBackup to the labels an object is created with,
// and returns them.
func ExcludedFromBackup(l map[string]string) map[string]string {
	l[LabelExcludeFromBackup] = "true"
	return l
}

// Owns reports whether labels mark an object as made for the owner.
func (o Owner) Owns(labels map[string]string) bool {
	for k, v := range o.Labels() {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// Of reads the owner's namespace and label value (names.LabelValue of its name) from an
// object's labels; ok is false for an object the operator did not make.
func Of(labels map[string]string) (namespace, labelValue string, ok bool) {
	namespace, labelValue = labels[LabelUpgradeNamespace], labels[ranv1alpha1.LabelUpgradeName]
	return namespace, labelValue, namespace != "" && labelValue != ""
}

// Made selects every object the operator made, for any ClusterGroupUpgrade: the caches of
// the kinds it makes hold only those.
func Made() (labels.Selector, error) {
	r, err := labels.NewRequirement(LabelUpgradeNamespace, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	return labels.NewSelector().Add(*r), nil
}

// Kind is a kind of object the operator makes for rollouts on the hub, found by the owner
// labels.
type Kind struct {
	// Object is an empty object of the kind, List an empty list.
	Object client.Object
	List   func() client.ObjectList
	// Needs is the optional API that serves it; the zero API for a required one.
	Needs hubapi.API
}

// Kinds are the kinds Cleaner deletes, in the order it deletes them: the bindings first, so
// that nothing is enforced any more (once their Placements were emptied: CleanupStep), then
// the policies and Placements (the Placements once the bindings are gone), then what runs on
// the spokes. Copied ConfigMaps and batch records are not listed: the ConfigMaps are read
// through their own cache (Cleaner.Copies), the records go with their owner reference.
var Kinds = []Kind{
	{&policyv1.PlacementBinding{}, func() client.ObjectList { return &policyv1.PlacementBindingList{} }, hubapi.API{}},
	{&clusterv1beta1.Placement{}, func() client.ObjectList { return &clusterv1beta1.PlacementList{} }, hubapi.API{}},
	{&policyv1.Policy{}, func() client.ObjectList { return &policyv1.PolicyList{} }, hubapi.API{}},
	// Deleting an action nobody answered yet (an unreachable cluster) keeps it from creating
	// a Job there later. Deleting a ManifestWork lets its work agent delete what it
	// applied, unless the template's deleteOption orphans it.
	{&viewv1beta1.ManagedClusterView{}, func() client.ObjectList { return &viewv1beta1.ManagedClusterViewList{} }, hubapi.Views},
	{&actionv1beta1.ManagedClusterAction{}, func() client.ObjectList { return &actionv1beta1.ManagedClusterActionList{} }, hubapi.Actions},
	{&workv1.ManifestWork{}, func() client.ObjectList { return &workv1.ManifestWorkList{} }, hubapi.Works},
}

// Adopt marks obj as made for the rollout: the owner's labels, added to those obj has, and,
// when obj is in the rollout's namespace, a controller reference to the rollout, so that the
// garbage collector deletes it with the rollout even if the operator is not running then.
// Objects in other namespaces (Override-mode Placements and bindings, views, actions,
// ManifestWorks) are found by their labels (Cleaner).
func Adopt(upgrade *ranv1alpha1.ClusterGroupUpgrade, obj client.Object, scheme *runtime.Scheme) error {
	l := obj.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	maps.Copy(l, Owner{Namespace: upgrade.Namespace, Name: upgrade.Name}.ObjectLabels())
	obj.SetLabels(l)
	if obj.GetNamespace() != upgrade.Namespace {
		return nil
	}
	return controllerutil.SetControllerReference(upgrade, obj, scheme)
}
