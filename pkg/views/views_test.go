package views_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/views"
	"github.com/cgu-operator/cgu-operator/tests/harness"
)

func TestViews(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Views suite")
}

var env *harness.Env

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	env, err = harness.Start(ctx, zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(env.Hub.Stop()).To(Succeed()) })
})

var _ = Describe("Views of a rollout", func() {
	It("read each cluster's ClusterVersion through its agent, and are deleted with the rollout's objects", func(ctx SpecContext) {
		clusters := env.MustJoinFleet(ctx, "viewed", 2)
		owner := ownership.Owner{Namespace: "cgu-views", Name: "upgrade"}
		env.MustStandIn(ctx, owner)
		v := views.Views{Client: env.Hub.Client, Owner: owner}
		cv, reason, err := v.ClusterVersion(ctx, clusters[0])
		Expect(err).NotTo(HaveOccurred())
		Expect(cv).To(BeNil())
		Expect(reason).To(Equal("the view of its ClusterVersion does not exist yet"))

		for _, c := range clusters {
			Expect(v.EnsureClusterVersion(ctx, c)).To(Succeed())
			Expect(v.EnsureClusterVersion(ctx, c)).To(Succeed(), "ensuring twice is harmless")
		}
		Eventually(func(g Gomega) string {
			cv, _, err := v.ClusterVersion(ctx, clusters[1])
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cv).NotTo(BeNil())
			return cv.Status.Desired.Version
		}).WithTimeout(30 * time.Second).Should(Equal(harness.From))

		c := ownership.Cleaner{Client: env.Hub.Client}
		Eventually(func() (int, error) { return c.Cleanup(ctx, owner) }).Should(BeZero())
		var list viewv1beta1.ManagedClusterViewList
		Expect(env.Hub.Client.List(ctx, &list, client.MatchingLabels(owner.Labels()))).To(Succeed())
		Expect(list.Items).To(BeEmpty())
	})
})

func TestDecode(t *testing.T) {
	processing := func(status metav1.ConditionStatus, message string) []metav1.Condition {
		return []metav1.Condition{{Type: viewv1beta1.ConditionViewProcessing, Status: status, Message: message}}
	}
	cases := map[string]struct {
		status  viewv1beta1.ViewStatus
		version string
		reason  string
	}{
		"not answered": {reason: "its agent has not answered the view of its ClusterVersion yet"},
		"failed": {status: viewv1beta1.ViewStatus{Conditions: processing(metav1.ConditionFalse, "forbidden")},
			reason: "its agent cannot read its ClusterVersion: forbidden"},
		"empty": {status: viewv1beta1.ViewStatus{Conditions: processing(metav1.ConditionTrue, "")},
			reason: "the view of its ClusterVersion is empty"},
		"garbled": {status: viewv1beta1.ViewStatus{Conditions: processing(metav1.ConditionTrue, ""), Result: runtime.RawExtension{Raw: []byte(`{"status":1`)}},
			reason: "the view of its ClusterVersion cannot be read: unexpected end of JSON input"},
		"shown": {status: viewv1beta1.ViewStatus{Conditions: processing(metav1.ConditionTrue, ""),
			Result: runtime.RawExtension{Raw: []byte(`{"kind":"ClusterVersion","status":{"desired":{"version":"4.16.10"}}}`)}}, version: "4.16.10"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cv, reason, err := views.Decode(&viewv1beta1.ManagedClusterView{Status: tc.status})
			if err != nil || reason != tc.reason || (cv == nil) != (tc.version == "") || (cv != nil && cv.Status.Desired.Version != tc.version) {
				t.Fatalf("got %v %q %v, want version %q reason %q", cv, reason, err, tc.version, tc.reason)
			}
		})
	}
}
