package clustergroupupgrade_test

import (
	"context"
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/ibgu"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// joinIBUFleet adds n clusters labelled fleet=<label> whose spokes run the simulated
// lifecycle agent; failing are the clusters (by index) whose Prep fails with message.
func joinIBUFleet(ctx context.Context, label string, n int, failing map[int]string) []string {
	i := 0
	names, err := fleet.JoinFleetWith(ctx, label, n, func(s *sim.SpokeSpec) {
		b := &sim.LifecycleAgentBehaviour{Durations: map[string]time.Duration{sim.StagePrep: 300 * time.Millisecond, sim.StageUpgrade: time.Second}}
		if msg, ok := failing[i]; ok {
			b.Failures = map[string]string{sim.StagePrep: msg}
		}
		s.LifecycleAgent = b
		i++
	})
	Expect(err).NotTo(HaveOccurred())
	return names
}

// newIBGU is an ImageBasedGroupUpgrade named to-4.18 of the clusters labelled fleet=fleetLabel.
func newIBGU(namespace, fleetLabel string, plan ...lcmv1alpha1.PlanItem) *lcmv1alpha1.ImageBasedGroupUpgrade {
	return &lcmv1alpha1.ImageBasedGroupUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "to-4.18"},
		Spec: lcmv1alpha1.ImageBasedGroupUpgradeSpec{
			IBUSpec: lcmv1alpha1.ImageBasedUpgradeSpec{SeedImageRef: lcmv1alpha1.SeedImageRef{
				Image: "quay.io/example/seed:4.18.1", Version: "4.18.1"}},
			ClusterLabelSelectors: []ranv1alpha1.ClusterLabelSelector{{MatchLabels: map[string]string{"fleet": fleetLabel}}},
			Plan:                  plan,
		},
	}
}

func step(maxConcurrency int, actions ...lcmv1alpha1.Action) lcmv1alpha1.PlanItem {
	return lcmv1alpha1.PlanItem{Actions: actions, RolloutStrategy: lcmv1alpha1.RolloutStrategy{MaxConcurrency: maxConcurrency, Timeout: 60}}
}

func createIBGU(ctx context.Context, g *lcmv1alpha1.ImageBasedGroupUpgrade) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: g.Namespace}}
	Expect(client.IgnoreAlreadyExists(hub.Client.Create(ctx, ns))).To(Succeed())
	Expect(hub.Client.Create(ctx, g)).To(Succeed())
}

// ibguStatus reads an ImageBasedGroupUpgrade's status as stored.
func ibguStatus(ctx context.Context, g *lcmv1alpha1.ImageBasedGroupUpgrade) func(Gomega) lcmv1alpha1.ImageBasedGroupUpgradeStatus {
	return func(gm Gomega) lcmv1alpha1.ImageBasedGroupUpgradeStatus {
		out := &lcmv1alpha1.ImageBasedGroupUpgrade{}
		gm.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(g), out)).To(Succeed())
		return out.Status
	}
}

func progressing(reason string) OmegaMatcher {
	return HaveField("Conditions", ContainElement(And(HaveField("Type", ibgu.ConditionProgressing), HaveField("Reason", reason))))
}

// actions is a cluster's status in the IBGU, as lists of action names.
type actions struct {
	Completed, Failed []lcmv1alpha1.Action
	Current           lcmv1alpha1.Action
}

func clusterActions(st lcmv1alpha1.ImageBasedGroupUpgradeStatus) map[string]actions {
	names := func(list []lcmv1alpha1.ActionMessage) []lcmv1alpha1.Action {
		var out []lcmv1alpha1.Action
		for _, a := range list {
			out = append(out, a.Action)
		}
		return out
	}
	out := map[string]actions{}
	for _, c := range st.Clusters {
		a := actions{Completed: names(c.CompletedActions), Failed: names(c.FailedActions)}
		if c.CurrentAction != nil {
			a.Current = c.CurrentAction.Action
		}
		out[c.Name] = a
	}
	return out
}

