package dashboard_test

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/cli"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/harness/suite"
	"github.com/cgu-operator/cgu-operator/tests/prom"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

// The dashboard suite serves `kubectl cgu dashboard` from the plugin's own command on the
// hub test world (a real kube-apiserver and etcd, the real propagator, simulated spokes and
// the operator on a fake clock) and drives the page in headless Chromium.

var screenshots = flag.String("screenshots", "", "Write the page's screenshots to this directory (docs/images keeps those docs/dashboard.md shows)")

// settle bounds how long the hub takes to carry a change through the operator, the
// propagator, the simulated spokes and the page.
const settle = 60 * time.Second

func TestDashboard(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Dashboard suite")
}

var (
	fleet      *harness.Env
	simulator  *sim.Simulator
	clock      *clocktesting.FakeClock
	kubeconfig string
	chromium   string
)

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	chromium, err = findChromium()
	Expect(err).NotTo(HaveOccurred())
	fleet = suite.Start(ctx)
	simulator, clock = fleet.Sim, fleet.Clock
	kubeconfig = filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(fleet.Hub.WriteKubeconfig(kubeconfig)).To(Succeed())
})

// findChromium returns the browser the test drives: $CHROMIUM, else Debian's chromium.
// Without one the suite fails: it never skips.
func findChromium() (string, error) {
	if path := os.Getenv("CHROMIUM"); path != "" {
		return path, nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return "", errors.New("chromium is not installed: `make chromium` installs Debian's chromium package " +
		"(apt-get install chromium), or set CHROMIUM to a Chromium or Chrome binary")
}

// serveDashboard runs `kubectl cgu dashboard -A --port 0` with extra arguments until the
// spec ends, and returns the page's URL as the command printed it.
func serveDashboard(ctx context.Context, args ...string) string {
	ctx, cancel := context.WithCancel(ctx)
	r, w := io.Pipe()
	done := make(chan int, 1)
	go func() {
		defer GinkgoRecover()
		o := cli.Options{
			IOStreams: genericiooptions.IOStreams{In: strings.NewReader(""), Out: w, ErrOut: GinkgoWriter},
			Now:       clock.Now, Getenv: func(string) string { return "" },
		}
		done <- cli.Run(ctx, o, append([]string{"--kubeconfig", kubeconfig, "dashboard", "-A", "--port", "0"}, args...))
		_ = w.Close()
	}()
	DeferCleanup(func() {
		cancel()
		Eventually(done).WithTimeout(10 * time.Second).Should(Receive(Equal(cli.ExitOK)))
	})
	line, err := bufio.NewReader(r).ReadString('\n')
	Expect(err).NotTo(HaveOccurred(), "the dashboard ended before it served: its error is in the spec's output")
	go func() { _, _ = io.Copy(io.Discard, r) }()
	m := regexp.MustCompile(`^Dashboard of every namespace at (http://127\.0\.0\.1:\d+/) \(Ctrl-C stops it\)\n$`).FindStringSubmatch(line)
	Expect(m).NotTo(BeNil(), "the command printed %q", line)
	return m[1]
}

// browser starts headless Chromium for the spec, with the flags a closed network needs.
func browser(ctx context.Context) context.Context {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.WindowSize(1400, 1000))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.WithoutCancel(ctx), opts...)
	tab, cancelTab := chromedp.NewContext(alloc)
	DeferCleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	Expect(chromedp.Do(tab)).To(Succeed(), "starting %s", chromium)
	return tab
}

// within runs steps on the page, waiting at most settle.
func within(tab context.Context, steps ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(tab, settle)
	defer cancel()
	return chromedp.Do(ctx, steps...)
}

// text is the text of the first element matching css, once it exists.
func text(tab context.Context, css string) (string, error) {
	ctx, cancel := context.WithTimeout(tab, settle)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Text(chromedp.CSS(css)))
}

// eval runs a JavaScript expression on the page and returns whether it is true.
func eval(tab context.Context, js string) bool {
	ctx, cancel := context.WithTimeout(tab, settle)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`Boolean(`+js+`)`))
	Expect(err).NotTo(HaveOccurred(), "evaluating %s", js)
	return v
}

// confirm clicks the action's button, then the confirmation dialog's, and returns what the
// page then says (the toast).
func confirm(tab context.Context, action string) string {
	eval(tab, `document.getElementById("toast").hidden = true`)
	Expect(within(tab,
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`button[data-action=%q]`, action)), chromedp.NodeVisible),
		chromedp.Click(chromedp.CSS(`#confirm-ok`), chromedp.NodeVisible),
		chromedp.WaitVisible(chromedp.CSS(`#toast`)),
	)).To(Succeed(), "clicking %s and confirming", action)
	said, err := text(tab, "#toast")
	Expect(err).NotTo(HaveOccurred())
	return said
}

