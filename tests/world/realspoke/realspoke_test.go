package realspoke_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	policiesv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"open-cluster-management.io/governance-policy-propagator/controllers/common"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/tests/testenv"
	"github.com/cgu-operator/cgu-operator/tests/world/realspoke"
)

const (
	rootNamespace = "ztp-upgrade"
	rootName      = "cluster-version-4-16-12"
	targetVersion = "4.16.12"
	timeout       = 90 * time.Second
	poll          = 250 * time.Millisecond
)

var _ = Describe("A real spoke", Ordered, func() {
	const cluster = "spoke1"
	var (
		spoke            *realspoke.Spoke
		goroutinesBefore int
	)

	BeforeAll(func(ctx SpecContext) {
		createClusterNamespace(ctx, cluster)
		goroutinesBefore = runtime.NumGoroutine()
		before := controlPlaneProcs()
		selfBefore := rssKiB(os.Getpid())
		began := time.Now()
		var err error
		spoke, err = realspoke.Start(ctx, realspoke.Options{
			HubConfig:   hubCfg,
			ClusterName: cluster,
			Version:     "4.16.10",
			Channel:     "stable-4.16",
		})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(spoke.Stop)
		reportCost(time.Since(began), newProcs(before, controlPlaneProcs()), rssKiB(os.Getpid())-selfBefore)
	})

	It("reports the installed version in its ClusterVersion", func(ctx SpecContext) {
		cv, err := clusterVersion(ctx, spoke)
		Expect(err).NotTo(HaveOccurred())
		Expect(cv.Spec.Channel).To(Equal("stable-4.16"))
		Expect(cv.Spec.DesiredUpdate).To(BeNil())
		Expect(cv.Status.Desired.Version).To(Equal("4.16.10"))
		Expect(cv.Status.History).To(HaveLen(1))
		Expect(cv.Status.History[0].State).To(Equal(configv1.CompletedUpdate))
		Expect(cv.Status.History[0].Version).To(Equal("4.16.10"))
	})

	It("reports an inform policy as NonCompliant with history on the hub", func(ctx SpecContext) {
		By("Given a replicated inform policy asking for desiredUpdate " + targetVersion)
		Expect(hub.Create(ctx, replicatedPolicy(cluster))).To(Succeed())

		By("Then the hub replicated policy turns NonCompliant with a violation in its history")
		Eventually(hubPolicy).WithContext(ctx).WithArguments(cluster).WithTimeout(timeout).WithPolling(poll).
			Should(SatisfyAll(
				HaveField("Status.ComplianceState", policiesv1.NonCompliant),
				WithTransform(historyMessages, ContainElement(HavePrefix("NonCompliant; violation - "))),
			))
		Expect(desiredVersion(ctx, spoke)).To(BeEmpty(), "inform changes nothing")
	})

	It("updates the ClusterVersion and turns Compliant once enforced", func(ctx SpecContext) {
		By("When the replicated policy is switched to enforce")
		enforce(ctx, cluster)

		By("Then the spoke's ClusterVersion asks for " + targetVersion)
		Eventually(desiredVersion).WithContext(ctx).WithArguments(spoke).WithTimeout(timeout).WithPolling(poll).
			Should(Equal(targetVersion))

		By("And the hub replicated policy turns Compliant")
		Eventually(hubPolicy).WithContext(ctx).WithArguments(cluster).WithTimeout(timeout).WithPolling(poll).
			Should(SatisfyAll(
				HaveField("Status.ComplianceState", policiesv1.Compliant),
				WithTransform(historyMessages, HaveEach(Not(BeEmpty()))),
				WithTransform(latestMessage, HavePrefix("Compliant; notification - ")),
			))
	})

	It("stops its apiserver and etcd, and can be stopped again", func() {
		mine := newProcs(hubProcs, controlPlaneProcs())
		Expect(mine).To(HaveLen(2))
		Expect(spoke.Stop()).To(Succeed())
		Expect(spoke.Stop()).To(Succeed())
		for _, p := range mine {
			Expect(running(p.PID)).To(BeFalse(), "%s (%d) is still running", p.Command, p.PID)
		}
		// The spoke ran a few hundred goroutines; idle HTTP connections may take a moment.
		Eventually(runtime.NumGoroutine).WithTimeout(30*time.Second).WithPolling(poll).
			Should(BeNumerically("<=", goroutinesBefore+5), "goroutines left after Stop")
	})
})

