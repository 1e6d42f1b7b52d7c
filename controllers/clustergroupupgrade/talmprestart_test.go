package clustergroupupgrade_test

import (
	"context"
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"
	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/precache/pull/pulltest"
	"github.com/cgu-operator/cgu-operator/pkg/talmjob"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

// TALM's pre-caching and backup scenarios play the spoke themselves: no agent answers, and
// the scenario writes the status of TALM's views by their names, as its scripts do with
// curl. These specs do the same on clusters that stopped reporting.

// offline joins n clusters of a fleet with an upgrade policy placed on them, then silences
// their work-manager add-ons (the clusters stay Available): the spec answers for them.
func offline(ctx context.Context, label string, n int) ([]string, string) {
	GinkgoHelper()
	clusters := joinFleet(ctx, label, n)
	p := placeUpgradePolicy(ctx, label, n)
	for _, c := range clusters {
		Expect(simulator.Silence(c, true)).To(Succeed())
	}
	return clusters, p.Name
}

// namespace makes a namespace on the hub, unless it exists.
func namespace(ctx context.Context, name string) {
	GinkgoHelper()
	Expect(client.IgnoreAlreadyExists(hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))).To(Succeed())
}

// answer writes a view's status as TALM's scenario scripts do: Processing True ("found",
// with jobStatus as the Job's status when given) or False ("not found").
func answer(ctx context.Context, cluster, view string, found bool, jobStatus map[string]any) {
	GinkgoHelper()
	answerWith(ctx, cluster, view, found, jobStatus, nil)
}

// answerAsAgent writes a Job view's status as the agent does: the whole Job, its kind
// included (the view CRD asks it of an object that is written again).
func answerAsAgent(ctx context.Context, cluster, view string, jobStatus map[string]any) {
	GinkgoHelper()
	answerWith(ctx, cluster, view, true, jobStatus, map[string]any{"apiVersion": "batch/v1", "kind": "Job"})
}

func answerWith(ctx context.Context, cluster, view string, found bool, jobStatus, result map[string]any) {
	GinkgoHelper()
	cond := map[string]any{"type": viewv1beta1.ConditionViewProcessing, "lastTransitionTime": "2022-01-28T17:57:00Z",
		"status": "False", "reason": viewv1beta1.ReasonGetResourceFailed, "message": "not found"}
	if found {
		cond["status"], cond["reason"], cond["message"] = "True", viewv1beta1.ReasonGetResource, "found"
	}
	status := map[string]any{"conditions": []any{cond}}
	if jobStatus != nil {
		if result == nil {
			result = map[string]any{}
		}
		result["status"] = jobStatus
		status["result"] = result
	}
	patch, err := json.Marshal(map[string]any{"status": status})
	Expect(err).NotTo(HaveOccurred())
	Eventually(func() error {
		v := &viewv1beta1.ManagedClusterView{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: view}}
		return hub.Client.Status().Patch(ctx, v, client.RawPatch(types.MergePatchType, patch))
	}).WithTimeout(settle).Should(Succeed(), "the view %s of %s", view, cluster)
}

// hubObjects tells which of the named views (or actions) exist in each cluster's namespace.
func hubObjects(ctx context.Context, clusters []string, obj func() client.Object, names ...string) func(Gomega) map[string]bool {
	return func(g Gomega) map[string]bool {
		out := map[string]bool{}
		for _, c := range clusters {
			for _, n := range names {
				err := hub.Client.Get(ctx, client.ObjectKey{Namespace: c, Name: n}, obj())
				g.Expect(client.IgnoreNotFound(err)).To(Succeed())
				out[c+"/"+n] = err == nil
			}
		}
		return out
	}
}

func hubViews(ctx context.Context, clusters []string, names ...string) func(Gomega) map[string]bool {
	return hubObjects(ctx, clusters, func() client.Object { return &viewv1beta1.ManagedClusterView{} }, names...)
}

func hubActions(ctx context.Context, clusters []string, names ...string) func(Gomega) map[string]bool {
	return hubObjects(ctx, clusters, func() client.Object { return &actionv1beta1.ManagedClusterAction{} }, names...)
}

