package manager_test

import (
	"path/filepath"
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/cgu-operator/cgu-operator/tests/testenv"
)

var _ = Describe("The deployment manifests", func() {
	It("build with kustomize and are accepted by the API server", func(ctx SpecContext) {
		root, err := testenv.Root()
		Expect(err).NotTo(HaveOccurred())
		resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).
			Run(filesys.MakeFsOnDisk(), filepath.Join(root, "config", "default"))
		Expect(err).NotTo(HaveOccurred())

		k8s, err := client.New(cfg, client.Options{})
		Expect(err).NotTo(HaveOccurred())
		var objs []*unstructured.Unstructured
		for _, res := range resources.Resources() {
			m, err := res.Map()
			Expect(err).NotTo(HaveOccurred())
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
		// Namespaces first, for real: namespaced objects need theirs to exist, even in a dry run.
		sort.SliceStable(objs, func(i, j int) bool { return objs[i].GetKind() == "Namespace" && objs[j].GetKind() != "Namespace" })

		kinds := map[string]int{}
		for _, obj := range objs {
			kinds[obj.GetKind()]++
			if obj.GetKind() != "Namespace" && obj.GetNamespace() != "" {
				Expect(obj.GetNamespace()).To(Equal("cgu-operator-system"), "%s %s", obj.GetKind(), obj.GetName())
			}
			opts := []client.ApplyOption{client.FieldOwner("deploy-test"), client.ForceOwnership}
			if obj.GetKind() != "Namespace" {
				opts = append(opts, client.DryRunAll)
			}
			Expect(k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), opts...)).
				To(Succeed(), "%s %s", obj.GetKind(), obj.GetName())
		}
		Expect(kinds).To(HaveKeyWithValue("CustomResourceDefinition", 7))
		Expect(kinds).To(HaveKeyWithValue("Deployment", 1))
		Expect(kinds).To(HaveKey("ClusterRole"))
	})
})
