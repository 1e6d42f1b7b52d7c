package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/cli"
	"github.com/cgu-operator/cgu-operator/tests/harness"
)

// createTrain creates a train on the harness's channel, read every minute, in namespace (made
// and bound to the cluster set); it deletes the train and waits until its rollouts are gone
// when the spec ends.
func createTrain(ctx context.Context, namespace, name string, approval *ranv1alpha1.TrainApproval, rings ...ranv1alpha1.TrainRing) *ranv1alpha1.ReleaseTrain {
	GinkgoHelper()
	Expect(client.IgnoreAlreadyExists(hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}))).To(Succeed())
	Expect(hub.BindClusterSet(ctx, namespace)).To(Succeed())
	t := &ranv1alpha1.ReleaseTrain{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: ranv1alpha1.ReleaseTrainSpec{
			Releases: ranv1alpha1.TrainReleases{Channel: harness.Channel, CheckInterval: &metav1.Duration{Duration: time.Minute}},
			Rings:    rings,
			Approval: approval,
		},
	}
	Expect(hub.Client.Create(ctx, t)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(hub.Client.Delete(ctx, t)).To(Succeed())
		Eventually(func(g Gomega) []ranv1alpha1.ManagedClustersUpgrade {
			var mcus ranv1alpha1.ManagedClustersUpgradeList
			g.Expect(hub.Client.List(ctx, &mcus, client.InNamespace(namespace))).To(Succeed())
			return mcus.Items
		}).WithTimeout(settle).Should(BeEmpty(), "the train's rollouts are deleted")
		Eventually(func() error {
			return hub.Client.Get(ctx, client.ObjectKeyFromObject(t), &ranv1alpha1.ReleaseTrain{})
		}).WithTimeout(settle).Should(Satisfy(apierrors.IsNotFound), "the train is gone")
	})
	return t
}

// storedTrain reads a train as the hub stores it.
func storedTrain(ctx context.Context, t *ranv1alpha1.ReleaseTrain) func(Gomega) *ranv1alpha1.ReleaseTrain {
	return func(g Gomega) *ranv1alpha1.ReleaseTrain {
		out := &ranv1alpha1.ReleaseTrain{}
		g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(t), out)).To(Succeed())
		return out
	}
}

// trainLedger reads a train's ledger as harness.Ledger writes it.
func trainLedger(ctx context.Context, t *ranv1alpha1.ReleaseTrain) func(Gomega) []string {
	return func(g Gomega) []string { return harness.Ledger(storedTrain(ctx, t)(g)) }
}

var trainPokes int

