package rbac_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/ibgu"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

// The suite's operator runs in tenancy mode (--tenancy), with the namespaces of the other
// scenarios exempt (--tenancy-exempt-namespaces), as a platform team's would be. Namespace
// tenantNS is a tenant's: the cluster set tenantSet is bound to it, and only that set's
// clusters, its own policies and label keys under tenantPrefix are within its reach.
const (
	tenantNS     = "tenant-a"
	tenantSet    = "tenant-a-sites"
	tenantPrefix = "tenant-a.example.com/"
)

// exemptNamespaces are the namespaces of the suite's other scenarios.
var exemptNamespaces = []string{"cgu-copy", "cgu-override", "cgu-putback", "cgu-precache", "cgu-adopt", "cgu-olm", "cgu-works", "cgu-tenant", "ibgu-rbac", "mcu-rbac"}

var _ = Describe("Tenancy mode", Ordered, func() {
	var own, other []string
	BeforeAll(func(ctx SpecContext) {
		own = joinFleet(ctx, "tenant-own", 2, false, nil)
		other = joinFleet(ctx, "tenant-other", 1, false, nil)
		for _, c := range own {
			Eventually(func(g Gomega) { // retried: the simulated agent writes the cluster's status meanwhile
				mc := &clusterv1.ManagedCluster{}
				g.Expect(hub.Client.Get(ctx, client.ObjectKey{Name: c}, mc)).To(Succeed())
				mc.Labels[clusterv1beta2.ClusterSetLabel] = tenantSet
				g.Expect(hub.Client.Update(ctx, mc)).To(Succeed())
			}).WithTimeout(10 * time.Second).Should(Succeed())
		}
		create(ctx, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: tenantSet}},
			&clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: tenantNS, Name: tenantSet},
				Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: tenantSet}},
			// A hub template reading a ConfigMap of the policy's own namespace: Copy mode
			// puts the copy next to it, and copies no ConfigMap.
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: tenantNS, Name: "site-data"}, Data: map[string]string{"release": to}})
	})

	It("refuses a named cluster outside the namespace's bound sets", func(ctx SpecContext) {
		cgu := newCGU(tenantNS, "reach", append([]string{own[0]}, other...))
		expectRefused(ctx, cgu, ranv1alpha1.ConditionClustersSelected, ranv1alpha1.ReasonClusterOutsideBoundSets,
			"bound to namespace "+tenantNS+" (tenancy mode): "+other[0])
	})

	It("selects nothing when its selector matches only clusters outside the bound sets", func(ctx SpecContext) {
		cgu := newCGU(tenantNS, "elsewhere", nil)
		cgu.Spec.ClusterLabelSelectors = []ranv1alpha1.ClusterLabelSelector{{MatchLabels: map[string]string{"fleet": "tenant-other"}}}
		expectRefused(ctx, cgu, ranv1alpha1.ConditionClustersSelected, ranv1alpha1.ReasonNoClustersSelected,
			"bound to namespace "+tenantNS+" (tenancy mode)")
	})

	It("refuses a policy of another namespace, even one placed on its clusters", func(ctx SpecContext) {
		foreign := placePolicy(ctx, world.UpgradePolicy(policyNS, "tenant-own-platform", to, policyv1.Inform), "tenant-own", 2)
		cgu := newCGU(tenantNS, "foreign", own, foreign.Name)
		expectRefused(ctx, cgu, ranv1alpha1.ConditionValidated, ranv1alpha1.ReasonPolicyNamespaceNotAllowed,
			"tenancy mode allows the ClusterGroupUpgrade's own namespace "+tenantNS)
	})

	It("refuses cluster actions outside the label prefix", func(ctx SpecContext) {
		p := tenantPolicy(ctx, "tenant-labels")
		cgu := newCGU(tenantNS, "labels", own, p.Name)
		cgu.Spec.Actions.AfterCompletion = &ranv1alpha1.AfterCompletion{ClusterActions: ranv1alpha1.ClusterActions{
			AddClusterLabels: map[string]ranv1alpha1.LabelValue{tenantPrefix + "release": "next", "ztp-done": ""}}}
		expectRefused(ctx, cgu, ranv1alpha1.ConditionValidated, ranv1alpha1.ReasonInvalidClusterActions,
			`keys outside the tenancy prefix "`+tenantPrefix+`": ztp-done`)
	})

	It("refuses a PreCachingConfig of another namespace", func(ctx SpecContext) {
		p := tenantPolicy(ctx, "tenant-precache")
		cgu := newCGU(tenantNS, "precache", own, p.Name)
		cgu.Spec.PreCaching = true
		cgu.Spec.PreCachingConfigRef = ranv1alpha1.PreCachingConfigCR{Namespace: "cgu-precache", Name: "precache-config"}
		expectRefused(ctx, cgu, ranv1alpha1.ConditionPrecacheSpecValid, ranv1alpha1.ReasonPrecacheSpecIncomplete,
			"tenancy mode allows only one of the ClusterGroupUpgrade's namespace "+tenantNS)
	})

	It("keeps an image-based upgrade from sending another namespace's ConfigMaps", func(ctx SpecContext) {
		g := &lcmv1alpha1.ImageBasedGroupUpgrade{
			ObjectMeta: metav1.ObjectMeta{Namespace: tenantNS, Name: "to-4.18"},
			Spec: lcmv1alpha1.ImageBasedGroupUpgradeSpec{
				IBUSpec: lcmv1alpha1.ImageBasedUpgradeSpec{
					SeedImageRef: lcmv1alpha1.SeedImageRef{Image: "quay.io/example/seed:4.18.1", Version: "4.18.1"},
					OADPContent:  []lcmv1alpha1.ConfigMapRef{{Namespace: "openshift-adp", Name: "oadp-backup"}},
				},
				ClusterLabelSelectors: []ranv1alpha1.ClusterLabelSelector{{MatchLabels: map[string]string{"fleet": "tenant-own"}}},
				Plan: []lcmv1alpha1.PlanItem{{Actions: []string{lcmv1alpha1.ActionPrep},
					RolloutStrategy: lcmv1alpha1.RolloutStrategy{MaxConcurrency: 2, Timeout: 60}}},
			},
		}
		create(ctx, g)
		Eventually(func(gm Gomega) []metav1.Condition {
			out := &lcmv1alpha1.ImageBasedGroupUpgrade{}
			gm.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(g), out)).To(Succeed())
			return out.Status.Conditions
		}).WithTimeout(settle).Should(ContainElement(And(HaveField("Type", ibgu.ConditionProgressing),
			HaveField("Reason", ibgu.ReasonMissingContent),
			HaveField("Message", ContainSubstring("may not send ConfigMap openshift-adp/oadp-backup: tenancy mode")))))
		var templates workv1alpha1.ManifestWorkReplicaSetList
		Expect(hub.Client.List(ctx, &templates, client.InNamespace(tenantNS))).To(Succeed())
		Expect(templates.Items).To(BeEmpty(), "nothing is made to send")
		Expect(hub.Client.Delete(ctx, g)).To(Succeed())
	})

	It("rolls out its own policy, in Copy mode, to the clusters of its bound set only", func(ctx SpecContext) {
		p := tenantPolicy(ctx, "tenant-upgrade")
		cgu := newCGU(tenantNS, "upgrade", nil, p.Name)
		// Every cluster of the hub matches; tenancy keeps those of the bound set.
		cgu.Spec.ClusterLabelSelectors = []ranv1alpha1.ClusterLabelSelector{{}}
		cgu.Spec.Enforcement = ranv1alpha1.EnforcementCopy
		cgu.Spec.RemediationStrategy.MaxConcurrency = 2
		cgu.Spec.Actions.AfterCompletion = &ranv1alpha1.AfterCompletion{ClusterActions: ranv1alpha1.ClusterActions{
			AddClusterLabels: map[string]ranv1alpha1.LabelValue{tenantPrefix + "release": to}}}
		create(ctx, cgu)

		Eventually(state(ctx, cgu)).WithTimeout(2 * settle).Should(Equal(ranv1alpha1.StateCompleted))
		out := stored(ctx, cgu)(Default)
		Expect(out.Status.RemediationPlan).To(Equal([][]string{own}))
		for _, c := range own {
			Expect(clusterLabels(ctx, c)(Default)).To(HaveKeyWithValue(tenantPrefix+"release", to))
		}
		Expect(clusterLabels(ctx, other[0])(Default)).NotTo(HaveKey(tenantPrefix + "release"))
		var bindings clusterv1beta2.ManagedClusterSetBindingList
		Expect(hub.Client.List(ctx, &bindings, client.InNamespace(tenantNS))).To(Succeed())
		Expect(bindings.Items).To(ConsistOf(HaveField("Name", tenantSet)), "the operator binds no cluster set for a tenant")
		site := &corev1.ConfigMap{}
		Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: tenantNS, Name: "site-data"}, site)).To(Succeed())
		Expect(site.Labels).To(BeEmpty(), "the tenant's own ConfigMap is read in place, not copied over")
		deleteAndWait(ctx, cgu)
		Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(site), site)).To(Succeed(), "and not deleted with the rollout")
		Expect(apierrors.IsNotFound(hub.Client.Get(ctx, client.ObjectKey{Namespace: tenantNS, Name: "global"},
			&clusterv1beta2.ManagedClusterSetBinding{}))).To(BeTrue())
	})
})