var _ = Describe("Two real spokes in one process", Ordered, func() {
	clusters := []string{"spoke-a", "spoke-b"}
	spokes := map[string]*realspoke.Spoke{}

	BeforeAll(func(ctx SpecContext) {
		var (
			mu   sync.Mutex
			wg   sync.WaitGroup
			errs []error
		)
		for _, cluster := range clusters {
			createClusterNamespace(ctx, cluster)
			wg.Go(func() {
				spoke, err := realspoke.Start(ctx, realspoke.Options{
					HubConfig:   hubCfg,
					ClusterName: cluster,
					Version:     "4.16.10",
				})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				spokes[cluster] = spoke
			})
		}
		wg.Wait()
		for _, spoke := range spokes {
			DeferCleanup(spoke.Stop)
		}
		Expect(errs).To(BeEmpty())
	})

	It("evaluate their own policies and enforce only where asked", func(ctx SpecContext) {
		By("Given the same inform policy replicated to both clusters")
		for _, cluster := range clusters {
			Expect(hub.Create(ctx, replicatedPolicy(cluster))).To(Succeed())
		}
		for _, cluster := range clusters {
			Eventually(hubPolicy).WithContext(ctx).WithArguments(cluster).WithTimeout(timeout).WithPolling(poll).
				Should(HaveField("Status.ComplianceState", policiesv1.NonCompliant), cluster)
		}

		By("When only spoke-a's replicated policy is enforced")
		enforce(ctx, "spoke-a")

		By("Then spoke-a updates and turns Compliant")
		Eventually(desiredVersion).WithContext(ctx).WithArguments(spokes["spoke-a"]).
			WithTimeout(timeout).WithPolling(poll).Should(Equal(targetVersion))
		Eventually(hubPolicy).WithContext(ctx).WithArguments("spoke-a").WithTimeout(timeout).WithPolling(poll).
			Should(HaveField("Status.ComplianceState", policiesv1.Compliant))

		By("And spoke-b stays untouched and NonCompliant")
		Consistently(desiredVersion).WithContext(ctx).WithArguments(spokes["spoke-b"]).
			WithTimeout(3 * time.Second).WithPolling(poll).Should(BeEmpty())
		Expect(hubPolicy(ctx, "spoke-b")).To(HaveField("Status.ComplianceState", policiesv1.NonCompliant))
	})

	It("stop without leaving processes behind", func() {
		for _, spoke := range spokes {
			Expect(spoke.Stop()).To(Succeed())
		}
		Expect(controlPlaneProcs()).To(ConsistOf(hubProcs))
	})
})

// replicatedPolicy returns the policy the propagator would replicate into a cluster namespace:
// one inform ConfigurationPolicy requiring the ClusterVersion to ask for targetVersion.
func replicatedPolicy(cluster string) *policiesv1.Policy {
	return replicatedClusterVersionPolicy(cluster, map[string]any{
		"apiVersion": "config.openshift.io/v1",
		"kind":       "ClusterVersion",
		"metadata":   map[string]any{"name": realspoke.ClusterVersionName},
		"spec": map[string]any{
			"desiredUpdate": map[string]any{"version": targetVersion},
		},
	})
}

