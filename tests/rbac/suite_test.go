package rbac_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cgu-operator/cgu-operator/pkg/operator"
	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/testenv"
	"github.com/cgu-operator/cgu-operator/tests/world"
	"github.com/cgu-operator/cgu-operator/tests/world/graphserver"
)

// The RBAC suite runs the operator on the hub test world with exactly the permissions a
// deployment gives it: the ClusterRole `make manifests` generates (config/rbac/role.yaml)
// and the leader-election Role (config/rbac/leader_election_role.yaml), bound to the
// operator's ServiceAccount, which the operator's client impersonates (envtest's
// kube-apiserver authorizes with RBAC). Its scenarios exercise every family of permissions;
// any request the API server refuses shows as "forbidden" in the operator's logs (the
// controllers', controller-runtime's and client-go's, through klog), and fails the spec.
//
// The operator runs with --policy-namespaces=policies,tenant-a (the suite's policy namespace
// and a tenant's), so that the same world tests the namespace restriction, ZTP's rollouts
// included, and in tenancy mode with the other scenarios' namespaces exempt
// (tenancy_test.go).
//
// To see the suite fail, drop a verb from the bound ClusterRole:
//
//	CGU_RBAC_DROP=cluster.open-cluster-management.io/managedclusters/patch go test ./tests/rbac/

func TestRBAC(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "RBAC suite")
}

const (
	// settle bounds how long the hub takes to carry a change through the operator, the
	// propagator and the simulated spokes.
	settle = 60 * time.Second
	// policyNS is the namespace whose policies the operator may enforce; forbiddenNS holds
	// policies it may not.
	policyNS    = "policies"
	forbiddenNS = "tenant-policies"
	// operatorNS and serviceAccount are the deployment's (config/default's namePrefix and
	// namespace).
	operatorNS     = "cgu-operator-system"
	serviceAccount = "cgu-operator-controller-manager"
	from, to       = "4.16.10", "4.16.12"
	channel        = "stable-4.16"
	// dropEnv names a verb to drop from the bound ClusterRole, as group/resource/verb
	// ("" for the core group), to prove the suite fails without it.
	dropEnv = "CGU_RBAC_DROP"
)

var (
	hub         *world.Hub
	simulator   *sim.Simulator
	logs        = &syncBuffer{}
	metricsAddr string
	// used records the requests the operator sends (grants_test.go).
	used = newUsedRequests()
)

// syncBuffer is a bytes.Buffer safe for the operator's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Since returns what was written from offset on, and the offset of the end.
func (b *syncBuffer) Since(offset int) (string, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf.Bytes()[offset:]), b.buf.Len()
}

var forbidden = regexp.MustCompile(`(?i)forbidden`)

// forbiddenLines returns the lines of the logs since offset that tell of a refused request.
func forbiddenLines(offset int) []string {
	text, _ := logs.Since(offset)
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if forbidden.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

var _ = BeforeSuite(func(ctx SpecContext) {
	// Not development mode: there, a malformed key-value list from klog (some hub components
	// log them) panics.
	log := zap.New(zap.WriteTo(io.MultiWriter(GinkgoWriter, logs)))
	ctrl.SetLogger(log)
	klog.SetLogger(log)

	var err error
	hub, err = world.StartHub(ctx, world.Options{Logger: log.WithName("hub")})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(hub.Stop()).To(Succeed()) })

	graph, err := graphserver.NewGraph(channel).Edge(from, to).Build()
	Expect(err).NotTo(HaveOccurred())
	graphs, err := graphserver.New(map[string]*updategraph.Graph{channel: graph})
	Expect(err).NotTo(HaveOccurred())
	hub.Go(func(ctx context.Context) { <-ctx.Done(); graphs.Close() })
	noRisk := func(string, configv1.ConditionalUpdateRisk) (bool, error) { return false, nil }
	simulator, err = sim.Start(ctx, hub, sim.Options{Logger: log.WithName("sim"), Updates: sim.GraphUpdates(graphs.URL(), noRisk)})
	Expect(err).NotTo(HaveOccurred())
	for _, ns := range []string{policyNS, forbiddenNS} {
		Expect(hub.BindClusterSet(ctx, ns)).To(Succeed())
	}

	operatorConfig := grantOperator(ctx)

	metricsAddr = fmt.Sprintf("127.0.0.1:%d", freePort())
	opts := operator.DefaultOptions()
	opts.LeaderElect, opts.LeaderElectionNamespace = true, operatorNS
	opts.MetricsAddr, opts.SecureMetrics, opts.ProbeAddr = metricsAddr, true, "0"
	opts.Clock = clock.RealClock{}
	opts.UpdateService = graphs.URL()
	opts.PrecacheTimeout = 20 * time.Second
	opts.ZTP, opts.ZTPSettle = true, 2*time.Second
	opts.PolicyNamespaces = []string{policyNS, tenantNS, mcuNS}
	opts.Tenancy, opts.TenancyLabelPrefix, opts.TenancyExemptNamespaces = true, tenantPrefix, exemptNamespaces
	mgr, err := operator.New(operatorConfig, opts)
	Expect(err).NotTo(HaveOccurred())
	hub.Go(func(ctx context.Context) {
		if err := mgr.Start(ctx); err != nil {
			log.Error(err, "The operator stopped")
		}
	})
})