// tenantPolicy places, in the tenant's namespace, an inform upgrade policy whose version a
// hub template reads from the namespace's ConfigMap site-data, on the tenant's clusters.
func tenantPolicy(ctx SpecContext, name string) *policyv1.Policy {
	cv := world.ClusterVersionUpdated(`{{hub fromConfigMap "" "site-data" "release" hub}}`)
	p := world.NewPolicy(tenantNS, name, policyv1.Inform, world.ConfigPolicy{Name: name + "-cv", Objects: []map[string]any{cv}})
	return placePolicy(ctx, p, "tenant-own", 2)
}

// expectRefused creates the CGU, expects its condition of type kind to turn False with the
// reason and a message containing words, nothing made for it, then deletes it.
func expectRefused(ctx SpecContext, cgu *ranv1alpha1.ClusterGroupUpgrade, kind, reason, words string) {
	GinkgoHelper()
	create(ctx, cgu)
	Eventually(condition(ctx, cgu, kind)).WithTimeout(settle).Should(And(HaveField("Status", metav1.ConditionFalse),
		HaveField("Reason", reason), HaveField("Message", ContainSubstring(words))))
	Consistently(owned(ctx, cgu)).WithTimeout(3*time.Second).Should(BeZero(), "nothing is made for a refused rollout")
	deleteAndWait(ctx, cgu)
}
