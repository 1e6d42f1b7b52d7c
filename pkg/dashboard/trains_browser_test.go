package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/dashboard"
	"github.com/cgu-operator/cgu-operator/pkg/train"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

// storedTrain reads a train as stored.
func storedTrain(ctx context.Context, key client.ObjectKey) func(Gomega) *ranv1alpha1.ReleaseTrain {
	return func(g Gomega) *ranv1alpha1.ReleaseTrain {
		out := &ranv1alpha1.ReleaseTrain{}
		g.Expect(fleet.Hub.Client.Get(ctx, key, out)).To(Succeed())
		return out
	}
}

// ledgerOf reads a train's ledger as harness.Ledger writes it.
func ledgerOf(ctx context.Context, key client.ObjectKey) func(Gomega) []string {
	return func(g Gomega) []string { return harness.Ledger(storedTrain(ctx, key)(g)) }
}

// nameVersions sets the versions a train names by hand (a merge patch: the operator writes
// its status meanwhile).
func nameVersions(ctx context.Context, key client.ObjectKey, versions ...string) {
	GinkgoHelper()
	data, err := json.Marshal(map[string]any{"spec": map[string]any{"releases": map[string]any{"versions": versions}}})
	Expect(err).NotTo(HaveOccurred())
	target := &ranv1alpha1.ReleaseTrain{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	Expect(fleet.Hub.Client.Patch(ctx, target, client.RawPatch(types.MergePatchType, data))).To(Succeed())
}

// situation says where a train and one of its rollouts stand, for a failure's message.
func situation(ctx context.Context, key client.ObjectKey, upgrade *ranv1alpha1.ClusterGroupUpgrade) string {
	t, c := &ranv1alpha1.ReleaseTrain{}, &ranv1alpha1.ClusterGroupUpgrade{}
	terr, cerr := fleet.Hub.Client.Get(ctx, key, t), fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(upgrade), c)
	ts, _ := json.Marshal(t.Status)
	cs, _ := json.Marshal(c.Status)
	return fmt.Sprintf("the train's status (read error %v): %s; %s's status (read error %v): %s", terr, ts, upgrade.Name, cerr, cs)
}

// drawnAt reads, from the page's geometry, where each release of a train is drawn: the ring
// whose column its mark starts in, "before the first ring", or "nowhere".
const drawnAt = `(() => {
  const train = document.querySelector('article.train[data-train=%q]');
  if (!train) return null;
  const box = (e) => e.getBoundingClientRect();
  const cols = [...train.querySelectorAll("thead th.ring-col")].map((th) => ({name: th.dataset.ring, left: box(th).left, right: box(th).right}));
  const gate = box(train.querySelector("thead th.gate-head"));
  const out = {};
  for (const lane of train.querySelectorAll("tr.lane")) {
    const x = box(lane.querySelector(".pill")).left;
    const col = cols.find((c) => x >= c.left && x < c.right);
    out[lane.dataset.version] = col ? col.name : x >= gate.left && x < gate.right ? "before the first ring" : "nowhere";
  }
  return out;
})()`

// drawn is where the page draws each release of a train.
func drawn(tab context.Context, key string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(tab, settle)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[map[string]string](fmt.Sprintf(drawnAt, key)))
}

// ringsInARow says whether a train's ring boxes stand left to right without overlapping,
// each but the last followed by an arrow, and names them in that order.
const ringsInARow = `(() => {
  const train = document.querySelector('article.train[data-train=%q]');
  const ths = [...train.querySelectorAll("thead th.ring-col")];
  const boxes = ths.map((th) => th.querySelector(".ring").getBoundingClientRect());
  const apart = boxes.every((b, i) => i === 0 || (boxes[i - 1].right <= b.left && Math.abs(boxes[i - 1].top - b.top) < 1));
  const arrows = ths.every((th, i) => getComputedStyle(th, "::after").content === (i < ths.length - 1 ? '"→"' : "none"));
  return {names: ths.map((th) => th.dataset.ring), apart, arrows};
})()`

type ringRow struct {
	Names  []string `json:"names"`
	Apart  bool     `json:"apart"`
	Arrows bool     `json:"arrows"`
}