// ibguLabels are a cluster's labels that record IBGU actions.
func ibguLabels(ctx context.Context, cluster string) func(Gomega) []string {
	return func(g Gomega) []string {
		mc := &clusterv1.ManagedCluster{}
		g.Expect(hub.Client.Get(ctx, client.ObjectKey{Name: cluster}, mc)).To(Succeed())
		var out []string
		for k := range mc.Labels {
			if ibgu.IsLabel(k) {
				out = append(out, k)
			}
		}
		return out
	}
}

// upgradeOn reads the ImageBasedUpgrade of a spoke, nil when it has none.
func upgradeOn(cluster string) func(Gomega) *unstructured.Unstructured {
	return func(g Gomega) *unstructured.Unstructured {
		obj, err := simulator.Object(cluster, sim.ImageBasedUpgradeGVK, "", sim.ImageBasedUpgradeName)
		if errors.Is(err, configpolicy.ErrNotFound) {
			return nil
		}
		g.Expect(err).NotTo(HaveOccurred())
		return obj
	}
}

func stage(obj *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(obj.Object, "spec", "stage")
	return s
}

func idleAgain(obj *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	if len(conds) != 1 {
		return false
	}
	c, _ := conds[0].(map[string]any)
	return c["type"] == "Idle" && c["status"] == "True"
}

// setRollout changes an ImageBasedGroupUpgrade's spec.rollout.
func setRollout(ctx context.Context, g *lcmv1alpha1.ImageBasedGroupUpgrade, change func(*lcmv1alpha1.StepRollout)) {
	Eventually(func() error {
		read := &lcmv1alpha1.ImageBasedGroupUpgrade{}
		if err := hub.Client.Get(ctx, client.ObjectKeyFromObject(g), read); err != nil {
			return err
		}
		change(read.Spec.Rollout)
		return hub.Client.Update(ctx, read)
	}).WithTimeout(settle).Should(Succeed())
}

// ibguEvents counts the events of an ImageBasedGroupUpgrade by reason.
func ibguEvents(ctx context.Context, g *lcmv1alpha1.ImageBasedGroupUpgrade) func(Gomega) map[string]int {
	return func(gm Gomega) map[string]int {
		return eventsOf(ctx, gm, g.Namespace, "ImageBasedGroupUpgrade", g.Name)
	}
}