// advanceTrain moves the suite's clock on by d and pokes the train (an annotation), as the
// timer it asked for would on a real clock.
func advanceTrain(ctx context.Context, d time.Duration, t *ranv1alpha1.ReleaseTrain) {
	GinkgoHelper()
	clock.Step(d)
	trainPokes++
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"test.cgu-operator.io/poke":%q}}}`, strconv.Itoa(trainPokes))
	target := &ranv1alpha1.ReleaseTrain{ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: t.Name}}
	Expect(hub.Client.Patch(ctx, target, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

// readNow waits until the train read its channel at the suite clock's time: the pass after
// its creation or after a poke ran, and the output, which says how long ago the channel was
// read, stays as it is until the clock moves again.
func readNow(ctx context.Context, t *ranv1alpha1.ReleaseTrain) {
	GinkgoHelper()
	Eventually(func(g Gomega) time.Time {
		checked := storedTrain(ctx, t)(g).Status.CheckedAt
		g.Expect(checked).NotTo(BeNil())
		return checked.Time
	}).WithTimeout(settle).Should(BeTemporally("~", clock.Now(), time.Second))
}

var _ = Describe("kubectl cgu train", func() {
	It("lists a train, and shows it ring by ring while a release soaks and once it is delivered", func(ctx SpecContext) {
		By("a train of two rings: canary, one cluster and an hour of soak; then fleet, two clusters")
		const ns = "cgu-cli-train"
		joinFleet(ctx, "cli-train-canary", 1)
		joinFleet(ctx, "cli-train-fleet", 2)
		t := createTrain(ctx, ns, "two-rings", nil,
			harness.TrainRing("canary", "cli-train-canary", time.Hour), harness.TrainRing("fleet", "cli-train-fleet", 0))

		By("the channel's newest release soaks in ring canary")
		Eventually(trainLedger(ctx, t)).WithTimeout(2 * settle).Should(Equal([]string{harness.To + " Rolling canary:Soaking"}))
		matchGolden("train-list", withoutAge(succeeds(ctx, "train", "-n", ns)))
		Expect(rowsOf(succeeds(ctx, "train", "-A"), ns)).To(MatchRegexp(`(?m)^` + ns + `\s+two-rings\s+stable-4.16\s+4.16.12\s+4.16.12 Soaking in canary\s+2\s`))

		By("half an hour later, half of its soak is left")
		advanceTrain(ctx, 30*time.Minute, t)
		readNow(ctx, t)
		matchGolden("train-soaking", succeeds(ctx, "train", t.Name, "-n", ns))

		By("an hour of soak: it qualifies in canary, enters fleet, and is delivered once fleet's clusters run it")
		advanceTrain(ctx, 30*time.Minute, t)
		Eventually(trainLedger(ctx, t)).WithTimeout(2 * settle).Should(Equal([]string{harness.To + " Delivered canary:Qualified,fleet:Qualified"}))
		readNow(ctx, t)
		matchGolden("train-delivered", succeeds(ctx, "train", t.Name, "-n", ns))

		By("-o json is the object, -o name its kind and name")
		Eventually(func(g Gomega) {
			var printed ranv1alpha1.ReleaseTrain
			g.Expect(json.Unmarshal([]byte(succeeds(ctx, "train", t.Name, "-n", ns, "-o", "json")), &printed)).To(Succeed())
			stored := storedTrain(ctx, t)(g)
			stored.APIVersion, stored.Kind, stored.ManagedFields = ranv1alpha1.GroupVersion.String(), "ReleaseTrain", nil
			g.Expect(printed).To(Equal(*stored))
		}).WithTimeout(settle).Should(Succeed())
		Expect(succeeds(ctx, "train", t.Name, "-n", ns, "-o", "name")).To(Equal("releasetrain.ran.openshift.io/two-rings\n"))

		r := kubectlCGU(ctx, "train", "missing", "-n", ns)
		Expect(r.code).To(Equal(cli.ExitNotFound))
		Expect(r.errOut).To(Equal("Error: ReleaseTrain " + ns + "/missing not found\n"))
	})

	It("approves the release a train holds for an approval, and refuses a release it has not found", func(ctx SpecContext) {
		By("a train that requires approval: the channel's newest release waits")
		const ns = "cgu-cli-train-approve"
		clusters := joinFleet(ctx, "cli-train-approve", 1)
		t := createTrain(ctx, ns, "needs-approval", &ranv1alpha1.TrainApproval{Required: true}, harness.TrainRing("all", "cli-train-approve", 0))
		Eventually(trainLedger(ctx, t)).WithTimeout(settle).Should(Equal([]string{harness.To + " AwaitingApproval"}))
		readNow(ctx, t)
		matchGolden("train-awaiting-approval", succeeds(ctx, "train", t.Name, "-n", ns))

		By("a release the train has not found is refused, and nothing is written")
		r := kubectlCGU(ctx, "train", "approve", t.Name, "4.16.13", "-n", ns)
		Expect(r.code).To(Equal(cli.ExitUsage))
		Expect(r.errOut).To(Equal("Error: ReleaseTrain " + ns + "/needs-approval has not found release 4.16.13 (awaiting approval: 4.16.12); " +
			"--ahead approves a release before the train finds it\nSee 'kubectl cgu train approve --help' for usage.\n"))
		Expect(r.out).To(BeEmpty())
		Expect(storedTrain(ctx, t)(Default).Spec.Approval.Approved).To(BeEmpty())

		By("the release awaiting approval, approved, rolls out")
		Expect(succeeds(ctx, "train", "approve", t.Name, harness.To, "-n", ns)).To(MatchRegexp(`^Approved 4\.16\.12 for ` + ns + `/needs-approval as \S+\n$`))
		Expect(storedTrain(ctx, t)(Default).Spec.Approval.Approved).To(Equal([]string{harness.To}))
		Eventually(trainLedger(ctx, t)).WithTimeout(2 * settle).Should(Equal([]string{harness.To + " Delivered all:Qualified"}))
		Expect(simulator.ClusterVersion(clusters[0])).To(HaveField("Status.Desired.Version", harness.To))

		By("approving it again changes nothing; --ahead approves a release the channel does not offer yet")
		Expect(succeeds(ctx, "train", "approve", t.Name, harness.To, "-n", ns)).To(Equal("Already approved 4.16.12 for " + ns + "/needs-approval\n"))
		Expect(succeeds(ctx, "train", "approve", t.Name, "4.16.13", "--ahead", "-n", ns)).To(MatchRegexp(`^Approved 4\.16\.13 for ` + ns + `/needs-approval as \S+\n$`))
		Expect(storedTrain(ctx, t)(Default).Spec.Approval.Approved).To(Equal([]string{harness.To, "4.16.13"}))
	})
})
