package clustergroupupgrade_test

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/argocd"
	"github.com/cgu-operator/cgu-operator/tests/testenv"
)

// argoHealth is what Argo CD shows for a CGU.
type argoHealth struct{ Status, Message string }

// health evaluates the Argo CD health script on the CGU as stored, whole, as Argo CD hands it
// over; the message must hold the operator's status.message.
func health(ctx SpecContext, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) argoHealth {
	return func(g Gomega) argoHealth {
		stored := fleet.Stored(ctx, cgu)(g)
		stored.SetGroupVersionKind(ranv1alpha1.GroupVersion.WithKind("ClusterGroupUpgrade"))
		obj, err := argocd.Object(stored)
		g.Expect(err).NotTo(HaveOccurred())
		status, message, err := argocd.Health(obj)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(message).To(HaveSuffix(stored.Status.Message))
		return argoHealth{Status: status, Message: message}
	}
}

func argo(status string, message OmegaMatcher) OmegaMatcher {
	return And(HaveField("Status", status), HaveField("Message", message))
}

// argoManager is the field manager Argo CD's server-side apply writes as.
const argoManager = "argocd-controller"

// argoApply applies the CGU's spec server-side as Argo CD would, with its own field manager.
func argoApply(ctx SpecContext, cgu *ranv1alpha1.ClusterGroupUpgrade) {
	cgu.SetGroupVersionKind(ranv1alpha1.GroupVersion.WithKind("ClusterGroupUpgrade"))
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cgu)
	Expect(err).NotTo(HaveOccurred())
	delete(m, "status")
	unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
	u := &unstructured.Unstructured{Object: m}
	Expect(hub.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(argoManager), client.ForceOwnership)).To(Succeed())
}

var _ = Describe("Argo CD health", func() {
	It("follows a rollout: Suspended until enabled, Progressing, Suspended while paused or waiting for approval, Healthy", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "argo", 2)
		p := placeUpgradePolicy(ctx, "argo", 2)
		stall(clusters[0])
		cgu := newCGU("cgu-argo", "upgrade", clusters, 1, p.Name)
		cgu.Spec.RemediationStrategy.Canaries = []string{clusters[0]}
		cgu.Spec.Approval = &ranv1alpha1.ApprovalGates{AfterCanaries: true}
		fleet.MustCreate(ctx, cgu)
		Eventually(health(ctx, cgu)).WithTimeout(settle).Should(argo("Suspended", Equal("Not enabled: set spec.enable to true to start")))

		By("enabled, the canary stalled")
		enable(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(firstBatchShows(clusters[0], ranv1alpha1.ClusterInProgress))
		Eventually(health(ctx, cgu)).WithTimeout(settle).Should(argo("Progressing", Not(BeEmpty())))

		By("paused")
		fleet.MustUpdate(ctx, cgu, func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.Paused = true })
		Eventually(health(ctx, cgu)).WithTimeout(settle).Should(argo("Suspended", HavePrefix("Paused: Canary batch 1 of 2")))
		fleet.MustUpdate(ctx, cgu, func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.Paused = false })
		Eventually(health(ctx, cgu)).WithTimeout(settle).Should(argo("Progressing", Not(BeEmpty())))

		By("the canary done, the next batch waits for an approval")
		unstall(clusters[0])
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(waiting(ranv1alpha1.ReasonWaitingForApproval, 2))
		Eventually(health(ctx, cgu)).WithTimeout(settle).Should(argo("Suspended", MatchRegexp(`(?i)approv`)))

		By("approved and completed")
		code, out := kubectlCGU(ctx, "approve", cgu.Name, "-n", cgu.Namespace)
		Expect(code).To(BeZero(), out)
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		Eventually(health(ctx, cgu)).WithTimeout(settle).Should(argo("Healthy", Equal("All 2 clusters are compliant with every managed policy")))
	})

	It("is Degraded when the rollout timed out", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "argolate", 1)
		p := placeUpgradePolicy(ctx, "argolate", 1)
		stall(clusters[0])
		cgu := newCGU("cgu-argolate", "upgrade", clusters, 1, p.Name)
		cgu.Spec.RemediationStrategy.Timeout = 60
		enableOnCreate(cgu)
		fleet.MustCreate(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(firstBatchShows(clusters[0], ranv1alpha1.ClusterInProgress))
		advance(ctx, 61*time.Minute, cgu)
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateTimedOut))
		Eventually(health(ctx, cgu)).WithTimeout(settle).Should(argo("Degraded", ContainSubstring(clusters[0])))
	})

	It("is Degraded when the rollout cannot start", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "argomissing", 1)
		p := placeUpgradePolicy(ctx, "argomissing", 1)
		cgu := newCGU("cgu-argomissing", "upgrade", clusters, 1, p.Name, "no-such-policy")
		enableOnCreate(cgu)
		fleet.MustCreate(ctx, cgu)
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCannotStart))
		Eventually(health(ctx, cgu)).WithTimeout(settle).Should(argo("Degraded", ContainSubstring("no-such-policy")))
	})
})