// replicatedClusterVersionPolicy returns a replicated inform policy with one ConfigurationPolicy
// that must have the ClusterVersion objectDefinition.
func replicatedClusterVersionPolicy(cluster string, objectDefinition map[string]any) *policiesv1.Policy {
	configPolicy := map[string]any{
		"apiVersion": "policy.open-cluster-management.io/v1",
		"kind":       "ConfigurationPolicy",
		"metadata":   map[string]any{"name": "cluster-version"},
		"spec": map[string]any{
			"remediationAction": "inform",
			"severity":          "low",
			"object-templates": []any{map[string]any{
				"complianceType":   "musthave",
				"objectDefinition": objectDefinition,
			}},
		},
	}
	raw, err := json.Marshal(configPolicy)
	Expect(err).NotTo(HaveOccurred())
	return &policiesv1.Policy{
		ObjectMeta: metav1.ObjectMeta{
			Name:      rootNamespace + "." + rootName,
			Namespace: cluster,
			Labels: map[string]string{
				common.RootPolicyLabel:       rootNamespace + "." + rootName,
				common.ClusterNameLabel:      cluster,
				common.ClusterNamespaceLabel: cluster,
			},
		},
		Spec: policiesv1.PolicySpec{
			RemediationAction: "inform",
			PolicyTemplates: []*policiesv1.PolicyTemplate{{
				ObjectDefinition: k8sruntime.RawExtension{Raw: raw},
			}},
		},
	}
}

// enforce switches a cluster's replicated policy to enforce, as the propagator does when the
// root policy is.
func enforce(ctx context.Context, cluster string) {
	policy, err := hubPolicy(ctx, cluster)
	Expect(err).NotTo(HaveOccurred())
	patch := client.MergeFrom(policy.DeepCopy())
	policy.Spec.RemediationAction = "enforce"
	Expect(hub.Patch(ctx, policy, patch)).To(Succeed())
}

// hubPolicy returns a cluster's replicated policy on the hub.
func hubPolicy(ctx context.Context, cluster string) (*policiesv1.Policy, error) {
	policy := &policiesv1.Policy{}
	key := types.NamespacedName{Namespace: cluster, Name: rootNamespace + "." + rootName}
	return policy, hub.Get(ctx, key, policy)
}

// historyMessages returns the messages of every template's compliance history.
func historyMessages(policy *policiesv1.Policy) []string {
	var messages []string
	for _, details := range policy.Status.Details {
		for _, h := range details.History {
			messages = append(messages, h.Message)
		}
	}
	return messages
}

// latestMessage returns the newest compliance message of the first template.
func latestMessage(policy *policiesv1.Policy) string {
	if len(policy.Status.Details) == 0 || len(policy.Status.Details[0].History) == 0 {
		return ""
	}
	return policy.Status.Details[0].History[0].Message
}

// clusterVersion returns a spoke's ClusterVersion.
func clusterVersion(ctx context.Context, spoke *realspoke.Spoke) (*configv1.ClusterVersion, error) {
	cv := &configv1.ClusterVersion{}
	key := types.NamespacedName{Name: realspoke.ClusterVersionName}
	return cv, spoke.Client().Get(ctx, key, cv)
}

// desiredVersion returns the version a spoke's ClusterVersion asks to update to, if any.
func desiredVersion(ctx context.Context, spoke *realspoke.Spoke) (string, error) {
	cv, err := clusterVersion(ctx, spoke)
	if err != nil || cv.Spec.DesiredUpdate == nil {
		return "", err
	}
	return cv.Spec.DesiredUpdate.Version, nil
}

// reportCost records how long a spoke took to start and how much memory it holds: its
// kube-apiserver and etcd, and the growth of this process (the controllers, roughly).
func reportCost(took time.Duration, procs []testenv.Process, selfGrowthKiB int) {
	Expect(procs).To(HaveLen(2), "the spoke's kube-apiserver and etcd")
	parts := make([]string, 0, len(procs)+1)
	total := 0
	for _, p := range procs {
		kib := rssKiB(p.PID)
		total += kib
		parts = append(parts, fmt.Sprintf("%s %d MiB", p.Command, kib/1024))
	}
	parts = append(parts, fmt.Sprintf("test process growth %d MiB", selfGrowthKiB/1024))
	AddReportEntry("spoke cost", fmt.Sprintf("started in %s; RSS %d MiB (%s)",
		took.Round(10*time.Millisecond), (total+selfGrowthKiB)/1024, strings.Join(parts, ", ")))
}
