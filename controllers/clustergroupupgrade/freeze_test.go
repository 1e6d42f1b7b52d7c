package clustergroupupgrade_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// The freeze is hub-wide: the spec is Serial, and takes its FleetFreeze away at the end.
var _ = Describe("A fleet freeze", Serial, func() {
	It("holds two rollouts at once, lets their running clusters finish, starts nothing, and frees both when lifted", func(ctx SpecContext) {
		DeferCleanup(func(ctx SpecContext) {
			ff := &ranv1alpha1.FleetFreeze{ObjectMeta: metav1.ObjectMeta{Name: ranv1alpha1.FleetFreezeManual}}
			Expect(client.IgnoreNotFound(hub.Client.Delete(ctx, ff))).To(Succeed())
		})
		By("rollout A runs its first batch of one, its cluster stalled; rollout B is created but not enabled")
		a := joinFleet(ctx, "freeze-a", 2)
		pa := placeUpgradePolicy(ctx, "freeze-a", 2)
		stall(a[0])
		cguA := newCGU("cgu-freeze", "a", a, 1, pa.Name)
		enableOnCreate(cguA)
		fleet.MustCreate(ctx, cguA)
		Eventually(enforcedOn(ctx, cguA, pa.Name)).WithTimeout(settle).Should(Equal([]string{a[0]}))
		b := joinFleet(ctx, "freeze-b", 2)
		pb := placeUpgradePolicy(ctx, "freeze-b", 2)
		cguB := newCGU("cgu-freeze", "b", b, 2, pb.Name)
		fleet.MustCreate(ctx, cguB)

		By("kubectl cgu freeze: both rollouts say why, B enabled meanwhile does not start")
		code, out := kubectlCGU(ctx, "freeze")
		Expect(code).NotTo(BeZero(), "a freeze without a reason is refused: %s", out)
		Expect(out).To(ContainSubstring(`Required flag(s) "reason" not set`))
		code, out = kubectlCGU(ctx, "freeze", "--reason", "incident 4711 on the core network")
		Expect(code).To(BeZero(), out)
		Expect(out).To(MatchRegexp(`^Froze the fleet as \S+: incident 4711 on the core network\n$`))
		enable(ctx, cguB)
		frozen := And(HaveField("Reason", ranv1alpha1.ReasonFleetFrozen),
			HaveField("Message", ContainSubstring("the fleet is frozen by FleetFreeze manual (")),
			HaveField("Message", ContainSubstring("): incident 4711 on the core network")))
		Eventually(condition(ctx, cguB, ranv1alpha1.ConditionProgressing)).WithTimeout(settle).Should(frozen)
		Expect(fleet.Stored(ctx, cguB)(Default).Status).To(And(HaveField("StartedAt", BeNil()), HaveField("State", ranv1alpha1.StateNotStarted)),
			"B started during the freeze")
		Expect(condition(ctx, cguB, ranv1alpha1.ConditionProgressing)(Default).Status).To(Equal(metav1.ConditionFalse), "B has not started")

		By("A's running cluster finishes; its second batch does not start")
		unstall(a[0])
		Eventually(condition(ctx, cguA, ranv1alpha1.ConditionProgressing)).WithTimeout(settle).Should(And(frozen,
			HaveField("Status", metav1.ConditionTrue)))
		Eventually(version(a[0])).WithTimeout(settle).Should(Equal(to))
		Eventually(fleet.Stored(ctx, cguA)).WithTimeout(settle).Should(HaveField("Status.Waiting", And(Not(BeNil()),
			HaveField("Reason", ranv1alpha1.ReasonFleetFrozen), HaveField("Batch", 2))))

		By("five hours frozen, past the four-hour timeout: nothing times out, nothing starts")
		advance(ctx, 5*time.Hour, cguA, cguB)
		Consistently(func(g Gomega) {
			g.Expect(state(ctx, cguA)(g)).To(Equal(ranv1alpha1.StateNotCompleted))
			g.Expect(fleet.Stored(ctx, cguB)(g).Status.StartedAt).To(BeNil())
			g.Expect(desired(a[1])(g)).NotTo(Equal(to))
			g.Expect(desired(b[0])(g)).NotTo(Equal(to))
		}).WithTimeout(5 * time.Second).Should(Succeed())

		By("kubectl cgu unfreeze: both go on and complete")
		code, out = kubectlCGU(ctx, "unfreeze")
		Expect(code).To(BeZero(), out)
		Expect(out).To(HavePrefix("Unfroze the fleet's manual freeze as "))
		Eventually(state(ctx, cguA)).WithTimeout(2 * settle).Should(Equal(ranv1alpha1.StateCompleted))
		Eventually(state(ctx, cguB)).WithTimeout(2 * settle).Should(Equal(ranv1alpha1.StateCompleted))
		ff := &ranv1alpha1.FleetFreeze{}
		Expect(hub.Client.Get(ctx, client.ObjectKey{Name: ranv1alpha1.FleetFreezeManual}, ff)).To(Succeed())
		Expect(ff.Spec.Frozen).To(BeFalse())
		Expect(ff.Spec.ChangedBy).NotTo(BeEmpty())
		Expect(fleet.Stored(ctx, cguA)(Default).Status.PausedFor).NotTo(BeNil(), "the frozen time is recorded as paused time")
	})
})
