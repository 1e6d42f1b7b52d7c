package configpolicy

import (
	"errors"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	. "github.com/onsi/gomega"
)

func TestMapStore(t *testing.T) {
	s := newTestStore(t, objects(t,
		`{apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: default}}`,
		`{apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: default}}`,
		`{apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: app-1}}`,
		`{apiVersion: config.openshift.io/v1, kind: ClusterVersion, metadata: {name: version, namespace: ignored}}`,
	))

	t.Run("list is sorted and filtered by namespace", func(t *testing.T) {
		g := NewWithT(t)

		all, err := s.List(configMapGVK, "")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(names(all)).To(Equal([]string{"app-1/a", "default/a", "default/b"}))

		inDefault, err := s.List(configMapGVK, "default")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(names(inDefault)).To(Equal([]string{"default/a", "default/b"}))
	})

	t.Run("cluster-scoped kinds ignore the namespace", func(t *testing.T) {
		g := NewWithT(t)

		cv, err := s.Get(clusterVersionGVK, "anything", "version")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cv.GetNamespace()).To(BeEmpty())
	})

	t.Run("create needs the namespace and a new name", func(t *testing.T) {
		g := NewWithT(t)

		err := s.Create(objects(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: nope}}`)[0])
		g.Expect(errors.Is(err, ErrNotFound)).To(BeTrue())
		g.Expect(err.Error()).To(Equal(`namespaces "nope" not found`))

		err = s.Create(objects(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: default}}`)[0])
		g.Expect(errors.Is(err, ErrAlreadyExists)).To(BeTrue())
		g.Expect(err.Error()).To(Equal(`configmaps "a" already exists`))
	})

	t.Run("update checks the resourceVersion and keeps the uid", func(t *testing.T) {
		g := NewWithT(t)

		current, err := s.Get(configMapGVK, "default", "a")
		g.Expect(err).NotTo(HaveOccurred())

		changed := current.DeepCopy()
		changed.SetLabels(map[string]string{"x": "y"})
		g.Expect(s.Update(changed)).To(Succeed())

		updated, err := s.Get(configMapGVK, "default", "a")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(updated.GetUID()).To(Equal(current.GetUID()))
		g.Expect(updated.GetResourceVersion()).NotTo(Equal(current.GetResourceVersion()))
		g.Expect(current.GetLabels()).To(BeEmpty(), "the shared object is not changed")

		err = s.Update(changed)
		g.Expect(errors.Is(err, ErrConflict)).To(BeTrue())
	})

	t.Run("delete", func(t *testing.T) {
		g := NewWithT(t)

		g.Expect(s.Delete(configMapGVK, "default", "b")).To(Succeed())

		_, err := s.Get(configMapGVK, "default", "b")
		g.Expect(errors.Is(err, ErrNotFound)).To(BeTrue())
		g.Expect(errors.Is(s.Delete(configMapGVK, "default", "b"), ErrNotFound)).To(BeTrue())
	})

	t.Run("unknown kinds", func(t *testing.T) {
		g := NewWithT(t)

		_, err := s.List(widgetGVK.GroupVersion().WithKind("Gizmo"), "")
		g.Expect(errors.Is(err, ErrNoMapping)).To(BeTrue())
	})
}

func TestMapStoreConcurrentEvaluations(t *testing.T) {
	g := NewWithT(t)
	prepared := Prepare(configurationPolicy(t, "remediationAction: inform\nobject-templates:"+completedHistoryTemplate))
	store := newTestStore(t, objects(t, clusterVersion))

	var wg sync.WaitGroup

	results := make([]Result, 8)

	for i := range results {
		wg.Go(func() {
			for range 50 {
				results[i] = prepared.Evaluate(store, testNow)
			}
		})
	}

	wg.Go(func() {
		for range 50 {
			cv, _ := store.Get(clusterVersionGVK, "", "version")
			_ = store.Update(cv.DeepCopy())
		}
	})

	wg.Wait()

	for _, res := range results {
		g.Expect(res.Message).To(Equal("NonCompliant; violation - clusterversions [version] found but not as specified"))
	}
}

func names(objs []*unstructured.Unstructured) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.GetNamespace() + "/" + o.GetName()
	}

	return out
}
