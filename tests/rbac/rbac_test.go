package rbac_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/talmjob"
	"github.com/cgu-operator/cgu-operator/pkg/ztp"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

// joinFleet adds n clusters <label>-1..n labelled fleet=<label>, each with a simulated spoke
// on from; spoke (nil: none) changes their specs. Unless ztpFlow, they are labelled
// ztp-done, so that the ZTP controller leaves them alone.
func joinFleet(ctx context.Context, label string, n int, ztpFlow bool, spoke func(*sim.SpokeSpec)) []string {
	names := make([]string, n)
	clusters := make([]world.Cluster, n)
	specs := make([]sim.SpokeSpec, n)
	for i := range n {
		names[i] = fmt.Sprintf("%s-%d", label, i+1)
		labels := map[string]string{"fleet": label}
		if !ztpFlow {
			labels[ztp.DoneLabel] = ""
		}
		clusters[i] = world.Cluster{Name: names[i], Labels: labels, Claims: map[string]string{sim.ClaimVersion: from}}
		specs[i] = sim.SpokeSpec{Name: names[i], Version: from, Channel: channel}
		if spoke != nil {
			spoke(&specs[i])
		}
	}
	ExpectWithOffset(1, hub.AddClusters(ctx, clusters...)).To(Succeed())
	ExpectWithOffset(1, simulator.AddSpokes(specs...)).To(Succeed())
	return names
}

// placePolicy places p on the fleet label and waits until it reports on n clusters.
func placePolicy(ctx context.Context, p *policyv1.Policy, label string, n int) *policyv1.Policy {
	ExpectWithOffset(1, hub.PlacePolicy(ctx, p, metav1.LabelSelector{MatchLabels: map[string]string{"fleet": label}})).To(Succeed())
	EventuallyWithOffset(1, func(g Gomega) map[string]policyv1.ComplianceState {
		out, err := hub.Compliance(ctx, p.Namespace, p.Name)
		g.Expect(err).NotTo(HaveOccurred())
		return out
	}).WithTimeout(settle).Should(HaveLen(n))
	return p
}

// upgradePolicy places the inform policy <label>-upgrade, upgrading to to, on the two
// clusters of the fleet label.
func upgradePolicy(ctx context.Context, label string) *policyv1.Policy {
	return placePolicy(ctx, world.UpgradePolicy(policyNS, label+"-upgrade", to, policyv1.Inform), label, 2)
}

func newCGU(namespace, name string, clusters []string, policyNames ...string) *ranv1alpha1.ClusterGroupUpgrade {
	return &ranv1alpha1.ClusterGroupUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
			Clusters: clusters, ManagedPolicies: policyNames, Enable: ptr.To(true),
			RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: len(clusters), Timeout: 240},
		},
	}
}

// precachingRollout creates a disabled rollout that pre-caches a release on clusters, with a
// PreCachingConfig naming the release and spaceRequired.
func precachingRollout(ctx context.Context, ns string, clusters []string, policy, spaceRequired string) *ranv1alpha1.ClusterGroupUpgrade {
	GinkgoHelper()
	pc := &ranv1alpha1.PreCachingConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "precache-config"},
		Spec: ranv1alpha1.PreCachingConfigSpec{SpaceRequired: spaceRequired, Overrides: ranv1alpha1.PrecacheOverrides{
			PlatformImage: "quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("ab", 32)}},
	}
	create(ctx, pc)
	cgu := newCGU(ns, "upgrade", clusters, policy)
	cgu.Spec.Enable = ptr.To(false)
	cgu.Spec.PreCaching = true
	cgu.Spec.PreCachingConfigRef = ranv1alpha1.PreCachingConfigCR{Namespace: ns, Name: pc.Name}
	create(ctx, cgu)
	return cgu
}

func create(ctx context.Context, objs ...client.Object) {
	for _, o := range objs {
		if o.GetNamespace() != "" {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.GetNamespace()}}
			ExpectWithOffset(1, client.IgnoreAlreadyExists(hub.Client.Create(ctx, ns))).To(Succeed())
		}
		ExpectWithOffset(1, hub.Client.Create(ctx, o)).To(Succeed())
	}
}