var _ = Describe("ImageBasedGroupUpgrade", func() {
	It("takes the clusters through Prep, then Upgrade and FinalizeUpgrade, with the Prep content, one step after another", func(ctx SpecContext) {
		clusters := joinIBUFleet(ctx, "ibgu-ok", 3, nil)
		withNamespace("openshift-adp", clusters...)
		withNamespace("openshift-lifecycle-agent", clusters...)
		const ns = "ibgu-ok"
		g := newIBGU(ns, "ibgu-ok", step(2, "Prep"), step(2, "Upgrade", "FinalizeUpgrade"))
		g.Spec.IBUSpec.OADPContent = []lcmv1alpha1.ConfigMapRef{{Namespace: "openshift-adp", Name: "oadp-backup"}}
		g.Spec.IBUSpec.SeedImageRef.PullSecretRef = &lcmv1alpha1.PullSecretRef{Name: "seed-pull"}
		createIBGU(ctx, g)

		By("waiting for the OADP ConfigMap and the pull secret the Prep step sends")
		Eventually(ibguStatus(ctx, g)).WithTimeout(settle).Should(And(
			progressing(ibgu.ReasonMissingContent),
			HaveField("Conditions", ContainElement(HaveField("Message", ContainSubstring("ConfigMap openshift-adp/oadp-backup, Secret ibgu-ok/seed-pull"))))))
		Consistently(ibguStatus(ctx, g)).WithTimeout(time.Second).Should(HaveField("Steps", BeEmpty()), "no step starts without them")
		adp := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "openshift-adp"}}
		Expect(client.IgnoreAlreadyExists(hub.Client.Create(ctx, adp))).To(Succeed())
		Expect(hub.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "openshift-adp", Name: "oadp-backup"},
			Data: map[string]string{"backup.yaml": "kind: Backup"}})).To(Succeed())
		Expect(hub.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "seed-pull"},
			Data: map[string][]byte{".dockerconfigjson": []byte(`{"auths":{}}`)}})).To(Succeed())

		By("running Prep on every cluster, then labelling each prep-completed")
		for _, c := range clusters {
			Eventually(ibguLabels(ctx, c)).WithTimeout(settle).Should(ContainElement(ibgu.Label("Prep", ibgu.Completed)))
			cm, err := simulator.Object(c, configMapGVK, "openshift-adp", "oadp-backup")
			Expect(err).NotTo(HaveOccurred(), "the OADP ConfigMap reached %s at its own namespace", c)
			Expect(cm.Object["data"]).To(HaveKeyWithValue("backup.yaml", "kind: Backup"))
			_, err = simulator.Object(c, corev1.SchemeGroupVersion.WithKind("Secret"), "openshift-lifecycle-agent", "seed-pull")
			Expect(err).NotTo(HaveOccurred(), "the pull secret reached %s in the lifecycle agent's namespace", c)
		}

		By("ending with every cluster back to Idle on the new release, and its labels removed")
		Eventually(ibguStatus(ctx, g)).WithTimeout(2 * settle).Should(progressing(ibgu.ReasonCompleted))
		st := ibguStatus(ctx, g)(Default)
		for _, c := range clusters {
			Expect(clusterActions(st)).To(HaveKeyWithValue(c, actions{Completed: []lcmv1alpha1.Action{"Prep", "Upgrade", "FinalizeUpgrade"}}))
			ibu := upgradeOn(c)(Default)
			Expect(stage(ibu)).To(Equal(sim.StageIdle))
			Expect(idleAgain(ibu)).To(BeTrue(), "the agent finalized on %s", c)
			Eventually(ibguLabels(ctx, c)).WithTimeout(settle).Should(BeEmpty(), "FinalizeUpgrade leaves %s clean for the next upgrade", c)
		}
		Expect(st.Steps).To(HaveLen(2))
		for i, s := range st.Steps {
			Expect(s).To(And(HaveField("Index", i), HaveField("Ended", true), HaveField("State", lcmv1alpha1.StepState(ranv1alpha1.StateCompleted)),
				HaveField("Counts.Completed", 3)), "step %d", i)
		}
		Expect(st.StartedAt).NotTo(BeNil())
		Expect(st.CompletedAt).NotTo(BeNil())

		By("having made each step a ClusterGroupUpgrade the IBGU owns, of its own templates")
		var cgus ranv1alpha1.ClusterGroupUpgradeList
		Expect(hub.Client.List(ctx, &cgus, client.InNamespace(ns), client.MatchingLabels{ibgu.LabelIBGU: g.Name})).To(Succeed())
		names := map[string][]string{}
		for _, cgu := range cgus.Items {
			Expect(metav1.GetControllerOf(&cgu)).To(HaveField("Name", g.Name))
			names[cgu.Name] = cgu.Spec.ManifestWorkTemplates
		}
		Expect(names).To(Equal(map[string][]string{
			"to-4.18-prep-0":                    {"to-4.18-prep"},
			"to-4.18-upgrade-finalizeupgrade-1": {"to-4.18-upgrade", "to-4.18-finalizeupgrade"},
		}))
		Eventually(ibguEvents(ctx, g)).WithTimeout(settle).Should(And(HaveKeyWithValue(ibgu.EventPlanStepStarted, 2),
			HaveKeyWithValue(ibgu.EventPlanCompleted, 1), HaveKey(ibgu.EventMissingContent)))
	})

	It("delivers the pull secret by reference when asked: Prep names it, carries no Secret, and needs none on the hub", func(ctx SpecContext) {
		clusters := joinIBUFleet(ctx, "ibgu-ref", 2, nil)
		withNamespace("openshift-lifecycle-agent", clusters...)
		g := newIBGU("ibgu-ref", "ibgu-ref", step(2, "Prep"))
		g.Annotations = map[string]string{ibgu.AnnotationPullSecretDelivery: ibgu.PullSecretByReference}
		g.Spec.IBUSpec.SeedImageRef.PullSecretRef = &lcmv1alpha1.PullSecretRef{Name: "seed-pull"}
		createIBGU(ctx, g)

		prep := &workv1alpha1.ManifestWorkReplicaSet{}
		Eventually(func() error {
			return hub.Client.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: ibgu.TemplateName(g.Name, "Prep")}, prep)
		}).WithTimeout(settle).Should(Succeed(), "Prep starts without a Secret on the hub")
		Expect(prep.Spec.ManifestWorkTemplate.Workload.Manifests).NotTo(BeEmpty())
		for _, m := range prep.Spec.ManifestWorkTemplate.Workload.Manifests {
			Expect(string(m.Raw)).NotTo(ContainSubstring(`"kind":"Secret"`), "the Prep template carries no Secret")
		}
		for _, c := range clusters {
			Eventually(ibguLabels(ctx, c)).WithTimeout(settle).Should(ContainElement(ibgu.Label("Prep", ibgu.Completed)))
			name, _, _ := unstructured.NestedString(upgradeOn(c)(Default).Object, "spec", "seedImageRef", "pullSecretRef", "name")
			Expect(name).To(Equal("seed-pull"), "the ImageBasedUpgrade on %s names the Secret", c)
			_, err := simulator.Object(c, corev1.SchemeGroupVersion.WithKind("Secret"), "openshift-lifecycle-agent", "seed-pull")
			Expect(err).To(MatchError(configpolicy.ErrNotFound), "no Secret was sent to %s", c)
		}
	})

	It("aborts the clusters whose Prep failed, at once, and upgrades the others; a step that selects no cluster is skipped", func(ctx SpecContext) {
		clusters := joinIBUFleet(ctx, "ibgu-abort", 3, map[int]string{1: "failed to pull the seed image"})
		failed := clusters[1]
		g := newIBGU("ibgu-abort", "ibgu-abort",
			step(3, "Prep"), step(3, "AbortOnFailure"), step(3, "Upgrade"), step(3, "AbortOnFailure"))
		createIBGU(ctx, g)

		// The operator's clock never moves in this spec: no step can time out, and the
		// failed Prep is found from what the lifecycle agent says.
		Eventually(ibguStatus(ctx, g)).WithTimeout(2 * settle).Should(progressing(ibgu.ReasonCompleted))
		st := ibguStatus(ctx, g)(Default)
		got := clusterActions(st)
		Expect(got).To(HaveKeyWithValue(failed, actions{Completed: []lcmv1alpha1.Action{"AbortOnFailure"}, Failed: []lcmv1alpha1.Action{"Prep"}}))
		for _, c := range []string{clusters[0], clusters[2]} {
			Expect(got).To(HaveKeyWithValue(c, actions{Completed: []lcmv1alpha1.Action{"Prep", "Upgrade"}}))
			Expect(ibguLabels(ctx, c)(Default)).To(ConsistOf(ibgu.Label("Prep", ibgu.Completed), ibgu.Label("Upgrade", ibgu.Completed)))
			Expect(stage(upgradeOn(c)(Default))).To(Equal(sim.StageUpgrade))
		}
		for _, c := range st.Clusters {
			if c.Name == failed {
				Expect(c.FailedActions[0].Message).To(ContainSubstring("failed to pull the seed image"), "the agent's message")
			}
		}
		Eventually(ibguLabels(ctx, failed)).WithTimeout(settle).Should(BeEmpty(), "the abort leaves the failed cluster clean")
		ibu := upgradeOn(failed)(Default)
		Expect(stage(ibu)).To(Equal(sim.StageIdle))
		Expect(idleAgain(ibu)).To(BeTrue())

		Expect(st.Steps).To(HaveLen(4))
		Expect(st.Steps[1].Counts).To(HaveField("Total", 1), "AbortOnFailure took only the failed cluster")
		Expect(st.Steps[3]).To(And(HaveField("State", lcmv1alpha1.StepSkipped), HaveField("Upgrade", ""), HaveField("Ended", true)),
			"nothing failed its upgrade")
		Expect(meta.FindStatusCondition(st.Conditions, ibgu.ConditionProgressing).Message).To(ContainSubstring("step 3 selected no cluster"))
		Eventually(ibguEvents(ctx, g)).WithTimeout(settle).Should(And(HaveKeyWithValue(ibgu.EventPlanStepStarted, 3), HaveKeyWithValue(ibgu.EventPlanStepSkipped, 1)))
	})

	It("runs each step with spec.rollout's options: a pause before and during a step, canaries first", func(ctx SpecContext) {
		clusters := joinIBUFleet(ctx, "ibgu-opts", 3, nil)
		g := newIBGU("ibgu-opts", "ibgu-opts", step(3, "Prep"), step(3, "Upgrade"))
		budget := intstr.FromInt32(1)
		g.Spec.Rollout = &lcmv1alpha1.StepRollout{Paused: true, Canaries: []string{clusters[2], "not-selected"}, MaxFailures: &budget}
		createIBGU(ctx, g)

		By("paused: no step starts")
		Eventually(ibguStatus(ctx, g)).WithTimeout(settle).Should(HaveField("Conditions", ContainElement(And(
			HaveField("Reason", ranv1alpha1.ReasonPaused), HaveField("Message", ContainSubstring("Paused before plan step 0"))))))
		Consistently(ibguStatus(ctx, g)).WithTimeout(time.Second).Should(HaveField("Steps", BeEmpty()))

		By("resumed: the step runs, the canary that it selects first")
		setRollout(ctx, g, func(r *lcmv1alpha1.StepRollout) { r.Paused = false })
		prep := &ranv1alpha1.ClusterGroupUpgrade{}
		Eventually(func() error {
			return hub.Client.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: "to-4.18-prep-0"}, prep)
		}).WithTimeout(settle).Should(Succeed())
		Expect(prep.Spec.RemediationStrategy.Canaries).To(Equal([]string{clusters[2]}))
		Expect(prep.Spec.MaxFailures).To(Equal(&budget))
		Eventually(fleet.Stored(ctx, prep)).WithTimeout(settle).Should(HaveField("Status.RemediationPlan", Equal([][]string{{clusters[2]}, {clusters[0], clusters[1]}})))

		By("paused while the Upgrade step runs: the step's rollout is paused too")
		Eventually(ibguStatus(ctx, g)).WithTimeout(2 * settle).Should(HaveField("Steps", HaveLen(2)))
		setRollout(ctx, g, func(r *lcmv1alpha1.StepRollout) { r.Paused = true })
		upgrade := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: g.Namespace, Name: "to-4.18-upgrade-1"}}
		Eventually(fleet.Stored(ctx, upgrade)).WithTimeout(settle).Should(HaveField("Spec.Paused", BeTrue()))
		setRollout(ctx, g, func(r *lcmv1alpha1.StepRollout) { r.Paused = false })
		Eventually(ibguStatus(ctx, g)).WithTimeout(2 * settle).Should(progressing(ibgu.ReasonCompleted))
		Expect(fleet.Stored(ctx, upgrade)(Default).Spec.Paused).To(BeFalse())
	})

	It("says in its status what stops it (objects of its names it does not own), and goes on once they are gone", func(ctx SpecContext) {
		joinIBUFleet(ctx, "ibgu-err", 1, nil)
		const ns = "ibgu-err"
		g := newIBGU(ns, "ibgu-err", step(1, "Prep"))
		Expect(client.IgnoreAlreadyExists(hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
		template := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ibgu.TemplateName(g.Name, "Prep")},
			Spec: workv1alpha1.ManifestWorkReplicaSetSpec{PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: "elsewhere"}}}}
		Expect(hub.Client.Create(ctx, template)).To(Succeed())
		step := newCGU(ns, ibgu.StepName(g.Name, []lcmv1alpha1.Action{"Prep"}, 0), []string{"not-a-cluster"}, 1)
		Expect(hub.Client.Create(ctx, step)).To(Succeed())
		createIBGU(ctx, g)

		By("a template of its name that is not its own: Reconciled=False naming it, nothing started")
		Eventually(ibguStatus(ctx, g)).WithTimeout(settle).Should(HaveField("Conditions", ContainElement(And(
			HaveField("Type", ranv1alpha1.ConditionReconciled), HaveField("Status", metav1.ConditionFalse),
			HaveField("Reason", ranv1alpha1.ReasonReconcileFailed),
			HaveField("Message", "ManifestWorkReplicaSet ibgu-err/to-4.18-prep exists and is not this ImageBasedGroupUpgrade's: delete or rename it"),
		))))
		Expect(ibguStatus(ctx, g)(Default).Steps).To(BeEmpty())

		By("that template deleted: its own is made, then the step's ClusterGroupUpgrade of its name is in the way, and the status says so")
		Expect(hub.Client.Delete(ctx, template)).To(Succeed())
		Eventually(ibguStatus(ctx, g)).WithTimeout(settle).Should(HaveField("Conditions", ContainElement(And(
			HaveField("Type", ranv1alpha1.ConditionReconciled),
			HaveField("Message", ContainSubstring("ClusterGroupUpgrade ibgu-err/to-4.18-prep-0 of plan step 0 exists and is not this ImageBasedGroupUpgrade's")),
		))))

		By("that one deleted too: the step starts, and the failure is gone from the status")
		Expect(hub.Client.Delete(ctx, step)).To(Succeed())
		Eventually(ibguStatus(ctx, g)).WithTimeout(settle).Should(And(
			HaveField("Steps", HaveLen(1)),
			HaveField("Conditions", Not(ContainElement(HaveField("Type", ranv1alpha1.ConditionReconciled))))))
		Eventually(ibguStatus(ctx, g)).WithTimeout(2 * settle).Should(progressing(ibgu.ReasonCompleted))
	})

	It("rolls back, with a second ImageBasedGroupUpgrade, the clusters the first one upgraded", func(ctx SpecContext) {
		clusters := joinIBUFleet(ctx, "ibgu-back", 2, nil)
		up := newIBGU("ibgu-back", "ibgu-back", step(2, "Prep", "Upgrade"))
		createIBGU(ctx, up)
		Eventually(ibguStatus(ctx, up)).WithTimeout(2 * settle).Should(progressing(ibgu.ReasonCompleted))
		for _, c := range clusters {
			Eventually(ibguLabels(ctx, c)).WithTimeout(settle).Should(ContainElement(ibgu.Label("Upgrade", ibgu.Completed)))
		}

		back := newIBGU("ibgu-back", "ibgu-back", step(2, "Rollback"), step(2, "FinalizeRollback"))
		back.Name = "back-to-4.17"
		createIBGU(ctx, back)
		Eventually(ibguStatus(ctx, back)).WithTimeout(2 * settle).Should(progressing(ibgu.ReasonCompleted))
		for _, c := range clusters {
			Expect(clusterActions(ibguStatus(ctx, back)(Default))).To(HaveKeyWithValue(c, actions{Completed: []lcmv1alpha1.Action{"Rollback", "FinalizeRollback"}}))
			ibu := upgradeOn(c)(Default)
			Expect(stage(ibu)).To(Equal(sim.StageIdle))
			Expect(idleAgain(ibu)).To(BeTrue())
			Eventually(ibguLabels(ctx, c)).WithTimeout(settle).Should(BeEmpty(), "FinalizeRollback leaves %s clean", c)
		}
	})
})