func rowOfRings(tab context.Context, key string) ringRow {
	ctx, cancel := context.WithTimeout(tab, settle)
	defer cancel()
	row, err := chromedp.Run(ctx, chromedp.Evaluate[ringRow](fmt.Sprintf(ringsInARow, key)))
	Expect(err).NotTo(HaveOccurred())
	return row
}

var _ = Describe("kubectl cgu dashboard's Trains tab", func() {
	It("draws a release train as a row of rings, each release at the ring it reached, a stopped one in red where it stopped", func(ctx SpecContext) {
		started := time.Now()
		By("three rings of simulated clusters: canary (1), early (2, an upgrade may take a minute), late (2, an hour of soak)")
		const ns = "cgu-train"
		Expect(fleet.Hub.BindClusterSet(ctx, ns)).To(Succeed())
		fleet.MustJoinFleet(ctx, "trc", 1)
		early := fleet.MustJoinFleet(ctx, "tre", 2)
		fleet.MustJoinFleet(ctx, "trl", 2)
		// Both clusters of early upgrade at once: one completes while the other stalls.
		middle := harness.TrainRing("early", "tre", 0)
		middle.UpgradeStrategy.MaxConcurrency = 2
		middle.UpgradeStrategy.ClusterUpgradeTimeout = &metav1.Duration{Duration: time.Minute}
		const first, second, third = "4.16.11", harness.To, "4.16.13"
		t := &ranv1alpha1.ReleaseTrain{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "edge"},
			Spec: ranv1alpha1.ReleaseTrainSpec{
				Releases: ranv1alpha1.TrainReleases{Channel: harness.Channel, Versions: []string{first}},
				Approval: &ranv1alpha1.TrainApproval{Required: true, Approved: []string{first, second}},
				Rings:    []ranv1alpha1.TrainRing{harness.TrainRing("canary", "trc", 0), middle, harness.TrainRing("late", "trl", time.Hour)},
			},
		}
		Expect(fleet.Hub.Client.Create(ctx, t)).To(Succeed())
		key := client.ObjectKeyFromObject(t)

		By(first + " goes through canary and early, and soaks in late")
		Eventually(ledgerOf(ctx, key)).WithTimeout(3 * settle).Should(Equal([]string{first + " Rolling canary:Qualified,early:Qualified,late:Soaking"}))

		By("the Trains tab of a dashboard of the namespace shows it")
		tab := browser(ctx)
		const drawnTrain = ns + "/edge"
		lane := func(version string) string {
			return fmt.Sprintf(`article.train[data-train=%q] tr.lane[data-version=%q]`, drawnTrain, version)
		}
		ring := func(name string) string {
			return fmt.Sprintf(`article.train[data-train=%q] th.ring-col[data-ring=%q] .ring`, drawnTrain, name)
		}
		Expect(within(tab, chromedp.Navigate(serveDashboard(ctx)+"#/trains"), chromedp.WaitVisible(chromedp.CSS(lane(first))))).To(Succeed())
		Expect(text(tab, `#tab-trains`)).To(Equal("Trains (1)"))
		Expect(drawn(tab, drawnTrain)).To(Equal(map[string]string{first: "late"}))
		// The page must not reload from here on: a reload would lose this mark.
		eval(tab, `window.sameDocument = true`)

		By(second + " named, with " + early[0] + " stalling: it qualifies in canary and stops in early, where the stalled cluster times out")
		simulator.SetBehaviour(early[0], sim.Behaviour{Stall: true})
		nameVersions(ctx, key, first, second)
		upgrade := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: train.RolloutName("edge", "early", second)}}
		Eventually(func(g Gomega) map[string]ranv1alpha1.ClusterState {
			out := map[string]ranv1alpha1.ClusterState{}
			if cb := fleet.Stored(ctx, upgrade)(g).Status.CurrentBatch; cb != nil {
				for _, c := range cb.Clusters {
					out[c.Name] = c.State
				}
			}
			return out
		}).WithTimeout(2*settle).Should(And(HaveKeyWithValue(early[0], ranv1alpha1.ClusterInProgress), HaveKeyWithValue(early[1], ranv1alpha1.ClusterCompleted)),
			func() string {
				return "the stalled cluster started, the other one completed (the clock may move on then); " + situation(ctx, key, upgrade)
			})
		fleet.Advance(ctx, 2*time.Minute, upgrade)
		Eventually(ledgerOf(ctx, key)).WithTimeout(settle).Should(Equal([]string{
			second + " Stopped canary:Qualified,early:Failed",
			first + " Rolling canary:Qualified,early:Qualified,late:Soaking",
		}))

		By(third + " named, not approved: it waits before the first ring")
		nameVersions(ctx, key, first, second, third)
		Eventually(ledgerOf(ctx, key)).WithTimeout(settle).Should(HaveExactElements(HavePrefix(third+" AwaitingApproval"), HavePrefix(second), HavePrefix(first)))

		By("the page, pushed each change: the rings in a row, each release at its ring")
		Expect(within(tab, chromedp.WaitVisible(chromedp.CSS(lane(third))), chromedp.WaitVisible(chromedp.CSS(lane(second)+` .pill[data-mark="stopped"]`)))).To(Succeed())
		Expect(eval(tab, `window.sameDocument === true`)).To(BeTrue(), "the page was reloaded")
		Expect(rowOfRings(tab, drawnTrain)).To(Equal(ringRow{Names: []string{"canary", "early", "late"}, Apart: true, Arrows: true}))
		Expect(drawn(tab, drawnTrain)).To(Equal(map[string]string{third: "before the first ring", second: "early", first: "late"}))

		By("each ring says its release, that release's state there, its counts and the soak left")
		Expect(text(tab, ring("canary"))).To(And(ContainSubstring("this hub"), ContainSubstring(second+" ✓ qualified"), ContainSubstring("1/1 run it")))
		Expect(text(tab, ring("early"))).To(And(ContainSubstring(second+" ✕ failed"), ContainSubstring("1/2 run it · 1 failed")))
		// The soak started before the operator's clock moved on two minutes for the timeout.
		Expect(text(tab, ring("late"))).To(And(ContainSubstring(first+" ◷ soaking"), ContainSubstring("2/2 run it"), ContainSubstring("soak 1h: 58m left")))

		By("the stopped release: a red mark with a cross at early, and why")
		Expect(text(tab, lane(second)+" .pill")).To(Equal("✕ " + second + " stopped in early"))
		Expect(text(tab, lane(second)+" .lane-message")).To(Equal("stopped: 1 cluster failed in ring early, more than its budget of 0"))
		Expect(eval(tab, fmt.Sprintf(`getComputedStyle(document.querySelector('%s .pill')).backgroundColor ===
			getComputedStyle(document.querySelector("#live")).getPropertyValue("--failed").trim().replace(/^#(..)(..)(..)$/, (_, r, g, b) => "rgb(" + [r, g, b].map((h) => parseInt(h, 16)).join(", ") + ")")`, lane(second)))).
			To(BeTrue(), "the stopped release's mark is vermilion")
		Expect(eval(tab, fmt.Sprintf(`[...document.querySelectorAll('%s td.trail .tick')].map((e) => e.textContent).join("|") === "✓qualified in canary"`, lane(second)))).
			To(BeTrue(), second+" is marked qualified in canary, in words")
		Expect(text(tab, lane(first)+" .pill")).To(Equal("◷ " + first + " soaking"))
		Expect(eval(tab, fmt.Sprintf(`document.querySelectorAll('%s td.trail .tick[data-state="Qualified"]').length === 2`, lane(first)))).
			To(BeTrue(), first+" qualified in canary and early")
		Expect(text(tab, lane(third)+" .pill")).To(Equal("? " + third + " awaits approval"))
		Expect(text(tab, `article.train[data-train="`+drawnTrain+`"] .train-progress`)).To(HavePrefix("Rolling " + first + " soaks in ring late"))

		By("the same, read from the endpoint")
		served, err := chromedp.Run(tab, chromedp.Evaluate[dashboard.Trains](`fetch("/api/trains").then((r) => r.json())`, chromedp.EvalAwaitPromise))
		Expect(err).NotTo(HaveOccurred())
		Expect(served.Trains).To(HaveLen(1))
		Expect(served.Trains[0].Ledger).To(HaveExactElements(
			And(HaveField("Version", third), HaveField("At", -1)),
			And(HaveField("Version", second), HaveField("State", "Stopped"), HaveField("At", 1)),
			And(HaveField("Version", first), HaveField("At", 2))))
		Expect(served.Trains[0].Rings[2].In).To(And(Not(BeNil()), HaveField("State", "Soaking"), HaveField("SoakEnds", Not(BeNil()))))
		screenshot(tab, "dashboard-trains")
		report := fmt.Sprintf("the train spec took %s", time.Since(started).Round(time.Second))
		AddReportEntry("trains spec", report)
		GinkgoWriter.Println(report)
	})

	It("keeps a train of 16 rings and 16 releases readable", func(ctx SpecContext) {
		By("the Trains tab, given a train at the API's limits of rings and releases in place of what the hub has")
		tab := browser(ctx)
		Expect(within(tab, chromedp.EmulateViewport(2900, 1000), chromedp.Navigate(serveDashboard(ctx)+"#/trains"),
			chromedp.WaitVisible(chromedp.CSS(`#trains, #no-trains`)))).To(Succeed())
		big := sixteen()
		want := map[string]string{}
		for _, r := range big.Status.Ledger {
			want[r.Version] = "before the first ring"
			for _, lr := range r.Rings {
				want[r.Version] = lr.Name
			}
		}
		data, err := json.Marshal(dashboard.TrainsOf("namespace fleet", true, []ranv1alpha1.ReleaseTrain{*big}))
		Expect(err).NotTo(HaveOccurred())
		Expect(within(tab, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`window.cguDashboard.applyTrains(%s)`, data)),
			chromedp.WaitVisible(chromedp.CSS(`tr.lane[data-version="4.17.1"]`)))).To(Succeed())

		By("its rings stand in a row apart, and each release is drawn at the ring it reached")
		row := rowOfRings(tab, "fleet/edge")
		Expect(row.Names).To(HaveLen(16))
		Expect(row.Apart).To(BeTrue(), "the ring boxes overlap or leave the row")
		Expect(row.Arrows).To(BeTrue())
		Expect(drawn(tab, "fleet/edge")).To(Equal(want))
		Expect(text(tab, `th.ring-col[data-ring="r07-west"] .ring-flag`)).To(Equal("⚠ hub-north not reporting: held"))
		Expect(text(tab, `th.ring-col[data-ring="lab"] .ring-blocked`)).To(HavePrefix("⚠ PlacementNotFound: "))
		Expect(eval(tab, `[...document.querySelectorAll("tr.lane")].every((tr) => {
			const p = tr.querySelector(".pill").getBoundingClientRect(), r = tr.getBoundingClientRect();
			return p.top >= r.top && p.bottom <= r.bottom; })`)).To(BeTrue(), "a release's mark leaves its lane")
		screenshot(tab, "dashboard-trains-16")
	})
})

