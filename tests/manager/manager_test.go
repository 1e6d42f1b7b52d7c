package manager_test

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	"github.com/onsi/gomega/types"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/hubapi"
	"github.com/cgu-operator/cgu-operator/pkg/operator"
	"github.com/cgu-operator/cgu-operator/tests/monitoring"
	"github.com/cgu-operator/cgu-operator/tests/testenv"
)

// The manager suite runs the real manager binary against a real kube-apiserver: first one
// without the Open Cluster Management CRDs, then the same one with them installed.

func TestManager(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Manager suite")
}

var (
	env        *envtest.Environment
	cfg        *rest.Config
	kubeconfig string
	managerBin string
)

var _ = BeforeSuite(func() {
	crds, err := testenv.OperatorCRDs()
	Expect(err).NotTo(HaveOccurred())
	env, cfg, err = testenv.Start(crds)
	Expect(err).NotTo(HaveOccurred())

	user, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	Expect(err).NotTo(HaveOccurred())
	data, err := user.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	kubeconfig = filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(os.WriteFile(kubeconfig, data, 0o600)).To(Succeed())

	managerBin, err = gexec.Build("github.com/cgu-operator/cgu-operator/cmd/manager")
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	gexec.KillAndWait(10 * time.Second)
	gexec.CleanupBuildArtifacts()
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func startManager(args ...string) *gexec.Session {
	cmd := exec.Command(managerBin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	return session
}

// errorLines returns the log lines logged at error level, so a failure shows them.
func errorLines(log []byte) []string {
	var lines []string
	for _, line := range bytes.Split(log, []byte("\n")) {
		if bytes.Contains(line, []byte(`"level":"error"`)) {
			lines = append(lines, string(line))
		}
	}
	return lines
}

// cutShort is what client-go logs at error level when the manager's stop closes a
// connection while a response is being read: a request ended by the stop, not a failure.
const cutShort = "Unexpected error when reading response body"

// leaseGivenUp is what controller-runtime logs at error level when the stop released the
// leader lease (LeaderElectionReleaseOnCancel) and the elector reports it lost after the stop
// began: the release the test asks for, not a failure.
const leaseGivenUp = `"msg":"error received after stop sequence was engaged","error":"leader election lost"`

// stoppedBy reports whether an error line logged after SIGTERM comes from the stop itself.
func stoppedBy(line string) bool {
	return strings.Contains(line, cutShort) || strings.Contains(line, leaseGivenUp)
}

// stopManager sends SIGTERM, waits for a clean exit and returns the error lines: every one
// logged before the stop, and those logged after it except what the stop itself caused (a
// request cut short, the lease reported lost once released).
func stopManager(session *gexec.Session) []string {
	before := len(session.Err.Contents())
	session.Signal(syscall.SIGTERM)
	Eventually(session, 40*time.Second).Should(gexec.Exit(0))
	log := session.Err.Contents()
	lines := errorLines(log[:before])
	for _, line := range errorLines(log[before:]) {
		if !stoppedBy(line) {
			lines = append(lines, line)
		}
	}
	return lines
}

// statusCode returns a function that GETs url and returns the response's status code.
func statusCode(c *http.Client, url string) func() (int, error) {
	return func() (int, error) {
		resp, err := c.Get(url)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
}

var _ = Describe("The manager", Ordered, func() {
	It("exits with a message naming each missing CRD on a hub without Open Cluster Management", func() {
		session := startManager("--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0")
		Eventually(session, 30*time.Second).Should(gexec.Exit(1))
		stderr := string(session.Err.Contents())
		Expect(stderr).To(ContainSubstring("cgu-operator: the hub does not serve APIs the operator needs"))
		for _, api := range []string{
			"policies.policy.open-cluster-management.io/v1", "placementbindings.policy.open-cluster-management.io/v1",
			"managedclusters.cluster.open-cluster-management.io/v1", "placements.cluster.open-cluster-management.io/v1beta1",
			"placementdecisions.cluster.open-cluster-management.io/v1beta1",
		} {
			Expect(stderr).To(ContainSubstring(api))
		}
		Expect(stderr).NotTo(ContainSubstring("clustergroupupgrades"), "our own CRDs are installed")
	})

	It("starts on a hub with the CRDs, serves probes and secure metrics, leads, and stops cleanly", func(ctx SpecContext) {
		hubCRDs, err := testenv.HubCRDs()
		Expect(err).NotTo(HaveOccurred())
		_, err = envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: hubCRDs, ErrorIfPathMissing: true})
		Expect(err).NotTo(HaveOccurred())

		probes, metrics := freePort(), freePort()
		session := startManager("--leader-elect=true", "--leader-election-namespace=default",
			fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", probes),
			fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", metrics))

		Eventually(statusCode(http.DefaultClient, fmt.Sprintf("http://127.0.0.1:%d/readyz", probes))).
			WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(Equal(http.StatusOK))

		By("refusing metrics to an unauthenticated scrape")
		insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
		Eventually(statusCode(insecure, fmt.Sprintf("https://127.0.0.1:%d/metrics", metrics))).
			WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(Equal(http.StatusUnauthorized))

		By("holding the leader lease")
		k8s, err := client.New(cfg, client.Options{})
		Expect(err).NotTo(HaveOccurred())
		lease := &coordinationv1.Lease{}
		key := client.ObjectKey{Namespace: "default", Name: operator.LeaderElectionID}
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, key, lease)).To(Succeed())
			g.Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
			g.Expect(*lease.Spec.HolderIdentity).NotTo(BeEmpty())
		}, 30*time.Second, 200*time.Millisecond).Should(Succeed())

		By("running the controllers")
		// Every controller, not only the first: a stop while one still waits for its caches
		// logs that wait's end as an error.
		for _, name := range []string{"clustergroupupgrade", "ztp", "orphans", "managedclustersupgrade", "imagebasedgroupupgrade"} {
			Eventually(func() []byte { return session.Err.Contents() }, 30*time.Second).
				Should(ContainSubstring(`"msg":"Starting workers","controller":%q`, name))
		}

		By("stopping on SIGTERM and releasing the lease")
		errs := stopManager(session)
		Expect(k8s.Get(ctx, key, lease)).To(Succeed())
		Expect(lease.Spec.HolderIdentity).To(SatisfyAny(BeNil(), HaveValue(BeEmpty())))
		Expect(errs).To(BeEmpty(), "no error was logged")
	})

	It("exports every metric, label and value that the alerts and the dashboard of config/monitoring, and docs/metrics.md, query", func() {
		hubCRDs, err := testenv.HubCRDs()
		Expect(err).NotTo(HaveOccurred())
		_, err = envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: hubCRDs, ErrorIfPathMissing: true})
		Expect(err).NotTo(HaveOccurred())

		port := freePort()
		session := startManager("--leader-elect=false", "--health-probe-bind-address=0", "--metrics-secure=false",
			fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", port))
		DeferCleanup(func() {
			Expect(stopManager(session)).To(BeEmpty(), "no error was logged")
		})
		// controller-runtime creates a controller's reconcile metrics when it starts it.
		for _, name := range []string{"clustergroupupgrade", "imagebasedgroupupgrade", "ztp"} {
			Eventually(func() []byte { return session.Err.Contents() }, 30*time.Second).
				Should(ContainSubstring(`"msg":"Starting workers","controller":%q`, name))
		}

		By("scraping the metrics endpoint")
		var exported monitoring.Exported
		Eventually(func() (err error) {
			exported, err = scrape(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
			return err
		}).WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
		Expect(exported).To(HaveKey("cgu_operator_upgrades"))
		Expect(exported).To(HaveKey("controller_runtime_reconcile_errors_total"))

		root, err := testenv.Root()
		Expect(err).NotTo(HaveOccurred())
		By("checking the PrometheusRule")
		rules, err := monitoring.LoadRules(filepath.Join(root, "config", "monitoring", "prometheusrule.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(monitoring.CheckRules(rules, exported)).To(Succeed())
		By("checking the Grafana dashboard")
		dashboard, err := monitoring.LoadDashboard(filepath.Join(root, "config", "monitoring", "grafana-dashboard.json"))
		Expect(err).NotTo(HaveOccurred())
		Expect(monitoring.CheckDashboard(dashboard, exported)).To(Succeed())
		By("checking the queries of docs/metrics.md")
		queries, err := monitoring.DocQueries(filepath.Join(root, "docs", "metrics.md"))
		Expect(err).NotTo(HaveOccurred())
		Expect(queries).NotTo(BeEmpty())
		for _, q := range queries {
			Expect(monitoring.CheckExpr(q, exported)).To(Succeed())
		}
	})

	// Each optional API in turn is taken off the hub (its CRDs deleted, then installed again):
	// the manager starts, says which features are off, and answers a rollout asking for one.
	DescribeTable("starts on a hub without an optional API",
		func(ctx SpecContext, crdFiles []string, api hubapi.API, spec string, answer types.GomegaMatcher) {
			k8s, err := client.New(cfg, client.Options{Scheme: operator.NewScheme()})
			Expect(err).NotTo(HaveOccurred())
			withoutCRDs(crdFiles, api)

			session := startManager("--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0")
			DeferCleanup(func() {
				Expect(stopManager(session)).To(BeEmpty(), "no error was logged")
			})
			for _, name := range []string{"clustergroupupgrade", "ztp", "orphans", "managedclustersupgrade", "imagebasedgroupupgrade"} {
				Eventually(func() []byte { return session.Err.Contents() }, 30*time.Second).
					Should(ContainSubstring(`"msg":"Starting workers","controller":%q`, name))
			}
			Expect(string(session.Err.Contents())).To(ContainSubstring(`"msg":"Optional API not served`), "the log says which API is missing")
			Expect(string(session.Err.Contents())).To(ContainSubstring(`"api":%q`, api.String()))

			cgu := rolloutAsking(ctx, k8s, spec)
			Eventually(func(g Gomega) {
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cgu), cgu)).To(Succeed())
				g.Expect(cgu.Status.Conditions).To(answer)
			}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
			Expect(k8s.Delete(ctx, cgu)).To(Succeed())
			Eventually(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(cgu), cgu) }, 30*time.Second).Should(Satisfy(apierrors.IsNotFound))
		},
		Entry("ManagedClusterViews: pre-caching is refused", []string{"managedclusterviews"}, hubapi.Views,
			"preCaching: true", refusedFor("spec.preCaching", hubapi.Views, ranv1alpha1.ReasonHubAPINotServed)),
		Entry("ManagedClusterActions: health checks are refused", []string{"managedclusteractions"}, hubapi.Actions,
			"upgradeChecks: {health: {beforeUpgrade: true}}", refusedFor("spec.upgradeChecks.health", hubapi.Actions, ranv1alpha1.ReasonHubAPINotServed)),
		Entry("ManifestWorks: ManifestWork templates are refused", []string{"manifestworks", "manifestworkreplicasets"}, hubapi.Works,
			"manifestWorkTemplates: [step]", refusedFor("spec.manifestWorkTemplates", hubapi.Works, ranv1alpha1.ReasonNotAllManifestTemplatesExist)),
		Entry("ManagedClusterSetBindings: a Copy-mode rollout starts and places its policy", []string{"managedclustersetbindings"}, hubapi.SetBindings,
			"enforcement: Copy", ContainElement(And(HaveField("Type", ranv1alpha1.ConditionProgressing),
				HaveField("Status", metav1.ConditionTrue), HaveField("Reason", ranv1alpha1.ReasonInProgress)))),
	)
})