// svgTitle is the title of the plot under css.
func svgTitle(tab context.Context, css string) (string, error) {
	ctx, cancel := context.WithTimeout(tab, settle)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q).textContent`, css+" svg.plot > title")))
}

// screenshot saves the whole page as <name>.png in the -screenshots directory, or in the
// spec's temporary directory.
func screenshot(tab context.Context, name string) {
	dir := *screenshots
	if dir == "" {
		dir = GinkgoT().TempDir()
	}
	ctx, cancel := context.WithTimeout(tab, settle)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	Expect(err).NotTo(HaveOccurred())
	Expect(png).NotTo(BeEmpty())
	// The screenshots in docs/images are for everyone to read.
	Expect(os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)).To(Succeed())
}

// cellSamples reads, from the map's canvas, the pixels of a cluster's cell that tell its
// shape (offsets in pixels from its top-left corner, for a side s: the centre (s/2, s/2),
// top-left (1, 1), bottom-left (1, s-2), left middle (1, s/2) and top middle (s/2, 1)), and
// the page's state colours.
const cellSamples = `(() => {
  const p = window.cguDashboard.locate(%q);
  if (!p) return null;
  const canvas = document.getElementById("map"), dpr = window.devicePixelRatio || 1;
  const ctx = canvas.getContext("2d");
  const s = p.size, m = Math.floor(s / 2);
  const px = (dx, dy) => Array.from(ctx.getImageData(Math.floor((p.cx + dx + 0.5) * dpr), Math.floor((p.cy + dy + 0.5) * dpr), 1, 1).data);
  const css = getComputedStyle(document.documentElement);
  const colors = {};
  for (const [state, v] of Object.entries({Pending: "--pending", InProgress: "--progress", Completed: "--completed", TimedOut: "--timedout", Failed: "--failed", Held: "--held"})) {
    colors[state] = css.getPropertyValue(v).trim();
  }
  return {samples: [px(m, m), px(1, 1), px(1, s - 2), px(1, m), px(m, 1)], colors};
})()`

// cellShapes tell a cell's shape from which samples it covers, in cellSamples' order ("1"
// covered, "0" not, "." either): a square covers the centre and the corners, a triangle
// (point up) the centre and the bottom-left corner only, a diamond the centre and the left
// middle only; two bars cover a corner but neither the centre nor the top middle (the gap
// between them), a hollow square a corner and the top middle.
var cellShapes = []struct{ pattern, shape string }{
	{"111..", "square"},
	{"101..", "triangle"},
	{"1001.", "diamond"},
	{"01..0", "bars"},
	{"01..1", "hollow"},
}

// shapeOf is the shape whose pattern the covered samples match, "" for none.
func shapeOf(covered [5]bool) string {
	for _, s := range cellShapes {
		match := true
		for i, want := range s.pattern {
			if want != '.' && (want == '1') != covered[i] {
				match = false
			}
		}
		if match {
			return s.shape
		}
	}
	return ""
}

// cellRead is what cellSamples reads.
type cellRead struct {
	Samples [][4]int          `json:"samples"`
	Colors  map[string]string `json:"colors"`
}

// cell is the state the map shows for a cluster, as a person reads it: the colour of its
// cell and its shape, which must agree (a failed cluster is a vermilion diamond).
func cell(tab context.Context, name string) (string, error) {
	ctx, cancel := context.WithTimeout(tab, settle)
	defer cancel()
	read, err := chromedp.Run(ctx, chromedp.Evaluate[*cellRead](fmt.Sprintf(cellSamples, name)))
	if err != nil {
		return "", err
	}
	if read == nil {
		return "", fmt.Errorf("the map has no cell for %s", name)
	}
	var covered [5]bool
	colour := ""
	for i, s := range read.Samples {
		covered[i] = s[3] >= 128
		if covered[i] && colour == "" {
			colour = nearest(s, read.Colors)
		}
	}
	shape := shapeOf(covered)
	want := map[string]string{"Pending": "square", "InProgress": "square", "Completed": "square", "TimedOut": "triangle",
		"Failed": "diamond", "Held": "bars"}
	switch {
	case shape == "hollow" && colour == "Held":
		return "Waiting", nil
	case shape != "" && want[colour] == shape:
		return colour, nil
	}
	return "", fmt.Errorf("%s's cell is a %q shape (samples %v) coloured as %s", name, shape, covered, colour)
}

// nearest is the state whose colour (#rrggbb) is nearest the pixel's.
func nearest(px [4]int, colors map[string]string) string {
	best, bestDistance := "", 1<<30
	for state, hex := range colors {
		var r, g, b int
		if _, err := fmt.Sscanf(hex, "#%02x%02x%02x", &r, &g, &b); err != nil {
			continue
		}
		d := (r-px[0])*(r-px[0]) + (g-px[1])*(g-px[1]) + (b-px[2])*(b-px[2])
		if d < bestDistance {
			best, bestDistance = state, d
		}
	}
	return best
}

// dispatchChange tells the page that the select under css changed, as a person's choice does.
func dispatchChange(css string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).dispatchEvent(new Event("change", {bubbles: true}))`, css))
}

// tenThousand puts a map of 10,000 clusters in 10 batches on the page, in all states, and
// answers how long the page took to draw it: from the data to the next frame, and the map's
// own drawing.
const tenThousand = `new Promise((resolve) => {
  const n = 10000, names = [], batches = [];
  let states = "";
  for (let i = 0; i < n; i++) {
    names.push("site-" + String(i + 1).padStart(5, "0"));
    batches.push(1 + Math.floor(i / 1000));
    states += i < 7000 ? "c" : i < 8000 ? "rrrrrrrrrw"[i % 10] : "p";
  }
  const s = states.split("");
  for (let i = 13; i < 7000; i += 397) s[i] = "ftht"[i % 4];
  const started = performance.now();
  window.cguDashboard.applyFleet({epoch: "ten-thousand", names, batches, states: s.join(""), canaries: 0});
  requestAnimationFrame(() => setTimeout(() => resolve({
    total: performance.now() - started, map: window.cguDashboard.mapRender.ms, clusters: window.cguDashboard.mapRender.clusters}), 0));
})`

// renderTime is what tenThousand answers.
type renderTime struct {
	Total    float64 `json:"total"`
	Map      float64 `json:"map"`
	Clusters int     `json:"clusters"`
}

// point is where a cluster's cell is on the screen.
type point struct{ X, Y float64 }

// locate is the centre of a cluster's cell on the map.
func locate(tab context.Context, name string) point {
	ctx, cancel := context.WithTimeout(tab, settle)
	defer cancel()
	at, err := chromedp.Run(ctx, chromedp.Evaluate[*point](fmt.Sprintf(`(() => { const p = window.cguDashboard.locate(%q); return p && {X: p.x, Y: p.y}; })()`, name)))
	Expect(err).NotTo(HaveOccurred())
	Expect(at).NotTo(BeNil(), "the map has no cell for %s", name)
	return *at
}

