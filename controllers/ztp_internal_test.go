package controllers

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// The cache keeps of a typed ManagedCluster its identity, labels, owners and conditions, and
// nothing else; metadata-only ManagedClusters, which other code reads annotations of, pass
// unchanged.
func TestTrimManagedCluster(t *testing.T) {
	available := metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue}
	mc := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{
			Name: "sno-1", UID: "u1", ResourceVersion: "7", Labels: map[string]string{"ztp-done": ""},
			Annotations:     map[string]string{"big": "annotation"},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "registration"}},
			OwnerReferences: []metav1.OwnerReference{{Name: "owner"}},
		},
		Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true, LeaseDurationSeconds: 60},
		Status: clusterv1.ManagedClusterStatus{
			Conditions:    []metav1.Condition{available},
			Capacity:      clusterv1.ResourceList{clusterv1.ResourceCPU: resource.MustParse("64")},
			ClusterClaims: []clusterv1.ManagedClusterClaim{{Name: "version.openshift.io", Value: "4.16.10"}},
		},
	}
	out, err := TrimManagedCluster(mc)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*clusterv1.ManagedCluster)
	switch {
	case got.Name != "sno-1" || got.UID != "u1" || got.ResourceVersion != "7" || len(got.OwnerReferences) != 1:
		t.Errorf("identity lost: %+v", got.ObjectMeta)
	case len(got.Labels) != 1 || len(got.Status.Conditions) != 1 || got.Status.Conditions[0] != available:
		t.Errorf("labels %v or conditions %v lost", got.Labels, got.Status.Conditions)
	case got.Annotations != nil || got.ManagedFields != nil || got.Spec.HubAcceptsClient ||
		got.Status.Capacity != nil || got.Status.ClusterClaims != nil:
		t.Errorf("kept more than needed: %+v", got)
	}

	meta := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "sno-1", Annotations: map[string]string{"a": "b"}}}
	if out, _ := TrimManagedCluster(meta); out != meta {
		t.Errorf("a metadata-only ManagedCluster was changed: %+v", out)
	}
}

// A cluster wakes the controller when its labels or its availability change, not on the
// other status writes of registration.
func TestZTPClusterChanged(t *testing.T) {
	cluster := func(available metav1.ConditionStatus, labels map[string]string, claims ...string) *clusterv1.ManagedCluster {
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "sno-1", Labels: labels}}
		mc.Status.Conditions = []metav1.Condition{{Type: clusterv1.ManagedClusterConditionAvailable, Status: available}}
		for _, c := range claims {
			mc.Status.ClusterClaims = append(mc.Status.ClusterClaims, clusterv1.ManagedClusterClaim{Name: c})
		}
		return mc
	}
	done := map[string]string{"ztp-done": ""}
	cases := map[string]struct {
		old, new *clusterv1.ManagedCluster
		want     bool
	}{
		"becomes available":   {cluster(metav1.ConditionUnknown, nil), cluster(metav1.ConditionTrue, nil), true},
		"becomes unavailable": {cluster(metav1.ConditionTrue, nil), cluster(metav1.ConditionFalse, nil), true},
		"ztp-done removed":    {cluster(metav1.ConditionTrue, done), cluster(metav1.ConditionTrue, nil), true},
		"claims change":       {cluster(metav1.ConditionTrue, done), cluster(metav1.ConditionTrue, done, "x"), false},
		"unknown to false":    {cluster(metav1.ConditionUnknown, nil), cluster(metav1.ConditionFalse, nil), false},
	}
	for name, tc := range cases {
		if got := (ztpClusterChanged{}).Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
			t.Errorf("%s: got %v, want %v", name, got, tc.want)
		}
	}
}

// Of the ClusterGroupUpgrades, only those of ztp-install changing state or starting their
// deletion wake the controller.
func TestZTPUpgradeChanged(t *testing.T) {
	cgu := func(namespace string, state ranv1alpha1.UpgradeState, deleting bool) *ranv1alpha1.ClusterGroupUpgrade {
		c := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "sno-1"}}
		c.Status.State = state
		if deleting {
			now := metav1.Now()
			c.DeletionTimestamp = &now
		}
		return c
	}
	const ns = "ztp-install"
	cases := map[string]struct {
		old, new *ranv1alpha1.ClusterGroupUpgrade
		want     bool
	}{
		"completes":         {cgu(ns, ranv1alpha1.StateNotCompleted, false), cgu(ns, ranv1alpha1.StateCompleted, false), true},
		"deletion starts":   {cgu(ns, ranv1alpha1.StateCompleted, false), cgu(ns, ranv1alpha1.StateCompleted, true), true},
		"progress only":     {cgu(ns, ranv1alpha1.StateNotCompleted, false), cgu(ns, ranv1alpha1.StateNotCompleted, false), false},
		"another namespace": {cgu("upgrades", ranv1alpha1.StateNotCompleted, false), cgu("upgrades", ranv1alpha1.StateCompleted, false), false},
	}
	for name, tc := range cases {
		if got := (ztpUpgradeChanged{}).Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
			t.Errorf("%s: got %v, want %v", name, got, tc.want)
		}
	}
	if (ztpUpgradeChanged{}).Delete(event.DeleteEvent{Object: cgu("upgrades", "", false)}) {
		t.Error("the deletion of a ClusterGroupUpgrade outside ztp-install woke the controller")
	}
}