// scrape reads what the plain-HTTP metrics endpoint at url serves.
func scrape(url string) (monitoring.Exported, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping %s: %s", url, resp.Status)
	}
	return monitoring.ParseExposition(resp.Body)
}

// withoutCRDs deletes the hub CRDs whose file names contain one of names until the test
// ends, and waits until the hub no longer serves api.
func withoutCRDs(names []string, api hubapi.API) {
	all, err := testenv.HubCRDs()
	Expect(err).NotTo(HaveOccurred())
	var files []string
	for _, f := range all {
		for _, n := range names {
			if strings.Contains(filepath.Base(f), "_"+n+".") {
				files = append(files, f)
			}
		}
	}
	Expect(files).To(HaveLen(len(names)))
	opts := envtest.CRDInstallOptions{Paths: files, ErrorIfPathMissing: true}
	Expect(envtest.UninstallCRDs(cfg, opts)).To(Succeed())
	DeferCleanup(func() {
		_, err := envtest.InstallCRDs(cfg, opts)
		Expect(err).NotTo(HaveOccurred())
	})
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	Eventually(func() ([]hubapi.API, error) { return hubapi.Missing(dc, []hubapi.API{api}) }, 30*time.Second).Should(HaveLen(1))
}

// rolloutAsking creates an enabled ClusterGroupUpgrade of one cluster and one managed policy
// the cluster does not comply with, with spec added, and the hub objects it names.
func rolloutAsking(ctx SpecContext, k8s client.Client, spec string) *ranv1alpha1.ClusterGroupUpgrade {
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleet"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "policies"}},
		&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "spoke-1"}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}},
	} {
		Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, o))).To(Succeed())
	}
	root := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "policies", Name: "upgrade"},
		Spec: policyv1.PolicySpec{RemediationAction: policyv1.Inform, PolicyTemplates: []*policyv1.PolicyTemplate{}}}
	if err := k8s.Create(ctx, root); apierrors.IsAlreadyExists(err) {
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(root), root)).To(Succeed())
	} else {
		Expect(err).NotTo(HaveOccurred())
	}
	root.Status.Status = []*policyv1.CompliancePerClusterStatus{{ClusterName: "spoke-1", ClusterNamespace: "spoke-1", ComplianceState: policyv1.NonCompliant}}
	root.Status.ComplianceState = policyv1.NonCompliant
	Expect(k8s.Status().Update(ctx, root)).To(Succeed())

	obj := &unstructured.Unstructured{}
	Expect(yaml.Unmarshal([]byte(fmt.Sprintf(`
apiVersion: ran.openshift.io/v1alpha1
kind: ClusterGroupUpgrade
metadata: {name: asking, namespace: fleet}
spec:
  clusters: [spoke-1]
  managedPolicies: [upgrade]
  enable: true
  remediationStrategy: {maxConcurrency: 1}
  %s
`, spec)), &obj.Object)).To(Succeed())
	Expect(k8s.Create(ctx, obj)).To(Succeed())
	cgu := &ranv1alpha1.ClusterGroupUpgrade{}
	Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, cgu)).To(Succeed())
	return cgu
}

// refusedFor matches conditions with Validated False for reason, naming field and api.
func refusedFor(field string, api hubapi.API, reason string) types.GomegaMatcher {
	return ContainElement(And(HaveField("Type", ranv1alpha1.ConditionValidated), HaveField("Status", metav1.ConditionFalse),
		HaveField("Reason", reason), HaveField("Message", And(HavePrefix(field+" needs APIs the hub does not serve"), ContainSubstring(api.String())))))
}

func TestStoppedBy(t *testing.T) {
	lost := `{"level":"error","ts":"2026-11-27T20:44:00Z","msg":"error received after stop sequence was engaged","error":"leader election lost","stacktrace":"..."}`
	other := `{"level":"error","ts":"2026-11-27T20:44:00Z","msg":"error received after stop sequence was engaged","error":"listing policies: forbidden"}`
	if !stoppedBy(lost) || stoppedBy(other) {
		t.Errorf("stoppedBy(lease lost) = %v, stoppedBy(another error) = %v; want true, false", stoppedBy(lost), stoppedBy(other))
	}
}