// named maps every cluster's named objects to want.
func named(clusters []string, want bool, names ...string) map[string]bool {
	out := map[string]bool{}
	for _, c := range clusters {
		for _, n := range names {
			out[c+"/"+n] = want
		}
	}
	return out
}

// jobStates are status.precaching.status, or status.backup.status.
func jobStates(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, backup bool) func(Gomega) map[string]string {
	return func(g Gomega) map[string]string {
		st := fleet.Stored(ctx, cgu)(g).Status
		if backup {
			g.Expect(st.Backup).NotTo(BeNil())
			return st.Backup.Status
		}
		g.Expect(st.Precaching).NotTo(BeNil())
		return st.Precaching.Status
	}
}

func everyOne(clusters []string, state string) map[string]string {
	out := map[string]string{}
	for _, c := range clusters {
		out[c] = state
	}
	return out
}

var precacheDeps = []string{"view-precache-spec-configmap", "view-precache-service-acct", "view-precache-cluster-role-binding"}

var _ = Describe("TALM's pre-caching-with-configs and pre-caching-complete scenarios", func() {
	It("waits for its PreCachingConfig, then clears the spoke, makes the dependencies, the Job, and follows it by TALM's views and actions", func(ctx SpecContext) {
		f := pulltest.NewFixture(GinkgoT())
		clusters, policy := offline(ctx, "talmpc", 2)
		cgu := newCGU("cgu-talmpc", "cgu", clusters, 2, policy)
		namespace(ctx, cgu.Namespace)
		cgu.Spec.PreCaching, cgu.Spec.Enable = true, ptr.To(false)
		cgu.Spec.PreCachingConfigRef = ranv1alpha1.PreCachingConfigCR{Namespace: cgu.Namespace, Name: "talmpc-config"}
		fleet.MustCreate(ctx, cgu)

		By("with-configs 00: the PreCachingConfig missing: the spec is incomplete, nothing asked of the spokes")
		Eventually(talmConditions(ctx, cgu)).WithTimeout(settle).Should(Equal([]string{selected, validated,
			"PrecacheSpecValid False PrecacheSpecIncomplete"}))
		Expect(hubViews(ctx, clusters, "view-precache-namespace")(Default)).To(Equal(named(clusters, false, "view-precache-namespace")))

		By("with-configs 01: the PreCachingConfig made (no spaceRequired, as in TALM's scenario)")
		// Made without it: an update after the creation could come after the operator read it.
		preCachingConfig(ctx, cgu.Namespace, "talmpc-config", f, func(pc *ranv1alpha1.PreCachingConfig) { pc.Spec.SpaceRequired = "" })

		By("00: every cluster PreparingToStart: the namespace and binding deleted on the spoke, the namespace watched")
		Eventually(jobStates(ctx, cgu, false)).WithTimeout(settle).Should(Equal(everyOne(clusters, talmjob.PreparingToStart)))
		Expect(hubActions(ctx, clusters, "precache-ns-delete", "precache-crb-delete")(Default)).To(Equal(named(clusters, true, "precache-ns-delete", "precache-crb-delete")))
		Expect(hubViews(ctx, clusters, "view-precache-namespace")(Default)).To(Equal(named(clusters, true, "view-precache-namespace")))
		Expect(talmConditions(ctx, cgu)(Default)).To(Equal([]string{selected, validated, "PrecacheSpecValid True PrecacheSpecIsWellFormed",
			"PrecachingSuceeded False InProgress"}))
		Expect(fleet.Stored(ctx, cgu)(Default).Status.Precaching.Spec.SpaceRequired).To(Equal("35"), "TALM's default, in whole GiB")
		var del actionv1beta1.ManagedClusterAction
		Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: clusters[0], Name: "precache-ns-delete"}, &del)).To(Succeed())
		Expect(del.Spec.KubeWork).To(PointTo(MatchFields(IgnoreExtras, Fields{"Resource": Equal("namespace"), "Name": Equal("openshift-talo-pre-cache")})))

		By("01: the namespace view says not found: Starting, with the namespace, account, binding and spec asked for")
		for _, c := range clusters {
			answer(ctx, c, "view-precache-namespace", false, nil)
		}
		Eventually(jobStates(ctx, cgu, false)).WithTimeout(settle).Should(Equal(everyOne(clusters, talmjob.Starting)))
		deps := []string{"precache-ns-create", "precache-sa-create", "precache-crb-create", "precache-spec-cm-create"}
		Eventually(hubActions(ctx, clusters, deps...)).WithTimeout(settle).Should(Equal(named(clusters, true, deps...)))
		Eventually(hubViews(ctx, clusters, precacheDeps...)).WithTimeout(settle).Should(Equal(named(clusters, true, precacheDeps...)))
		var spec actionv1beta1.ManagedClusterAction
		Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: clusters[1], Name: "precache-spec-cm-create"}, &spec)).To(Succeed())
		var cm corev1.ConfigMap
		Expect(json.Unmarshal(spec.Spec.KubeWork.ObjectTemplate.Raw, &cm)).To(Succeed())
		Expect(cm.Name).To(Equal("pre-cache-spec"))
		Expect(cm.Data).To(And(HaveKeyWithValue("platform.image", f.Spec().PlatformImage), HaveKey("operators.indexes"),
			HaveKey("operators.packagesAndChannels"), HaveKey("excludePrecachePatterns"), HaveKey("additionalImages"), HaveKeyWithValue("spaceRequired", "35")))

		By("02: the dependencies found: the Job's view")
		for _, c := range clusters {
			for _, v := range precacheDeps {
				answer(ctx, c, v, true, nil)
			}
		}
		Eventually(hubViews(ctx, clusters, "view-precache-job")).WithTimeout(settle).Should(Equal(named(clusters, true, "view-precache-job")))

		By("03: no Job on the spoke: the Job asked for")
		for _, c := range clusters {
			answer(ctx, c, "view-precache-job", false, nil)
		}
		Eventually(hubActions(ctx, clusters, "precache-job-create")).WithTimeout(settle).Should(Equal(named(clusters, true, "precache-job-create")))
		Expect(jobStates(ctx, cgu, false)(Default)).To(Equal(everyOne(clusters, talmjob.Starting)))

		By("04: the Job active: Active, the views of the dependencies and of the namespace deleted")
		for _, c := range clusters {
			answer(ctx, c, "view-precache-job", true, map[string]any{"active": 1})
		}
		Eventually(jobStates(ctx, cgu, false)).WithTimeout(settle).Should(Equal(everyOne(clusters, talmjob.Active)))
		gone := append([]string{"view-precache-namespace"}, precacheDeps...)
		Eventually(hubViews(ctx, clusters, gone...)).WithTimeout(settle).Should(Equal(named(clusters, false, gone...)))

		By("05: the Job succeeded: Succeeded, PrecachingSuceeded, every view deleted")
		for _, c := range clusters {
			answer(ctx, c, "view-precache-job", true, map[string]any{"active": 0, "succeeded": 1})
		}
		Eventually(jobStates(ctx, cgu, false)).WithTimeout(settle).Should(Equal(everyOne(clusters, talmjob.Succeeded)))
		Eventually(talmConditions(ctx, cgu)).WithTimeout(settle).Should(Equal([]string{selected, validated,
			"PrecacheSpecValid True PrecacheSpecIsWellFormed", "PrecachingSuceeded True PrecachingCompleted", "Progressing False NotEnabled"}))
		Eventually(hubViews(ctx, clusters, talmjob.Precache.Views()...)).WithTimeout(settle).Should(Equal(named(clusters, false, talmjob.Precache.Views()...)))
	})
})

