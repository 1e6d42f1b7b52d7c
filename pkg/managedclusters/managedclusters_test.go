package managedclusters

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	"k8s.io/utils/ptr"

	"github.com/google/go-cmp/cmp"
)

func TestDiff(t *testing.T) {
	cases := map[string]struct {
		before, after map[string]string
		want          map[string]*string
	}{
		"nothing changes":      {before: map[string]string{"a": "1"}, after: map[string]string{"a": "1"}},
		"both empty":           {},
		"a key added":          {before: map[string]string{"a": "1"}, after: map[string]string{"a": "1", "b": ""}, want: map[string]*string{"b": ptr.To("")}},
		"a key removed":        {before: map[string]string{"a": "1", "b": "2"}, after: map[string]string{"a": "1"}, want: map[string]*string{"b": nil}},
		"a value changed":      {before: map[string]string{"a": "1"}, after: map[string]string{"a": "2"}, want: map[string]*string{"a": ptr.To("2")}},
		"removed and added":    {before: map[string]string{"a": "1"}, after: map[string]string{"b": "1"}, want: map[string]*string{"a": nil, "b": ptr.To("1")}},
		"from nil, keys added": {after: map[string]string{"a": "1"}, want: map[string]*string{"a": ptr.To("1")}},
		"to nil, keys removed": {before: map[string]string{"a": "1"}, want: map[string]*string{"a": nil}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(c.want, Diff(c.before, c.after)); d != "" {
				t.Errorf("Diff (-want +got):\n%s", d)
			}
		})
	}
}

// The cache keeps of a typed ManagedCluster its identity, labels, owners and conditions, and
// nothing else; metadata-only ManagedClusters, which other code reads annotations of, pass
// unchanged.
func TestTrim(t *testing.T) {
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
			Conditions: []metav1.Condition{available},
			Capacity:   clusterv1.ResourceList{clusterv1.ResourceCPU: resource.MustParse("64")},
			ClusterClaims: []clusterv1.ManagedClusterClaim{{Name: "id.k8s.io", Value: "abc"}, {Name: "version.openshift.io", Value: "4.16.10"},
				{Name: "controlplanetopology.openshift.io", Value: "HighlyAvailable"}},
		},
	}
	out, err := Trim(mc)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*clusterv1.ManagedCluster)
	switch {
	case got.Name != "sno-1" || got.UID != "u1" || got.ResourceVersion != "7" || len(got.OwnerReferences) != 1:
		t.Errorf("identity lost: %+v", got.ObjectMeta)
	case len(got.Labels) != 1 || len(got.Status.Conditions) != 1 || got.Status.Conditions[0] != available:
		t.Errorf("labels %v or conditions %v lost", got.Labels, got.Status.Conditions)
	case got.Annotations != nil || got.ManagedFields != nil || got.Spec.HubAcceptsClient || got.Status.Capacity != nil:
		t.Errorf("kept more than needed: %+v", got)
	}
	if want := mc.Status.ClusterClaims[1:]; !reflect.DeepEqual(got.Status.ClusterClaims, want) {
		t.Errorf("claims kept %v, want the version and topology claims alone", got.Status.ClusterClaims)
	}

	meta := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "sno-1", Annotations: map[string]string{"a": "b"}}}
	if out, _ := Trim(meta); out != meta {
		t.Errorf("a metadata-only ManagedCluster was changed: %+v", out)
	}
}