// working says whether a cluster of a running batch of the rollout, other than those of
// stalled, is still on its way: not started yet, or in progress. The clock must not move
// then, or it would time out clusters that only wait for the real hub.
func working(ctx context.Context, g Gomega, cgu *ranv1alpha1.ClusterGroupUpgrade, stalled []string) bool {
	var list ranv1alpha1.ClusterGroupUpgradeBatchList
	g.Expect(fleet.Hub.Client.List(ctx, &list, client.InNamespace(cgu.Namespace))).To(Succeed())
	for _, r := range list.Items {
		if r.Spec.Upgrade != cgu.Name || r.Status.StartedAt == nil || r.Status.FinishedAt != nil {
			continue
		}
		states := map[string]ranv1alpha1.ClusterState{}
		for _, c := range r.Status.Clusters {
			states[c.Name] = c.State
		}
		for _, c := range r.Spec.Clusters {
			switch states[c] {
			case "", ranv1alpha1.ClusterPending:
				return true
			case ranv1alpha1.ClusterInProgress:
				if !slices.Contains(stalled, c) {
					return true
				}
			}
		}
	}
	return false
}

// firstRecord is the first record of a rollout's batch (1-based).
func firstRecord(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, index int) func(Gomega) ranv1alpha1.ClusterGroupUpgradeBatch {
	return func(g Gomega) ranv1alpha1.ClusterGroupUpgradeBatch {
		var list ranv1alpha1.ClusterGroupUpgradeBatchList
		g.Expect(fleet.Hub.Client.List(ctx, &list, client.InNamespace(cgu.Namespace))).To(Succeed())
		for _, r := range list.Items {
			if r.Spec.Upgrade == cgu.Name && r.Spec.Index == index && r.Spec.Part == 0 {
				return r
			}
		}
		return ranv1alpha1.ClusterGroupUpgradeBatch{}
	}
}