// toActive plays TALM's pre-caching scenario up to its Jobs running: the namespace gone,
// the dependencies found, no Job, then the Job active.
func toActive(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, clusters []string) {
	GinkgoHelper()
	for _, c := range clusters {
		answer(ctx, c, "view-precache-namespace", false, nil)
	}
	Eventually(jobStates(ctx, cgu, false)).WithTimeout(settle).Should(Equal(everyOne(clusters, talmjob.Starting)))
	for _, c := range clusters {
		for _, v := range precacheDeps {
			answer(ctx, c, v, true, nil)
		}
	}
	Eventually(hubViews(ctx, clusters, "view-precache-job")).WithTimeout(settle).Should(Equal(named(clusters, true, "view-precache-job")))
	for _, c := range clusters {
		answer(ctx, c, "view-precache-job", false, nil)
	}
	Eventually(hubActions(ctx, clusters, "precache-job-create")).WithTimeout(settle).Should(Equal(named(clusters, true, "precache-job-create")))
	for _, c := range clusters {
		answer(ctx, c, "view-precache-job", true, map[string]any{"active": 1})
	}
	Eventually(jobStates(ctx, cgu, false)).WithTimeout(settle).Should(Equal(everyOne(clusters, talmjob.Active)))
}

var _ = Describe("TALM's pre-caching-partial-complete scenario", func() {
	It("times one cluster out, keeps an unavailable one Active until enabled, then fails it and starts without both", func(ctx SpecContext) {
		f := pulltest.NewFixture(GinkgoT())
		clusters, policy := offline(ctx, "talmpp", 3)
		done, late, lost := clusters[0], clusters[1], clusters[2]
		cgu := newCGU("cgu-talmpp", "cgu", clusters, 3, policy)
		namespace(ctx, cgu.Namespace)
		cgu.Spec.PreCaching, cgu.Spec.Enable = true, ptr.To(false)
		cgu.Spec.PreCachingConfigRef = preCachingConfig(ctx, cgu.Namespace, "talmpp-config", f)
		fleet.MustCreate(ctx, cgu)
		Eventually(jobStates(ctx, cgu, false)).WithTimeout(settle).Should(Equal(everyOne(clusters, talmjob.PreparingToStart)))
		toActive(ctx, cgu, clusters)

		By("05: one Job succeeded, one past its deadline: Succeeded, PrecacheTimeout, the third still Active")
		answer(ctx, done, "view-precache-job", true, map[string]any{"active": 0, "succeeded": 1})
		answer(ctx, late, "view-precache-job", true, map[string]any{"active": 0, "failed": 1,
			"conditions": []any{map[string]any{"type": "Failed", "status": "True", "reason": "DeadlineExceeded"}}})
		want := map[string]string{done: talmjob.Succeeded, late: "PrecacheTimeout", lost: talmjob.Active}
		Eventually(jobStates(ctx, cgu, false)).WithTimeout(settle).Should(Equal(want))
		Expect(talmConditions(ctx, cgu)(Default)).To(ContainElement("PrecachingSuceeded False InProgress"))

		By("06: the third cluster unavailable while its Job runs: still Active, the rollout not enabled")
		// Its policy's Placement tolerates unreachable clusters, as the policy generator's
		// do, so that the cluster stays placed (TALM's scenario runs without placement).
		Expect(hub.Client.Patch(ctx, &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: policyNS, Name: policy}},
			client.RawPatch(types.MergePatchType, []byte(`{"spec":{"tolerations":[{"key":"`+world.TaintUnreachable+`","operator":"Exists"}]}}`)))).To(Succeed())
		Expect(hub.SetAvailable(ctx, lost, metav1.ConditionUnknown)).To(Succeed())
		Consistently(jobStates(ctx, cgu, false)).WithTimeout(3 * time.Second).Should(Equal(want))

		By("07: enabled: the unavailable cluster's pre-caching fails, and the rollout starts without the two")
		fleet.MustUpdate(ctx, cgu, func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.Enable = ptr.To(true) })
		want[lost] = talmjob.Failed
		Eventually(jobStates(ctx, cgu, false)).WithTimeout(settle).Should(Equal(want))
		Eventually(talmConditions(ctx, cgu)).WithTimeout(settle).Should(ContainElements("PrecachingSuceeded True PartiallyDone", "Progressing True InProgress"))
		Expect(fleet.Stored(ctx, cgu)(Default).Status.RemediationPlan).To(Equal([][]string{{done}}))
	})
})