func stored(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) *ranv1alpha1.ClusterGroupUpgrade {
	return func(g Gomega) *ranv1alpha1.ClusterGroupUpgrade {
		out := &ranv1alpha1.ClusterGroupUpgrade{}
		g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(cgu), out)).To(Succeed())
		return out
	}
}

func state(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) ranv1alpha1.UpgradeState {
	return func(g Gomega) ranv1alpha1.UpgradeState { return stored(ctx, cgu)(g).Status.State }
}

func condition(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, kind string) func(Gomega) *metav1.Condition {
	return func(g Gomega) *metav1.Condition {
		return meta.FindStatusCondition(stored(ctx, cgu)(g).Status.Conditions, kind)
	}
}

func clusterLabels(ctx context.Context, name string) func(Gomega) map[string]string {
	return func(g Gomega) map[string]string {
		mc := &clusterv1.ManagedCluster{}
		g.Expect(hub.Client.Get(ctx, client.ObjectKey{Name: name}, mc)).To(Succeed())
		return mc.Labels
	}
}

// records returns the batch records in the CGU's namespace labelled with its name.
func records(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) []ranv1alpha1.ClusterGroupUpgradeBatch {
	return func(g Gomega) []ranv1alpha1.ClusterGroupUpgradeBatch {
		var list ranv1alpha1.ClusterGroupUpgradeBatchList
		g.Expect(hub.Client.List(ctx, &list, client.InNamespace(cgu.Namespace),
			client.MatchingLabels{ranv1alpha1.LabelUpgradeName: names.LabelValue(cgu.Name)})).To(Succeed())
		return list.Items
	}
}

// owned counts the objects made for the CGU, in every namespace, of each kind the operator
// deletes with it.
func owned(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) int {
	selector := client.MatchingLabels(ownership.Owner{Namespace: cgu.Namespace, Name: cgu.Name}.Labels())
	return func(g Gomega) int {
		n := 0
		for _, list := range []client.ObjectList{&policyv1.PlacementBindingList{}, &clusterv1beta1.PlacementList{},
			&workv1.ManifestWorkList{}, &corev1.ConfigMapList{}} {
			g.Expect(hub.Client.List(ctx, list, selector)).To(Succeed())
			n += meta.LenList(list)
		}
		var ps policyv1.PolicyList
		g.Expect(hub.Client.List(ctx, &ps, selector)).To(Succeed())
		for _, p := range ps.Items {
			if p.Labels[sim.RootPolicyLabel] == "" { // replicas go with their root
				n++
			}
		}
		return n
	}
}

// work tells whether the CGU's ManifestWork of a template for a role exists on a cluster.
func work(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, role manifestwork.Role, template, cluster string) func(Gomega) bool {
	return func(g Gomega) bool {
		key := client.ObjectKey{Namespace: cluster, Name: manifestwork.Name(ownership.OwnerOf(cgu), role, template)}
		err := hub.Client.Get(ctx, key, &workv1.ManifestWork{})
		if apierrors.IsNotFound(err) {
			return false
		}
		g.Expect(err).NotTo(HaveOccurred())
		return true
	}
}

// deleteAndWait deletes the CGU and waits until it and everything it made are gone.
func deleteAndWait(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) {
	ExpectWithOffset(1, hub.Client.Delete(ctx, cgu)).To(Succeed())
	EventuallyWithOffset(1, func() bool {
		return apierrors.IsNotFound(hub.Client.Get(ctx, client.ObjectKeyFromObject(cgu), &ranv1alpha1.ClusterGroupUpgrade{}))
	}).WithTimeout(settle).Should(BeTrue(), "the finalizer is removed")
	EventuallyWithOffset(1, owned(ctx, cgu)).WithTimeout(settle).Should(BeZero())
}

