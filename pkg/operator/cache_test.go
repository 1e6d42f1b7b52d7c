package operator

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	workv1 "open-cluster-management.io/api/work/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/hubapi"
	"github.com/cgu-operator/cgu-operator/pkg/train"
)

// The cache of ManifestWorks holds only what the operator made: a release train's works, in
// the regional hubs' namespaces, must be among them, or the train never sees their feedback.
func TestCacheHoldsTheTrainsWorks(t *testing.T) {
	opts, err := cacheOptions(&rest.Config{Host: "https://hub.example.com:6443"}, NewScheme(), hubapi.Unserved{})
	if err != nil {
		t.Fatal(err)
	}
	tr := &ranv1alpha1.ReleaseTrain{
		ObjectMeta: metav1.ObjectMeta{Namespace: "trains", Name: "regions"},
		Spec:       ranv1alpha1.ReleaseTrainSpec{Rings: []ranv1alpha1.TrainRing{{Name: "east", Hubs: []string{"hub-east"}}}},
	}
	w, err := train.Work(tr, train.Planned{Key: train.Key{Ring: "east", Version: "4.16.12"}, Name: "regions-east-4.16.12"}, "hub-east")
	if err != nil {
		t.Fatal(err)
	}
	for obj, by := range opts.ByObject {
		if _, ok := obj.(*workv1.ManifestWork); ok {
			if by.Label != nil && !by.Label.Matches(labels.Set(w.Labels)) {
				t.Fatalf("the ManifestWork cache's selector %q leaves a train's works (%v) out", by.Label, w.Labels)
			}
			return
		}
	}
	t.Fatal("no cache options for ManifestWorks")
}