// Each spec fails on the refusals logged while it ran; the suite fails on any.
var logOffset int

var _ = BeforeEach(func() { _, logOffset = logs.Since(0) })

var _ = AfterEach(func() {
	Expect(forbiddenLines(logOffset)).To(BeEmpty(), "the API server refused a request of the operator")
})

var _ = AfterSuite(func() {
	Expect(forbiddenLines(0)).To(BeEmpty(), "the API server refused a request of the operator")
	if os.Getenv(dropEnv) == "" {
		expectEveryGrantUsed()
	}
})

// grantOperator creates the operator's namespace and ServiceAccount, the ClusterRole and
// the leader-election Role of config/rbac with their bindings to it, and returns a config
// that impersonates the ServiceAccount.
func grantOperator(ctx context.Context) *rest.Config {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNS}}
	Expect(hub.Client.Create(ctx, ns)).To(Succeed())
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNS, Name: serviceAccount}}
	Expect(hub.Client.Create(ctx, sa)).To(Succeed())
	subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: operatorNS, Name: serviceAccount}

	role := &rbacv1.ClusterRole{}
	readManifest("role.yaml", role)
	Expect(role.Name).To(Equal("manager-role"))
	if drop := os.Getenv(dropEnv); drop != "" {
		role.Rules = dropVerb(role.Rules, drop)
	}
	Expect(hub.Client.Create(ctx, role)).To(Succeed())
	Expect(hub.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "cgu-operator-manager-rolebinding"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{subject},
	})).To(Succeed())

	lease := &rbacv1.Role{}
	readManifest("leader_election_role.yaml", lease)
	lease.Namespace = operatorNS
	Expect(hub.Client.Create(ctx, lease)).To(Succeed())
	Expect(hub.Client.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: operatorNS, Name: "cgu-operator-leader-election-rolebinding"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: lease.Name},
		Subjects:   []rbacv1.Subject{subject},
	})).To(Succeed())

	cfg := rest.CopyConfig(hub.Config)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + operatorNS + ":" + serviceAccount,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + operatorNS, "system:authenticated"},
	}
	cfg.Wrap(used.wrap)
	return cfg
}

// readManifest decodes a file of config/rbac into obj.
func readManifest(file string, obj any) {
	root, err := testenv.Root()
	Expect(err).NotTo(HaveOccurred())
	data, err := os.ReadFile(filepath.Join(root, "config", "rbac", file))
	Expect(err).NotTo(HaveOccurred())
	Expect(utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096).Decode(obj)).To(Succeed())
}

// dropVerb removes one verb, "group/resource/verb", from the rules that grant it.
func dropVerb(rules []rbacv1.PolicyRule, drop string) []rbacv1.PolicyRule {
	parts := strings.Split(drop, "/")
	Expect(parts).To(HaveLen(3), "%s=group/resource/verb", dropEnv)
	group, resource, verb := parts[0], parts[1], parts[2]
	var out []rbacv1.PolicyRule
	found := false
	for _, r := range rules {
		if !slices.Contains(r.APIGroups, group) || !slices.Contains(r.Resources, resource) || !slices.Contains(r.Verbs, verb) {
			out = append(out, r)
			continue
		}
		found = true
		// Split the rule: the resource without the verb, the other resources unchanged.
		without := r.DeepCopy()
		without.Resources, without.Verbs = []string{resource}, remove(r.Verbs, verb)
		if len(without.Verbs) > 0 {
			out = append(out, *without)
		}
		if others := remove(r.Resources, resource); len(others) > 0 {
			rest := r.DeepCopy()
			rest.Resources = others
			out = append(out, *rest)
		}
	}
	Expect(found).To(BeTrue(), "the ClusterRole grants no %s", drop)
	GinkgoWriter.Printf("Dropped %s from the bound ClusterRole\n", drop)
	return out
}

// remove returns list without s.
func remove(list []string, s string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(x string) bool { return x == s })
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
