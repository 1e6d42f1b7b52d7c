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
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/cgu-operator/cgu-operator/pkg/operator"
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
		for _, name := range []string{"clustergroupupgrade", "ztp"} {
			Eventually(func() []byte { return session.Err.Contents() }, 30*time.Second).
				Should(ContainSubstring(`"msg":"Starting workers","controller":%q`, name))
		}

		By("stopping on SIGTERM and releasing the lease")
		session.Signal(syscall.SIGTERM)
		Eventually(session, 40*time.Second).Should(gexec.Exit(0))
		Expect(k8s.Get(ctx, key, lease)).To(Succeed())
		Expect(lease.Spec.HolderIdentity).To(SatisfyAny(BeNil(), HaveValue(BeEmpty())))
		Expect(errorLines(session.Err.Contents())).To(BeEmpty(), "no error was logged")
	})
})