// grantViewer lets the user viewer read what the dashboard shows, and nothing more.
func grantViewer(ctx context.Context) {
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "dashboard-viewer"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{ranv1alpha1.GroupVersion.Group}, Resources: []string{"clustergroupupgrades", "clustergroupupgradebatches", "managedclustersupgrades", "releasetrains"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"lcm.openshift.io"}, Resources: []string{"imagebasedgroupupgrades"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"get", "list", "watch"}},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "dashboard-viewer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "viewer"}},
	}
	Expect(fleet.Hub.Client.Create(ctx, role)).To(Succeed())
	Expect(fleet.Hub.Client.Create(ctx, binding)).To(Succeed())
	// The API server's authorizer learns of the binding from its own informers, a moment
	// later; the dashboard, which refuses to start for a user who may not read, waits for it.
	cfg := rest.CopyConfig(fleet.Hub.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "viewer"}
	viewer, err := client.New(cfg, client.Options{Scheme: fleet.Hub.Client.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	Eventually(func(g Gomega) {
		for _, list := range []client.ObjectList{&ranv1alpha1.ClusterGroupUpgradeList{}, &ranv1alpha1.ClusterGroupUpgradeBatchList{},
			&ranv1alpha1.ManagedClustersUpgradeList{}, &ranv1alpha1.ReleaseTrainList{}, &corev1.EventList{}} {
			g.Expect(viewer.List(ctx, list, client.Limit(1))).To(Succeed())
		}
	}).WithTimeout(settle).Should(Succeed())
}

var _ = Describe("kubectl cgu dashboard", func() {
	It("shows a rollout live, and enables, approves, pauses and resumes it as RBAC allows", func(ctx SpecContext) {
		By("five clusters, an inform upgrade policy and a CGU with a canary and an approval after it, not enabled")
		clusters := fleet.MustJoinFleet(ctx, "web", 5)
		p := fleet.MustPlaceUpgradePolicy(ctx, "web", 5, settle)
		cgu := &ranv1alpha1.ClusterGroupUpgrade{
			ObjectMeta: metav1.ObjectMeta{Namespace: "cgu-web", Name: "upgrade"},
			Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
				ClusterLabelSelectors: []ranv1alpha1.ClusterLabelSelector{{MatchLabels: map[string]string{"fleet": "web"}}},
				ManagedPolicies:       []string{p.Name},
				Enable:                ptr.To(false),
				RemediationStrategy:   &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: 2, Timeout: 240, Canaries: []string{clusters[0]}},
				Approval:              &ranv1alpha1.ApprovalGates{AfterCanaries: true},
			},
		}
		fleet.MustCreate(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Status.Plan.Batches", 3))

		admin := serveDashboard(ctx)
		tab := browser(ctx)

		By("the page lists the CGU")
		Expect(within(tab, chromedp.Navigate(admin), chromedp.WaitVisible(chromedp.CSS(`tr[data-name="upgrade"]`)))).To(Succeed())
		Expect(text(tab, `tr[data-name="upgrade"]`)).To(And(ContainSubstring("cgu-web"), ContainSubstring("NotStarted")))
		Expect(text(tab, `#live`)).To(Equal("live"))

		By("enabling it from its page; the canary takes nine minutes")
		simulator.SetBehaviour(clusters[0], sim.Behaviour{Stall: true})
		Expect(within(tab, chromedp.Click(chromedp.CSS(`tr[data-name="upgrade"]`)))).To(Succeed())
		Expect(confirm(tab, "enable")).To(Equal("Enabled cgu-web/upgrade"))
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Status.State", ranv1alpha1.StateNotCompleted))
		Expect(within(tab, chromedp.WaitVisible(chromedp.CSS(`#timeline li[data-index="1"][data-state="running"]`)))).To(Succeed())
		clock.Step(9 * time.Minute)
		simulator.SetBehaviour(clusters[0], sim.Behaviour{})

		By("the timeline shows the canary ended and batch 2 waiting for an approval")
		// The page must not reload from here on: a reload would lose this mark.
		eval(tab, `window.sameDocument = true`)
		Expect(within(tab,
			chromedp.WaitVisible(chromedp.CSS(`#timeline li[data-index="1"][data-state="ended"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#timeline li[data-index="2"][data-state="waiting"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#timeline li[data-index="3"][data-state="planned"]`)),
			chromedp.WaitVisible(chromedp.CSS(`button[data-action="approve"]`)),
		)).To(Succeed())
		Expect(text(tab, `tr[data-name="upgrade"]`)).To(ContainSubstring("approval"))
		Expect(text(tab, `.eta`)).To(Equal("Estimated duration: about 18m: 2 batches at 9m each, the median of 1 batch that ended"))
		screenshot(tab, "dashboard-approval")

		By("a second dashboard as a user who may only read: its approval is refused with the API server's answer")
		grantViewer(ctx)
		viewer := serveDashboard(ctx, "--as", "viewer")
		readOnly := browser(ctx)
		Expect(within(readOnly, chromedp.Navigate(viewer+"#/ClusterGroupUpgrade/cgu-web/upgrade"),
			chromedp.WaitVisible(chromedp.CSS(`button[data-action="approve"]`)))).To(Succeed())
		Expect(confirm(readOnly, "approve")).To(And(ContainSubstring("forbidden"), ContainSubstring(`User "viewer" cannot patch`)))
		Expect(confirm(readOnly, "pause")).To(ContainSubstring("forbidden"))
		screenshot(readOnly, "dashboard-refused")
		Consistently(fleet.Stored(ctx, cgu)).WithTimeout(2 * time.Second).Should(And(
			HaveField("Spec.Paused", BeFalse()), HaveField("Status.Approvals", BeEmpty())))

		By("approving batch 2 as the admin, with " + clusters[2] + " stalled: batch 2 runs")
		simulator.SetBehaviour(clusters[2], sim.Behaviour{Stall: true})
		Expect(confirm(tab, "approve")).To(MatchRegexp(`^Approved batch 2 of cgu-web/upgrade as \S+$`))
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Status.Approvals", ConsistOf(HaveField("Batch", 2))))
		Expect(within(tab, chromedp.WaitVisible(chromedp.CSS(`#timeline li[data-index="2"][data-state="running"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#map`)))).To(Succeed())
		Eventually(func() (string, error) { return cell(tab, clusters[2]) }).WithTimeout(settle).Should(Equal("InProgress"))
		Expect(cell(tab, clusters[0])).To(Equal("Completed"))
		Expect(cell(tab, clusters[4])).To(Equal("Pending"))

		By("pausing it: the page offers to resume")
		Expect(confirm(tab, "pause")).To(Equal("Paused cgu-web/upgrade"))
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Spec.Paused", BeTrue()))
		Expect(within(tab, chromedp.WaitVisible(chromedp.CSS(`button[data-action="resume"]`)))).To(Succeed())
		screenshot(tab, "dashboard-running")

		By("resuming, and the stalled cluster completing: batch 2 ends on the page without a reload")
		Expect(confirm(tab, "resume")).To(Equal("Resumed cgu-web/upgrade"))
		simulator.SetBehaviour(clusters[2], sim.Behaviour{})
		Expect(within(tab, chromedp.WaitVisible(chromedp.CSS(`#timeline li[data-index="2"][data-state="ended"]`)))).To(Succeed())
		Expect(within(tab, chromedp.WaitVisible(chromedp.CSS(`#timeline li[data-index="3"][data-state="ended"]`)))).To(Succeed())
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Status.State", ranv1alpha1.StateCompleted))
		Expect(within(tab, chromedp.WaitVisible(chromedp.CSS(`tr[data-name="upgrade"] .badge[data-state="Completed"]`)))).To(Succeed())
		Expect(eval(tab, `window.sameDocument === true`)).To(BeTrue(), "the page was reloaded")
		Expect(text(tab, `#events`)).To(ContainSubstring("CguSuccess"))
		screenshot(tab, "dashboard-completed")
	})

	It("shows a Progressive rollout's stages on the timeline and the running stage", func(ctx SpecContext) {
		By("four clusters and a Progressive CGU growing from one cluster to two, its second cluster stalled")
		clusters := fleet.MustJoinFleet(ctx, "grow", 4)
		p := fleet.MustPlaceUpgradePolicy(ctx, "grow", 4, settle)
		simulator.SetBehaviour(clusters[1], sim.Behaviour{Stall: true})
		cgu := &ranv1alpha1.ClusterGroupUpgrade{
			ObjectMeta: metav1.ObjectMeta{Namespace: "cgu-grow", Name: "grow"},
			Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
				ClusterLabelSelectors: []ranv1alpha1.ClusterLabelSelector{{MatchLabels: map[string]string{"fleet": "grow"}}},
				ManagedPolicies:       []string{p.Name},
				Enable:                ptr.To(true),
				RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{
					MaxConcurrency: 2, Timeout: 240, Mode: ranv1alpha1.ModeProgressive,
					Progressive: &ranv1alpha1.ProgressiveSpec{Steps: []intstr.IntOrString{intstr.FromInt32(1)}},
				},
			},
		}
		fleet.MustCreate(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(
			HaveField("Status.CurrentBatch.Stage", And(Not(BeNil()), HaveField("Number", 2), HaveField("Size", 2))))

		By("its page: one batch marked as growing, with its stage sizes, and stage 2 running")
		tab := browser(ctx)
		Expect(within(tab, chromedp.Navigate(serveDashboard(ctx)+"#/ClusterGroupUpgrade/cgu-grow/grow"),
			chromedp.WaitVisible(chromedp.CSS(`#timeline li[data-index="1"][data-state="running"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#stage`)))).To(Succeed())
		Expect(text(tab, `#timeline li[data-index="1"] .label`)).To(Equal("1 ↗"))
		Expect(eval(tab, `document.querySelector('#timeline li[data-index="1"]').title.includes("(stages of 1, 2 clusters)")`)).
			To(BeTrue(), "the batch's title names its stage sizes")
		Eventually(func() (string, error) { return cell(tab, clusters[1]) }).WithTimeout(settle).Should(Equal("InProgress"))
		Expect(eval(tab, `[...document.querySelectorAll("section.part h3")].some((e) => e.textContent === "Batch 1 runs: stage 2 (2 clusters, step 2 of the growth)")`)).
			To(BeTrue(), "the running batch's heading names its stage")
		Expect(text(tab, `#stage`)).To(And(HavePrefix("Started "), ContainSubstring(", times out ")))
		// Stage 2 has two of the four clusters, stage 3 the last one: each has its share of the
		// timeout as the plan's three stages.
		Expect(text(tab, `.eta`)).To(Equal("Estimated duration: at most 2h40m: 2 stages, each within its share of the timeout (1h20m)"))
		screenshot(tab, "dashboard-progressive")

		By("the stalled cluster completing: the next stage runs the last cluster, and the rollout completes")
		eval(tab, `window.sameDocument = true`)
		simulator.SetBehaviour(clusters[1], sim.Behaviour{})
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Status.State", ranv1alpha1.StateCompleted))
		Expect(within(tab, chromedp.WaitVisible(chromedp.CSS(`#timeline li[data-index="1"][data-state="ended"]`)),
			chromedp.WaitVisible(chromedp.CSS(`tr[data-name="grow"] .badge[data-state="Completed"]`)))).To(Succeed())
		Expect(eval(tab, `window.sameDocument === true`)).To(BeTrue(), "the page was reloaded")
	})

	It("shows how a spread over sites shaped the plan, before the start", func(ctx SpecContext) {
		By("four clusters over two sites and a CGU of batches of two, at most one cluster a site, not enabled")
		clusters := fleet.MustJoinFleet(ctx, "spread", 4)
		p := fleet.MustPlaceUpgradePolicy(ctx, "spread", 4, settle)
		for i, c := range clusters {
			mc := &clusterv1.ManagedCluster{}
			Expect(fleet.Hub.Client.Get(ctx, client.ObjectKey{Name: c}, mc)).To(Succeed())
			mc.Labels["site"] = []string{"north", "north", "north", "south"}[i]
			Expect(fleet.Hub.Client.Update(ctx, mc)).To(Succeed())
		}
		cgu := &ranv1alpha1.ClusterGroupUpgrade{
			ObjectMeta: metav1.ObjectMeta{Namespace: "cgu-spread", Name: "spread"},
			Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
				Clusters: clusters, ManagedPolicies: []string{p.Name}, Enable: ptr.To(false),
				RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{
					MaxConcurrency: 2, Timeout: 240, Spread: []ranv1alpha1.SpreadConstraint{{LabelKey: "site", MaxPerBatch: 1}},
				},
			},
		}
		fleet.MustCreate(ctx, cgu)
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Status.Plan.Batches", 3))

		By("its page says three batches are planned, and how the spread made the third")
		tab := browser(ctx)
		Expect(within(tab, chromedp.Navigate(serveDashboard(ctx)+"#/ClusterGroupUpgrade/cgu-spread/spread"),
			chromedp.WaitVisible(chromedp.CSS(`#spread`)))).To(Succeed())
		Expect(text(tab, `#spread`)).To(Equal("Spread: at most 1 cluster of each site in a batch (2 values, the largest with 3 clusters). " +
			"The spread added 1 batch to those maxConcurrency alone makes."))
		Expect(eval(tab, `[...document.querySelectorAll("section.part p")].some((e) => e.textContent.startsWith("3 batches planned"))`)).
			To(BeTrue(), "the plan section counts the batches the spread makes")
	})

	It("shows each batch's analysis: its gates' verdicts, the clusters that missed, the query and a plot of the measurements", func(ctx SpecContext) {
		By("a Prometheus scraping the simulated clusters; four clusters in two batches, the last one degrading once upgraded")
		metrics, err := simulator.ServeMetrics(ctx)
		Expect(err).NotTo(HaveOccurred())
		prometheus, err := prom.StartPrometheus(ctx, prom.PrometheusOptions{Dir: GinkgoT().TempDir(), Targets: []string{metrics}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = prometheus.Stop() })
		clusters := fleet.MustJoinFleet(ctx, "gated", 4)
		p := fleet.MustPlaceUpgradePolicy(ctx, "gated", 4, settle)
		bad := clusters[3]
		simulator.SetBehaviour(bad, sim.Behaviour{DegradeAfterUpgrade: 0.2})
		query := fmt.Sprintf(`%s{cluster=~"{{clusters}}"}`, sim.MetricErrorRatio)
		cgu := &ranv1alpha1.ClusterGroupUpgrade{
			ObjectMeta: metav1.ObjectMeta{Namespace: "cgu-gated", Name: "gated"},
			Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
				Clusters: clusters, ManagedPolicies: []string{p.Name}, Enable: ptr.To(true),
				RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: 2, Timeout: 240},
				// Three measurements 10s apart pass a batch; the second failed one fails it.
				Analysis: &ranv1alpha1.Analysis{Prometheus: ranv1alpha1.AnalysisSource{URL: prometheus.URL()}, Gates: []ranv1alpha1.AnalysisGate{{
					Name: "api-errors", Query: query, SuccessCondition: "< 0.05", Interval: "10s", Measurements: 3, FailureLimit: 1}}},
			},
		}
		fleet.MustCreate(ctx, cgu)
		Eventually(firstRecord(ctx, cgu, 2)).WithTimeout(settle).Should(HaveField("Spec.Clusters", ContainElement(bad)))

		By("batch 1's clusters upgraded: the list says the rollout waits for its analysis, the page shows the gate running")
		tab := browser(ctx)
		Expect(within(tab, chromedp.Navigate(serveDashboard(ctx)+"#/ClusterGroupUpgrade/cgu-gated/gated"))).To(Succeed())
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(HaveField("Status.Waiting.Reason", ranv1alpha1.ReasonBatchAnalysis))
		first := `#analysis [data-batch="1"] [data-gate="api-errors"]`
		Expect(within(tab, chromedp.WaitVisible(chromedp.CSS(first+`[data-phase="Running"]`)))).To(Succeed())
		Expect(text(tab, `tr[data-name="gated"]`)).To(ContainSubstring("analysis"))
		Expect(text(tab, `.waitbox`)).To(HavePrefix("Its analysis gates measure the batch before it ends: Batch 1 is analysed before it ends"))

		By("moving the operator's clock a measurement at a time: batch 1 passes, batch 2 fails on its degraded cluster")
		Eventually(func(g Gomega) ranv1alpha1.UpgradeState {
			fleet.Advance(ctx, 10*time.Second, cgu)
			return fleet.Stored(ctx, cgu)(g).Status.State
		}).WithTimeout(2 * settle).WithPolling(2 * time.Second).Should(Equal(ranv1alpha1.StateTimedOut))
		second := firstRecord(ctx, cgu, 2)(Default).Status.Analysis
		Expect(second).NotTo(BeNil())
		Expect(second.Gates).To(HaveLen(1))
		measurements := second.Gates[0].Measurements

		By("the page: batch 1's gate passed; batch 2's failed, naming the cluster, with its query and a plot of its measurements")
		last := `#analysis [data-batch="2"] [data-gate="api-errors"]`
		Expect(within(tab, chromedp.WaitVisible(chromedp.CSS(last+`[data-phase="Failed"]`)))).To(Succeed())
		Expect(text(tab, first+" .badge")).To(Equal("Passed"))
		Expect(text(tab, last+" .badge")).To(Equal("Failed"))
		Expect(text(tab, last+" .gate-clusters")).To(Equal("Missed: " + bad))
		Expect(text(tab, last+" .gate-message")).To(ContainSubstring(bad))
		Expect(text(tab, last+" code.query")).To(Equal(query))
		Expect(svgTitle(tab, last)).To(Equal(fmt.Sprintf("api-errors: %d measurements, last 0.2 (Failed)", len(measurements))))
		Expect(eval(tab, fmt.Sprintf(`document.querySelectorAll('%s svg.plot .mark').length === %d`, last, len(measurements)))).
			To(BeTrue(), "the plot has a mark for each of the %d measurements", len(measurements))
		Expect(eval(tab, `document.querySelectorAll('#analysis svg.plot .mark[data-outcome="Failed"]').length >= 2`)).
			To(BeTrue(), "the gate failed on its second failed measurement")
		Expect(text(tab, `#failed`)).To(And(ContainSubstring(bad), ContainSubstring(ranv1alpha1.ReasonAnalysisFailed)))
		screenshot(tab, "dashboard-analysis")
	})

	It("shows a release-named upgrade: its release, the updates of its plan, the clusters it holds, the worker capacity, and its ClusterGroupUpgrade", func(ctx SpecContext) {
		By("two clusters: a multi-node one two minors behind, one the graph strands")
		versions := []string{harness.EUSFrom, harness.Stranded}
		i := 0
		clusters, err := fleet.JoinFleetWith(ctx, "rel", len(versions), func(s *sim.SpokeSpec) {
			s.Version, s.Channel = versions[i], harness.EUSChannel
			if i == 0 {
				s.Workers = 2
			}
			i++
		})
		Expect(err).NotTo(HaveOccurred())
		const ns = "cgu-rel"
		Expect(client.IgnoreAlreadyExists(fleet.Hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
		Expect(fleet.Hub.BindClusterSet(ctx, ns)).To(Succeed())
		m := &ranv1alpha1.ManagedClustersUpgrade{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "to-" + harness.To},
			Spec: ranv1alpha1.ManagedClustersUpgradeSpec{
				ClusterSelector: &ranv1alpha1.MCUClusterSelector{MatchLabels: map[string]string{"fleet": "rel"}},
				ClusterVersion:  ranv1alpha1.MCUClusterVersion{Channel: harness.EUSChannel, Version: harness.To},
				UpgradeStrategy: ranv1alpha1.MCUUpgradeStrategy{WorkerCapacity: &ranv1alpha1.WorkerCapacity{}},
			},
		}
		Expect(fleet.Hub.Client.Create(ctx, m)).To(Succeed())

		tab := browser(ctx)
		Expect(within(tab, chromedp.Navigate(serveDashboard(ctx, "-n", ns)+"#/ManagedClustersUpgrade/"+ns+"/"+m.Name),
			chromedp.WaitVisible(chromedp.CSS(`#updates tr[data-index="2"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#held`)),
			// The ClusterGroupUpgrade is made once every policy reports on its clusters.
			chromedp.WaitVisible(chromedp.CSS(`#release a`)))).To(Succeed())
		Expect(text(tab, `#updates tr[data-index="1"]`)).To(ContainSubstring(harness.EUSHop), "the first update goes to the odd minor")
		Expect(text(tab, `#release`)).To(Equal("Rolled out by ClusterGroupUpgrade " + m.Name))
		Expect(text(tab, `#capacity`)).To(MatchRegexp(
			`^Worker capacity: 1 multi-node cluster adds workers; [01] added, 0 upgraded without them \(not ready in time\), [01] removed$`),
			"its machines come up at once: the cluster may have added them already")
		Expect(text(tab, `#held`)).To(And(ContainSubstring(clusters[1]), ContainSubstring("NoUpdatePath")))
		Expect(text(tab, `tr[data-name="`+m.Name+`"]`)).To(ContainSubstring("release-named"))
		Expect(eval(tab, `[...document.querySelectorAll("tr[data-name]")].some((r) => r.textContent.includes("runs `+m.Name+`"))`)).
			To(BeTrue(), "its ClusterGroupUpgrade's row names it")
		screenshot(tab, "dashboard-release")

		By("following the link to the ClusterGroupUpgrade that runs it")
		Expect(within(tab, chromedp.Click(chromedp.CSS(`#release a`)), chromedp.WaitVisible(chromedp.CSS(`#timeline`)))).To(Succeed())
		Expect(eval(tab, `location.hash === "#/ClusterGroupUpgrade/`+ns+`/`+m.Name+`"`)).To(BeTrue())
	})

	It("draws a rollout of 2,000 clusters on its map, with failed, timed-out and held ones; tells a clicked cluster's story; charts its progress", func(ctx SpecContext) {
		const n = 2000
		By("2,000 clusters: five exposed to a risk (held by the path check), five stalling (timing out), five degrading once upgraded (failed by the analysis)")
		metrics, err := simulator.ServeMetrics(ctx)
		Expect(err).NotTo(HaveOccurred())
		prometheus, err := prom.StartPrometheus(ctx, prom.PrometheusOptions{Dir: GinkgoT().TempDir(), Targets: []string{metrics}})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = prometheus.Stop() })
		clusters := fleet.MustJoinFleetOn(ctx, "map", n, harness.RiskyChannel)
		held, stalled, degraded := clusters[100:105], clusters[200:205], clusters[1500:1505]
		fleet.ExposeToRisk(true, held...)
		for _, c := range stalled {
			simulator.SetBehaviour(c, sim.Behaviour{Stall: true})
		}
		for _, c := range degraded {
			simulator.SetBehaviour(c, sim.Behaviour{DegradeAfterUpgrade: 0.2})
		}
		p := fleet.MustPlaceUpgradePolicy(ctx, "map", n, 5*settle)
		cgu := &ranv1alpha1.ClusterGroupUpgrade{
			ObjectMeta: metav1.ObjectMeta{Namespace: "cgu-map", Name: "fleet"},
			Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
				ClusterLabelSelectors: []ranv1alpha1.ClusterLabelSelector{{MatchLabels: map[string]string{"fleet": "map"}}},
				ManagedPolicies:       []string{p.Name},
				Enable:                ptr.To(true),
				// A stalled cluster times out ten minutes into its batch, well before the
				// batch's hour: its batch's analysis then has the time to pass.
				RemediationStrategy:     &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: 1000, Timeout: 240},
				ClusterProgressDeadline: &metav1.Duration{Duration: 10 * time.Minute},
				UpgradeChecks:           &ranv1alpha1.UpgradeChecks{PathValidation: true},
				Analysis: &ranv1alpha1.Analysis{Prometheus: ranv1alpha1.AnalysisSource{URL: prometheus.URL()}, OnFailure: ranv1alpha1.AnalysisContinue,
					Gates: []ranv1alpha1.AnalysisGate{{Name: "api-errors", Query: fmt.Sprintf(`%s{cluster=~"{{clusters}}"}`, sim.MetricErrorRatio),
						SuccessCondition: "< 0.05", Interval: "10s", Measurements: 1}}},
			},
		}
		fleet.MustCreate(ctx, cgu)

		By("moving the operator's clock whenever no cluster but a stalled one works, until the rollout ends: the stalled clusters time out, the degraded ones fail the analysis")
		Eventually(func(g Gomega) ranv1alpha1.UpgradeState {
			if !working(ctx, g, cgu, stalled) {
				fleet.Advance(ctx, time.Minute, cgu)
			}
			return fleet.Stored(ctx, cgu)(g).Status.State
		}).WithTimeout(10 * settle).WithPolling(3 * time.Second).Should(Equal(ranv1alpha1.StateTimedOut))
		final := fleet.Stored(ctx, cgu)(Default).Status.Counts
		Expect(final).To(Equal(ranv1alpha1.ClusterCounts{Total: n, Completed: n - 15, TimedOut: 5, Failed: 5, Held: 5}))

		By("the map: each cluster in its colour and shape")
		tab := browser(ctx)
		Expect(within(tab, chromedp.Navigate(serveDashboard(ctx)+"#/ClusterGroupUpgrade/cgu-map/fleet"),
			chromedp.WaitVisible(chromedp.CSS(`#map`)), chromedp.WaitVisible(chromedp.CSS(`#progress figcaption`)))).To(Succeed())
		Eventually(func() (string, error) { return cell(tab, held[0]) }).WithTimeout(settle).Should(Equal("Held"))
		for _, c := range held {
			Expect(cell(tab, c)).To(Equal("Held"), c)
		}
		for _, c := range stalled {
			Expect(cell(tab, c)).To(Equal("TimedOut"), c)
		}
		for _, c := range degraded {
			Expect(cell(tab, c)).To(Equal("Failed"), c)
		}
		for _, c := range []string{clusters[0], clusters[999], clusters[1999]} {
			Expect(cell(tab, c)).To(Equal("Completed"), c)
		}
		Expect(eval(tab, `document.querySelector("#map").getAttribute("aria-label")`)).To(BeTrue())
		label, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector("#map").getAttribute("aria-label")`))
		Expect(err).NotTo(HaveOccurred())
		Expect(label).To(And(HavePrefix("2,000 clusters: "), ContainSubstring("1,985 completed"), ContainSubstring("5 timed out"),
			ContainSubstring("5 failed"), ContainSubstring("5 held")))
		screenshot(tab, "dashboard-map")

		By("the chart's last point counts what the status counts")
		last, err := chromedp.Run(tab, chromedp.Evaluate[[]*int](`(() => { const d = window.cguDashboard.chart.data; const k = d[0].length - 1; return [1, 2, 3, 4].map((s) => d[s][k]); })()`))
		Expect(err).NotTo(HaveOccurred())
		Expect(last).To(HaveExactElements(HaveValue(Equal(final.Completed)), HaveValue(Equal(final.InProgress)), HaveValue(Equal(final.Failed)), HaveValue(Equal(final.TimedOut))))
		Expect(text(tab, `#progress-caption`)).To(ContainSubstring(fmt.Sprintf(": %d completed, 0 in progress, 5 failed, 5 timed out, of %d.", n-15, n)))

		By("hovering a failed cluster names it; clicking it opens its story")
		at := locate(tab, degraded[2])
		Expect(within(tab, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, at.X, at.Y), chromedp.WaitVisible(chromedp.CSS(`#map-tip`)))).To(Succeed())
		Expect(text(tab, `#map-tip`)).To(And(HavePrefix(degraded[2]+" failed"), ContainSubstring("click for its story")))
		Expect(within(tab, chromedp.MouseClickXY(at.X, at.Y), chromedp.WaitVisible(chromedp.CSS(`#story[data-cluster="`+degraded[2]+`"] .summary`)))).To(Succeed())
		Expect(eval(tab, `location.hash === "#/ClusterGroupUpgrade/cgu-map/fleet/cluster/`+degraded[2]+`"`)).To(BeTrue())
		Expect(text(tab, `#story .summary .badge`)).To(Equal("failed"))
		screenshot(tab, "dashboard-story")

		By("the events, grouped: the failures first; the filter narrows them to a cluster's")
		Expect(eval(tab, `(() => { const r = [...document.querySelectorAll("#event-groups li")].map((li) => Number(li.dataset.rank));
			return r.length > 3 && r[0] === 0 && r.every((v, i) => i === 0 || r[i - 1] <= v); })()`)).To(BeTrue(), "the failures, then the holds, then the rest")
		Expect(text(tab, `#event-groups li[data-action="RemediationInClusterTimeout"] summary`)).To(ContainSubstring(
			fmt.Sprintf("×5 5 clusters: %s..%s", stalled[0], stalled[4])))
		Expect(text(tab, `#event-groups li[data-action="RemediationInClusterFailed"] summary`)).To(ContainSubstring(
			fmt.Sprintf("×5 5 clusters: %s..%s", degraded[0], degraded[4])))
		Expect(within(tab, chromedp.Click(chromedp.CSS(`#story-close`)), chromedp.SendKeys(chromedp.CSS(`#event-filter`), "timed out"))).To(Succeed())
		Eventually(func() bool {
			return eval(tab, `[...document.querySelectorAll("#event-groups li")].every((li) => li.textContent.includes("timed out") || li.textContent.toLowerCase().includes("timeout"))`)
		}).
			WithTimeout(settle).Should(BeTrue())

		By("grouping the map by state, the failed first, then by the clusters' label fleet")
		titles := func() []string {
			out, err := chromedp.Run(tab, chromedp.Evaluate[[]string](`document.getElementById("map").cguLayout.groups.map((g) => g.title)`))
			Expect(err).NotTo(HaveOccurred())
			return out
		}
		Expect(within(tab, chromedp.SetValue(chromedp.CSS(`#map-group`), "state"), dispatchChange(`#map-group`))).To(Succeed())
		Eventually(titles).WithTimeout(settle).Should(Equal([]string{"Failed", "TimedOut", "Held", "Completed"}))
		Expect(within(tab, chromedp.WaitReady(chromedp.CSS(`#map-group option[value="label:fleet"]`)),
			chromedp.SetValue(chromedp.CSS(`#map-group`), "label:fleet"), dispatchChange(`#map-group`))).To(Succeed())
		Eventually(titles).WithTimeout(settle).Should(Equal([]string{"fleet=map"}))
		Expect(cell(tab, degraded[0])).To(Equal("Failed"), "a cell keeps its state in another grouping")

	})

	It("draws a map of 10,000 clusters, and says how long the page took", func(ctx SpecContext) {
		By("a rollout not started, its page open; a map of 10,000 clusters in ten batches, in every state, put on it")
		cgu := &ranv1alpha1.ClusterGroupUpgrade{
			ObjectMeta: metav1.ObjectMeta{Namespace: "cgu-ten", Name: "ten-thousand"},
			Spec: ranv1alpha1.ClusterGroupUpgradeSpec{Clusters: []string{"site-00001"}, ManagedPolicies: []string{"none"}, Enable: ptr.To(false),
				RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: 1, Timeout: 240}},
		}
		fleet.MustCreate(ctx, cgu)
		tab := browser(ctx)
		Expect(within(tab, chromedp.Navigate(serveDashboard(ctx)+"#/ClusterGroupUpgrade/cgu-ten/ten-thousand"),
			chromedp.WaitVisible(chromedp.CSS(`#detail .head h2`)))).To(Succeed())
		took, err := chromedp.Run(tab, chromedp.Evaluate[renderTime](tenThousand, chromedp.EvalAwaitPromise))
		Expect(err).NotTo(HaveOccurred())
		Expect(took.Clusters).To(Equal(10000))
		Expect(cell(tab, "site-00014")).To(Equal("TimedOut"), "the page drew the map it was given")
		Expect(cell(tab, "site-07001")).To(Equal("InProgress"))
		By("a click on a cluster the rollout does not select: its story says so; Escape closes it")
		at := locate(tab, "site-00014")
		Expect(within(tab, chromedp.MouseClickXY(at.X, at.Y), chromedp.WaitVisible(chromedp.CSS(`#story-error`)))).To(Succeed())
		Expect(text(tab, `#story-error`)).To(ContainSubstring("does not select cluster site-00014"))
		Expect(within(tab, chromedp.KeyEvent(kb.Escape), chromedp.WaitNotPresent(chromedp.CSS(`#story`)))).To(Succeed())
		Expect(eval(tab, `location.hash === "#/ClusterGroupUpgrade/cgu-ten/ten-thousand"`)).To(BeTrue())

		report := fmt.Sprintf("the page drew 10,000 clusters in %.0f ms, from the data to the next frame (the map's own layout and drawing: %.0f ms), in headless Chromium", took.Total, took.Map)
		AddReportEntry("map render at 10,000", report)
		GinkgoWriter.Println(report)
		screenshot(tab, "dashboard-map-10000")
	})

	It("refuses at once, with the API server's answer, a user who may not list what it shows", func(ctx SpecContext) {
		var out, errOut strings.Builder
		o := cli.Options{IOStreams: genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}}
		code := cli.Run(ctx, o, []string{"--kubeconfig", kubeconfig, "--as", "nobody", "dashboard", "-n", "cgu-web", "--port", "0"})
		Expect(code).To(Equal(cli.ExitHubError))
		Expect(out.String()).To(BeEmpty(), "no page is served")
		Expect(errOut.String()).To(ContainSubstring(`User "nobody" cannot list resource "clustergroupupgrades"`))
	}, SpecTimeout(settle))
})