// sixteenRings are the rings of sixteen's train.
var sixteenRings = []string{"lab", "canary", "pilot", "early", "edge-eu", "edge-us", "r07-west", "r08-east", "core-1", "core-2",
	"field-a", "field-b", "field-c", "field-d", "field-e", "rest"}

// placed is a release of sixteen's train: its state and the furthest ring it reached (-1:
// none) with its state there.
type placed struct {
	state ranv1alpha1.ReleaseState
	at    int
	there ranv1alpha1.RingState
}

// sixteen is a train of 16 rings and 16 releases, in every state a release and a ring have,
// one ring's regional hub not reporting, another ring's rollout blocked.
func sixteen() *ranv1alpha1.ReleaseTrain {
	t := &ranv1alpha1.ReleaseTrain{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "edge"}}
	t.Spec.Releases.Channel = "stable-4.17"
	t.Spec.Approval = &ranv1alpha1.TrainApproval{Required: true}
	for i, n := range sixteenRings {
		r := ranv1alpha1.TrainRing{Name: n, Qualification: ranv1alpha1.RingQualification{Soak: &metav1.Duration{Duration: time.Duration(i+1) * time.Hour}}}
		if i == 6 {
			r.Hubs = []string{"hub-east", "hub-west", "hub-north"}
		}
		t.Spec.Rings = append(t.Spec.Rings, r)
	}
	// Newest first.
	releases := []placed{
		{ranv1alpha1.ReleaseAwaitingApproval, -1, ""}, {ranv1alpha1.ReleaseWaiting, -1, ""},
		{ranv1alpha1.ReleaseRolling, 0, ranv1alpha1.RingRolling}, {ranv1alpha1.ReleaseRolling, 1, ranv1alpha1.RingSoaking},
		{ranv1alpha1.ReleaseStopped, 2, ranv1alpha1.RingFailed}, {ranv1alpha1.ReleaseWaiting, 3, ranv1alpha1.RingQualified},
		{ranv1alpha1.ReleaseRolling, 4, ranv1alpha1.RingRolling}, {ranv1alpha1.ReleaseSuperseded, 5, ranv1alpha1.RingQualified},
		{ranv1alpha1.ReleaseRolling, 6, ranv1alpha1.RingSoaking}, {ranv1alpha1.ReleaseRolling, 8, ranv1alpha1.RingRolling},
		{ranv1alpha1.ReleaseStopped, 9, ranv1alpha1.RingFailed}, {ranv1alpha1.ReleaseRolling, 10, ranv1alpha1.RingSoaking},
		{ranv1alpha1.ReleaseWaiting, 12, ranv1alpha1.RingQualified}, {ranv1alpha1.ReleaseSuperseded, 13, ranv1alpha1.RingQualified},
		{ranv1alpha1.ReleaseRolling, 14, ranv1alpha1.RingSoaking}, {ranv1alpha1.ReleaseDelivered, 15, ranv1alpha1.RingQualified},
	}
	// A ring runs the newest release that entered it.
	current := map[int]string{}
	for k, rel := range releases {
		lr := sixteenRelease(fmt.Sprintf("4.17.%d", len(releases)-k), rel)
		for i := range lr.Rings {
			if _, ok := current[i]; !ok {
				current[i] = lr.Version
			}
		}
		t.Status.Ledger = append(t.Status.Ledger, lr)
	}
	for i, n := range sixteenRings {
		rs := ranv1alpha1.RingStatus{Name: n, Release: current[i], Rollout: train.RolloutName("edge", n, current[i]), Ended: i%2 == 0}
		switch i {
		case 0:
			rs.Message = "PlacementNotFound: nothing is applied: Placement lab-sites not found"
		case 6:
			rs.Unreachable = []string{"hub-north"}
		}
		t.Status.Rings = append(t.Status.Rings, rs)
	}
	t.Status.Conditions = []metav1.Condition{
		{Type: ranv1alpha1.TrainConditionProgressing, Status: metav1.ConditionTrue, Reason: ranv1alpha1.TrainReasonRolling, Message: "releases roll in 9 rings"},
		{Type: ranv1alpha1.TrainConditionHubsReporting, Status: metav1.ConditionFalse, Reason: ranv1alpha1.TrainReasonHubUnreachable,
			Message: "held until their regional hubs report again: r07-west (hub-north)"},
	}
	return t
}