var _ = Describe("TALM's backup-complete, backup-fail and backup-partial-complete scenarios", func() {
	It("backs up through TALM's views and actions; a cluster whose Job failed or timed out leaves the plan, and its namespace is deleted at the end", func(ctx SpecContext) {
		clusters, policy := offline(ctx, "talmbk", 3)
		ok, broken, late := clusters[0], clusters[1], clusters[2]
		cgu := newCGU("cgu-talmbk", "cgu", clusters, 3, policy)
		cgu.Spec.Backup, cgu.Spec.Enable = true, ptr.To(true)
		fleet.MustCreate(ctx, cgu)

		By("00: every cluster Starting after one pass PreparingToStart; the dependencies and the namespace view asked for")
		Eventually(jobStates(ctx, cgu, true)).WithTimeout(settle).Should(Equal(everyOne(clusters, talmjob.Starting)))
		want := []string{"backup-ns-delete", "backup-crb-delete", "backup-ns-create", "backup-sa-create", "backup-crb-create"}
		Eventually(hubActions(ctx, clusters, want...)).WithTimeout(settle).Should(Equal(named(clusters, true, want...)))
		Eventually(hubViews(ctx, clusters, "view-backup-namespace")).WithTimeout(settle).Should(Equal(named(clusters, true, "view-backup-namespace")))
		Expect(talmConditions(ctx, cgu)(Default)).To(ContainElement("BackupSuceeded False InProgress"))

		By("02: the namespace found: the Job and its view")
		for _, c := range clusters {
			answer(ctx, c, "view-backup-namespace", true, nil)
		}
		Eventually(hubActions(ctx, clusters, "backup-job-create")).WithTimeout(settle).Should(Equal(named(clusters, true, "backup-job-create")))
		Eventually(hubViews(ctx, clusters, "view-backup-job")).WithTimeout(settle).Should(Equal(named(clusters, true, "view-backup-job")))

		By("03: the Jobs active: Active")
		for _, c := range clusters {
			answer(ctx, c, "view-backup-job", true, map[string]any{"active": 1})
		}
		Eventually(jobStates(ctx, cgu, true)).WithTimeout(settle).Should(Equal(everyOne(clusters, talmjob.Active)))

		By("04: one Job succeeded, one failed, one past its deadline: PartiallyDone, and the rollout starts without the two")
		answer(ctx, ok, "view-backup-job", true, map[string]any{"active": 0, "succeeded": 1})
		answer(ctx, broken, "view-backup-job", true, map[string]any{"active": 0, "failed": 1,
			"conditions": []any{map[string]any{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}}})
		answer(ctx, late, "view-backup-job", true, map[string]any{"active": 0, "failed": 1,
			"conditions": []any{map[string]any{"type": "Failed", "status": "True", "reason": "DeadlineExceeded"}}})
		Eventually(jobStates(ctx, cgu, true)).WithTimeout(settle).Should(Equal(map[string]string{ok: talmjob.Succeeded, broken: talmjob.Failed,
			late: "BackupTimeout"}))
		Eventually(talmConditions(ctx, cgu)).WithTimeout(settle).Should(ContainElements("BackupSuceeded True PartiallyDone", "Progressing True InProgress"))
		Expect(fleet.Stored(ctx, cgu)(Default).Status.RemediationPlan).To(Equal([][]string{{ok}}))
		Expect(hubViews(ctx, []string{ok}, talmjob.Backup.Views()...)(Default)).To(Equal(named([]string{ok}, false, talmjob.Backup.Views()...)),
			"the succeeded cluster's views are deleted at once")

		By("the rollout deleted: the failed cluster's namespace and binding are deleted on its spoke, the views and actions on the hub")
		for _, name := range []string{"backup-ns-delete", "backup-crb-delete"} {
			Expect(client.IgnoreNotFound(hub.Client.Delete(ctx, &actionv1beta1.ManagedClusterAction{
				ObjectMeta: metav1.ObjectMeta{Namespace: broken, Name: name}}))).To(Succeed(), "the delete actions of the start, answered")
		}
		Expect(hub.Client.Delete(ctx, cgu)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(hub.Client.Get(ctx, client.ObjectKeyFromObject(cgu), &ranv1alpha1.ClusterGroupUpgrade{}))
		}).WithTimeout(settle).Should(BeTrue())
		Eventually(hubActions(ctx, []string{broken}, "backup-ns-delete", "backup-crb-delete")).WithTimeout(settle).Should(
			Equal(named([]string{broken}, true, "backup-ns-delete", "backup-crb-delete")))
		Expect(hubViews(ctx, []string{broken}, talmjob.Backup.Views()...)(Default)).To(Equal(named([]string{broken}, false, talmjob.Backup.Views()...)))
		Expect(hubActions(ctx, []string{broken}, "backup-job-create")(Default)).To(Equal(named([]string{broken}, false, "backup-job-create")))
	})
})

