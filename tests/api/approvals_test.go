package api_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/operator"
	"github.com/cgu-operator/cgu-operator/tests/testenv"
)

// as returns a client of the hub acting as user, whom the test lets edit ClusterGroupUpgrades.
func as(user string) client.Client {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	out, err := client.New(c, client.Options{Scheme: operator.NewScheme()})
	Expect(err).NotTo(HaveOccurred())
	return out
}

// installApprovalsPolicy applies config/admission/approvals.yaml.
func installApprovalsPolicy(ctx SpecContext) {
	root, err := testenv.Root()
	Expect(err).NotTo(HaveOccurred())
	data, err := os.ReadFile(filepath.Join(root, "config", "admission", "approvals.yaml"))
	Expect(err).NotTo(HaveOccurred())
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	policy, binding := &admissionv1.ValidatingAdmissionPolicy{}, &admissionv1.ValidatingAdmissionPolicyBinding{}
	Expect(dec.Decode(policy)).To(Succeed())
	Expect(dec.Decode(binding)).To(Succeed())
	Expect(k8s.Create(ctx, policy)).To(Succeed())
	Expect(k8s.Create(ctx, binding)).To(Succeed())
}

var _ = Describe("Approvals with config/admission installed", Ordered, func() {
	const ns = "approvals"
	BeforeAll(func(ctx SpecContext) {
		installApprovalsPolicy(ctx)
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		Expect(k8s.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "cgu-editor"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"ran.openshift.io"}, Resources: []string{"clustergroupupgrades"},
				Verbs: []string{"get", "list", "create", "update", "patch"}}}})).To(Succeed())
		Expect(k8s.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "editors"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cgu-editor"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "alice"}, {APIGroup: rbacv1.GroupName, Kind: "User", Name: "bob"}},
		})).To(Succeed())
		cgu := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "upgrade"},
			Spec: ranv1alpha1.ClusterGroupUpgradeSpec{Clusters: []string{"a"}, Enable: ptr.To(false),
				RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: 1}}}
		// The policy takes a moment to reach the admission plugin: until then any write passes.
		Eventually(func() error {
			probe := cgu.DeepCopy()
			probe.Name = "probe"
			probe.Annotations = map[string]string{ranv1alpha1.AnnotationApproveBatch: "1", ranv1alpha1.AnnotationApprovedBy: "someone-else"}
			err := as("alice").Create(ctx, probe)
			if err == nil {
				Expect(k8s.Delete(ctx, probe)).To(Succeed())
				return errors.New("the policy does not refuse yet")
			}
			return nil
		}).WithTimeout(30 * time.Second).Should(Succeed())
		Expect(as("alice").Create(ctx, cgu)).To(Succeed())
	})

	approve := func(ctx SpecContext, user, batch, by string) error {
		c := as(user)
		cgu := &ranv1alpha1.ClusterGroupUpgrade{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "upgrade"}, cgu)).To(Succeed())
		patch := client.MergeFrom(cgu.DeepCopy())
		if cgu.Annotations == nil {
			cgu.Annotations = map[string]string{}
		}
		cgu.Annotations[ranv1alpha1.AnnotationApproveBatch], cgu.Annotations[ranv1alpha1.AnnotationApprovedBy] = batch, by
		return c.Patch(ctx, cgu, patch)
	}

	It("refuses an approval written in someone else's name, naming the writer", func(ctx SpecContext) {
		err := approve(ctx, "alice", "1", "bob")
		Expect(err).To(MatchError(ContainSubstring("an approval (ran.openshift.io/approve-batch, ran.openshift.io/approved-by) must name who gives it: set ran.openshift.io/approved-by to alice")))
	})

	It("accepts an approval in the writer's own name", func(ctx SpecContext) {
		Expect(approve(ctx, "alice", "1", "alice")).To(Succeed())
	})

	It("refuses another batch approved under the name already there", func(ctx SpecContext) {
		Expect(approve(ctx, "bob", "2", "alice")).To(MatchError(ContainSubstring("set ran.openshift.io/approved-by to bob")))
		Expect(approve(ctx, "bob", "2", "bob")).To(Succeed())
	})

	It("lets other edits keep the approval there", func(ctx SpecContext) {
		c := as("alice")
		cgu := &ranv1alpha1.ClusterGroupUpgrade{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "upgrade"}, cgu)).To(Succeed())
		patch := client.MergeFrom(cgu.DeepCopy())
		cgu.Labels = map[string]string{"team": "edge"}
		Expect(c.Patch(ctx, cgu, patch)).To(Succeed())
	})
})
