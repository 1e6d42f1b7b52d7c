package ztp

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// A cluster wakes the controller when its labels or its availability change, not on the
// other status writes of registration.
func TestClusterChanged(t *testing.T) {
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
		if got := (clusterChanged{}).Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
			t.Errorf("%s: got %v, want %v", name, got, tc.want)
		}
	}
}

// Of the ClusterGroupUpgrades, only those of ztp-install changing state or starting their
// deletion wake the controller.
func TestUpgradeChanged(t *testing.T) {
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
		if got := (upgradeChanged{}).Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
			t.Errorf("%s: got %v, want %v", name, got, tc.want)
		}
	}
	if (upgradeChanged{}).Delete(event.DeleteEvent{Object: cgu("upgrades", "", false)}) {
		t.Error("the deletion of a ClusterGroupUpgrade outside ztp-install woke the controller")
	}
}