var _ = Describe("A pre-cache TALM left mid-way", func() {
	It("is taken up where TALM left it: its unlabelled views adopted, the state kept, the Job followed to its end", func(ctx SpecContext) {
		f := pulltest.NewFixture(GinkgoT())
		clusters, policy := offline(ctx, "talmswap", 1)
		c := clusters[0]

		By("TALM's hub: the operator stopped, a rollout Active on the cluster, TALM's unlabelled view of the running Job")
		Expect(fleet.StopOperator(false)).To(Succeed())
		started := false
		DeferCleanup(func() {
			if !started {
				_, err := fleet.StartOperator()
				Expect(err).NotTo(HaveOccurred())
			}
		})
		cgu := newCGU("cgu-talmswap", "cgu", clusters, 1, policy)
		namespace(ctx, cgu.Namespace)
		cgu.Spec.PreCaching, cgu.Spec.Enable = true, ptr.To(false)
		cgu.Spec.PreCachingConfigRef = preCachingConfig(ctx, cgu.Namespace, "talmswap-config", f)
		Expect(hub.Client.Create(ctx, cgu)).To(Succeed())
		cgu.Status.Precaching = &ranv1alpha1.PrecachingStatus{Status: map[string]string{c: talmjob.Active}}
		Expect(hub.Client.Status().Update(ctx, cgu)).To(Succeed())
		talms := &viewv1beta1.ManagedClusterView{ObjectMeta: metav1.ObjectMeta{Namespace: c, Name: "view-precache-job"},
			Spec: viewv1beta1.ViewSpec{Scope: viewv1beta1.ViewScope{Resource: "jobs", Namespace: "openshift-talo-pre-cache", Name: "pre-cache"}}}
		Expect(hub.Client.Create(ctx, talms)).To(Succeed())
		answerAsAgent(ctx, c, "view-precache-job", map[string]any{"active": 1})

		By("our operator started: it keeps the cluster Active and adopts TALM's view")
		_, err := fleet.StartOperator()
		Expect(err).NotTo(HaveOccurred())
		started = true
		Eventually(func(g Gomega) map[string]string {
			var v viewv1beta1.ManagedClusterView
			g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(talms), &v)).To(Succeed())
			return v.Labels
		}).WithTimeout(settle).Should(HaveKeyWithValue(ownership.LabelUpgradeNamespace, cgu.Namespace))
		Expect(jobStates(ctx, cgu, false)(Default)).To(Equal(map[string]string{c: talmjob.Active}))
		Expect(hubActions(ctx, clusters, "precache-ns-delete")(Default)).To(Equal(named(clusters, false, "precache-ns-delete")),
			"nothing started again")

		By("TALM's Job succeeds: Succeeded, the view deleted")
		answerAsAgent(ctx, c, "view-precache-job", map[string]any{"active": 0, "succeeded": 1})
		Eventually(jobStates(ctx, cgu, false)).WithTimeout(settle).Should(Equal(map[string]string{c: talmjob.Succeeded}))
		Eventually(func() bool {
			return apierrors.IsNotFound(hub.Client.Get(ctx, client.ObjectKeyFromObject(talms), &viewv1beta1.ManagedClusterView{}))
		}).WithTimeout(settle).Should(BeTrue())
	})
})
