package policies

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
)

// TestCopyConfigMap copies a hub template's ConfigMap through a Writer whose cache of copies
// (Copies) does not hold the destination: someone else's ConfigMap is never overwritten,
// and the operator's own copy, made too recently for the cache, is found through the API
// reader and updated when its source changed.
func TestCopyConfigMap(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, ranv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	owner := ownership.Owner{Namespace: "cgu-ns", Name: "upgrade"}
	upgrade := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: owner.Namespace, Name: owner.Name, UID: "u1"}}
	source := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ztp", Name: "site"}, Data: map[string]string{"version": "4.16.12"}}
	dst := func(labels map[string]string, version string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: owner.Namespace, Name: "site", Labels: labels},
			Data: map[string]string{"version": version}}
	}
	cases := map[string]struct {
		existing    *corev1.ConfigMap
		wantErr     string
		wantVersion string
	}{
		"none yet":                 {wantVersion: "4.16.12"},
		"someone else's":           {existing: dst(map[string]string{"app": "mine"}, "keep"), wantErr: "was not copied by this ClusterGroupUpgrade", wantVersion: "keep"},
		"own copy, cache behind":   {existing: dst(owner.Labels(), "4.16.12"), wantVersion: "4.16.12"},
		"own copy, source changed": {existing: dst(owner.Labels(), "4.16.10"), wantVersion: "4.16.12"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objects := []client.Object{source.DeepCopy()}
			if tc.existing != nil {
				objects = append(objects, tc.existing)
			}
			hub := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).Build()
			behind := fake.NewClientBuilder().WithScheme(scheme).Build() // a cache of copies that has seen nothing
			w := Writer{Client: hub, Reader: hub, Copies: behind, Scheme: scheme}
			ctx := context.Background()
			err := w.copyConfigMap(ctx, upgrade, owner, "ztp", "site")
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("got %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("got %v, want an error saying %q", err, tc.wantErr)
			}
			got := &corev1.ConfigMap{}
			if err := hub.Get(ctx, client.ObjectKey{Namespace: owner.Namespace, Name: "site"}, got); err != nil {
				t.Fatal(err)
			}
			if got.Data["version"] != tc.wantVersion {
				t.Errorf("copy holds version %q, want %q", got.Data["version"], tc.wantVersion)
			}
		})
	}
}
