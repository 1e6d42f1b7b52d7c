package world_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/tests/world"
)

var _ = Describe("The hub", func() {
	It("selects clusters with the real placement controller and replicates policies with the real propagator", func(ctx SpecContext) {
		Expect(hub.AddClusters(ctx,
			world.Cluster{Name: "prop-1", Labels: map[string]string{"ring": "a"}},
			world.Cluster{Name: "prop-2", Labels: map[string]string{"ring": "a"}},
			world.Cluster{Name: "prop-3", Labels: map[string]string{"ring": "b"}},
		)).To(Succeed())
		Expect(hub.BindClusterSet(ctx, "policies")).To(Succeed())

		placement := &clusterv1beta1.Placement{
			ObjectMeta: metav1.ObjectMeta{Name: "ring-a", Namespace: "policies"},
			Spec: clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{{
				RequiredClusterSelector: clusterv1beta1.ClusterSelector{
					LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"ring": "a"}},
				},
			}}},
		}
		Expect(hub.Client.Create(ctx, placement)).To(Succeed())
		Expect(hub.Client.Create(ctx, informPolicy("policies", "upgrade"))).To(Succeed())
		Expect(hub.Client.Create(ctx, &policyv1.PlacementBinding{
			ObjectMeta:   metav1.ObjectMeta{Name: "upgrade", Namespace: "policies"},
			PlacementRef: policyv1.PlacementSubject{APIGroup: clusterv1beta1.GroupName, Kind: "Placement", Name: "ring-a"},
			Subjects:     []policyv1.Subject{{APIGroup: policyv1.GroupVersion.Group, Kind: policyv1.Kind, Name: "upgrade"}},
		})).To(Succeed())

		By("getting a decision for each ring-a cluster")
		Eventually(func(g Gomega) []string {
			var decisions clusterv1beta1.PlacementDecisionList
			g.Expect(hub.Client.List(ctx, &decisions, client.InNamespace("policies"),
				client.MatchingLabels{clusterv1beta1.PlacementLabel: "ring-a"})).To(Succeed())
			var names []string
			for _, d := range decisions.Items {
				for _, c := range d.Status.Decisions {
					names = append(names, c.ClusterName)
				}
			}
			return names
		}).WithTimeout(30 * time.Second).Should(ConsistOf("prop-1", "prop-2"))

		By("replicating the policy into each selected cluster's namespace")
		for _, c := range []string{"prop-1", "prop-2"} {
			Eventually(func() error {
				return hub.Client.Get(ctx, client.ObjectKey{Namespace: c, Name: "policies.upgrade"}, &policyv1.Policy{})
			}).WithTimeout(30*time.Second).Should(Succeed(), "replicated policy in %s", c)
		}
		Consistently(func() error {
			return hub.Client.Get(ctx, client.ObjectKey{Namespace: "prop-3", Name: "policies.upgrade"}, &policyv1.Policy{})
		}).WithTimeout(2 * time.Second).ShouldNot(Succeed())
	})
})

// informPolicy is an inform policy asking for ClusterVersion 4.16.12.
func informPolicy(namespace, name string) *policyv1.Policy {
	template := fmt.Sprintf(`{
  "apiVersion": "policy.open-cluster-management.io/v1",
  "kind": "ConfigurationPolicy",
  "metadata": {"name": "%s-cv"},
  "spec": {
    "remediationAction": "inform",
    "severity": "high",
    "object-templates": [{
      "complianceType": "musthave",
      "objectDefinition": {
        "apiVersion": "config.openshift.io/v1",
        "kind": "ClusterVersion",
        "metadata": {"name": "version"},
        "spec": {"desiredUpdate": {"version": "4.16.12"}}
      }
    }]
  }
}`, name)
	return &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: policyv1.PolicySpec{
			RemediationAction: policyv1.Inform,
			PolicyTemplates:   []*policyv1.PolicyTemplate{{ObjectDefinition: runtimeRaw(template)}},
		},
	}
}

func runtimeRaw(s string) runtime.RawExtension { return runtime.RawExtension{Raw: []byte(s)} }