var _ = Describe("The operator with exactly its generated ClusterRole", func() {
	It("rolls out in Copy mode to completion, labels each completed cluster, and cleans up when deleted", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "copy", 2, false, nil)
		// The version comes from a ConfigMap of the policy's namespace, through a hub
		// template: Copy mode copies the ConfigMap next to the enforce copy.
		create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: policyNS, Name: "copy-release"}, Data: map[string]string{"release": to}})
		cv := world.ClusterVersionUpdated(`{{hub fromConfigMap "" "copy-release" "release" hub}}`)
		p := placePolicy(ctx, world.NewPolicy(policyNS, "copy-upgrade", policyv1.Inform, world.ConfigPolicy{Name: "copy-upgrade-cv", Objects: []map[string]any{cv}}), "copy", 2)
		cgu := newCGU("cgu-copy", "upgrade", clusters, p.Name)
		cgu.Spec.Enforcement = ranv1alpha1.EnforcementCopy
		cgu.Spec.RemediationStrategy.MaxConcurrency = 1
		cgu.Spec.Actions = ranv1alpha1.Actions{
			BeforeEnable:    &ranv1alpha1.BeforeEnable{ClusterActions: ranv1alpha1.ClusterActions{AddClusterLabels: map[string]ranv1alpha1.LabelValue{"upgrading": "true"}}},
			AfterCompletion: &ranv1alpha1.AfterCompletion{ClusterActions: ranv1alpha1.ClusterActions{AddClusterLabels: map[string]ranv1alpha1.LabelValue{"upgraded": to}, RemoveClusterLabels: []string{"upgrading"}}, DeleteObjects: ptr.To(false)},
		}
		create(ctx, cgu)

		Eventually(state(ctx, cgu)).WithTimeout(2 * settle).Should(Equal(ranv1alpha1.StateCompleted))
		for _, c := range clusters {
			Expect(clusterLabels(ctx, c)(Default)).To(And(HaveKeyWithValue("upgraded", to), Not(HaveKey("upgrading"))))
		}
		Expect(owned(ctx, cgu)(Default)).NotTo(BeZero(), "deleteObjects false keeps the copies until the CGU goes")
		copied := &corev1.ConfigMap{}
		Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: cgu.Namespace, Name: "copy-release"}, copied)).To(Succeed())
		Expect(copied.Data).To(HaveKeyWithValue("release", to))
		deleteAndWait(ctx, cgu)
	})

	It("rolls out in Override mode to completion", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "override", 2, false, nil)
		p := upgradePolicy(ctx, "override")
		cgu := newCGU("cgu-override", "upgrade", clusters, p.Name)
		cgu.Spec.Enforcement = ranv1alpha1.EnforcementOverride
		create(ctx, cgu)

		Eventually(state(ctx, cgu)).WithTimeout(2 * settle).Should(Equal(ranv1alpha1.StateCompleted))
		Eventually(owned(ctx, cgu)).WithTimeout(settle).Should(BeZero(), "deleted on completion")
		deleteAndWait(ctx, cgu)

		By("a new rollout of the same name: the earlier one's batch records (no garbage collector runs here) are deleted first")
		Expect(records(ctx, cgu)(Default)).NotTo(BeEmpty())
		ns := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "override-again"}}
		again := placePolicy(ctx, world.NewPolicy(policyNS, "override-again", policyv1.Inform,
			world.ConfigPolicy{Name: "override-again", Objects: []map[string]any{ns}}), "override", 2)
		second := newCGU("cgu-override", "upgrade", clusters, again.Name)
		second.Spec.Enforcement = ranv1alpha1.EnforcementOverride
		create(ctx, second)
		Eventually(state(ctx, second)).WithTimeout(2 * settle).Should(Equal(ranv1alpha1.StateCompleted))
		read := stored(ctx, second)(Default)
		for _, b := range records(ctx, second)(Default) {
			Expect(metav1.IsControlledBy(&b, read)).To(BeTrue(), "record %s is the new rollout's", b.Name)
		}
		deleteAndWait(ctx, second)
	})

	It("puts back a PlacementBinding and a Placement someone edits while they enforce", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "putback", 1, false, func(s *sim.SpokeSpec) { s.Behaviour = sim.Behaviour{Stall: true} })
		p := placePolicy(ctx, world.UpgradePolicy(policyNS, "putback-upgrade", to, policyv1.Inform), "putback", 1)
		cgu := newCGU("cgu-putback", "upgrade", clusters, p.Name)
		cgu.Spec.Enforcement = ranv1alpha1.EnforcementOverride
		create(ctx, cgu)
		selector := client.MatchingLabels(ownership.Owner{Namespace: cgu.Namespace, Name: cgu.Name}.Labels())
		binding := func(g Gomega) *policyv1.PlacementBinding {
			var list policyv1.PlacementBindingList
			g.Expect(hub.Client.List(ctx, &list, client.InNamespace(policyNS), selector)).To(Succeed())
			g.Expect(list.Items).To(HaveLen(1))
			return &list.Items[0]
		}
		Eventually(binding).WithTimeout(settle).Should(HaveField("SubFilter", policyv1.Restricted))

		By("widening the binding to every cluster of its Placement, as a careless edit would")
		Eventually(func(g Gomega) { // retried: the operator may write the binding meanwhile
			edited := binding(g)
			edited.SubFilter = ""
			g.Expect(hub.Client.Update(ctx, edited)).To(Succeed())
		}).WithTimeout(10 * time.Second).Should(Succeed())
		Eventually(binding).WithTimeout(10*time.Second).Should(HaveField("SubFilter", policyv1.Restricted),
			"the operator puts it back")

		By("adding a toleration to its Placement")
		placement := func(g Gomega) *clusterv1beta1.Placement {
			var list clusterv1beta1.PlacementList
			g.Expect(hub.Client.List(ctx, &list, client.InNamespace(policyNS), selector)).To(Succeed())
			g.Expect(list.Items).To(HaveLen(1))
			return &list.Items[0]
		}
		Eventually(func(g Gomega) { // retried: the placement controller writes its status meanwhile
			pl := placement(g)
			pl.Spec.Tolerations = append(pl.Spec.Tolerations, clusterv1beta1.Toleration{Key: "example.com/edited", Operator: clusterv1beta1.TolerationOpExists})
			g.Expect(hub.Client.Update(ctx, pl)).To(Succeed())
		}).WithTimeout(10 * time.Second).Should(Succeed())
		Eventually(func(g Gomega) []clusterv1beta1.Toleration { return placement(g).Spec.Tolerations }).WithTimeout(10*time.Second).
			ShouldNot(ContainElement(HaveField("Key", "example.com/edited")), "the operator puts its Placement back")

		simulator.SetBehaviour(clusters[0], sim.Behaviour{})
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		deleteAndWait(ctx, cgu)
	})

	It("pre-caches through views and actions, with a PreCachingConfig, then deletes them", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "precache", 2, false, nil)
		p := upgradePolicy(ctx, "precache")
		cgu := precachingRollout(ctx, "cgu-precache", clusters, p.Name, "1Mi")

		Eventually(condition(ctx, cgu, ranv1alpha1.ConditionPrecachingSucceeded)).WithTimeout(settle).ShouldNot(BeNil())
		Expect(condition(ctx, cgu, ranv1alpha1.ConditionPrecacheSpecValid)(Default)).To(HaveField("Status", metav1.ConditionTrue))
		// Each cluster's Job runs through TALM's views and actions to a final state; one
		// that did not succeed leaves its namespace and binding until the rollout goes.
		final := map[string]string{}
		for _, c := range clusters {
			Eventually(func(g Gomega) string {
				var got ranv1alpha1.ClusterGroupUpgrade
				g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(cgu), &got)).To(Succeed())
				g.Expect(got.Status.Precaching).NotTo(BeNil())
				final[c] = got.Status.Precaching.Status[c]
				return final[c]
			}).WithTimeout(2*settle).Should(BeElementOf(talmjob.Succeeded, talmjob.Failed, talmjob.Precache.Timeout), "the precache Job of %s", c)
		}
		onSpoke := func(cluster string, gvk schema.GroupVersionKind, namespace, name string) func() error {
			return func() error {
				_, err := simulator.Object(cluster, gvk, namespace, name)
				return err
			}
		}
		binding := rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding")
		namespace := corev1.SchemeGroupVersion.WithKind("Namespace")
		for _, c := range clusters {
			if final[c] != talmjob.Succeeded {
				Expect(onSpoke(c, binding, "", talmjob.Precache.Binding)()).To(Succeed(), "the precache Job's binding on %s", c)
			}
		}
		deleteAndWait(ctx, cgu)
		for _, c := range clusters {
			Eventually(onSpoke(c, binding, "", talmjob.Precache.Binding)).WithTimeout(settle).Should(MatchError(configpolicy.ErrNotFound),
				"the precache Job's binding to cluster-admin on %s", c)
			Eventually(onSpoke(c, namespace, "", talmjob.Precache.Namespace)).WithTimeout(settle).Should(MatchError(configpolicy.ErrNotFound),
				"the precache namespace on %s", c)
		}
	})

	It("adopts the views and actions of TALM's names it finds without an owner, as when it takes over from TALM", func(ctx SpecContext) {
		all := joinFleet(ctx, "adopt", 2, false, nil)
		p := upgradePolicy(ctx, "adopt")
		clusters, c := all[:1], all[0]
		Expect(simulator.Silence(c, true)).To(Succeed()) // the spec answers the views
		const ns = "cgu-adopt"
		cgu := precachingRollout(ctx, ns, clusters, p.Name, "")
		Eventually(func(g Gomega) string {
			var got ranv1alpha1.ClusterGroupUpgrade
			g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(cgu), &got)).To(Succeed())
			g.Expect(got.Status.Precaching).NotTo(BeNil())
			return got.Status.Precaching.Status[c]
		}).WithTimeout(settle).Should(Equal(talmjob.PreparingToStart))

		By("TALM's objects, without the operator's labels, as TALM leaves them")
		talmAction := &actionv1beta1.ManagedClusterAction{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: "precache-ns-create"},
			Spec: actionv1beta1.ActionSpec{ActionType: actionv1beta1.CreateActionType, KubeWork: &actionv1beta1.KubeWorkSpec{
				Resource: "namespace", ObjectTemplate: runtime.RawExtension{Object: &corev1.Namespace{
					TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: talmjob.Precache.Namespace}}}}}}
		talmView := &viewv1beta1.ManagedClusterView{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: "view-precache-spec-configmap"},
			Spec: viewv1beta1.ViewSpec{Scope: viewv1beta1.ViewScope{Resource: "configmap", Namespace: talmjob.Precache.Namespace, Name: "pre-cache-spec"}}}
		create(ctx, talmAction, talmView)

		By("the namespace gone: Starting, TALM's objects adopted")
		patch := []byte(`{"status":{"conditions":[{"type":"Processing","status":"False","reason":"GetResourceFailed","message":"not found","lastTransitionTime":"2022-01-28T17:57:00Z"}]}}`)
		nsView := &viewv1beta1.ManagedClusterView{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: "view-precache-namespace"}}
		Eventually(func() error {
			return hub.Client.Status().Patch(ctx, nsView, client.RawPatch(types.MergePatchType, patch))
		}).WithTimeout(settle).Should(Succeed())
		for _, obj := range []client.Object{talmAction, talmView} {
			Eventually(func(g Gomega) map[string]string {
				g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
				return obj.GetLabels()
			}).WithTimeout(settle).Should(HaveKeyWithValue(ownership.LabelUpgradeNamespace, ns), "%T %s", obj, obj.GetName())
		}
		deleteAndWait(ctx, cgu)
		for _, obj := range []client.Object{talmAction, talmView} {
			Eventually(func() bool { return apierrors.IsNotFound(hub.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)) }).
				WithTimeout(settle).Should(BeTrue(), "adopted, %s goes with the rollout", obj.GetName())
		}
	})

	It("approves a Manual InstallPlan through views and actions", func(ctx SpecContext) {
		const olmNS, pkg = "openshift-sriov-network-operator", "sriov-network-operator"
		const csvFrom, csvTo = "sriov-network-operator.v4.16.0", "sriov-network-operator.v4.16.1"
		clusters := joinFleet(ctx, "olm", 1, false, func(s *sim.SpokeSpec) {
			s.Operators = []sim.InstalledOperator{{Package: pkg, Namespace: olmNS, Channel: "stable",
				InstalledCSV: csvFrom, Available: []string{csvTo}, Approval: sim.ApprovalManual}}
		})
		sub := map[string]any{
			"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
			"metadata": map[string]any{"name": pkg, "namespace": olmNS},
			"spec": map[string]any{"name": pkg, "channel": "stable", "source": sim.DefaultCatalogSource,
				"sourceNamespace": sim.MarketplaceNamespace, "installPlanApproval": sim.ApprovalManual},
			"status": map[string]any{"installedCSV": csvTo, "state": sim.SubscriptionStateAtLatest},
		}
		p := placePolicy(ctx, world.NewPolicy(policyNS, "olm-sub", policyv1.Inform,
			world.ConfigPolicy{Name: "olm-sub", Objects: []map[string]any{sub}}), "olm", 1)
		cgu := newCGU("cgu-olm", "upgrade", clusters, p.Name)
		create(ctx, cgu)

		Eventually(state(ctx, cgu)).WithTimeout(2 * settle).Should(Equal(ranv1alpha1.StateCompleted))
		installed, err := simulator.Object(clusters[0], sim.SubscriptionGVK, olmNS, pkg)
		Expect(err).NotTo(HaveOccurred())
		Expect(installed.Object).To(HaveKeyWithValue("status", HaveKeyWithValue("installedCSV", csvTo)))
		deleteAndWait(ctx, cgu)
	})

	It("rolls ManifestWorks out as steps and pre- and post-upgrade actions, and deletes them", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "works", 2, false, nil)
		p := upgradePolicy(ctx, "works")
		const ns = "cgu-works"
		templates := sampleTemplates("clustergroupupgrade-upgrade-actions.yaml", ns)
		Expect(templates).To(HaveKey("backup"))
		Expect(templates).To(HaveKey("smoke-test"))
		create(ctx, templates["backup"], templates["smoke-test"])
		Expect(simulator.AddNamespace("openshift-adp", clusters...)).To(Succeed())
		// One cluster each, so that neither rollout holds a cluster the other works on.
		actions, stepped := clusters[0], clusters[1]
		cgu := newCGU(ns, "upgrade", []string{actions}, p.Name)
		cgu.Spec.PreUpgradeActions = []string{"backup"}
		cgu.Spec.PostUpgradeActions = []string{"smoke-test"}
		cgu.Spec.Actions.AfterCompletion = &ranv1alpha1.AfterCompletion{DeleteObjects: ptr.To(false)} // kept until deleted
		steps := newCGU(ns, "steps", []string{stepped})
		steps.Spec.ManifestWorkTemplates = []string{"backup"}
		steps.Spec.Actions.AfterCompletion = &ranv1alpha1.AfterCompletion{DeleteObjects: ptr.To(false)} // kept until deleted
		create(ctx, cgu, steps)

		By("the cluster gets its pre-upgrade action, then, upgraded, its post-upgrade action; the other gets the step")
		status := func() string { return fmt.Sprintf("%+v", stored(ctx, cgu)(Default).Status.CurrentBatch) }
		Eventually(work(ctx, cgu, manifestwork.RolePre, "backup", actions)).WithTimeout(settle).Should(BeTrue(), status)
		Eventually(func() (string, error) { return simulator.DesiredVersion(actions) }).WithTimeout(settle).Should(Equal(to), status)
		Eventually(work(ctx, cgu, manifestwork.RolePost, "smoke-test", actions)).WithTimeout(settle).Should(BeTrue(), status)
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted), status)
		stepsStatus := func() string { return fmt.Sprintf("%+v", stored(ctx, steps)(Default).Status) }
		Eventually(state(ctx, steps)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted), stepsStatus)
		Expect(work(ctx, steps, manifestwork.RoleStep, "backup", stepped)(Default)).To(BeTrue())
		for _, c := range []*ranv1alpha1.ClusterGroupUpgrade{cgu, steps} {
			deleteAndWait(ctx, c)
		}
	})

	It("takes a new cluster through its ZTP wave policies to ztp-done", func(ctx SpecContext) {
		p := world.NewPolicy(policyNS, "ztp-wave-upgrade", policyv1.Inform,
			world.ConfigPolicy{Name: "ztp-wave-upgrade", Objects: []map[string]any{world.ClusterVersionUpdated(to)}})
		p.Annotations = map[string]string{ztp.WaveAnnotation: "10"}
		Expect(hub.PlacePolicy(ctx, p, metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "ztp"}})).To(Succeed())
		name := joinFleet(ctx, "ztp", 1, true, nil)[0]

		Eventually(clusterLabels(ctx, name)).WithTimeout(2 * settle).Should(HaveKey(ztp.DoneLabel))
		cgu := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: ztp.Namespace, Name: name}}
		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))

		By("ztp-done removed with nothing left to do: the controller deletes the CGU and labels the cluster again")
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
		Expect(hub.Client.Patch(ctx, mc, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"`+ztp.DoneLabel+`":null}}}`)))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(hub.Client.Get(ctx, client.ObjectKeyFromObject(cgu), &ranv1alpha1.ClusterGroupUpgrade{}))
		}).WithTimeout(settle).Should(BeTrue())
		Eventually(clusterLabels(ctx, name)).WithTimeout(settle).Should(HaveKey(ztp.DoneLabel))
	})
})

var _ = Describe("--policy-namespaces", func() {
	It("refuses a rollout whose policy is only in a namespace it does not allow; it never starts", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "tenant", 1, false, nil)
		p := placePolicy(ctx, world.UpgradePolicy(forbiddenNS, "tenant-upgrade", to, policyv1.Inform), "tenant", 1)
		cgu := newCGU("cgu-tenant", "upgrade", clusters, p.Name)
		create(ctx, cgu)

		Eventually(condition(ctx, cgu, ranv1alpha1.ConditionValidated)).WithTimeout(settle).Should(And(Not(BeNil()),
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", ranv1alpha1.ReasonPolicyNamespaceNotAllowed),
			HaveField("Message", And(ContainSubstring("tenant-upgrade (in "+forbiddenNS+")"), ContainSubstring("allowed namespaces (--policy-namespaces): "+policyNS)))))
		Consistently(func(g Gomega) {
			cur := stored(ctx, cgu)(g)
			g.Expect(cur.Status.StartedAt).To(BeNil())
			g.Expect(cur.Status.State).To(Equal(ranv1alpha1.StateCannotStart))
		}).WithTimeout(3 * time.Second).Should(Succeed())
		Expect(owned(ctx, cgu)(Default)).To(BeZero(), "nothing was enforced")
		Expect(simulator.DesiredVersion(clusters[0])).To(BeEmpty())
		deleteAndWait(ctx, cgu)
	})

	It("holds ZTP rollouts to it too", func(ctx SpecContext) {
		p := world.NewPolicy(forbiddenNS, "tenant-wave", policyv1.Inform,
			world.ConfigPolicy{Name: "tenant-wave", Objects: []map[string]any{world.ClusterVersionUpdated(to)}})
		p.Annotations = map[string]string{ztp.WaveAnnotation: "1"}
		Expect(hub.PlacePolicy(ctx, p, metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "ztp-tenant"}})).To(Succeed())
		name := joinFleet(ctx, "ztp-tenant", 1, true, nil)[0]
		cgu := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: ztp.Namespace, Name: name}}

		Eventually(condition(ctx, cgu, ranv1alpha1.ConditionValidated)).WithTimeout(2 * settle).Should(And(Not(BeNil()),
			HaveField("Reason", ranv1alpha1.ReasonPolicyNamespaceNotAllowed), HaveField("Message", ContainSubstring("tenant-wave"))))
		Expect(stored(ctx, cgu)(Default).Status.StartedAt).To(BeNil())
		Expect(clusterLabels(ctx, name)(Default)).NotTo(HaveKey(ztp.DoneLabel))
	})
})

// sampleTemplates reads the ManifestWorkReplicaSets of a sample, put in namespace.
func sampleTemplates(file, namespace string) map[string]*workv1alpha1.ManifestWorkReplicaSet {
	templates, err := harness.SampleTemplates(file, namespace)
	Expect(err).NotTo(HaveOccurred())
	return templates
}