var _ = Describe("Argo CD self-heal", func() {
	It("finds no drift: after a whole rollout, only Argo CD's apply owns spec fields; the operator owns status and its finalizer", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "argoowner", 2)
		p := placeUpgradePolicy(ctx, "argoowner", 2)
		cgu := newCGU("cgu-argoowner", "upgrade", clusters, 1, p.Name)
		Expect(hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cgu.Namespace}})).To(Succeed())
		argoApply(ctx, cgu.DeepCopy())
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateNotStarted))
		cgu.Spec.Enable = ptr.To(true) // the later commit that enables the rollout
		argoApply(ctx, cgu.DeepCopy())
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))

		stored := fleet.Stored(ctx, cgu)(Default)
		Expect(stored.Spec.Enable).To(Equal(ptr.To(true)))
		owners := map[string]bool{}
		for _, e := range stored.ManagedFields {
			var fields map[string]any
			Expect(json.Unmarshal(e.FieldsV1.Raw, &fields)).To(Succeed())
			if e.Manager == argoManager {
				Expect(fields).To(HaveKey("f:spec"), "Argo CD's apply owns the spec")
				continue
			}
			owners[e.Manager+"/"+e.Subresource] = true
			Expect(slices.Sorted(maps.Keys(fields))).To(BeElementOf([]string{"f:metadata"}, []string{"f:status"}, []string{"f:metadata", "f:status"}),
				"entry %s (%s, subresource %q) owns more than metadata and status", e.Manager, e.Operation, e.Subresource)
			if meta, ok := fields["f:metadata"].(map[string]any); ok {
				Expect(slices.Sorted(maps.Keys(meta))).To(Equal([]string{"f:finalizers"}),
					"entry %s (%s) owns metadata other than the finalizer", e.Manager, e.Operation)
			}
		}
		Expect(owners).NotTo(BeEmpty(), "the operator wrote status and its finalizer")
	})
})

var _ = Describe("The Argo CD sample", func() {
	It("builds with kustomize into waves that sync the namespace first and the disabled CGU with its policy, and the hub accepts it", func(ctx SpecContext) {
		root, err := testenv.Root()
		Expect(err).NotTo(HaveOccurred())
		resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).
			Run(filesys.MakeFsOnDisk(), filepath.Join(root, "samples", "gitops"))
		Expect(err).NotTo(HaveOccurred())

		waves := map[string]string{}
		var objs []*unstructured.Unstructured
		for _, res := range resources.Resources() {
			m, err := res.Map()
			Expect(err).NotTo(HaveOccurred())
			obj := &unstructured.Unstructured{Object: m}
			waves[obj.GetKind()] = obj.GetAnnotations()["argocd.argoproj.io/sync-wave"]
			objs = append(objs, obj)
		}
		Expect(waves).To(Equal(map[string]string{
			"Namespace": "-1", "Policy": "0", "ManagedClusterSetBinding": "0", "Placement": "0", "PlacementBinding": "0",
			"ClusterGroupUpgrade": "0",
		}), "the CGU shares the policy's wave: a NonCompliant policy is Degraded in Argo CD until the rollout ran")
		// Namespaces first, for real: namespaced objects need theirs to exist, even in a dry run.
		sort.SliceStable(objs, func(i, j int) bool { return objs[i].GetKind() == "Namespace" && objs[j].GetKind() != "Namespace" })
		for _, obj := range objs {
			if obj.GetKind() == "ClusterGroupUpgrade" {
				Expect(obj.Object["spec"]).To(HaveKeyWithValue("enable", false), "committed disabled")
			}
			opts := []client.ApplyOption{client.FieldOwner(argoManager), client.ForceOwnership}
			if obj.GetKind() != "Namespace" {
				opts = append(opts, client.DryRunAll)
			}
			Expect(hub.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), opts...)).
				To(Succeed(), "%s %s", obj.GetKind(), obj.GetName())
		}
	})
})