// sixteenRelease is a release of sixteen's train: qualified in each ring before the one it
// reached, in its state there, with a message as the operator words it.
func sixteenRelease(version string, rel placed) ranv1alpha1.LedgerRelease {
	now := metav1.NewTime(harness.Epoch)
	lr := ranv1alpha1.LedgerRelease{Version: version, State: rel.state, FoundAt: now}
	for i := 0; i <= rel.at; i++ {
		n := 1 << min(i, 11)
		ring := ranv1alpha1.LedgerRing{Name: sixteenRings[i], State: ranv1alpha1.RingQualified, StartedAt: now, Clusters: n, Complete: n}
		if i == rel.at {
			ring.State = rel.there
			switch rel.there {
			case ranv1alpha1.RingRolling:
				ring.Complete = n / 3
			case ranv1alpha1.RingSoaking:
				ring.SoakingSince = &now
			case ranv1alpha1.RingFailed:
				ring.Complete, ring.Failed = n/2, 3
			}
		}
		lr.Rings = append(lr.Rings, ring)
	}
	switch {
	case rel.state == ranv1alpha1.ReleaseAwaitingApproval:
		lr.Message = "waits for an approval (kubectl cgu train approve)"
	case rel.at < 0:
		lr.Message = "waits for ring " + sixteenRings[0]
	case rel.state == ranv1alpha1.ReleaseStopped:
		lr.Message = fmt.Sprintf("stopped: 3 clusters failed in ring %s, more than its budget of 0", sixteenRings[rel.at])
	default:
		lr.Message = fmt.Sprintf("%s in ring %s", strings.ToLower(string(rel.there)), sixteenRings[rel.at])
	}
	return lr
}
